import { describe, expect, test } from "bun:test";
import { LOW_QUALITY_THRESHOLD, QUALITY_WEIGHTS, isConcrete, isVague, qualityParts, scoreQuality } from "./quality.ts";
import type { Trail } from "./trail.ts";
import { evalTrails } from "../../test/support/eval-trails.ts";

const base = (over: Partial<Trail["problem"]> = {}, sol: Partial<Trail["solution"]> = {}, extra: Partial<Trail> = {}): Trail => ({
  protocol_version: "1.0",
  problem: { error: "ModuleNotFoundError: No module named 'numpy'", ...over },
  solution: { summary: "Install numpy into the interpreter that runs the script", ...sol },
  agent_info: { model: "m", framework: "f" },
  environment: { os: "linux", runtime: { name: "python" } },
  ...extra,
});

describe("quality formula", () => {
  test("weights sum to 1", () => {
    expect(Object.values(QUALITY_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
  });

  test("a minimal but honest trail passes (error + summary + one concrete step + required env)", () => {
    const t = base({}, { steps: ["Run `python -m pip install numpy` with the same interpreter"] });
    expect(scoreQuality(t)).toBe(0.45);
    expect(scoreQuality(t)).toBeGreaterThanOrEqual(LOW_QUALITY_THRESHOLD);
  });

  test("a minimal trail with one command instead of a step passes too", () => {
    expect(scoreQuality(base({}, { commands: ["python -m pip install numpy"] }))).toBeGreaterThanOrEqual(LOW_QUALITY_THRESHOLD);
  });

  const vague: [string, Trail][] = [
    ["fixed it / try again", base({}, { summary: "fixed it", steps: ["try again"] })],
    ["works now / restart", base({ error: "error" }, { summary: "works now", steps: ["restart"] })],
    ["done / reinstall", base({}, { summary: "Done.", steps: ["reinstall"] })],
    ["vague summary, prose step only", base({}, { summary: "fixed", steps: ["I changed some things around until it worked"] })],
    ["no real action at all", base({}, { summary: "solved", steps: ["idk"], commands: ["try again"] })],
  ];
  for (const [name, t] of vague) {
    test(`an empty or vague trail fails: ${name}`, () => {
      expect(scoreQuality(t)).toBeLessThan(LOW_QUALITY_THRESHOLD);
    });
  }

  test("a complete trail scores 1", () => {
    const t = base(
      {
        error_type: "ModuleNotFoundError",
        root_cause: "numpy was installed into a different Python than the one running the script",
        dead_ends: [{ attempt: "pip install numpy", result: "Requirement already satisfied" }],
      },
      { steps: ["Print sys.executable"], commands: ["python -m pip install numpy"], verification: "python -c 'import numpy' exits 0" },
      {
        environment: {
          os: "linux",
          os_version: "22.04",
          arch: "x86_64",
          runtime: { name: "python", version: "3.11.4" },
          packages: [{ name: "numpy" }],
        },
        effort: { failed_attempts: 1 },
      },
    );
    expect(scoreQuality(t)).toBe(1);
  });

  test("parts follow the documented rules", () => {
    const p = qualityParts(base({ root_cause: "too short" }, { steps: ["Install the headers for your interpreter"] }));
    expect(p.error).toBe(QUALITY_WEIGHTS.error);
    expect(p.summary).toBe(QUALITY_WEIGHTS.summary);
    expect(p.root_cause).toBe(QUALITY_WEIGHTS.root_cause / 2);
    expect(p.action).toBe(QUALITY_WEIGHTS.action / 2);
    expect(p.verification).toBe(0);
    expect(p.dead_ends).toBe(0);
    expect(p.environment).toBe(0);
    expect(p.effort).toBe(0);
  });

  test("score stays within 0..1 for odd input", () => {
    const odd = { problem: {}, solution: {}, environment: {} } as unknown as Trail;
    const q = scoreQuality(odd);
    expect(q).toBeGreaterThanOrEqual(0);
    expect(q).toBeLessThanOrEqual(1);
  });

  test("vague and concrete helpers", () => {
    for (const v of ["fixed it", "Try again.", "works now!", "", "  ", "reinstalled", "n/a"]) expect(isVague(v)).toBe(true);
    for (const c of ["Install python3-dev", "Set `type: module`", "Run go mod tidy in ./cmd", "Raise -Xmx to 4g", "Upgrade axios to 1.8.1"])
      expect(isConcrete(c)).toBe(true);
    expect(isConcrete("Restart your computer and it works")).toBe(false);
  });
});

describe("eval corpus", () => {
  for (const { case: c, trail } of evalTrails()) {
    test(`${c.id} passes the quality threshold`, () => {
      expect(scoreQuality(trail)).toBeGreaterThanOrEqual(LOW_QUALITY_THRESHOLD);
    });
  }
});

// Screening reads a trail in the order colony_search shows it (src/core/reading-order.ts), so an
// instruction split across fields that meet only there is caught. That holds only while the two
// agree: this checks the tool's compact result shows the fields in the order screening reads them.
import { expect, test } from "bun:test";
import { rendered } from "../../core/reading-order";
import type { Trail } from "../../core/trail";
import type { SearchResult } from "../../service/trails";
import { compactResult } from "./search";

test("colony_search shows a trail's fields in the order screening reads them as colony_search shows it", () => {
  const trail: Trail = {
    protocol_version: "1.0",
    problem: {
      error: "F01 error",
      error_type: "F02Error",
      description: "F03 description (colony_search does not show it)",
      root_cause: "F04 root cause",
      dead_ends: [
        { attempt: "F05 attempt", result: "F06 result" },
        { attempt: "F07 attempt", result: "F08 result" },
      ],
    },
    solution: {
      summary: "F09 summary",
      steps: ["F10 step", "F11 step"],
      commands: ["F12 command", "F13 command"],
      code_patches: [{ file_path: "F14/path.py", diff: "F15 diff", language: "F16lang" }],
      verification: "F17 verification",
    },
    agent_info: { model: "m", framework: "f" },
    environment: {
      os: "linux",
      arch: "x86_64",
      runtime: { name: "F18runtime", version: "1" },
      packages: [{ name: "F19pkg", version: "2" }],
    },
  } as Trail;
  const result: SearchResult = {
    trail_id: "00000000-0000-4000-8000-000000000001",
    match: { via: "semantic", score: 0.5, environment_overlap: 1, confidence: "weak" },
    strength: 0.5,
    outcomes: { worked: 0, partially_worked: 0, failed: 0 },
    risk: { level: "low", flags: [] },
    trail,
  };
  const shown = JSON.stringify(compactResult(result));
  const read = rendered(trail, true).map((f) => f.text);
  // Every text screening reads in this rendering is shown, in the same order.
  const positions = read.map((text) => shown.indexOf(JSON.stringify(text).slice(1, -1).split(" ")[0]!));
  expect(positions.every((p) => p >= 0)).toBe(true);
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
  // And every field the tool shows is read (the description is the one it leaves out).
  for (const marker of shown.match(/F\d\d/g) ?? []) expect(read.some((t) => t.includes(marker))).toBe(true);
  expect(shown).not.toContain("F03");
});

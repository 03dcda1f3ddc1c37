import { describe, expect, test } from "bun:test";
import { CATEGORIES, CATEGORY_SEEDS, categorize, categoryByRules, nearestCategory, type Category } from "./category.ts";
import type { Trail } from "./trail.ts";
import { evalTrails } from "../../test/support/eval-trails.ts";

const t = (error: string, extra: Partial<Trail["problem"]> = {}, commands?: string[]): Trail => ({
  protocol_version: "1.0",
  problem: { error, ...extra },
  solution: { summary: "s", steps: ["x"], commands },
  agent_info: { model: "m", framework: "f" },
  environment: { os: "linux", runtime: { name: "x" } },
});

// Written for this test from general knowledge of each error family (not from the eval set).
const RULE_CASES: [Category, Trail][] = [
  ["dependency", t("ModuleNotFoundError: No module named 'requests'")],
  [
    "dependency",
    t("npm ERR! ERESOLVE could not resolve dependency tree", { root_cause: "peer dependency conflict between react 18 and a plugin" }),
  ],
  ["build", t("main.c:(.text+0x1b): undefined reference to `pthread_create'", { error_type: "linker error" })],
  ["build", t("CMake Error at CMakeLists.txt:12 (find_package): Could not find a package configuration file")],
  ["configuration", t("Error: environment variable DATABASE_URL is not set", { root_cause: "the .env file was missing the setting" })],
  ["runtime", t("AttributeError: 'NoneType' object has no attribute 'get'", { error_type: "AttributeError" })],
  ["runtime", t("panic: runtime error: index out of range [3] with length 3")],
  ["network", t("getaddrinfo ENOTFOUND registry.npmjs.org", { root_cause: "DNS could not resolve the registry behind the proxy" })],
  ["network", t("requests.exceptions.SSLError: certificate verify failed: self-signed certificate in certificate chain")],
  ["permissions", t("PermissionError: [Errno 13] Permission denied: '/var/log/app.log'", { error_type: "PermissionError" })],
  ["database", t('psql: error: FATAL: relation "users" does not exist', { error_type: "SQLSTATE 42P01" })],
  ["memory", t("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory")],
  [
    "concurrency",
    t("WARNING: DATA RACE Write at 0x00c000122088 by goroutine 7", { root_cause: "two goroutines write the map without a mutex" }),
  ],
  ["type_error", t("TypeError: unsupported operand type(s) for +: 'int' and 'str'", { error_type: "TypeError" })],
  ["type_error", t("error[E0308]: mismatched types: expected `u32`, found `i64`")],
  ["syntax", t("SyntaxError: Unexpected token '}' in JSON at position 42", { error_type: "SyntaxError" })],
  ["syntax", t("IndentationError: unexpected indent")],
  ["test", t("AssertionError: expected 200 to equal 404", { root_cause: "the jest test asserted the old status code" })],
  [
    "deployment",
    t("Back-off restarting failed container; pod is in CrashLoopBackOff", {
      root_cause: "the Kubernetes deployment referenced a missing secret",
    }),
  ],
  ["gpu", t("RuntimeError: CUDA error: device-side assert triggered", { root_cause: "a label index out of range for the GPU kernel" })],
];

describe("categoryByRules", () => {
  for (const [want, trail] of RULE_CASES) {
    test(`${want}: ${trail.problem.error.slice(0, 60)}`, () => {
      const r = categoryByRules(trail);
      expect(r.category).toBe(want);
      expect(r.confident).toBe(true);
    });
  }
  test("no signal gives other, not confident", () => {
    expect(categoryByRules(t("it broke"))).toEqual({ category: "other", confident: false });
  });
});

describe("seeds, nearest centroid and the fallback", () => {
  test("every category has a descriptive seed", () => {
    for (const c of CATEGORIES) expect(CATEGORY_SEEDS[c].split(" ").length).toBeGreaterThan(10);
    expect(Object.keys(CATEGORY_SEEDS).sort()).toEqual([...CATEGORIES].sort());
  });
  test("nearestCategory picks the highest cosine similarity", () => {
    const centroids = new Map<Category, Float32Array>([
      ["network", new Float32Array([1, 0, 0])],
      ["memory", new Float32Array([0, 1, 0])],
      ["gpu", new Float32Array([0, 0, 2])],
    ]);
    const r = nearestCategory(new Float32Array([0.1, 0.2, 0.9]), centroids);
    expect(r.category).toBe("gpu");
    expect(r.similarity).toBeCloseTo(0.9 / Math.sqrt(0.86), 5);
  });
  test("nearestCategory with no usable centroid gives other at 0", () => {
    expect(nearestCategory(new Float32Array([1, 2]), new Map())).toEqual({ category: "other", similarity: 0 });
    expect(nearestCategory(new Float32Array([1, 2]), new Map([["gpu", new Float32Array([1, 2, 3])]]))).toEqual({
      category: "other",
      similarity: 0,
    });
  });
  test("categorize: confident rules win without asking the fallback", () => {
    let asked = false;
    const c = categorize(RULE_CASES[0]![1], () => ((asked = true), { category: "gpu", similarity: 0.9 }));
    expect(c).toBe("dependency");
    expect(asked).toBe(false);
  });
  test("categorize: unsure rules ask the fallback", () => {
    expect(categorize(t("it broke"), () => ({ category: "network", similarity: 0.4 }))).toBe("network");
    expect(categorize(t("it broke"), () => undefined)).toBe("other");
    expect(categorize(t("it broke"))).toBe("other");
  });
});

describe("eval corpus", () => {
  test("every eval trail gets a category from the set", () => {
    for (const { trail } of evalTrails()) expect(CATEGORIES).toContain(categorize(trail));
  });
});

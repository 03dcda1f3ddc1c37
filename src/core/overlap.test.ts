import { describe, expect, test } from "bun:test";
import {
  canonicalArch,
  canonicalRuntime,
  environmentOverlap,
  mergeKeyRuntime,
  type OverlapEnvironment,
  runtimeColumn,
  runtimeMajor,
  runtimeSpellings,
} from "./overlap.ts";
import { cpuMsSince } from "../../test/support/cpu-time";
import type { QueryEnvironment, TrailEnvironment } from "./trail.ts";

const full: TrailEnvironment = {
  os: "linux",
  arch: "x86_64",
  runtime: { name: "python", version: "3.11.4" },
  packages: [{ name: "numpy", version: "1.26.0" }, { name: "torch" }],
};

describe("canonicalArch", () => {
  test("aliases", () => {
    expect(canonicalArch("amd64")).toBe("x86_64");
    expect(canonicalArch("x64")).toBe("x86_64");
    expect(canonicalArch("X86_64")).toBe("x86_64");
    expect(canonicalArch("aarch64")).toBe("arm64");
    expect(canonicalArch(" arm64 ")).toBe("arm64");
    expect(canonicalArch("riscv64")).toBe("riscv64");
  });
});

describe("runtimeMajor", () => {
  test("first number of the version", () => {
    expect(runtimeMajor("3.11.4")).toBe("3");
    expect(runtimeMajor("v18.17.0")).toBe("18");
    expect(runtimeMajor("go1.22.1")).toBe("1");
    expect(runtimeMajor("21")).toBe("21");
    expect(runtimeMajor("017.0.1")).toBe("17");
  });
  test("missing or numberless versions have no major", () => {
    expect(runtimeMajor(undefined)).toBeUndefined();
    expect(runtimeMajor("")).toBeUndefined();
    expect(runtimeMajor("latest")).toBeUndefined();
  });
  test("legacy Java 1.8 means 8, only for the JVM", () => {
    expect(runtimeMajor("1.8.0_292", "jvm")).toBe("8");
    expect(runtimeMajor("1.8.0_292", "java")).toBe("8");
    expect(runtimeMajor("1.22", "go")).toBe("1");
    expect(runtimeMajor("11.0.2", "jvm")).toBe("11");
  });
  test("runtime names fold aliases", () => {
    expect(canonicalRuntime("NodeJS")).toBe("node");
    expect(canonicalRuntime("golang")).toBe("go");
    expect(canonicalRuntime("Python")).toBe("python");
  });
  test("names of Object's prototype members are names like any other (session 11 audit)", () => {
    // A plain-object lookup returned Object.prototype.constructor (a function) and
    // Object.prototype itself for these, not a string.
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      expect(canonicalRuntime(name)).toBe(name.toLowerCase());
      expect(canonicalArch(name)).toBe(name.toLowerCase());
    }
    expect(canonicalRuntime(" Constructor ")).toBe("constructor");
  });
  test("runtimeSpellings: the canonical name and every alias of it, for any spelling asked", () => {
    for (const asked of ["node", "NodeJS", " node.js "]) expect(runtimeSpellings(asked)).toEqual(["node", "nodejs", "node.js"]);
    expect(runtimeSpellings("Java")).toEqual(["jvm", "java", "openjdk"]);
    expect(runtimeSpellings("deno")).toEqual(["deno"]);
    expect(runtimeSpellings("constructor")).toEqual(["constructor"]);
    // each spelling folds back to the same runtime
    for (const s of runtimeSpellings("python")) expect(canonicalRuntime(s)).toBe("python");
  });
  test("names in another width, a compatibility form or with invisible characters are the plain name; look-alikes of other scripts are not (session 18)", () => {
    for (const name of ["ｐｙｔｈｏｎ", "𝐩𝐲𝐭𝐡𝐨𝐧", "Py\u200bthon", "py\u00adthon", "Python\ufe0f", "\ufeffpython3", "ＰＹＴＨＯＮ３"]) {
      expect([name, canonicalRuntime(name)]).toEqual([name, "python"]);
    }
    expect(canonicalArch("ａｍｄ６４")).toBe("x86_64");
    expect(canonicalRuntime("pyth\u043en")).toBe("pyth\u043en"); // a Cyrillic о
    // The store's column holds the folded name; a filter asks for every spelling of the runtime,
    // and for rows stored before session 18 (the name only lowercased) its own as well.
    expect(runtimeColumn(" ＮｏｄｅＪＳ ")).toBe("nodejs");
    expect(runtimeSpellings("ｎｏｄｅ")).toEqual(["node", "nodejs", "node.js", "ｎｏｄｅ"]);
    expect(runtimeSpellings("node")).toEqual(["node", "nodejs", "node.js"]);
    // A merge key reads the runtime as stored trails' keys were made (trimmed, lowercased).
    expect(mergeKeyRuntime("ｐｙｔｈｏｎ")).toBe("ｐｙｔｈｏｎ");
    expect(mergeKeyRuntime(" Python3 ")).toBe("python");
    // Package names are not folded: no registry folds widths, so a fullwidth name is another package.
    expect(environmentOverlap({ packages: [{ name: "ｐｙｙａｍｌ" }] }, { packages: [{ name: "PyYAML" }] })).toBe(0);
    expect(environmentOverlap({ packages: [{ name: " PyYAML " }] }, { packages: [{ name: "pyyaml" }] })).toBe(0.3);
  });
  test("two runtimes named after prototype members overlap only when they are the same name", () => {
    const env = (name: string): OverlapEnvironment => ({ runtime: { name } });
    expect(environmentOverlap(env("constructor"), env("constructor"))).toBe(0.15);
    expect(environmentOverlap(env("constructor"), env("__proto__"))).toBe(0);
    expect(environmentOverlap({ arch: "constructor" }, { arch: "toString" })).toBe(0);
  });
});

describe("environmentOverlap (decisions §3)", () => {
  test("identical full environments overlap 1", () => {
    expect(environmentOverlap(full, full)).toBe(1);
  });
  test("missing environment on either side is 0", () => {
    expect(environmentOverlap(undefined, full)).toBe(0);
    expect(environmentOverlap(full, undefined)).toBe(0);
    expect(environmentOverlap({}, full)).toBe(0);
    expect(environmentOverlap({}, {})).toBe(0);
  });
  test("os alone is 0.3", () => {
    expect(environmentOverlap({ os: "linux" }, full)).toBe(0.3);
    expect(environmentOverlap({ os: "macos" }, full)).toBe(0);
  });
  test("arch alone is 0.1, through aliases", () => {
    expect(environmentOverlap({ arch: "amd64" }, full)).toBe(0.1);
    expect(environmentOverlap({ arch: "x64" }, { arch: "amd64" })).toBe(0.1);
    expect(environmentOverlap({ arch: "aarch64" }, { arch: "arm64" })).toBe(0.1);
    expect(environmentOverlap({ arch: "arm64" }, full)).toBe(0);
  });
  test("runtime name and major 0.3, name only 0.15", () => {
    expect(environmentOverlap({ runtime: { name: "python", version: "3.12.1" } }, full)).toBe(0.3);
    expect(environmentOverlap({ runtime: { name: "python", version: "2.7.18" } }, full)).toBe(0.15);
    expect(environmentOverlap({ runtime: { name: "python" } }, full)).toBe(0.15);
    expect(environmentOverlap({ runtime: { name: "Python3", version: "3" } }, full)).toBe(0.3);
    expect(environmentOverlap({ runtime: { name: "node", version: "3.0.0" } }, full)).toBe(0);
    expect(environmentOverlap({ runtime: { version: "3.11.4" } }, full)).toBe(0);
  });
  test("packages: 0.3 × Jaccard of names, case-insensitive", () => {
    // {numpy, torch} vs {numpy}: 1/2.
    expect(environmentOverlap({ packages: [{ name: "NumPy" }] }, full)).toBe(0.15);
    // {numpy, torch} vs {numpy, pandas, scipy}: 1/4.
    expect(environmentOverlap({ packages: [{ name: "numpy" }, { name: "pandas" }, { name: "scipy" }] }, full)).toBe(0.075);
    // {numpy, torch} vs {torch, numpy}: versions do not matter.
    expect(environmentOverlap({ packages: [{ name: "torch", version: "2.0" }, { name: "numpy" }] }, full)).toBe(0.3);
    expect(environmentOverlap({ packages: [] }, full)).toBe(0);
    // 1/3 of 0.3 rounds to 4 decimals.
    expect(environmentOverlap({ packages: [{ name: "numpy" }, { name: "x" }] }, full)).toBe(0.1);
    expect(
      environmentOverlap(
        { packages: [{ name: "a" }, { name: "b" }, { name: "numpy" }] },
        { packages: [{ name: "numpy" }, { name: "c" }, { name: "d" }] },
      ),
    ).toBe(0.06);
  });
  test("parts add up and the result is symmetric", () => {
    const q: OverlapEnvironment = {
      os: "linux",
      arch: "amd64",
      runtime: { name: "python", version: "3.9" },
      packages: [{ name: "numpy" }],
    };
    // 0.3 + 0.1 + 0.3 + 0.3 × 1/2
    expect(environmentOverlap(q, full)).toBe(0.85);
    expect(environmentOverlap(full, q)).toBe(0.85);
    const r: OverlapEnvironment = {
      os: "windows",
      runtime: { name: "python", version: "2.7" },
      packages: [{ name: "torch" }, { name: "a" }, { name: "b" }],
    };
    // 0 + 0 + 0.15 + 0.3 × 1/4 = 0.225
    expect(environmentOverlap(r, full)).toBe(0.225);
    expect(environmentOverlap(full, r)).toBe(0.225);
  });
  test("accepts the schema types", () => {
    const query: QueryEnvironment = full;
    expect(environmentOverlap(query, full)).toBe(1);
  });
  test("always within 0..1", () => {
    const envs: (OverlapEnvironment | undefined)[] = [undefined, {}, full, { os: "linux" }, { packages: [{ name: "numpy" }] }];
    for (const a of envs)
      for (const b of envs) {
        const v = environmentOverlap(a, b);
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
  });
});

describe("hostile names cost a search little (session 18)", () => {
  test("a query of 100 names against 60 candidates holding 100 names each, every name 200 × U+FDFA (18-fold under NFKC)", () => {
    // Folding package names (18-fold expansions) for every candidate of a search cost ~40 µs a name:
    // 60 candidates × 100 names, 243 ms of CPU a search, where trimming and lowercasing them costs
    // 13-22 ms (session 17's cost). Runtime and arch names are folded (40 characters each, remembered).
    const hostile = (salt: string) => ({
      os: "linux" as const,
      arch: `${"\ufdfa".repeat(36)}${salt}`,
      runtime: { name: `${"\ufdfa".repeat(36)}${salt}`, version: "3" },
      packages: Array.from({ length: 100 }, (_, i) => ({ name: `${"\ufdfa".repeat(190)}${salt}${i}` })),
    });
    const query = hostile("q");
    const candidates = Array.from({ length: 60 }, (_, i) => hostile(`c${i}`));
    const since = process.cpuUsage();
    for (const candidate of candidates) environmentOverlap(query, candidate);
    expect(cpuMsSince(since)).toBeLessThan(100);
  });
});

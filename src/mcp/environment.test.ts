import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseTrail } from "../core/trail";
import { archName, detectEnvironment, detectRuntime, osName } from "./environment";

const dirs: string[] = [];
const project = (...files: string[]) => {
  const dir = mkdtempSync(join(tmpdir(), "colony-env-"));
  dirs.push(dir);
  for (const f of files) writeFileSync(join(dir, f), "");
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("environment detection", () => {
  test("platform and arch names follow decisions §1.1", () => {
    expect([osName("linux"), osName("darwin"), osName("win32"), osName("freebsd"), osName("sunos")]).toEqual([
      "linux",
      "macos",
      "windows",
      "freebsd",
      "other",
    ]);
    expect([archName("x64"), archName("arm64"), archName("riscv64")]).toEqual(["x86_64", "arm64", "riscv64"]);
  });

  test("the runtime comes from project files, most specific first", () => {
    expect(detectRuntime(project("Cargo.toml", "package.json"))).toBe("rust");
    expect(detectRuntime(project("pyproject.toml"))).toBe("python");
    expect(detectRuntime(project("go.mod"))).toBe("go");
    expect(detectRuntime(project("pom.xml"))).toBe("jvm");
    expect(detectRuntime(project("package.json"))).toBe("node");
    expect(detectRuntime(project())).toBe("unknown");
  });

  test("a detected environment is valid inside a trail", () => {
    const env = detectEnvironment(project("requirements.txt"));
    expect(env.runtime.name).toBe("python");
    const trail = {
      protocol_version: "1.0",
      problem: { error: "E" },
      solution: { summary: "s", steps: ["x"] },
      agent_info: { model: "m", framework: "f" },
      environment: env,
    };
    expect(parseTrail(trail).ok).toBe(true);
  });
});

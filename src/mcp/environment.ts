// The environment of the machine the local MCP server runs on, used to fill a trail's
// `environment` when the agent left it out. os and arch come from the process; the runtime is
// guessed from project files in the working directory (MCP clients start stdio servers in the
// project), because the server's own runtime (Bun) says nothing about the project's.
import { existsSync } from "node:fs";
import { release } from "node:os";
import { join } from "node:path";
import type { TrailEnvironment } from "../core/trail";

type Os = TrailEnvironment["os"];

export function osName(platform: string = process.platform): Os {
  switch (platform) {
    case "linux":
      return "linux";
    case "darwin":
      return "macos";
    case "win32":
      return "windows";
    case "freebsd":
      return "freebsd";
    default:
      return "other";
  }
}

/** decisions §1.1 spelling: x86_64 and arm64. */
export function archName(arch: string = process.arch): string {
  if (arch === "x64") return "x86_64";
  if (arch === "arm64") return "arm64";
  return arch;
}

/** Project markers, first match wins; order puts the more specific files first. */
const RUNTIME_MARKERS: [string, string][] = [
  ["Cargo.toml", "rust"],
  ["go.mod", "go"],
  ["pyproject.toml", "python"],
  ["requirements.txt", "python"],
  ["setup.py", "python"],
  ["Pipfile", "python"],
  ["pom.xml", "jvm"],
  ["build.gradle", "jvm"],
  ["build.gradle.kts", "jvm"],
  ["Gemfile", "ruby"],
  ["composer.json", "php"],
  ["mix.exs", "elixir"],
  ["deno.json", "deno"],
  ["bun.lockb", "bun"],
  ["bun.lock", "bun"],
  ["package.json", "node"],
];

export function detectRuntime(cwd: string = process.cwd()): string {
  for (const [file, runtime] of RUNTIME_MARKERS) {
    try {
      if (existsSync(join(cwd, file))) return runtime;
    } catch {}
  }
  return "unknown";
}

export function detectEnvironment(cwd?: string): TrailEnvironment {
  return {
    os: osName(),
    os_version: release().slice(0, 100),
    arch: archName(),
    runtime: { name: detectRuntime(cwd) },
  };
}

// A trail whose fix is the given commands and patches, everything else fixed and ordinary: what the
// risk rule tests assess (the rules read a fix's commands and patches, not its error).
import type { Trail } from "../../src/core/trail.ts";

export type PatchOf = { file_path: string; diff: string };

export const trailWith = (commands: string[], patches: PatchOf[] = []): Trail => ({
  protocol_version: "1.0",
  problem: { error: "Error: EACCES: permission denied, open '/app/cache'" },
  solution: { summary: "fix", commands, code_patches: patches.length ? patches : undefined, steps: ["x"] },
  agent_info: { model: "m", framework: "f" },
  environment: { os: "linux", runtime: { name: "node" } },
});

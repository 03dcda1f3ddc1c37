// An eval case as a protocol Trail. The mapping is fixed by the task brief: summary = root_cause,
// patches become code_patches, a missing os becomes "other". Shared by the eval corpus in
// shared/eval and the dev set in eval/devset.json (both carry these fields).
import type { Trail } from "../../src/core/trail.ts";
import { OS_VALUES } from "../../src/core/trail.ts";
import type { EvalCase } from "./paths.ts";

const toOs = (os: string | null | undefined): Trail["environment"]["os"] =>
  (OS_VALUES as readonly string[]).includes(os ?? "") ? (os as Trail["environment"]["os"]) : "other";

export function trailFromCase(c: EvalCase): Trail {
  const trail: Trail = {
    protocol_version: "1.0",
    problem: { error: c.error_line, root_cause: c.root_cause },
    solution: { summary: c.root_cause },
    agent_info: { model: "test", framework: "test" },
    environment: { os: toOs(c.os), runtime: { name: c.runtime || "other" } },
  };
  if (c.error_type) trail.problem.error_type = c.error_type;
  if (c.steps.length > 0) trail.solution.steps = [...c.steps];
  if (c.commands.length > 0) trail.solution.commands = [...c.commands];
  if (c.patches.length > 0) trail.solution.code_patches = c.patches.map((p) => ({ file_path: p.file_path, diff: p.diff }));
  return trail;
}

// Turns eval cases (errors-dev.json) into protocol Trails, so tests can run real-looking trails
// through the content detectors, the store and the API. The mapping is fixed by the task brief:
// summary = root_cause, patches become code_patches, a missing os becomes "other".
import type { Trail } from "../../src/core/trail.ts";
import { OS_VALUES } from "../../src/core/trail.ts";
import { loadEval, type EvalCase } from "./paths.ts";

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

/** Every eval case as a trail, with its case for reference. */
export function evalTrails(): { case: EvalCase; trail: Trail }[] {
  return loadEval().cases.map((c) => ({ case: c, trail: trailFromCase(c) }));
}

/** Every text an eval case holds (error line, variant, paraphrase, related, root cause, steps, commands, patches), plus the negatives. */
export function evalTexts(): { id: string; field: string; text: string }[] {
  const { cases, negatives } = loadEval();
  const out: { id: string; field: string; text: string }[] = [];
  for (const c of cases) {
    const add = (field: string, text: string | null | undefined) => {
      if (text) out.push({ id: c.id, field, text });
    };
    add("error_line", c.error_line);
    add("error_type", c.error_type);
    add("root_cause", c.root_cause);
    add("variant", c.variant);
    add("paraphrase", c.paraphrase);
    add("related", c.related);
    c.steps.forEach((s, i) => add(`steps/${i}`, s));
    c.commands.forEach((s, i) => add(`commands/${i}`, s));
    c.patches.forEach((p, i) => {
      add(`patches/${i}/file_path`, p.file_path);
      add(`patches/${i}/diff`, p.diff);
    });
  }
  negatives.forEach((n, i) => out.push({ id: `negative${i}`, field: "negative", text: n }));
  return out;
}

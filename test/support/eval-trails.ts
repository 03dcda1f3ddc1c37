// Turns eval cases into protocol Trails, so tests can run real-looking trails through the content
// detectors, the store and the API (the mapping: case-trail.ts). Tests use the project's dev set
// (loadEval); benchmarks pass the shared corpus (loadSharedEval).
import type { Trail } from "../../src/core/trail.ts";
import { trailFromCase } from "./case-trail.ts";
import { type EvalCase, type EvalCorpus, loadEval } from "./paths.ts";

export { trailFromCase };

/** Every eval case as a trail, with its case for reference. */
export function evalTrails(corpus: EvalCorpus = loadEval()): { case: EvalCase; trail: Trail }[] {
  return corpus.cases.map((c) => ({ case: c, trail: trailFromCase(c) }));
}

/** Every text an eval case holds (error line, queries, root cause, steps, commands, patches), plus the negatives. */
export function evalTexts(corpus: EvalCorpus = loadEval()): { id: string; field: string; text: string }[] {
  const { cases, negatives } = corpus;
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
    c.queries?.forEach((q, i) => add(`queries/${i}`, q.text));
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

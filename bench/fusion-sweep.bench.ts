// The sweep behind VECTOR_WEIGHT_BY_MODEL.static (src/core/ranking.ts): hybrid recall on the dev
// set (errors-dev.json, which issue 5 allows tuning on) among the same 12,000 distractors as
// bench/search-quality.bench.ts, for a few vector weights. Coarse on purpose: 44 cases cannot
// support a fine fit. Run: node_modules/.bin/bun bench/fusion-sweep.bench.ts [--quick]
import { evalTrails } from "../test/support/eval-trails";
import { loadSharedEval } from "../test/support/paths";
import { benchDir, inProcessColony, removeDir, seedTrails } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { args, REPO_DIR } from "./lib/report";

const QUICK = args.includes("--quick");
const DISTRACTORS = QUICK ? 2000 : 12_000;
const SETTINGS: { fusion: "rrf" | "blend"; w: number }[] = [
  ...[1, 0.5, 0.25, 0.1, 0.05, 0].map((w) => ({ fusion: "rrf" as const, w })),
  ...[1, 0.5, 0.25, 0.1].map((w) => ({ fusion: "blend" as const, w })),
];
type Kind = "variant" | "paraphrase" | "related";

const cases = evalTrails(loadSharedEval());
const dir = benchDir();
const colony = await inProcessColony(dir);
try {
  const service = colony.service;
  const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-sweep", agentDeclared: true };
  const published = [];
  for (const c of cases) published.push((await service.trails.publish(c.trail, { ...caller, agent: `case-author-${c.case.id}` })).body);
  await seedTrails(colony, distractorTrails(REPO_DIR, DISTRACTORS, 5), { chunk: 4000 });
  const expected = await Promise.all(
    published.map(async (p) => {
      const s = (await service.trails.status(p.trail_id)) as { status: string; merged_into?: string };
      return s.status === "merged" ? s.merged_into! : p.trail_id;
    }),
  );
  console.log(`${cases.length} cases + ${DISTRACTORS} distractors; recall@1 / recall@3 of the hybrid`);
  console.log("fusion, vector weight | variant       | paraphrase    | related");
  for (const { fusion, w } of SETTINGS) {
    service.search.fusion = fusion;
    service.search.weights = { lexical: 1, vector: w };
    const hits: Record<Kind, { at1: number; at3: number; n: number }> = {
      variant: { at1: 0, at3: 0, n: 0 },
      paraphrase: { at1: 0, at3: 0, n: 0 },
      related: { at1: 0, at3: 0, n: 0 },
    };
    for (const [i, c] of cases.entries()) {
      for (const kind of ["variant", "paraphrase", "related"] as Kind[]) {
        const query = c.case[kind];
        if (!query) continue;
        const env = await service.search.search({ query, limit: 3 }, caller);
        const rank = env.results.findIndex((r) => r.trail_id === expected[i]);
        hits[kind].n++;
        if (rank === 0) hits[kind].at1++;
        if (rank >= 0 && rank < 3) hits[kind].at3++;
      }
    }
    const cell = (k: Kind) => `${(hits[k].at1 / hits[k].n).toFixed(3)} / ${(hits[k].at3 / hits[k].n).toFixed(3)}`;
    console.log(`${`${fusion}, ${w}`.padEnd(21)} | ${cell("variant")} | ${cell("paraphrase")} | ${cell("related")}`);
  }
} finally {
  await colony.stop();
  removeDir(dir);
}

// Search quality (issue 5): every case of the dev eval set as a trail, among >= 10,000 distractor
// trails made from real error strings on this machine; each case's variant / paraphrase / related
// query searched in three systems side by side: lexical only, vector only, hybrid (production).
// Measurement only: nothing here feeds back into the ranking constants or the model.
// `--backend postgres` runs it on a throwaway PostgreSQL (bench/lib/backend.ts).
// Run: node_modules/.bin/bun bench/search-quality.bench.ts [--quick] [--backend sqlite|postgres]
import { fingerprint } from "../src/core/fingerprint";
import type { RetrievalMode } from "../src/service/search";
import { evalTrails } from "../test/support/eval-trails";
import { loadSharedEval } from "../test/support/paths";
import { backendEnv, chosenBackends, stopBackends } from "./lib/backend";
import { benchDir, inProcessColony, removeDir, seedTrails } from "./lib/colony";
import { corpusIdentity, corpusLine, distractorTrails } from "./lib/corpus";
import { f1, f3, Figures, log, percentile, QUICK, REPO_DIR, verdict } from "./lib/report";

const DISTRACTORS = QUICK ? 2000 : 12_000;
// The systems compared. The production ranker orders candidates by `service.search.fusion`
// ("blend": normalized BM25 + weighted cosine; "rrf": reciprocal rank fusion). In "lexical" mode
// the blend still re-orders the BM25 candidates with their cosine, so the pure lexical system is
// lexical mode under rank fusion (BM25 order alone). Reference: the hybrid under equal-weight RRF.
interface System {
  name: string;
  mode: RetrievalMode;
  fusion?: "blend" | "rrf";
  weights?: { lexical: number; vector: number };
}
const SYSTEMS: System[] = [
  { name: "lexical", mode: "lexical", fusion: "rrf" },
  { name: "vector", mode: "vector" },
  { name: "hybrid", mode: "hybrid" },
  { name: "lex+blend", mode: "lexical" },
  { name: "rrf 1:1", mode: "hybrid", fusion: "rrf", weights: { lexical: 1, vector: 1 } },
];
const MODES = SYSTEMS.map((s) => s.name);
const KINDS = ["variant", "paraphrase", "related"] as const;
type Kind = (typeof KINDS)[number];
const TARGETS: Record<Kind, { k: 1 | 3; min: number }> = {
  variant: { k: 1, min: 0.98 },
  paraphrase: { k: 3, min: 0.95 },
  related: { k: 3, min: 0.85 },
};

const backends = chosenBackends();
if (backends.length !== 1) throw new Error("search-quality runs on one backend at a time: --backend sqlite or --backend postgres");
const backend = backends[0]!;
const figures = new Figures(backend === "sqlite" ? "search-quality" : `search-quality-${backend}`);
const cases = evalTrails(loadSharedEval());
const { negatives } = loadSharedEval();
const t0 = performance.now();
const distractors = distractorTrails(REPO_DIR, DISTRACTORS, 5);
log(`distractors: ${distractors.length} trails from real error strings (${f1((performance.now() - t0) / 1000)} s to build)`);
const distractorCorpus = corpusIdentity(REPO_DIR);
log(corpusLine(distractorCorpus));
figures.set("distractor_corpus", distractorCorpus);

const dir = benchDir();
const colony = await inProcessColony(dir, await backendEnv(backend));
log(`store: ${backend}`);
try {
  const service = colony.service;
  const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-quality", agentDeclared: true };
  // Cases first, so a distractor identical in merge key would merge into the case, not the reverse.
  const published = [];
  for (const c of cases) published.push((await service.trails.publish(c.trail, { ...caller, agent: `case-author-${c.case.id}` })).body);
  const seeding = await seedTrails(colony, distractors, { chunk: 4000 });
  log(`loaded ${cases.length} cases + ${distractors.length} distractors in ${f1(seeding.totalS)} s (drain ${f1(seeding.drainS)} s)`);
  const counts = Object.entries(await colony.subsystems.store!.trails.countByStatus())
    .filter(([, n]) => n > 0)
    .map(([status, n]) => ({ status, n }));
  log(`trail statuses: ${counts.map((c) => `${c.status} ${c.n}`).join(", ")}`);
  figures.set("corpus", { cases: cases.length, distractors: distractors.length, load_s: seeding.totalS, statuses: counts });

  // The trail a case should find: its own, or the one it merged into.
  const expected = await Promise.all(
    published.map(async (p, i) => {
      const s = (await service.trails.status(p.trail_id)) as { status: string; merged_into?: string };
      return { caseId: cases[i]!.case.id, id: s.status === "merged" ? s.merged_into! : p.trail_id, status: s.status };
    }),
  );
  const notIndexed = expected.filter((e) => e.status !== "indexed" && e.status !== "merged");
  if (notIndexed.length) log(`cases not indexed: ${notIndexed.map((e) => `${e.caseId} (${e.status})`).join(", ")}`);

  interface Hit {
    rank: number | null; // 1-based rank of the expected trail in the top 5
    via: string | null;
    topScore: number | null;
    topCorrect: boolean;
    expectedScore: number | null;
  }
  const results: Record<string, Record<Kind, Hit[]>> = {};
  const searchMs: number[] = [];
  // The ranker's knobs, when this version of the service has them (set back after each system).
  const ranker = service.search as unknown as { fusion?: string; weights?: { lexical: number; vector: number } };
  const production = { fusion: ranker.fusion, weights: ranker.weights };
  log(
    `production ranker: fusion ${production.fusion ?? "(rrf, fixed)"}, weights ${JSON.stringify(production.weights ?? { lexical: 1, vector: 1 })}`,
  );
  figures.set("production_ranker", production);
  for (const system of SYSTEMS) {
    const mode = system.name;
    if ((system.fusion || system.weights) && production.fusion === undefined) {
      if (system.name !== "lexical") continue; // no knobs: only the built-in order exists
    }
    if (system.fusion && production.fusion !== undefined) ranker.fusion = system.fusion;
    if (system.weights && production.weights !== undefined) ranker.weights = system.weights;
    results[mode] = { variant: [], paraphrase: [], related: [] };
    for (const kind of KINDS) {
      for (let i = 0; i < cases.length; i++) {
        const query = cases[i]!.case[kind];
        if (!query) continue;
        const s0 = performance.now();
        const env = await service.search.search({ query, limit: 5 }, caller, system.mode);
        searchMs.push(performance.now() - s0);
        const idx = env.results.findIndex((r) => r.trail_id === expected[i]!.id);
        results[mode]![kind].push({
          rank: idx >= 0 ? idx + 1 : null,
          via: idx >= 0 ? env.results[idx]!.match.via : null,
          topScore: env.results[0]?.match.score ?? null,
          topCorrect: idx === 0,
          expectedScore: idx >= 0 ? env.results[idx]!.match.score : null,
        });
      }
    }
    if (production.fusion !== undefined) ranker.fusion = production.fusion;
    if (production.weights !== undefined) ranker.weights = production.weights;
  }
  const SHOWN = MODES.filter((m) => results[m]);

  const recall = (hits: Hit[], k: number) => hits.filter((h) => h.rank !== null && h.rank <= k).length / hits.length;
  log("");
  log(`recall over ${cases.length} cases among ${distractors.length} distractors (n = queries; top 5 asked):`);
  log(`  ${"query".padEnd(11)} ${"n".padStart(3)}  ${SHOWN.map((m) => `${m} @1 / @3`.padStart(22)).join("")}   target (hybrid)`);
  const table: Record<string, unknown>[] = [];
  for (const kind of KINDS) {
    const n = results.hybrid![kind].length;
    const cells = SHOWN.map((m) => `${f3(recall(results[m]![kind], 1))} / ${f3(recall(results[m]![kind], 3))}`.padStart(22));
    const { k, min } = TARGETS[kind];
    const hybrid = recall(results.hybrid![kind], k);
    const best = Math.max(recall(results.lexical![kind], k), recall(results.vector![kind], k));
    const viaFp = results.hybrid![kind].filter((h) => h.via === "fingerprint").length;
    log(
      `  ${kind.padEnd(11)} ${String(n).padStart(3)}  ${cells.join("")}   recall@${k} >= ${min}: ${verdict(hybrid >= min)}; ` +
        `hybrid >= best single (${f3(best)}): ${verdict(hybrid >= best)}; found via fingerprint: ${viaFp}`,
    );
    const row: Record<string, unknown> = {
      kind,
      n,
      target_k: k,
      target: min,
      met: hybrid >= min,
      hybrid_at_least_best: hybrid >= best,
      via_fingerprint: viaFp,
    };
    for (const m of SHOWN) row[m] = { r1: recall(results[m]![kind], 1), r3: recall(results[m]![kind], 3) };
    table.push(row);
  }
  figures.set("recall", table);

  // Misses, by case id, so a reader can look at them (not to tune on them).
  for (const kind of KINDS) {
    const misses: string[] = [];
    let j = 0;
    for (let i = 0; i < cases.length; i++) {
      if (!cases[i]!.case[kind]) continue;
      const h = results.hybrid![kind][j++]!;
      if (h.rank === null || h.rank > TARGETS[kind].k) misses.push(`${cases[i]!.case.id}${h.rank ? `@${h.rank}` : ""}`);
    }
    if (misses.length) log(`  hybrid ${kind} misses at @${TARGETS[kind].k}: ${misses.join(" ")}`);
  }

  // Diagnostic: the vector index alone, without the fingerprint step, through the production
  // binary-quantized pass + re-score and through exact float KNN, to see what quantization costs.
  const { vectors, embedder, store } = colony.subsystems;
  log("");
  log("diagnostic, pure vector KNN (no fingerprint step), recall@1 / @3:");
  const knn: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const idx = cases.map((c, i) => [c.case[kind], i] as const).filter((x): x is readonly [string, number] => !!x[0]);
    const qs = await embedder!.embed(idx.map(([q]) => q));
    const ranks = { quantized: [] as (number | null)[], exact: [] as (number | null)[] };
    for (const [j, [, i]] of idx.entries()) {
      const seq = (await store!.trails.byId(expected[i]!.id))!.seq;
      const r1 = (await vectors!.search(qs[j]!, 5)).findIndex((h) => h.id === seq);
      const r2 = (await vectors!.searchExact(qs[j]!, 5)).findIndex((h) => h.id === seq);
      ranks.quantized.push(r1 >= 0 ? r1 + 1 : null);
      ranks.exact.push(r2 >= 0 ? r2 + 1 : null);
    }
    const rk = (xs: (number | null)[], k: number) => xs.filter((r) => r !== null && r <= k).length / xs.length;
    log(
      `  ${kind.padEnd(11)} quantized+rescore ${f3(rk(ranks.quantized, 1))} / ${f3(rk(ranks.quantized, 3))}   exact ${f3(rk(ranks.exact, 1))} / ${f3(rk(ranks.exact, 3))}`,
    );
    knn[kind] = {
      quantized: { r1: rk(ranks.quantized, 1), r3: rk(ranks.quantized, 3) },
      exact: { r1: rk(ranks.exact, 1), r3: rk(ranks.exact, 3) },
    };
  }
  figures.set("pure_vector_knn", knn);

  // "Strong match" threshold: the 5th percentile of the cosine of correct semantic top results
  // of paraphrase queries (hybrid). Negatives have no trail in the colony.
  const correctTop = results.hybrid!.paraphrase.filter((h) => h.topCorrect && h.via === "semantic").map((h) => h.topScore!);
  const wrongTop = KINDS.flatMap((k) => results.hybrid![k].filter((h) => !h.topCorrect && h.topScore !== null).map((h) => h.topScore!));
  const threshold = percentile(correctTop, 5);
  log("");
  log(
    `strong-match threshold = 5th percentile of correct paraphrase top-result cosines (hybrid, n=${correctTop.length}): ${f3(threshold)} ` +
      `(correct: min ${f3(Math.min(...correctTop))}, median ${f3(percentile(correctTop, 50))}; wrong top results over all queries: n=${wrongTop.length}, median ${f3(percentile(wrongTop, 50))}, max ${f3(wrongTop.length ? Math.max(...wrongTop) : NaN)})`,
  );
  const negRows: { text: string; top: number | null; via: string | null; strong: boolean; topError: string | null }[] = [];
  for (const text of negatives) {
    const env = await service.search.search({ query: text, limit: 5 }, caller, "hybrid");
    const top = env.results[0];
    negRows.push({
      text,
      top: top?.match.score ?? null,
      via: top?.match.via ?? null,
      strong: !!top && top.match.score >= threshold,
      topError: top?.trail.problem.error ?? null,
    });
  }
  const strong = negRows.filter((r) => r.strong).length;
  log(`negatives (${negatives.length}, hybrid): top result above the threshold for ${strong} of ${negatives.length}`);
  for (const r of negRows) {
    log(`  ${r.top === null ? "no result" : `${f3(r.top)} (${r.via})`}${r.strong ? "  STRONG" : ""}   ${r.text.slice(0, 90)}`);
    if (r.topError) log(`      top result: ${r.topError.slice(0, 110)}`);
  }
  figures.set("negatives", {
    threshold,
    threshold_rule: "p5 of correct paraphrase top cosines (hybrid, semantic)",
    correct_top: correctTop,
    wrong_top_median: percentile(wrongTop, 50),
    strong,
    total: negatives.length,
    rows: negRows,
  });
  figures.set("fingerprint_shared_by_variant", cases.filter((c) => fingerprint(c.case.variant) === fingerprint(c.case.error_line)).length);
  log(
    `variants sharing the fingerprint of their case's error line: ${cases.filter((c) => fingerprint(c.case.variant) === fingerprint(c.case.error_line)).length} of ${cases.length}`,
  );
  log(
    `in-process search latency over all ${searchMs.length} queries: p50 ${f1(percentile(searchMs, 50))} ms, p99 ${f1(percentile(searchMs, 99))} ms`,
  );
} finally {
  await colony.stop();
  removeDir(dir);
  await stopBackends();
}
figures.write();

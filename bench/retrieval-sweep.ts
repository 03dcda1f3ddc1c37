// Tuning aid for issue 16: the dev set's tune split (never holdout) among the devset bench's 5,000
// distractors, searched under several fusion settings of the running SearchService. Prints R@1 /
// R@3 per kind, negatives rated weak and the precision of `strong` tops, per setting.
// Run: node_modules/.bin/bun bench/retrieval-sweep.ts
import { trailFromCase } from "../test/support/case-trail";
import { loadDevset, QUERY_KINDS } from "../test/support/devset";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { lexicalCoverage } from "../src/core/confidence";
import { RERANK_WEIGHTS, type RerankWeights } from "../src/core/ranking";
import type { SearchService } from "../src/service/search";
import type { SearchEnvelope } from "../src/service/trails";
import { benchDir, inProcessColony, removeDir, seedTrails } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { OUT_DIR, REPO_DIR } from "./lib/report";

const SPLIT = "tune";
const topRow = (query: string, env: SearchEnvelope, correct: boolean) => {
  const top = env.results[0];
  return {
    via: top?.match.via ?? null,
    cosine: top?.match.score ?? null,
    coverage: top ? lexicalCoverage(query, `${top.trail.problem.error}\n${top.trail.problem.root_cause ?? ""}`) : null,
    correct,
  };
};
type Setting = { name: string; apply: (s: SearchService) => void };
const setting = (name: string, vector: number, reranking: boolean, w?: RerankWeights): Setting => ({
  name,
  apply: (s) => {
    s.weights = { lexical: 1, vector };
    s.reranking = reranking;
    if (w) Object.assign(RERANK_WEIGHTS, w);
  },
});
const production = { ...RERANK_WEIGHTS };
const SETTINGS: Setting[] = [
  setting("blend 0.25 (session 3)", 0.25, false),
  setting("blend 0.25 + rerank", 0.25, true, production),
  ...(process.env.SWEEP_RERANK ? (JSON.parse(process.env.SWEEP_RERANK) as number[][]) : []).map(([l, v, c]) =>
    setting(`blend 0.25 + rerank ${l}/${v}/${c}`, 0.25, true, { lexical: l!, vector: v!, coverage: c! }),
  ),
];

const devset = loadDevset();
const dir = benchDir();
const colony = await inProcessColony(dir);
try {
  const service = colony.service;
  const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-devset", agentDeclared: true };
  const published = [];
  for (const c of devset.cases) {
    const body = (await service.trails.publish(trailFromCase(c), { ...caller, agent: `case-author-${c.id}` })).body;
    published.push({ c, id: body.trail_id });
  }
  await seedTrails(colony, distractorTrails(REPO_DIR, 5000, 7), { chunk: 2500 });
  const expected = new Map<string, string>();
  for (const p of published) {
    const s = (await service.trails.status(p.id)) as { status: string; merged_into?: string };
    expected.set(p.c.id, s.status === "merged" ? s.merged_into! : p.id);
  }
  if (process.argv.includes("--cpu")) {
    // CPU time per search, reranking off and on, interleaved in rounds over the same queries.
    const texts = published.filter((p) => p.c.split === SPLIT).flatMap((p) => p.c.queries.map((q) => q.text));
    const cpu = { off: [] as number[], on: [] as number[] };
    for (let round = 0; round < 6; round++) {
      for (const mode of round % 2 ? (["on", "off"] as const) : (["off", "on"] as const)) {
        service.search.reranking = mode === "on";
        const c0 = process.cpuUsage();
        for (const t of texts) await service.search.search({ query: t, limit: 5 }, caller);
        const c1 = process.cpuUsage(c0);
        cpu[mode].push((c1.user + c1.system) / 1000 / texts.length);
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `CPU ms per search over ${texts.length} queries x 6 rounds: reranking off ${med(cpu.off).toFixed(3)} (${cpu.off.map((x) => x.toFixed(3)).join(" ")}), on ${med(cpu.on).toFixed(3)} (${cpu.on.map((x) => x.toFixed(3)).join(" ")})`,
    );
    SETTINGS.length = 0;
  }
  for (const setting of SETTINGS) {
    setting.apply(service.search);
    const line: string[] = [];
    const rows: unknown[] = [];
    let strong = 0;
    let strongRight = 0;
    for (const kind of QUERY_KINDS) {
      let n = 0;
      let r1 = 0;
      let r3 = 0;
      for (const p of published.filter((p) => p.c.split === SPLIT)) {
        for (const q of p.c.queries.filter((q) => q.kind === kind)) {
          const env = await service.search.search({ query: q.text, limit: 5 }, caller);
          const idx = env.results.findIndex((r) => r.trail_id === expected.get(p.c.id));
          n++;
          if (idx === 0) r1++;
          if (idx >= 0 && idx < 3) r3++;
          rows.push(topRow(q.text, env, idx === 0));
          if (env.results[0]?.match.confidence === "strong") {
            strong++;
            if (idx === 0) strongRight++;
          }
        }
      }
      line.push(`${kind} ${(r1 / n).toFixed(3)}/${(r3 / n).toFixed(3)}`);
    }
    let weak = 0;
    const negs = devset.negatives.filter((n) => n.split === SPLIT);
    for (const neg of negs) {
      const env = await service.search.search({ query: neg.text, limit: 5 }, caller);
      rows.push(topRow(neg.text, env, false));
      const top = env.results[0]?.match.confidence;
      if (!top || top === "weak") weak++;
      else if (top === "strong") strong++;
    }
    line.push(`neg weak ${weak}/${negs.length}`, `strong right ${strongRight}/${strong} = ${(strongRight / strong).toFixed(3)}`);
    console.log(`${setting.name.padEnd(24)} ${line.join("  ")}`);
    // The top results' confidence inputs, for re-deriving the thresholds on this split.
    writeFileSync(join(OUT_DIR, `retrieval-sweep-${SPLIT}-${SETTINGS.indexOf(setting)}.json`), JSON.stringify(rows));
  }
} finally {
  await colony.stop();
  removeDir(dir);
}

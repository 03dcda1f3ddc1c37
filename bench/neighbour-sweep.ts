// The neighbour-expansion experiment's sweep (bench/RESULTS.md, Session 19): the dev set loaded once
// as bench/devset.bench.ts loads it (every case, 5,000 distractors, seed 7), the lexical search
// replaced by bench/lib/neighbour-expansion.ts's copy, then every query of the TUNE split (and its
// negatives) asked once per setting. The holdout split's queries are never asked.
// Writes OUT_DIR/base.jsonl (no expansion, in --dump's format: it must equal the shipped search's
// dump) and OUT_DIR/settings.jsonl (one line per setting and query: rank, confidence, the terms added),
// for bench/neighbour-cv.py.
// Run: node_modules/.bin/bun bench/neighbour-sweep.ts TABLE.json OUT_DIR [SETTING ...]
//   SETTING is minSimilarity,perTerm,weight,filter (bench/lib/neighbour-expansion.ts); without any,
//   the grid below. `--cpu`: then CPU time per search, no expansion against each setting, in
//   interleaved rounds over the same queries (the copy answers the lexical search in both).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lexicalIndexTokens } from "../src/core/lexical";
import type { LexicalIndex } from "../src/store/ports";
import { loadDevset } from "../test/support/devset";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { DEVSET_CALLER, publishDevset } from "./lib/devset-colony";
import {
  ExpansionLexical,
  type ExpansionSetting,
  loadNeighbourTable,
  NEIGHBOUR_FILTERS,
  parseSetting,
  settingName,
} from "./lib/neighbour-expansion";
import { f1, f2, log, percentile, REPO_DIR } from "./lib/report";

const cpu = process.argv.includes("--cpu");
const [tableFile, outDir, ...given] = process.argv.slice(2).filter((a) => a !== "--cpu");
if (!tableFile || !outDir) throw new Error("usage: bun bench/neighbour-sweep.ts TABLE.json OUT_DIR [SETTING ...]");
const grid: ExpansionSetting[] = given.length
  ? given.map(parseSetting)
  : NEIGHBOUR_FILTERS.flatMap((filter) =>
      [0.6, 0.7, 0.8].flatMap((minSimilarity) =>
        [1, 3].flatMap((perTerm) => [0.25, 0.5, 1].map((weight) => ({ minSimilarity, perTerm, weight, filter, side: "query" as const }))),
      ),
    );
mkdirSync(outDir, { recursive: true });

const devset = loadDevset();
const distractors = distractorTrails(REPO_DIR, 5000, 7);
const expansion = new ExpansionLexical(loadNeighbourTable(tableFile));
const dir = benchDir();
const colony = await inProcessColony(dir);
try {
  // The SQLite store's lexical index outside a transaction is a view whose prototype is the index
  // transactions write to (store/sqlite/store.ts `outside`): the copy follows that one.
  expansion.install(Object.getPrototypeOf(colony.subsystems.store!.lexical) as LexicalIndex);
  const { published, expected, seeding } = await publishDevset(colony, devset.cases, distractors);
  const label = new Map<string, string>([
    ...seeding.ids.map((id, i): [string, string] => [id, `x${i}`]),
    ...published.map((p): [string, string] => [p.id, p.c.id]),
  ]);
  const queries = [
    ...published
      .filter((p) => p.c.split === "tune")
      .flatMap((p) =>
        p.c.queries.map((q, i) => ({ name: `${p.c.id}#${i}`, kind: q.kind as string, text: q.text, want: expected.get(p.c.id)! })),
      ),
    ...devset.negatives
      .filter((n) => n.split === "tune")
      .map((n) => ({ name: n.id, kind: "negative", text: n.text, want: null as string | null })),
  ];
  log(`${queries.length} tune queries, ${grid.length} settings`);
  const lines: string[] = [];
  for (const setting of [null, ...grid]) {
    expansion.setting = setting;
    const name = setting ? settingName(setting) : "none";
    const dumped: string[] = [];
    const ms: number[] = [];
    for (const q of queries) {
      const s0 = performance.now();
      const env = await colony.service.search.search({ query: q.text, limit: 5 }, DEVSET_CALLER);
      ms.push(performance.now() - s0);
      const idx = q.want === null ? -1 : env.results.findIndex((r) => r.trail_id === q.want);
      const rank = idx >= 0 ? idx + 1 : null;
      const top3 = env.results
        .slice(0, 3)
        .map((r) => [label.get(r.trail_id) ?? r.trail_id, r.match.via, r.match.score, r.match.confidence]);
      if (!setting) dumped.push(JSON.stringify({ query: q.name, kind: q.kind, rank, top3 }));
      expansion.weightedTerms(lexicalIndexTokens(q.text));
      lines.push(
        JSON.stringify({
          setting: name,
          query: q.name,
          kind: q.kind,
          rank,
          confidence: env.results[0]?.match.confidence ?? null,
          top: top3[0]?.[0] ?? null,
          added: expansion.lastExpansion.map(([t, w]) => `${t}:${w.toFixed(3)}`),
        }),
      );
    }
    if (!setting) writeFileSync(join(outDir, "base.jsonl"), `${dumped.join("\n")}\n`);
    log(`${name}: search p50 ${f1(percentile(ms, 50))} ms`);
  }
  writeFileSync(join(outDir, "settings.jsonl"), `${lines.join("\n")}\n`);
  if (cpu) {
    for (const setting of grid) {
      const ms = { none: [] as number[], setting: [] as number[] };
      for (let round = 0; round < 6; round++) {
        for (const arm of round % 2 ? (["setting", "none"] as const) : (["none", "setting"] as const)) {
          expansion.setting = arm === "none" ? null : setting;
          const c0 = process.cpuUsage();
          for (const q of queries) await colony.service.search.search({ query: q.text, limit: 5 }, DEVSET_CALLER);
          const c1 = process.cpuUsage(c0);
          ms[arm].push((c1.user + c1.system) / 1000 / queries.length);
        }
      }
      const median = (xs: number[]) => percentile(xs, 50);
      log(
        `CPU per search, 6 interleaved rounds: none ${ms.none.map(f2).join(" ")} ms (median ${f2(median(ms.none))}); ` +
          `${settingName(setting)} ${ms.setting.map(f2).join(" ")} ms (median ${f2(median(ms.setting))})`,
      );
    }
  }
} finally {
  await colony.stop();
  removeDir(dir);
}

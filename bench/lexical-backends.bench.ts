// Lexical query time on each store (issue 18): the dev set's cases and real-error distractor trails
// as lexical documents in SQLite (FTS5 bm25) and PostgreSQL (GIN candidates scored by core/bm25.ts),
// and, for reference, PostgreSQL's previous ranking (ts_rank over the same candidates, no idf).
// Each query runs on the three in turn (interleaved, so machine load hits them alike).
// `--copies N` repeats the PostgreSQL documents N times (new ids, term statistics and totals
// recounted) to time PostgreSQL at N times the size; SQLite then stays at one copy.
// Run: node_modules/.bin/bun bench/lexical-backends.bench.ts [--quick] [--copies N]
import { loadavg } from "node:os";
import { getLoadablePath } from "sqlite-vec";
import { lexicalFields } from "../src/core/enrichment";
import { lexicalIndexTokens, selectQueryTerms } from "../src/core/lexical";
import type { LexicalDoc } from "../src/store/ports";
import { openPostgresStore } from "../src/store/postgres/store";
import { openDatabase } from "../src/store/sqlite/database";
import { createSqliteStore } from "../src/store/sqlite/store";
import { trailFromCase } from "../test/support/case-trail";
import { loadDevset } from "../test/support/devset";
import { startPostgres } from "../test/support/postgres";
import { benchDir, removeDir } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { f1, f2, Figures, flag, log, percentile, QUICK, REPO_DIR } from "./lib/report";

const DISTRACTORS = QUICK ? 1500 : 5000;
const COPIES = Number(flag("--copies") ?? 1);
const K = 30;
const figures = new Figures(COPIES > 1 ? `lexical-backends-x${COPIES}` : "lexical-backends");
const devset = loadDevset();
const docs: LexicalDoc[] = [...devset.cases.map(trailFromCase), ...distractorTrails(REPO_DIR, DISTRACTORS, 7)].map(lexicalFields);
const queries = devset.cases.flatMap((c) => c.queries.map((q) => q.text)).filter((_, i) => i % 3 === 0);
log(`${docs.length} documents, ${queries.length} queries, PostgreSQL at ${COPIES} cop${COPIES === 1 ? "y" : "ies"}`);

const dir = benchDir();
const db = openDatabase({ dataDir: dir, sqliteVecPath: getLoadablePath() });
const sqlite = createSqliteStore(db);
const server = await startPostgres();
const postgres = await openPostgresStore({ url: await server.createDatabase(), poolSize: 4 });
try {
  const t0 = performance.now();
  for (let i = 0; i < docs.length; i++) {
    await sqlite.lexical.add(i + 1, docs[i]!);
    await postgres.lexical.add(i + 1, docs[i]!);
  }
  const sql = postgres.sql;
  if (COPIES > 1) {
    await sql`INSERT INTO lexical (id, doc, error_tokens, tokens)
      SELECT c * 1000000 + id, doc, error_tokens, tokens FROM lexical, generate_series(1, ${COPIES - 1}) AS c`;
    await sql`UPDATE lexical_terms SET docs = docs * ${COPIES}`;
    await sql`UPDATE lexical_totals SET docs = docs * ${COPIES}, tokens = tokens * ${COPIES}`;
  }
  await sql`VACUUM ANALYZE lexical`;
  log(`indexed in ${f1((performance.now() - t0) / 1000)} s`);

  // The previous PostgreSQL ranking, for reference: ts_rank (error line weighted twice the body,
  // divided by 1 + log(length)) over the documents with any of the same chosen terms.
  const tsRank = async (tokens: string[]) => {
    const distinct = [...new Set(tokens)];
    const rows = await sql`SELECT term, docs FROM lexical_terms WHERE term = ANY(${distinct}::text[])`;
    const [{ docs: total }] = await sql`SELECT docs FROM lexical_totals`;
    const chosen = selectQueryTerms(distinct, new Map(rows.map((r: any) => [r.term, Number(r.docs)])), Number(total));
    if (chosen.length === 0) return [];
    return sql`SELECT id, ts_rank('{0, 0, 0.5, 1.0}'::float4[], doc, q, 1) AS score
      FROM lexical, CAST(${chosen.map((t) => `'${t}'`).join(" | ")} AS tsquery) AS q
      WHERE doc @@ q ORDER BY score DESC, id ASC LIMIT ${K}`;
  };
  const systems: [string, (tokens: string[]) => Promise<unknown>][] = [
    ["sqlite (FTS5 bm25)", (t) => sqlite.lexical.search(t, K)],
    ["postgres (bm25, this change)", (t) => postgres.lexical.search(t, K)],
    ["postgres (ts_rank, before)", tsRank],
  ];
  const ms = new Map<string, number[]>(systems.map(([name]) => [name, []]));
  const load0 = loadavg()[0]!;
  for (let round = 0; round < 2; round++) {
    for (const q of queries) {
      const tokens = lexicalIndexTokens(q);
      for (const [name, run] of systems) {
        const s0 = performance.now();
        await run(tokens);
        if (round === 1) ms.get(name)!.push(performance.now() - s0); // round 0 warms the caches
      }
    }
  }
  const load = (load0 + loadavg()[0]!) / 2;
  const out: Record<string, unknown> = {};
  for (const [name, xs] of ms) {
    out[name] = { n: xs.length, p50: percentile(xs, 50), p90: percentile(xs, 90), p99: percentile(xs, 99) };
    log(`  ${name.padEnd(30)} p50 ${f2(percentile(xs, 50))} ms  p90 ${f2(percentile(xs, 90))} ms  p99 ${f2(percentile(xs, 99))} ms`);
  }
  log(`load average during the timing: ${f2(load)} (2 cores)`);
  figures.set("documents", { sqlite: docs.length, postgres: docs.length * COPIES });
  figures.set("lexical_query_ms", out);
  figures.set("load_average", load);
} finally {
  await postgres.close();
  db.close();
  await server.stop();
  removeDir(dir);
}
figures.write();

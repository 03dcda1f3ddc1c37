// The two stores rank lexical matches the same (issue 18: retrieval quality on PostgreSQL within
// 0.02 of SQLite). SQLite ranks with FTS5's bm25(); PostgreSQL scores with core/bm25.ts, from the
// postings of rare terms or from the documents its GIN index finds. Here the retrieval dev set
// shipped in eval/devset.json is indexed in both (each case's trail as a lexical document, some
// twice to make exact ties, one with repeated terms) and every query of the set is searched in
// both: the same hits in the same order with the same scores, also after documents are removed. Fusion, vectors and confidence
// run on the same code above either store, so equal lexical hits give equal search results.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { trailFromCase } from "../../test/support/case-trail";
import { loadDevset } from "../../test/support/devset";
import { type PostgresServer, postgresUnavailable, startPostgres } from "../../test/support/postgres";
import { lexicalFields } from "../core/enrichment";
import { lexicalDocument, lexicalTokens } from "../core/lexical";
import type { LexicalDoc, LexicalHit, Store } from "./ports";
import { openPostgresStore, type PostgresStore } from "./postgres/store";
import { openDatabase } from "./sqlite/database";
import { createSqliteStore } from "./sqlite/store";

const K = 30;
const unavailable = postgresUnavailable();
if (unavailable) console.warn(`lexical parity of SQLite and PostgreSQL skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)("lexical search: SQLite and PostgreSQL rank alike", () => {
  const devset = loadDevset();
  const docs = new Map<number, LexicalDoc>();
  devset.cases.forEach((c, i) => docs.set(i + 1, lexicalFields(trailFromCase(c))));
  // Exact ties (the same document under another id), and a term repeated in both fields.
  for (let i = 1; i <= 20; i++) docs.set(10_000 + i, docs.get(i * 7)!);
  docs.set(20_000, {
    error: lexicalDocument("ECONNREFUSED ECONNREFUSED connect ECONNREFUSED 127.0.0.1:5432"),
    body: lexicalDocument("PostgreSQL is not running: ECONNREFUSED until it starts; start postgresql then retry"),
  });
  // Every other query of each case (989), and every negative.
  const queries = [
    ...devset.cases.flatMap((c) => c.queries.filter((_, i) => i % 2 === 0).map((q) => q.text)),
    ...devset.negatives.map((n) => n.text),
  ];

  let server: PostgresServer;
  let dir: string;
  let sqlite: Store;
  let postgres: PostgresStore;
  let closeSqlite: () => void;

  beforeAll(async () => {
    server = await startPostgres();
    postgres = await openPostgresStore({ url: await server.createDatabase(), poolSize: 4 });
    dir = mkdtempSync(join(tmpdir(), "colony-lexical-parity-"));
    const db = openDatabase({ dataDir: dir, sqliteVecPath: getLoadablePath() });
    closeSqlite = () => db.close();
    sqlite = createSqliteStore(db);
    for (const [id, doc] of docs) {
      await sqlite.lexical.add(id, doc);
      await postgres.lexical.add(id, doc);
    }
  });

  afterAll(async () => {
    await postgres?.close();
    closeSqlite?.();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Queries whose hits differ: ids or order, or a score off by more than rounding. */
  async function differences(): Promise<string[]> {
    const found: string[] = [];
    const show = (hits: LexicalHit[]) => hits.map((h) => `${h.id}:${h.score.toFixed(6)}`).join(" ");
    // Four queries at a time: the PostgreSQL store has a pool of four connections.
    for (let i = 0; i < queries.length; i += 4) {
      await Promise.all(
        queries.slice(i, i + 4).map(async (q) => {
          const tokens = lexicalTokens(q);
          const [a, b] = [await sqlite.lexical.search(tokens, K), await postgres.lexical.search(tokens, K)];
          const same =
            a.length === b.length &&
            a.every((h, j) => h.id === b[j]!.id && Math.abs(h.score - b[j]!.score) <= 1e-9 * Math.max(1, Math.abs(h.score)));
          if (!same) found.push(`${JSON.stringify(q.slice(0, 80))}\n  sqlite   ${show(a.slice(0, 8))}\n  postgres ${show(b.slice(0, 8))}`);
        }),
      );
    }
    return found;
  }

  test("every dev-set query: the same hits, in the same order, with the same BM25 scores", async () => {
    const hits = await sqlite.lexical.search(lexicalTokens("ECONNREFUSED connect"), K);
    expect(hits[0]?.id).toBe(20_000); // the corpus is indexed and ranks by term frequency
    expect((await differences()).slice(0, 5)).toEqual([]);
  });

  test("after removals (term statistics and totals kept in step): still the same", async () => {
    for (const id of [...docs.keys()].filter((id) => id % 9 === 0)) {
      await sqlite.lexical.remove(id, docs.get(id)!);
      await postgres.lexical.remove(id, docs.get(id)!);
    }
    expect((await differences()).slice(0, 5)).toEqual([]);
  });

  test("scored from the documents (terms without postings, as common terms are): still the same", async () => {
    // Every term above has postings (none is in 1,000 documents); without them PostgreSQL scores
    // the documents the GIN index finds, from their tsvectors.
    const [{ n }] = await postgres.sql`SELECT count(*)::int AS n FROM lexical_terms WHERE NOT postings`;
    expect(n).toBe(0);
    await postgres.sql`UPDATE lexical_terms SET postings = false`;
    expect((await differences()).slice(0, 5)).toEqual([]);
  });
});

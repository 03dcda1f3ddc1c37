// The lexical index version (service/lexical-rebuild.ts): a colony whose lexical index was built by
// other tokens (here the stemming experiment's, core/lexical.ts setLexicalStems) is rebuilt from its
// stored trails, after which removals leave the term statistics exactly as an index built fresh
// with the current tokens has them; a rebuild that dies midway resumes. On real SQLite files and
// on PostgreSQL (test/support/postgres.ts). The trails are the dev set's tune cases.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { trailFromCase } from "../../test/support/case-trail";
import { indexStored } from "../../test/support/trail-rows";
import { loadDevset } from "../../test/support/devset";
import { type PostgresServer, postgresUnavailable, startPostgres } from "../../test/support/postgres";
import { lexicalFields } from "../core/enrichment";
import { lexicalIndexVersion, lexicalTokens, setLexicalStems } from "../core/lexical";
import type { Trail } from "../core/trail";
import type { Store } from "../store/ports";
import { openPostgresStore } from "../store/postgres/store";
import { openDatabase } from "../store/sqlite/database";
import { createSqliteStore } from "../store/sqlite/store";
import {
  LEXICAL_REBUILD_KEY,
  LEXICAL_VERSION_KEY,
  lexicalIndexOutdated,
  lexicalRebuildCounts,
  rebuildLexicalIndex,
} from "./lexical-rebuild";

const trails: Trail[] = loadDevset()
  .cases.filter((c) => c.split === "tune")
  .slice(0, 120)
  .map(trailFromCase);
/** Removed after the rebuild (and, in the resume test, while it is stopped). */
const removedSeqs = [3, 17, 40, 41, 77, 118];

interface Opened {
  store: Store;
  /** Every term's document count (non-zero), and the index's totals. */
  statistics(): Promise<{ terms: [string, number][]; totals: number[] }>;
  /** The same store opened again from its database (as after a crash); the old handle is closed. */
  reopen(): Promise<Opened>;
  close(): Promise<void>;
}

async function openSqlite(dir = mkdtempSync(join(tmpdir(), "colony-lexical-rebuild-"))): Promise<Opened> {
  const db = openDatabase({ dataDir: dir, sqliteVecPath: getLoadablePath() });
  const store = createSqliteStore(db);
  return {
    store,
    async statistics() {
      const terms = db
        .query<{ term: string; docs: number }, []>("SELECT term, docs FROM lexical_terms WHERE docs <> 0 ORDER BY term")
        .all()
        .map((r) => [r.term, r.docs] as [string, number]);
      const docs = db.query<{ value: number }, []>("SELECT value FROM counters WHERE name = 'lexical_docs'").get()!.value;
      const held = db.query<{ n: number }, []>("SELECT count(*) AS n FROM lexical_docsize").get()!.n;
      return { terms, totals: [docs, held] };
    },
    async reopen() {
      db.close();
      return openSqlite(dir);
    },
    async close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(url: string): Promise<Opened> {
  const store = await openPostgresStore({ url, poolSize: 4 });
  return {
    store,
    async statistics() {
      const terms = (await store.sql`SELECT term, docs::int AS docs FROM lexical_terms WHERE docs <> 0 ORDER BY term COLLATE "C"`).map(
        (r: any) => [r.term, r.docs] as [string, number],
      );
      const [t] = await store.sql`SELECT docs::int AS docs, tokens::int AS tokens FROM lexical_totals`;
      const [p] = await store.sql`SELECT count(*)::int AS n, coalesce(sum(count), 0)::float8 AS weight FROM lexical_postings`;
      return { terms, totals: [t.docs, t.tokens, p.n, p.weight] };
    },
    async reopen() {
      await store.close();
      return openPostgres(url);
    },
    close: () => store.close(),
  };
}

/** Stores trails as enrichment indexes them: indexed, with the lexical document of the tokens in force. */
async function storeIndexed(store: Store, list: Trail[]): Promise<void> {
  for (const trail of list)
    await store.transaction((tx) => indexStored(tx, trail, { risk: { level: "low", flags: [] }, contentRulesVersion: 1 }));
}

/** Removes trails as TrailService.remove does: the row, and its lexical document as tokenized now. */
async function removeTrails(store: Store, seqs: number[]): Promise<void> {
  for (const seq of seqs) {
    await store.transaction(async (tx) => {
      const record = (await tx.trails.bySeq(seq))!;
      await tx.trails.delete(seq);
      await tx.lexical.remove(seq, lexicalFields(record.trail));
    });
  }
}

/** A colony of the stemming experiment's tokens, as it records them: the index built with stems. */
async function storeWithStems(store: Store): Promise<void> {
  setLexicalStems(true);
  try {
    await storeIndexed(store, trails);
    await store.kv.set(LEXICAL_VERSION_KEY, lexicalIndexVersion());
  } finally {
    setLexicalStems(false);
  }
}

/** The same trails indexed by the current tokens from the start (the reference), then `removed`. */
async function freshStatistics(open: () => Promise<Opened>, removed: number[], extra: Trail[] = []) {
  const fresh = await open();
  try {
    await storeIndexed(fresh.store, [...trails, ...extra]);
    await removeTrails(fresh.store, removed);
    return { statistics: await fresh.statistics(), hits: await searches(fresh.store) };
  } finally {
    await fresh.close();
  }
}

/** Lexical hits for a few error lines (ids and scores). */
async function searches(store: Store): Promise<string[]> {
  const out: string[] = [];
  for (const t of trails.slice(0, 30)) {
    const hits = await store.lexical.search(lexicalTokens(t.problem.error), 10);
    out.push(hits.map((h) => `${h.id}:${h.score.toFixed(9)}`).join(" "));
  }
  return out;
}

/** A store that fails (as a crash would, rolling the batch back) on the `n`th batch a rebuild writes. */
function failingOnBatch(store: Store, n: number): Store {
  let batches = 0;
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key !== "transaction") return Reflect.get(target, key, receiver);
      return <T>(fn: (tx: any) => Promise<T>) =>
        target.transaction((tx) =>
          fn(
            new Proxy(tx, {
              get(t, k, r) {
                if (k !== "lexical") return Reflect.get(t, k, r);
                const lexical = Reflect.get(t, k, r);
                return new Proxy(lexical, {
                  get(l, m, lr) {
                    if (m !== "addMissing") return Reflect.get(l, m, lr);
                    return async (entries: unknown[]) => {
                      if (++batches === n) throw new Error("the process died here");
                      return l.addMissing(entries as any);
                    };
                  },
                });
              },
            }),
          ),
        );
    },
  });
}

function suite(name: string, open: () => Promise<Opened>) {
  describe(`the lexical index rebuilt for new tokens (${name})`, () => {
    test("an index built by other tokens is rebuilt; removals then leave the statistics of a fresh index", async () => {
      let colony = await open();
      try {
        await storeWithStems(colony.store);
        expect(await lexicalIndexOutdated(colony.store)).toBe(true);
        const resumed: number[] = [];
        const run = await rebuildLexicalIndex({ store: colony.store, batchSize: 50, onResume: (n) => resumed.push(n) });
        expect(run).toEqual({ trails: trails.length, current: true, started: true });
        expect(resumed).toEqual([]);
        expect(await lexicalIndexOutdated(colony.store)).toBe(false);
        expect(await colony.store.kv.get(LEXICAL_REBUILD_KEY)).toBeNull();
        colony = await colony.reopen();
        await removeTrails(colony.store, removedSeqs);
        const fresh = await freshStatistics(open, removedSeqs);
        expect(await colony.statistics()).toEqual(fresh.statistics);
        expect(await searches(colony.store)).toEqual(fresh.hits);
        // Current: a second start has nothing to do.
        expect(await rebuildLexicalIndex({ store: colony.store })).toEqual({ trails: 0, current: true, started: false });
      } finally {
        await colony.close();
      }
    });

    test("a rebuild that dies midway resumes after its last batch, with the writes made meanwhile", async () => {
      let colony = await open();
      try {
        await storeWithStems(colony.store);
        await expect(rebuildLexicalIndex({ store: failingOnBatch(colony.store, 3), batchSize: 25 })).rejects.toThrow(
          "the process died here",
        );
        expect(JSON.parse((await colony.store.kv.get(LEXICAL_REBUILD_KEY))!)).toEqual({
          version: lexicalIndexVersion(),
          after: 50,
          done: 50,
        });
        colony = await colony.reopen();
        expect(await lexicalIndexOutdated(colony.store)).toBe(true);
        // Meanwhile (another replica still serving): trails removed on both sides of the mark, one indexed.
        await removeTrails(colony.store, [10, 90]);
        const late = trails[5]!;
        const again = { ...late, problem: { ...late.problem, error: `${late.problem.error} (again)` } };
        await storeIndexed(colony.store, [again]);
        const resumedFrom: number[] = [];
        // What readiness reports (colony.ts): the count at start holds a trail removed since, below the mark.
        const counts = lexicalRebuildCounts(await colony.store.stats.trailsIndexed());
        const seen: [number, number][] = [];
        const run = await rebuildLexicalIndex({
          store: colony.store,
          batchSize: 25,
          onResume: (n) => {
            resumedFrom.push(n);
            counts.resumed(n);
          },
          onBatch: (n) => {
            counts.indexed(n);
            seen.push([counts.done, counts.total]);
          },
        });
        expect(run.started).toBe(false);
        // Its progress starts from the trails the first run had indexed, not from 0.
        expect(resumedFrom).toEqual([50]);
        for (const [done, total] of seen) expect(done).toBeLessThanOrEqual(total);
        // 50 before, 70 now (one removed after the mark, one new) against 119 indexed at start: "120 of 119" before.
        expect(seen.at(-1)).toEqual([trails.length, trails.length]);
        expect(run.trails).toBe(trails.length - 50 - 1 + 1); // after the mark: one removed, one new
        await removeTrails(colony.store, removedSeqs);
        const fresh = await freshStatistics(open, [10, 90, ...removedSeqs], [again]);
        expect(await colony.statistics()).toEqual(fresh.statistics);
        expect(await searches(colony.store)).toEqual(fresh.hits);
      } finally {
        await colony.close();
      }
    });
  });
}

suite("SQLite", () => openSqlite());

const unavailable = postgresUnavailable();
if (unavailable) console.warn(`the lexical rebuild on PostgreSQL skipped: ${unavailable}`);
let server: PostgresServer | undefined;
beforeAll(async () => {
  if (!unavailable) server = await startPostgres();
});
afterAll(async () => {
  await server?.stop();
});
if (!unavailable) suite("PostgreSQL", async () => openPostgres(await server!.createDatabase()));

// The store contract: every test here runs against each adapter (SQLite on a temporary file, and
// PostgreSQL on a throwaway server started by the test itself). Adapter-specific behaviour (file
// modes, WAL, migration locking) is tested beside each adapter.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { type PostgresServer, plainRows, postgresUnavailable, startPostgres } from "../../test/support/postgres";
import { lexicalDocument, lexicalTokens } from "../core/lexical";
import type { Trail } from "../core/trail";
import { EMPTY_FINGERPRINT, fingerprint, NORMALIZER_VERSION } from "../core/fingerprint";
import { addPreviousNormalizerAliases, trailFingerprints } from "../service/refingerprint";
import { TrailService, type TrailServiceDeps } from "../service/trails";
import { REINFORCED_AHEAD_AT_MOST_MS, type Store } from "./ports";
import { migratePostgres, PG_MIGRATIONS } from "./postgres/migrations";
import { countedRows } from "./postgres/repositories";
import { openPostgresStore, type PostgresStore } from "./postgres/store";
import { DATABASE_FILE, openDatabase } from "./sqlite/database";
import { MIGRATIONS } from "./sqlite/migrations";
import { createSqliteStore } from "./sqlite/store";

/** One database under test, seen through the adapter and, for inspection, through raw SQL. */
interface Opened {
  store: Store;
  /** Raw SQL with $1, $2 … parameters; for checking what the adapter stored. */
  query(text: string, ...params: unknown[]): Promise<any[]>;
  /** A value of the kv table read on a separate connection (sees only committed data). */
  readCommitted(key: string): Promise<string | null>;
  /** A second store over the same database (a restart, or another replica). */
  another(): Promise<Store>;
  close(): Promise<void>;
}

interface Backend {
  name: string;
  /** Why this backend cannot run here, or null. */
  unavailable: string | null;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  open(): Promise<Opened>;
  /**
   * A database written by the schema before the hot labels' clients (SQLite 12, PostgreSQL 9):
   * `write` runs raw SQL on it, then it is opened as `open` does (the later migrations applied).
   */
  openUpgraded(write: (query: (text: string, ...params: unknown[]) => Promise<unknown>) => Promise<void>): Promise<Opened>;
  /** Writes outside a transaction wait for an open one (a single-connection engine). */
  serializesWrites: boolean;
  /**
   * An hourly counter table's counted rows for a FROM clause: the table itself, or on PostgreSQL
   * the table and its slot rows (migration 13), named like the table.
   */
  counted(table: "series_hourly" | "search_hourly" | "stats_hourly"): string;
}

const sqliteBackend = (): Backend => {
  const dirs: string[] = [];
  return {
    name: "sqlite",
    unavailable: null,
    serializesWrites: true,
    counted: (table) => table,
    async setUp() {},
    async tearDown() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
    async open() {
      return openIn(newDir());
    },
    async openUpgraded(write) {
      const dir = newDir();
      const old = openDatabase({ dataDir: dir, sqliteVecPath: getLoadablePath(), migrations: MIGRATIONS.filter((m) => m.version <= 12) });
      try {
        await write(async (text, ...params) => old.query(text.replace(/\$(\d+)/g, "?$1")).run(...(params as any[])));
      } finally {
        old.close();
      }
      return openIn(dir);
    },
  };
  function newDir() {
    const dir = mkdtempSync(join(tmpdir(), "colony-contract-"));
    dirs.push(dir);
    return dir;
  }
  async function openIn(dir: string): Promise<Opened> {
    const dbs: Database[] = [];
    const openDb = () => {
      const db = openDatabase({ dataDir: dir, sqliteVecPath: getLoadablePath() });
      dbs.push(db);
      return db;
    };
    const db = openDb();
    return {
      store: createSqliteStore(db),
      async query(text, ...params) {
        return db.query(text.replace(/\$(\d+)/g, "?$1")).all(...(params as any[]));
      },
      async readCommitted(key) {
        const other = new Database(join(dir, DATABASE_FILE), { readonly: true });
        try {
          return (other.query("SELECT value FROM kv WHERE key = ?").get(key) as any)?.value ?? null;
        } finally {
          other.close();
        }
      },
      async another() {
        return createSqliteStore(openDb());
      },
      async close() {
        for (const d of dbs) d.close();
      },
    };
  }
};

const postgresBackend = (): Backend => {
  let server: PostgresServer | null = null;
  return {
    name: "postgres",
    unavailable: postgresUnavailable(),
    serializesWrites: false,
    counted: countedRows,
    async setUp() {
      server = await startPostgres();
    },
    async tearDown() {
      await server?.stop();
    },
    async open() {
      return openAt(await server!.createDatabase());
    },
    async openUpgraded(write) {
      const url = await server!.createDatabase();
      const old = new SQL(url, { max: 1 });
      try {
        await migratePostgres(
          old,
          PG_MIGRATIONS.filter((m) => m.version <= 9),
        );
        await write((text, ...params) => old.unsafe(text, params));
      } finally {
        await old.close();
      }
      return openAt(url);
    },
  };
  async function openAt(url: string): Promise<Opened> {
    const stores: PostgresStore[] = [];
    const openStore = async () => {
      const s = await openPostgresStore({ url, poolSize: 4 });
      stores.push(s);
      return s;
    };
    const store = await openStore();
    const raw = new SQL(url, { max: 1 });
    return {
      store,
      async query(text, ...params) {
        return plainRows(await raw.unsafe(text, params));
      },
      async readCommitted(key) {
        const [row] = await raw`SELECT value FROM kv WHERE key = ${key}`;
        return row?.value ?? null;
      },
      another: openStore,
      async close() {
        await raw.close();
        for (const s of stores) await s.close();
      },
    };
  }
};

function unit(seed: number, dim: number): Float32Array {
  const v = Float32Array.from({ length: dim }, (_, j) => (Math.sin(seed * 12.9898 + j * 78.233) * 43758.5453) % 1);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const sampleTrail = { environment: { os: "linux", runtime: { name: "python" } } } as unknown as Trail;
const newTrail = (n: number) => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  fingerprint: `fp1_${String(n).padStart(32, "0")}`,
  normalizerVersion: 2,
  contentRulesVersion: 1,
  errorType: null,
  trail: sampleTrail,
  contentHash: `h${n}`,
  author: "a",
  client: "c",
  createdAt: n,
});

for (const backend of [sqliteBackend(), postgresBackend()]) {
  if (backend.unavailable) console.warn(`store contract on ${backend.name} skipped: ${backend.unavailable}`);

  describe.skipIf(backend.unavailable !== null)(`store contract: ${backend.name}`, () => {
    beforeAll(() => backend.setUp());
    afterAll(() => backend.tearDown());

    /** Runs `fn` on a fresh database, closing it afterwards. */
    const withStore = async (fn: (o: Opened) => Promise<void>) => {
      const opened = await backend.open();
      try {
        await fn(opened);
      } finally {
        await opened.close();
      }
    };

    test("key-value store round trip survives reopening", () =>
      withStore(async ({ store, another }) => {
        expect(await store.kv.get("k")).toBeNull();
        await store.kv.set("k", "v1");
        await store.kv.set("k", "v2");
        const again = await another();
        expect(await again.kv.get("k")).toBe("v2");
        await again.kv.delete("k");
        expect(await store.kv.get("k")).toBeNull();
      }));

    test("key-value setIfAbsent: the first value stored stays, and every caller gets it", () =>
      withStore(async ({ store, another }) => {
        const again = await another();
        const [x, y] = await Promise.all([store.kv.setIfAbsent("first", "a"), again.kv.setIfAbsent("first", "b")]);
        expect(x).toBe(y);
        expect(["a", "b"]).toContain(x);
        expect(await again.kv.setIfAbsent("first", "c")).toBe(x);
        expect(await store.kv.get("first")).toBe(x);
      }));

    test("vector store: quantized search agrees with exact search, upsert replaces, remove removes", () =>
      withStore(async ({ store: s, another }) => {
        const { vectors: store, rebuilt } = await s.openVectors({ name: "m", dim: 64 });
        expect(rebuilt).toBe(true);
        for (let i = 1; i <= 500; i++) await store.upsert(i, unit(i, 64));
        expect(await store.count()).toBe(500);
        for (const q of [3, 77, 250]) {
          const approx = await store.search(unit(q, 64), 5);
          const exact = await store.searchExact(unit(q, 64), 5);
          expect(approx[0]!.id).toBe(q);
          expect(approx[0]!.similarity).toBeCloseTo(1, 5);
          expect(exact[0]!.id).toBe(q);
          expect(approx.map((h) => h.id)).toEqual(exact.map((h) => h.id));
        }
        // A reopened store loads the codes it kept and finds the same neighbours.
        const reopened = (await (await another()).openVectors({ name: "m", dim: 64 })).vectors;
        for (const q of [3, 77, 250]) expect(await reopened.search(unit(q, 64), 5)).toEqual(await store.search(unit(q, 64), 5));
        await store.upsert(3, unit(9999, 64));
        expect(await store.count()).toBe(500);
        expect((await store.search(unit(9999, 64), 1))[0]!.id).toBe(3);
        await store.remove(3);
        expect(await store.count()).toBe(499);
        expect((await store.search(unit(9999, 64), 3)).some((h) => h.id === 3)).toBe(false);
        expect(await store.similarities(unit(5, 64), [5, 3, 12345])).toEqual(new Map([[5, expect.closeTo(1, 5)]]));
        await expect(store.upsert(1, new Float32Array(10))).rejects.toThrow(/dimensions/);
      }));

    test("vector store: a different model rebuilds the index; the same model keeps it", () =>
      withStore(async ({ store }) => {
        const openVectors = (name: string, dim: number) => store.openVectors({ name, dim });
        const first = (await openVectors("m", 16)).vectors;
        await first.upsert(1, unit(1, 16));
        // the re-embedding is pending until marked done, also across a reopen (a crash mid-reindex)
        expect((await openVectors("m", 16)).rebuilt).toBe(true);
        await first.markReindexed();
        const same = await openVectors("m", 16);
        expect(same.rebuilt).toBe(false);
        expect(await same.vectors.needsReindex()).toBe(false);
        expect(await same.vectors.count()).toBe(1);
        const other = await openVectors("m2", 32);
        expect(other.rebuilt).toBe(true);
        expect(await other.vectors.needsReindex()).toBe(true);
        expect(await other.vectors.count()).toBe(0);
        await expect(openVectors("x", 12)).rejects.toThrow(/multiple of 8/);
      }));

    test("lexical index: ranks the error column above the body, keeps term statistics exact, survives query syntax", () =>
      withStore(async ({ store, query }) => {
        const doc = (error: string, body: string) => ({ error: lexicalDocument(error), body: lexicalDocument(body) });
        const d1 = doc("Error [ERR_REQUIRE_ESM]: require() of ES Module", "use dynamic import");
        const d2 = doc("TypeError: x is not a function", "ERR_REQUIRE_ESM happens elsewhere");
        const d3 = doc("libGL.so.1: cannot open shared object file", "apt install libgl1");
        await store.lexical.add(1, d1);
        await store.lexical.add(2, d2);
        await store.lexical.add(3, d3);
        const find = async (q: string) => (await store.lexical.search(lexicalTokens(q), 10)).map((h) => h.id);
        expect(await find("ERR_REQUIRE_ESM")).toEqual([1, 2]);
        expect(await find("libgl")).toEqual([3]);
        const terms = () => query("SELECT term, docs FROM lexical_terms WHERE docs > 0 ORDER BY term");
        const before = await terms();
        await store.lexical.remove(1, d1);
        expect(await find("ERR_REQUIRE_ESM")).toEqual([2]);
        expect((await query("SELECT docs FROM lexical_terms WHERE term = 'err_require_esm'"))[0].docs).toBe(1);
        await store.lexical.remove(1, d1); // a second removal changes nothing
        await store.lexical.add(1, d1);
        expect(await terms()).toEqual(before);
        await store.lexical.remove(2, d2);
        expect(await find("ERR_REQUIRE_ESM")).toEqual([1]);
        expect(await find(`"); DROP TABLE trails; NEAR(x y) OR * ' | & ! :*`)).toEqual([]);
        expect(await find("")).toEqual([]);
      }));

    describe("transactions", () => {
      test("commit keeps every write; a rejection rolls every write back and is passed on", () =>
        withStore(async ({ store }) => {
          await store.transaction(async (tx) => {
            await tx.kv.set("a", "1");
            await tx.kv.set("b", "2");
          });
          await expect(
            store.transaction(async (tx) => {
              await tx.kv.set("a", "changed");
              await tx.kv.delete("b");
              throw new Error("use case failed");
            }),
          ).rejects.toThrow("use case failed");
          expect([await store.kv.get("a"), await store.kv.get("b")]).toEqual(["1", "2"]);
        }));

      test("afterCommit work runs once the data is durable, in order, and never after a rollback", () =>
        withStore(async ({ store, readCommitted }) => {
          const seen: string[] = [];
          const value = await store.transaction(async (tx) => {
            await tx.kv.set("k", "v");
            tx.afterCommit(async () => {
              seen.push(`first:${await readCommitted("k")}`); // committed: another connection reads it
            });
            tx.afterCommit(async () => {
              seen.push("second");
            });
            seen.push("body");
            return 42;
          });
          expect(value).toBe(42);
          expect(seen).toEqual(["body", "first:v", "second"]);
          await store
            .transaction(async (tx) => {
              tx.afterCommit(() => {
                seen.push("after a rollback");
              });
              throw new Error("no");
            })
            .catch(() => {});
          expect(seen).toEqual(["body", "first:v", "second"]);
        }));

      test("a write outside a transaction never lands inside an open one", () =>
        withStore(async ({ store }) => {
          let release!: () => void;
          const held = new Promise<void>((r) => {
            release = r;
          });
          const order: string[] = [];
          const failing = store
            .transaction(async (tx) => {
              await tx.kv.set("inside", "1");
              await held; // the transaction awaits other work while it is open
              order.push("transaction ends");
              throw new Error("rolled back");
            })
            .catch(() => {});
          const outside = store.kv.set("outside", "1").then(() => order.push("outside write"));
          const next = store.transaction(async (tx) => {
            order.push("next transaction");
            await tx.kv.set("next", "1");
          });
          // A single-connection engine makes them wait; a pooled one runs them beside it (they
          // finish while the first transaction is still open).
          if (backend.serializesWrites) {
            await Bun.sleep(20);
            expect(order).toEqual([]);
          } else {
            await Promise.all([outside, next]);
            expect(order.sort()).toEqual(["next transaction", "outside write"]);
          }
          release();
          await Promise.all([failing, outside, next]);
          // The rollback took only its own write: the outside write was not inside it.
          expect([await store.kv.get("inside"), await store.kv.get("outside"), await store.kv.get("next")]).toEqual([null, "1", "1"]);
        }));
    });

    test("trails: queued with a job, verdict applied once, counted, fed, deleted with what hangs off it", () =>
      withStore(async ({ store }) => {
        const a = await store.trails.insertQueued(newTrail(1));
        const b = await store.trails.insertQueued(newTrail(2));
        expect(a.status).toBe("queued");
        expect([a.client, (await store.trails.byId(a.id))?.client]).toEqual(["c", "c"]);
        expect(b.seq).toBeGreaterThan(a.seq);
        expect(await store.jobs.depth()).toBe(2);
        expect((await store.jobs.next(10)).map((j) => j.trailSeq)).toEqual([a.seq, b.seq]);
        await store.jobs.recordFailure(a.seq, "boom");
        expect((await store.jobs.next(1))[0]).toEqual({ trailSeq: a.seq, attempts: 1 });
        const risk = { level: "low", flags: [] } as any;
        const verdict = {
          status: "indexed",
          trail: sampleTrail,
          category: "dependency",
          quality: 0.5,
          risk,
          strength: 0.4,
          mergeKey: "mk",
          at: 10,
          contentRulesVersion: 1,
        } as const;
        expect(await store.trails.applyVerdict(a.seq, verdict)).toBe(true);
        expect(await store.trails.applyVerdict(a.seq, verdict)).toBe(false); // once only
        expect(
          await store.trails.applyVerdict(b.seq, {
            status: "merged",
            trail: sampleTrail,
            mergedInto: a.id,
            at: 11,
            contentRulesVersion: 1,
          }),
        ).toBe(true);
        await store.jobs.remove(a.seq);
        expect(await store.jobs.depth()).toBe(1);
        expect(await store.stats.trailsIndexed()).toBe(1);
        const indexed = (await store.trails.byId(a.id))!;
        expect(indexed).toMatchObject({
          status: "indexed",
          category: "dependency",
          quality: 0.5,
          strength: 0.4,
          mergeKey: "mk",
          indexedAt: 10,
          reinforcedAt: 10,
          risk,
        });
        expect((await store.trails.bySeq(b.seq))!.mergedInto).toBe(a.id);
        expect((await store.trails.bySeqs([a.seq, b.seq, 999])).map((r) => r.seq).sort()).toEqual([a.seq, b.seq]);
        expect((await store.trails.indexedByFingerprint(a.fingerprint, 5)).map((r) => r.id)).toEqual([a.id]);
        expect((await store.trails.indexedByMergeKey("mk"))!.id).toBe(a.id);
        expect((await store.trails.indexedAfter(0, 10)).map((r) => r.id)).toEqual([a.id]);
        expect(await store.transaction((tx) => tx.trails.holdIndexed([a.seq, b.seq, 999]))).toEqual(new Set([a.seq]));
        await store.transaction((tx) => tx.trails.holdMergeKeys(["mk", "mk", "other"]));
        const facts = await store.trails.rankingFacts([a.seq, b.seq], { environment: true });
        expect(facts.find((f) => f.seq === a.seq)).toEqual({
          seq: a.seq,
          status: "indexed",
          strength: 0.4,
          environment: sampleTrail.environment,
        });
        expect((await store.trails.rankingFacts([a.seq], { environment: false }))[0]!.environment).toBeNull();
        expect((await store.trails.feed({ limit: 5 })).map((r) => r.id)).toEqual([a.id]);
        expect(await store.trails.feed({ limit: 5, runtimes: ["Python"], category: "dependency" })).toHaveLength(1);
        expect(await store.trails.feed({ limit: 5, category: "network" })).toHaveLength(0);
        expect(await store.trails.feed({ limit: 5, after: { reinforcedAt: 10, seq: a.seq } })).toHaveLength(0);
        expect(await store.trails.feed({ limit: 5, after: { reinforcedAt: 10, seq: a.seq + 1 } })).toHaveLength(1);
        await store.trails.setStrength(a.seq, 0.9);
        expect((await store.trails.bySeq(a.seq))!.strength).toBe(0.9);
        await store.outcomes.insert({
          trailSeq: a.seq,
          agent: "x",
          client: "c1",
          outcome: "worked",
          counted: true,
          notes: "n1",
          model: null,
          at: 20,
        });
        await store.outcomes.insert({
          trailSeq: a.seq,
          agent: "y",
          client: "c1",
          outcome: "failed",
          counted: false,
          notes: "n2",
          model: "m",
          at: 21,
        });
        expect(await store.outcomes.countedSince(a.seq, "x", 20)).toBe(true);
        expect(await store.outcomes.countedSince(a.seq, "x", 21)).toBe(false);
        expect(await store.outcomes.countedSince(a.seq, "y", 0)).toBe(false);
        expect((await store.outcomes.latestWithNotes([a.seq], 1)).map((o) => [o.notes, o.client])).toEqual([["n2", "c1"]]);
        // Per trail, newest first (a tie in time: the later report first), trails in seq order,
        // a repeated seq read once, reports without notes skipped.
        const report = (trailSeq: number, notes: string | null, at: number) =>
          store.outcomes.insert({ trailSeq, agent: "z", client: "c2", outcome: "failed", counted: false, notes, model: null, at });
        await report(b.seq, "b1", 30);
        await report(b.seq, "b2", 30);
        await report(b.seq, null, 31);
        await report(a.seq, "n3", 21);
        expect((await store.outcomes.latestWithNotes([b.seq, a.seq, b.seq], 2)).map((o) => [o.trailSeq, o.notes])).toEqual([
          [a.seq, "n3"],
          [a.seq, "n2"],
          [b.seq, "b2"],
          [b.seq, "b1"],
        ]);
        expect(await store.outcomes.latestWithNotes([], 3)).toEqual([]);
        expect(await store.outcomes.countedForClientSince(a.seq, "c1", 0)).toBe(1);
        expect(await store.outcomes.countedForClientSince(a.seq, "c2", 0)).toBe(0);
        expect(await store.credits.grant(a.seq, "x", "c1", "2026-01-01")).toBe(true);
        expect(await store.credits.grant(a.seq, "x", "c2", "2026-01-01")).toBe(false); // the agent's credit of the day
        expect(await store.credits.grant(a.seq, "y", "c1", "2026-01-01")).toBe(false); // the client's credit of the day
        expect(await store.credits.grant(a.seq, "y", "c1", "2026-01-02")).toBe(true);
        expect(await store.credits.grant(a.seq, "z", "c3", "2026-01-01")).toBe(true);
        // What the counting rule asks: the agent's credit and the client's credits from a day on.
        expect(await store.credits.earnedSince(a.seq, "x", "c1", "2026-01-01")).toEqual({ byAgent: true, byClient: 2 });
        expect(await store.credits.earnedSince(a.seq, "x", "c1", "2026-01-02")).toEqual({ byAgent: false, byClient: 1 });
        expect(await store.credits.earnedSince(a.seq, "w", "c9", "2026-01-01")).toEqual({ byAgent: false, byClient: 0 });
        expect(await store.credits.earnedSince(b.seq, "x", "c1", "2026-01-01")).toEqual({ byAgent: false, byClient: 0 });
        // The row as deleted comes back (a removal works from it); a second delete finds none.
        const deleted = await store.trails.delete(a.seq);
        expect(deleted?.id).toBe(a.id);
        expect([deleted?.status, deleted?.strength, deleted?.trail]).toEqual(["indexed", 0.9, sampleTrail]);
        expect(await store.trails.delete(a.seq)).toBeNull();
        expect(await store.trails.byId(a.id)).toBeNull();
        expect(await store.outcomes.latestWithNotes([a.seq], 5)).toEqual([]);
        expect(await store.stats.trailsIndexed()).toBe(0);
        expect(await store.credits.grant(b.seq, "x", "c1", "2026-01-01")).toBe(true);
      }));

    test("outcome counts: concurrent increments both count, and strength inputs come back with them", () =>
      withStore(async ({ store, query }) => {
        const record = await store.trails.insertQueued(newTrail(1));
        await query("UPDATE trails SET status = 'indexed', quality = 0.75 WHERE seq = $1", record.seq);
        const report = (outcome: "worked" | "failed") => store.transaction((tx) => tx.trails.countOutcome(record.seq, outcome, 5));
        const results = await Promise.all([report("worked"), report("worked"), report("failed")]);
        expect([results[0]!.counts.worked, results[1]!.counts.worked].sort()).toEqual([1, 2]);
        expect(results.every((r) => r!.quality === 0.75)).toBe(true);
        expect((await store.trails.byId(record.id))!.counts).toEqual({ worked: 2, partially_worked: 0, failed: 1 });
        expect(await store.trails.countOutcome(999, "worked", null)).toBeNull();
      }));

    test("a trail's runtime is kept as names are read (width and invisible characters folded), so a filter's spelling finds it", () =>
      withStore(async ({ store, query }) => {
        const wide = { ...sampleTrail, environment: { ...sampleTrail.environment, runtime: { name: "ＰＹ\u200bＴＨＯＮ", version: "3" } } };
        const record = await store.trails.insertQueued({ ...newTrail(1), trail: wide as typeof sampleTrail });
        await query("UPDATE trails SET status = 'indexed', reinforced_at = 1 WHERE seq = $1", record.seq);
        expect((await store.trails.feed({ limit: 5, runtimes: ["python"] })).map((r) => r.id)).toEqual([record.id]);
        expect(await store.trails.feed({ limit: 5, runtimes: ["ｐｙｔｈｏｎ"] })).toHaveLength(0);
      }));

    test("a reinforcement goes to the feed's head whatever the clock that stamps it", () =>
      withStore(async ({ store, query }) => {
        const [a, b, c] = [
          await store.trails.insertQueued(newTrail(1)),
          await store.trails.insertQueued(newTrail(2)),
          await store.trails.insertQueued(newTrail(3)),
        ];
        for (const [t, at] of [
          [a, 1000],
          [b, 2000],
          [c, 9000],
        ] as const) {
          await query("UPDATE trails SET status = 'indexed', reinforced_at = $1 WHERE seq = $2", at, t.seq);
        }
        // A replica whose clock runs 5 s behind the one that stamped the head (9000).
        await store.transaction((tx) => tx.trails.countOutcome(a.seq, "worked", 4000));
        expect((await store.trails.bySeq(a.seq))!.reinforcedAt).toBe(9001);
        expect((await store.trails.feed({ limit: 3 })).map((r) => r.id)[0]).toBe(a.id);
        // A later clock moves it on; a count that does not reinforce leaves it.
        await store.transaction((tx) => tx.trails.countOutcome(b.seq, "worked", 12_000));
        expect((await store.trails.bySeq(b.seq))!.reinforcedAt).toBe(12_000);
        await store.transaction((tx) => tx.trails.countOutcome(c.seq, "failed", null));
        expect((await store.trails.bySeq(c.seq))!.reinforcedAt).toBe(9000);
        expect((await store.trails.feed({ limit: 3 })).map((r) => r.id)).toEqual([b.id, a.id, c.id]);
        // A head stamped a day ahead (a replica's clock gone wrong) moves the next stamp 10 minutes at most.
        await query("UPDATE trails SET reinforced_at = $1 WHERE seq = $2", 12_000 + 86_400_000, b.seq);
        await store.transaction((tx) => tx.trails.countOutcome(c.seq, "worked", 20_000));
        expect((await store.trails.bySeq(c.seq))!.reinforcedAt).toBe(20_000 + REINFORCED_AHEAD_AT_MOST_MS);
      }));

    test("tombstones, events, drafts and activity aggregates", () =>
      withStore(async ({ store }) => {
        await store.tombstones.add("t1", "hash1", 100);
        await store.tombstones.add("t1", "hash1", 100); // once
        expect([await store.tombstones.has("t1"), await store.tombstones.has("t2")]).toEqual([true, false]);
        expect(await store.tombstones.hasContent("hash1")).toBe(true);
        expect(await store.tombstones.hasMergeKey("mk1")).toBe(false); // added without one
        await store.tombstones.add("t2", "hash2", 100, "mk1");
        expect([await store.tombstones.hasMergeKey("mk1"), await store.tombstones.hasMergeKey("mk2")]).toEqual([true, false]);
        await store.tombstones.purgeBefore(101);
        await store.tombstones.add("t1", "hash1", 100);
        expect(await store.tombstones.count()).toBe(1);
        expect(await store.tombstones.purgeBefore(101)).toBe(1);
        expect(await store.tombstones.has("t1")).toBe(false);

        await store.events.append({ kind: "laid", agent: "a", trailId: "t", text: "one", at: 1 });
        await store.events.append({ kind: "search", agent: "b", trailId: null, text: "two", at: 2 });
        expect(await store.events.recent(1)).toEqual([{ kind: "search", agent: "b", trailId: null, text: "two", at: 2 }]);
        // Old search events go, oldest first and in batches; other kinds and newer searches stay.
        await store.events.append({ kind: "search", agent: "b", trailId: "t", text: "three", at: 3 });
        await store.events.append({ kind: "search", agent: "b", trailId: null, text: "four", at: 4 });
        expect(await store.events.purgeSearchesBefore(4, 1)).toBe(1);
        expect((await store.events.recent(10)).map((e) => e.text)).toEqual(["four", "three", "one"]);
        expect(await store.events.purgeSearchesBefore(4, 10)).toBe(1);
        expect(await store.events.purgeSearchesBefore(4, 10)).toBe(0);
        expect((await store.events.recent(10)).map((e) => e.text)).toEqual(["four", "one"]);
        expect((await store.events.forTrail("t", 10)).map((e) => e.text)).toEqual(["one"]);
        // A removed trail's own events go; a search whose top result it was stays, without its id.
        await store.events.append({ kind: "search", agent: "c", trailId: "t", text: "five", at: 5 });
        await store.events.append({ kind: "reinforced", agent: "d", trailId: "u", text: "six", at: 6 });
        await store.events.forgetTrail("t");
        expect((await store.events.recent(10)).map((e) => [e.text, e.trailId])).toEqual([
          ["six", "u"],
          ["five", null],
          ["four", null],
        ]);
        expect(await store.events.forTrail("t", 10)).toEqual([]);
        // A removed merged trail's credit event goes: the one naming its author at its verdict's time.
        await store.events.append({ kind: "reinforced", agent: "e", trailId: "u", text: "seven", at: 7 });
        await store.events.append({ kind: "reinforced", agent: "e", trailId: "u", text: "eight", at: 8 });
        await store.events.forgetMergeCredit("u", "e", 7);
        await store.events.forgetMergeCredit("u", "d", 7);
        expect((await store.events.forTrail("u", 10)).map((e) => e.text)).toEqual(["eight", "six"]);

        const draft = {
          tokenHash: "th",
          state: "pending" as const,
          trail: sampleTrail,
          fingerprint: "fp",
          redactions: { email: 1 },
          risk: { level: "low", flags: [] } as any,
          author: "a",
          createdAt: 1000,
          expiresAt: 5000,
          trailId: null,
        };
        await store.drafts.insert(draft);
        await store.drafts.insert({ ...draft, tokenHash: "th2" });
        expect(await store.drafts.byHash("th")).toEqual(draft);
        const [first, second] = await Promise.all([store.drafts.markPublished("th", "tid"), store.drafts.markPublished("th", "tid2")]);
        expect([first, second].filter(Boolean)).toHaveLength(1); // exactly once
        expect(await store.drafts.markDiscarded("th")).toBe(false);
        expect(await store.drafts.markDiscarded("th2")).toBe(true);
        expect((await store.drafts.byHash("th"))!.state).toBe("published");
        // A finished draft keeps its state and trail id only: its payload and author are dropped.
        const finished = { trail: {}, fingerprint: "", redactions: {}, risk: {}, author: "" };
        expect(await store.drafts.byHash("th")).toMatchObject({ ...finished, trailId: expect.stringMatching(/^tid2?$/) });
        expect(await store.drafts.byHash("th2")).toMatchObject({ ...finished, state: "discarded", trailId: null });
        expect(await store.drafts.purge(2000, 500)).toBe(0);
        expect(await store.drafts.purge(2000, 1001)).toBe(2);

        const h = 3600_000;
        await store.stats.touchAgent("a", 10 * h);
        await store.stats.touchAgent("a", 5 * h); // keeps the latest
        await store.stats.touchAgent("b", 3 * h);
        await store.stats.addOutcome(10 * h, 100.4);
        await store.stats.addOutcome(10 * h + 5, 50);
        await store.stats.addOutcome(2 * h, 7);
        expect(await store.stats.since(9 * h)).toEqual({ outcomes: 2, tokensSaved: 150, agents: 1 });
        expect(await store.stats.since(0)).toEqual({ outcomes: 3, tokensSaved: 157, agents: 2 });
        await store.stats.addOutcome(11 * h, Number.MAX_SAFE_INTEGER); // saturates, never overflows
        await store.stats.addOutcome(11 * h, 1e300);
        expect((await store.stats.since(11 * h)).tokensSaved).toBe(Number.MAX_SAFE_INTEGER);
        await store.stats.purgeBefore(4 * h);
        expect((await store.stats.since(0)).outcomes).toBe(4);
      }));

    test("a trail stored under the current normalizer is found by the fingerprints the previous ones give its error", () =>
      withStore(async ({ store, query }) => {
        // As enrichment stores a trail published on this release (src/service/enrichment-worker.ts):
        // the verdict and the previous normalizers' fingerprints as aliases, in one transaction.
        // PyTorch's hints after the message: version 8 kept them, version 9 drops them.
        const error =
          "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.";
        const { current, previous } = trailFingerprints(error);
        expect(previous).toContain(fingerprint(error, 8));
        const trail = { ...sampleTrail, problem: { error } } as Trail;
        const queued = await store.trails.insertQueued({
          ...newTrail(1),
          fingerprint: current,
          normalizerVersion: NORMALIZER_VERSION,
          trail,
        });
        const twin = await store.trails.insertQueued({
          ...newTrail(2),
          fingerprint: current,
          normalizerVersion: NORMALIZER_VERSION,
          trail,
        });
        await store.transaction(async (tx) => {
          const verdict = { trail, category: "runtime", quality: 0.5, risk: { level: "low", flags: [] } as any, strength: 0.4 } as const;
          await tx.trails.applyVerdict(queued.seq, { status: "indexed", ...verdict, mergeKey: "mk", at: 10, contentRulesVersion: 1 });
          expect((await addPreviousNormalizerAliases(tx, [{ previous, current }], 10)).sort()).toEqual([...previous].sort());
          // A merged twin's aliases name the trail it joined; a repeat adds no row.
          await tx.trails.applyVerdict(twin.seq, { status: "merged", trail, mergedInto: queued.id, at: 10, contentRulesVersion: 1 });
          await addPreviousNormalizerAliases(tx, [{ previous: [...previous, current, EMPTY_FINGERPRINT], current }], 10);
        });
        expect((await query("SELECT count(*) AS n FROM fingerprint_aliases"))[0].n).toBe(previous.length);
        const lookups = new TrailService({ store, now: () => 10 } as unknown as TrailServiceDeps);
        for (const fp of [current, ...previous]) {
          expect(await store.aliases.resolve(fp)).toEqual(fp === current ? [] : [current]);
          expect((await lookups.fingerprintMatches(fp, undefined, 5)).map((r) => r.id)).toEqual([queued.id]);
        }
        // Every replica's lookup cache learns that the previous fingerprints now answer.
        if (backend.name === "postgres") {
          const changed = (await query("SELECT fingerprint FROM fingerprint_changes")).map((r) => r.fingerprint);
          for (const fp of previous) expect(changed).toContain(fp);
        }
      }));

    test("re-fingerprinting, aliases, trail history, status counts, series and size", () =>
      withStore(async ({ store }) => {
        const a = await store.trails.insertQueued({ ...newTrail(1), normalizerVersion: 1 });
        const b = await store.trails.insertQueued(newTrail(2));
        expect((await store.trails.fingerprintedBefore(2, 0, 10)).map((r) => r.seq)).toEqual([a.seq]);
        expect(await store.trails.fingerprintedBefore(2, a.seq, 10)).toEqual([]);
        await store.trails.refingerprint(a.seq, { fingerprint: "fp1_new", normalizerVersion: 2, mergeKey: null });
        expect(await store.trails.bySeq(a.seq)).toMatchObject({ fingerprint: "fp1_new", normalizerVersion: 2, mergeKey: null });
        expect(await store.trails.fingerprintedBefore(2, 0, 10)).toEqual([]);
        expect(await store.trails.countByStatus()).toEqual({ queued: 2, indexed: 0, merged: 0, rejected: 0 });

        await store.aliases.add("fp1_old", "fp1_new", 100);
        await store.aliases.add("fp1_old", "fp1_new", 200); // a repeat keeps the first
        await store.aliases.add("fp1_old", "fp1_a", 300);
        expect(await store.aliases.resolve("fp1_old")).toEqual(["fp1_a", "fp1_new"]);
        expect(await store.aliases.resolve("fp1_new")).toEqual([]);
        expect(await store.aliases.purgeBefore(150)).toBe(1);
        expect(await store.aliases.resolve("fp1_old")).toEqual(["fp1_a"]);
        // Several in one statement; a repeat keeps the first record (purged with it).
        await store.aliases.addAll([], 400);
        await store.aliases.addAll(
          [
            ["fp1_old", "fp1_a"],
            ["fp1_v7", "fp1_a"],
            ["fp1_v8", "fp1_a"],
          ],
          400,
        );
        expect(await store.aliases.resolve("fp1_v7")).toEqual(["fp1_a"]);
        expect(await store.aliases.purgeBefore(350)).toBe(1);
        expect(await store.aliases.resolve("fp1_old")).toEqual([]);
        expect(await store.aliases.resolve("fp1_v8")).toEqual(["fp1_a"]);

        for (const [agent, at] of [
          ["x", 1],
          ["y", 2],
        ] as const) {
          await store.outcomes.insert({
            trailSeq: b.seq,
            agent,
            client: null,
            outcome: "worked",
            counted: true,
            notes: null,
            model: null,
            at,
          });
          await store.events.append({ kind: "reinforced", agent, trailId: b.id, text: agent, at });
        }
        await store.events.append({ kind: "laid", agent: "z", trailId: a.id, text: "other", at: 3 });
        expect((await store.outcomes.forTrail(b.seq, 5)).map((o) => o.agent)).toEqual(["y", "x"]);
        expect((await store.outcomes.forTrail(b.seq, 1)).map((o) => o.agent)).toEqual(["y"]);
        expect((await store.events.forTrail(b.id, 5)).map((e) => e.text)).toEqual(["y", "x"]);

        const h = 3600_000;
        await store.stats.bump("searches", 10 * h);
        await store.stats.bump("searches", 10 * h + 1, 2);
        await store.stats.peak("queue_depth", 10 * h, 5);
        await store.stats.peak("queue_depth", 10 * h, 3);
        await store.stats.bump("outcomes", 12 * h);
        expect(await store.stats.series(10 * h)).toEqual([
          { hour: 10 * h, name: "queue_depth", value: 5 },
          { hour: 10 * h, name: "searches", value: 3 },
          { hour: 12 * h, name: "outcomes", value: 1 },
        ]);
        await store.stats.purgeSeriesBefore(11 * h);
        expect(await store.stats.series(0)).toEqual([{ hour: 12 * h, name: "outcomes", value: 1 }]);
        expect(await store.sizeBytes()).toBeGreaterThan(0);
      }));

    test("hourly counters: two stores (replicas) counting at once lose no search, report or peak; the purges drop whole hours", () =>
      withStore(async ({ store, another }) => {
        const h = 3600_000;
        const other = await another();
        // 64 of each at once, half from either store, over two hours.
        await Promise.all(
          Array.from({ length: 64 }, (_, i) => {
            const s = i % 2 ? store : other;
            const at = (i < 40 ? 600 : 601) * h + i;
            return Promise.all([
              s.stats.bump("searches", at),
              s.stats.bump("publishes", at, 2),
              s.stats.addOutcome(at, 10),
              s.searches.add("CountedLabelError", `anon-${i % 8}`, at),
            ]);
          }),
        );
        await Promise.all([store.stats.peak("queue_depth", 600 * h, 7), other.stats.peak("queue_depth", 600 * h, 9)]);
        expect(await store.stats.series(600 * h)).toEqual([
          { hour: 600 * h, name: "publishes", value: 80 },
          { hour: 600 * h, name: "queue_depth", value: 9 },
          { hour: 600 * h, name: "searches", value: 40 },
          { hour: 601 * h, name: "publishes", value: 48 },
          { hour: 601 * h, name: "searches", value: 24 },
        ]);
        expect(await other.stats.since(600 * h)).toMatchObject({ outcomes: 64, tokensSaved: 640 });
        expect(await other.stats.since(601 * h)).toMatchObject({ outcomes: 24, tokensSaved: 240 });
        expect(await store.searches.top(600 * h, 10, ANY_LABEL)).toEqual([{ label: "CountedLabelError", clients: 8, searches: 64 }]);
        // A store that spreads an hour over rows folds the finished hours back: the same counts.
        const counts = async () => [
          await other.stats.series(0),
          await other.stats.since(600 * h),
          await other.stats.since(601 * h),
          await other.searches.top(0, 10, ANY_LABEL),
          await other.searches.top(601 * h, 10, ANY_LABEL),
        ];
        const unfolded = await counts();
        await store.stats.foldHoursBefore?.(601 * h);
        await store.stats.foldHoursBefore?.(601 * h); // nothing left to fold
        expect(await counts()).toEqual(unfolded);
        await store.stats.purgeSeriesBefore(601 * h);
        await store.stats.purgeBefore(601 * h);
        expect((await other.stats.series(0)).map((p) => p.hour)).toEqual([601 * h, 601 * h]);
        expect(await other.stats.since(0)).toMatchObject({ outcomes: 24, tokensSaved: 240 });
        expect(await other.searches.top(0, 10, ANY_LABEL)).toEqual([{ label: "CountedLabelError", clients: 8, searches: 24 }]);
      }));

    test("hourly counters written before the upgrade keep counting, and are purged with their hour", async () => {
      const h = 3600_000;
      const opened = await backend.openUpgraded(async (oldQuery) => {
        await oldQuery("INSERT INTO series_hourly (hour, name, value) VALUES ($1, 'searches', 7), ($2, 'searches', 5)", 700, 701);
        await oldQuery("INSERT INTO stats_hourly (hour, outcomes, tokens_saved) VALUES ($1, 3, 30), ($2, 1, 1)", 700, 701);
      });
      try {
        const { stats } = opened.store;
        await Promise.all([stats.bump("searches", 700 * h), stats.bump("searches", 700 * h + 1), stats.addOutcome(700 * h, 5)]);
        expect(await stats.series(700 * h)).toEqual([
          { hour: 700 * h, name: "searches", value: 9 },
          { hour: 701 * h, name: "searches", value: 5 },
        ]);
        expect(await stats.since(700 * h)).toMatchObject({ outcomes: 5, tokensSaved: 36 });
        await stats.purgeSeriesBefore(701 * h);
        await stats.purgeBefore(701 * h);
        expect(await stats.series(0)).toEqual([{ hour: 701 * h, name: "searches", value: 5 }]);
        expect(await stats.since(0)).toMatchObject({ outcomes: 1, tokensSaved: 1 });
      } finally {
        await opened.close();
      }
    });

    test("start-time checks: any trail on an older normalizer or older content rules, answered from the version indexes", () =>
      withStore(async ({ store, query }) => {
        expect([await store.trails.anyFingerprintedBefore(3), await store.trails.anyCheckedBefore(2)]).toEqual([false, false]);
        const queued = await store.trails.insertQueued({ ...newTrail(1), normalizerVersion: 3, contentRulesVersion: 0 });
        // A queued trail is left to its enrichment's rules: nothing to re-check yet.
        expect([await store.trails.anyFingerprintedBefore(3), await store.trails.anyCheckedBefore(2)]).toEqual([false, false]);
        await store.trails.applyVerdict(queued.seq, {
          status: "rejected",
          trail: sampleTrail,
          reasons: ["low_quality"],
          at: 2,
          contentRulesVersion: 1,
        });
        expect(await store.trails.anyCheckedBefore(2)).toBe(true);
        expect(await store.trails.anyCheckedBefore(1)).toBe(false);
        await store.trails.insertQueued({ ...newTrail(2), normalizerVersion: 2 });
        expect(await store.trails.anyFingerprintedBefore(3)).toBe(true);
        expect(await store.trails.anyFingerprintedBefore(2)).toBe(false);
        if (backend.name === "sqlite") {
          // The store's two queries (src/store/sqlite/trails.ts). In seq order a check walked every
          // row when none was left (150 ms at 50,000 trails, on each start).
          const plan = async (sql: string) =>
            ((await query(`EXPLAIN QUERY PLAN ${sql}`)) as { detail: string }[]).map((r) => r.detail).join(" | ");
          expect(await plan("SELECT 1 FROM trails WHERE normalizer_version < 3 LIMIT 1")).toContain("trails_by_normalizer_version");
          expect(await plan("SELECT 1 FROM trails WHERE content_rules_version < 2 AND status <> 'queued' LIMIT 1")).toContain(
            "trails_by_content_rules_version",
          );
        }
      }));

    test("re-screening: enriched trails on older content rules in seq order, a re-check applied only while the trail is as it was read", () =>
      withStore(async ({ store, query }) => {
        const a = await store.trails.insertQueued({ ...newTrail(1), contentRulesVersion: 0 });
        const b = await store.trails.insertQueued({ ...newTrail(2), contentRulesVersion: 0 });
        const c = await store.trails.insertQueued(newTrail(3));
        const d = await store.trails.insertQueued({ ...newTrail(4), contentRulesVersion: 0 });
        expect([a.contentRulesVersion, c.contentRulesVersion]).toEqual([0, 1]);
        // Queued trails are left to their enrichment.
        expect(await store.trails.checkedBefore(1, 0, 10)).toEqual([]);
        const risk = { level: "low", flags: [] } as any;
        const indexed = {
          status: "indexed",
          trail: sampleTrail,
          category: "dependency",
          quality: 0.5,
          risk,
          strength: 0.4,
          at: 10,
        } as const;
        // a and b enriched by an older release's rules; d by the current ones (the verdict records them).
        await store.trails.applyVerdict(a.seq, { ...indexed, mergeKey: "mk-a", contentRulesVersion: 0 });
        await store.trails.applyVerdict(b.seq, { ...indexed, mergeKey: "mk-b", contentRulesVersion: 0 });
        await store.trails.applyVerdict(d.seq, {
          status: "rejected",
          trail: sampleTrail,
          reasons: ["low_quality"],
          at: 10,
          contentRulesVersion: 1,
        });
        expect((await store.trails.byId(d.id))!.contentRulesVersion).toBe(1);
        expect((await store.trails.checkedBefore(1, 0, 10)).map((r) => r.seq)).toEqual([a.seq, b.seq]);
        expect((await store.trails.checkedBefore(1, a.seq, 10)).map((r) => r.seq)).toEqual([b.seq]);
        expect((await store.trails.checkedBefore(1, 0, 1)).map((r) => r.seq)).toEqual([a.seq]);
        expect(await store.stats.trailsIndexed()).toBe(2);

        // An indexed trail that stays: new content, hash, error type, runtime (the feed filter) and risk.
        const redacted = { ...sampleTrail, environment: { os: "linux", runtime: { name: "Node" } } } as unknown as Trail;
        const high = { level: "high", flags: [{ command_index: 0, flag: "remote_script_execution", level: "high", detail: "d" }] } as any;
        const stays = { trail: redacted, contentHash: "h1-new", errorType: "E", contentRulesVersion: 1, risk: high };
        // Read as queued, but indexed meanwhile: not applied.
        expect(await store.trails.rescreen(a.seq, { ...stays, was: { status: "queued", contentRulesVersion: 0 } })).toBe(false);
        expect(await store.trails.rescreen(a.seq, { ...stays, was: { status: "indexed", contentRulesVersion: 0 } })).toBe(true);
        // Once only: the version it was read with is gone.
        expect(await store.trails.rescreen(a.seq, { ...stays, was: { status: "indexed", contentRulesVersion: 0 } })).toBe(false);
        expect(await store.trails.byId(a.id)).toMatchObject({
          status: "indexed",
          trail: redacted,
          contentHash: "h1-new",
          errorType: "E",
          risk: high,
          contentRulesVersion: 1,
          strength: 0.4,
          mergeKey: "mk-a",
        });
        expect((await store.trails.feed({ limit: 5, runtimes: ["node"] })).map((r) => r.id)).toEqual([a.id]);

        // An indexed trail the rules now refuse: rejected with its reasons, its risk and counts kept.
        await store.trails.countOutcome(b.seq, "worked", 20);
        const refused = {
          trail: sampleTrail,
          contentHash: "h2",
          errorType: null,
          contentRulesVersion: 1,
          rejectedFor: ["prompt_injection"],
        };
        expect(await store.trails.rescreen(b.seq, { ...refused, was: { status: "indexed", contentRulesVersion: 0 } })).toBe(true);
        expect(await store.trails.byId(b.id)).toMatchObject({
          status: "rejected",
          reasons: ["prompt_injection"],
          risk,
          counts: { worked: 1, partially_worked: 0, failed: 0 },
          contentRulesVersion: 1,
        });
        expect(await store.stats.trailsIndexed()).toBe(1);
        expect(await store.trails.indexedByFingerprint(b.fingerprint, 5)).toEqual([]);
        expect((await store.trails.feed({ limit: 5 })).map((r) => r.id)).toEqual([a.id]);
        expect(await store.trails.checkedBefore(1, 0, 10)).toEqual([]);
        // A removed trail is not brought back.
        await store.trails.delete(c.seq);
        expect(await store.trails.rescreen(c.seq, { ...refused, was: { status: "queued", contentRulesVersion: 1 } })).toBe(false);
        expect(await query("SELECT count(*) AS n FROM trails WHERE seq = $1", c.seq)).toEqual([{ n: 0 }]);
      }));

    const ANY_LABEL = { minClients: 1, anyClients: [] };

    test("search counter: labels ranked by distinct clients over a window, each client counted once", () =>
      withStore(async ({ store: { searches }, query }) => {
        const h = 3600_000;
        // One client's 100 searches of a made-up token, over five hours.
        for (let i = 0; i < 100; i++) await searches.add("BuyMyTokenNow", "anon-spammer", 100 * h + i * 180_000);
        await searches.add("ModuleNotFoundError", "anon-a", 100 * h);
        await searches.add("ModuleNotFoundError", "anon-a", 100 * h + 10);
        await searches.add("ModuleNotFoundError", "anon-b", 101 * h);
        await searches.add("ModuleNotFoundError", "anon-c", 103 * h);
        await searches.add("dependency", "anon-a", 101 * h);
        await searches.add("old", "anon-d", 50 * h);
        expect(await searches.top(90 * h, 10, ANY_LABEL)).toEqual([
          { label: "ModuleNotFoundError", clients: 3, searches: 4 },
          { label: "BuyMyTokenNow", clients: 1, searches: 100 },
          { label: "dependency", clients: 1, searches: 1 },
        ]);
        expect(await searches.top(90 * h, 1, ANY_LABEL)).toEqual([{ label: "ModuleNotFoundError", clients: 3, searches: 4 }]);
        // A client counts in the hour of its latest search: from 102 h on, anon-a and anon-b are
        // out of ModuleNotFoundError's window, the spammer (last at 104 h) is still in.
        // Equal clients: more searches first.
        expect(await searches.top(102 * h, 10, ANY_LABEL)).toEqual([
          { label: "BuyMyTokenNow", clients: 1, searches: 60 },
          { label: "ModuleNotFoundError", clients: 1, searches: 1 },
        ]);
        // A token needs minClients; a label of anyClients (a category) one.
        expect(await searches.top(90 * h, 10, { minClients: 3, anyClients: ["dependency", "network"] })).toEqual([
          { label: "ModuleNotFoundError", clients: 3, searches: 4 },
          { label: "dependency", clients: 1, searches: 1 },
        ]);
        // ...or as many as the most widely searched label has, when that is fewer: a window where
        // every label has one client (a colony whose agents share one address) shows its tokens.
        expect(await searches.top(102 * h, 10, { minClients: 3, anyClients: ["dependency", "network"] })).toEqual([
          { label: "BuyMyTokenNow", clients: 1, searches: 60 },
          { label: "ModuleNotFoundError", clients: 1, searches: 1 },
        ]);
        // Every search is still counted; the clients of the hours sum to the distinct clients.
        const [row] = await query(
          `SELECT sum(n) AS n, sum(clients) AS clients FROM ${backend.counted("search_hourly")} WHERE label = 'BuyMyTokenNow'`,
        );
        expect([Number(row.n), Number(row.clients)]).toEqual([100, 1]);
        expect(await query("SELECT client FROM search_clients WHERE label = 'BuyMyTokenNow'")).toEqual([{ client: "anon-spammer" }]);
      }));

    test("search counter: two stores on one database (replicas) counting at once count each client once", () =>
      withStore(async ({ store, another, query }) => {
        const h = 3600_000;
        const other = await another();
        // Ten clients, each searching the label six times from either store, across two hours.
        await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            (Math.floor(i / 10) % 2 ? store : other).searches.add("SharedLabelError", `anon-${i % 10}`, (i < 30 ? 200 : 201) * h + i),
          ),
        );
        expect(await store.searches.top(190 * h, 10, ANY_LABEL)).toEqual([{ label: "SharedLabelError", clients: 10, searches: 60 }]);
        expect(await other.searches.top(201 * h, 10, ANY_LABEL)).toEqual([{ label: "SharedLabelError", clients: 10, searches: 30 }]);
        const [row] = await query(`SELECT sum(n) AS n FROM ${backend.counted("search_hourly")}`);
        expect(Number(row.n)).toBe(60);
      }));

    test("search counter: the purge drops old clients with their hours, so the tables stay bounded", () =>
      withStore(async ({ store, query }) => {
        const h = 3600_000;
        for (let i = 0; i < 50; i++) await store.searches.add(`FloodLabel${i}`, `anon-flood-${i}`, 300 * h);
        await store.searches.add("KeptLabel", "anon-kept", 300 * h);
        await store.searches.add("KeptLabel", "anon-kept", 302 * h);
        await store.stats.purgeBefore(301 * h);
        expect(await query("SELECT label, client, hour FROM search_clients")).toEqual([
          { label: "KeptLabel", client: "anon-kept", hour: expect.anything() },
        ]);
        expect((await query(`SELECT label FROM ${backend.counted("search_hourly")}`)).map((r) => r.label)).toEqual(["KeptLabel"]);
        expect(await store.searches.top(0, 10, ANY_LABEL)).toEqual([{ label: "KeptLabel", clients: 1, searches: 1 }]);
      }));

    test("search counter: counts from before clients were recorded survive the upgrade as one client per label", async () => {
      const h = 3600_000;
      const opened = await backend.openUpgraded(async (oldQuery) => {
        // Written by the previous schema's counter: hour, label and searches only.
        for (const [hour, label, n] of [
          [400, "LegacyTokenError", 40],
          [401, "LegacyTokenError", 2],
          [401, "network", 5],
        ] as const) {
          await oldQuery("INSERT INTO search_hourly (hour, label, n) VALUES ($1, $2, $3)", hour, label, n);
        }
      });
      try {
        const { searches } = opened.store;
        expect(await searches.top(400 * h, 10, ANY_LABEL)).toEqual([
          { label: "LegacyTokenError", clients: 1, searches: 42 },
          { label: "network", clients: 1, searches: 5 },
        ]);
        // Counting goes on over the old rows: new clients add, a category shows from one.
        await searches.add("LegacyTokenError", "anon-new-1", 401 * h);
        await searches.add("LegacyTokenError", "anon-new-2", 402 * h);
        expect(await searches.top(400 * h, 10, { minClients: 3, anyClients: ["network"] })).toEqual([
          { label: "LegacyTokenError", clients: 3, searches: 44 },
          { label: "network", clients: 1, searches: 5 },
        ]);
        const [row] = await opened.query(`SELECT sum(n) AS n FROM ${backend.counted("search_hourly")} WHERE label = 'LegacyTokenError'`);
        expect(Number(row.n)).toBe(44);
      } finally {
        await opened.close();
      }
    });
  });
}

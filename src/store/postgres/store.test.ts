// PostgreSQL-specific behaviour of the adapter (the shared contract is ../store.contract.test.ts):
// migrations under the advisory lock, and the vector change feed between two stores on one database.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { SQL } from "bun";
import { type PostgresServer, postgresUnavailable, startPostgres } from "../../../test/support/postgres";
import { migratePostgres, PG_MIGRATIONS } from "./migrations";
import { openPostgresStore } from "./store";
import { binaryCode } from "./vectors";
import { PgLexicalIndex, POSTINGS_MIN_DOCS, tsvectorLiteral, weightedTermCounts } from "./lexical";
import { AdvisoryLockLeadership, PgJobClaims, postgresSeams } from "./seams";
import { COUNTER_SLOTS, countedRows, PgSearchCounter, PgStatsRepository } from "./repositories";
import { countSearchAsPreviousRelease } from "../../../test/support/previous-release-counters";
import { queuedTrailRow } from "../../../test/support/trails";

const unavailable = postgresUnavailable();
if (unavailable) console.warn(`PostgreSQL adapter tests skipped: ${unavailable}`);

function unit(seed: number, dim: number): Float32Array {
  const v = Float32Array.from({ length: dim }, (_, j) => (Math.sin(seed * 12.9898 + j * 78.233) * 43758.5453) % 1);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/**
 * A publish's transaction (the queue counted against `limit`, its job inserted) held open: resolves
 * once the job is inserted and uncommitted; `commit()` lets it finish, `counted` is what it counted.
 */
async function publishHeldOpen(
  store: Awaited<ReturnType<typeof openPostgresStore>>,
  limit: number,
  row: Parameters<Awaited<ReturnType<typeof openPostgresStore>>["trails"]["insertQueued"]>[0],
): Promise<{ counted: Promise<number>; commit: () => void }> {
  let inFlight: () => void = () => {};
  const inserted = new Promise<void>((resolve) => {
    inFlight = resolve;
  });
  let commit: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    commit = resolve;
  });
  const counted = store.transaction(async (tx) => {
    const n = await tx.jobs.depthForInsert(limit);
    await tx.trails.insertQueued(row);
    inFlight();
    await held;
    return n;
  });
  await inserted;
  return { counted, commit };
}

describe.skipIf(unavailable !== null)("PostgreSQL adapter", () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("replicas started together apply each migration once; a newer schema is refused", async () => {
    const url = await server.createDatabase();
    const clients = Array.from({ length: 4 }, () => new SQL(url, { max: 2 }));
    try {
      // Four at once: without the lock, CREATE TABLE would fail in all but one.
      const versions = await Promise.all(clients.map((c) => migratePostgres(c)));
      expect(new Set(versions)).toEqual(new Set([PG_MIGRATIONS.at(-1)!.version]));
      const rows = await clients[0]!`SELECT version FROM schema_migrations ORDER BY version`;
      expect(rows.map((r: any) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
      await expect(migratePostgres(clients[0]!, PG_MIGRATIONS.slice(0, 0))).rejects.toThrow(/newer than this colony understands/);
    } finally {
      for (const c of clients) await c.close();
    }
  });

  test("a failed migration leaves the previous version intact", async () => {
    const url = await server.createDatabase();
    const sql = new SQL(url, { max: 1 });
    try {
      const before = await migratePostgres(sql);
      const bad = [...PG_MIGRATIONS, { version: before + 1, name: "bad", sql: "CREATE TABLE t (x int); NOT SQL" }];
      await expect(migratePostgres(sql, bad)).rejects.toThrow();
      const [{ v }] = await sql`SELECT max(version)::int AS v FROM schema_migrations`;
      expect(v).toBe(before);
      expect(await sql`SELECT 1 FROM pg_tables WHERE tablename = 't'`).toHaveLength(0);
    } finally {
      await sql.close();
    }
  });

  test("a vector written on one replica is found on another: by notification, and before any search", async () => {
    const url = await server.createDatabase();
    const a = await openPostgresStore({ url, poolSize: 2 });
    const b = await openPostgresStore({ url, poolSize: 2 });
    try {
      const va = (await a.openVectors({ name: "m", dim: 64 })).vectors;
      const vb = (await b.openVectors({ name: "m", dim: 64 })).vectors;
      const indexB = (vb as unknown as { index: { codes: { count: number } } }).index;
      await a.transaction(async (tx) => {
        await tx.vectors!.upsert(7, unit(7, 64));
        await tx.vectors!.upsert(8, unit(8, 64));
      });
      // The notification alone brings it into b's memory, without a search.
      const deadline = Date.now() + 1000;
      while (indexB.codes.count < 2 && Date.now() < deadline) await Bun.sleep(10);
      expect(indexB.codes.count).toBe(2);
      // Read-your-writes: a search on b right after a's commit finds it, notification or not.
      await va.upsert(9, unit(9, 64));
      expect((await vb.search(unit(9, 64), 1))[0]!.id).toBe(9);
      await va.remove(9);
      expect((await vb.search(unit(9, 64), 3)).some((h) => h.id === 9)).toBe(false);
      expect(indexB.codes.count).toBe(2);
      // A rolled-back write reaches no replica.
      await a
        .transaction(async (tx) => {
          await tx.vectors!.upsert(10, unit(10, 64));
          throw new Error("rolled back");
        })
        .catch(() => {});
      expect((await vb.search(unit(10, 64), 3)).some((h) => h.id === 10)).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("a transaction that commits after a later one is still caught up (no lost change)", async () => {
    const url = await server.createDatabase();
    const a = await openPostgresStore({ url, poolSize: 4 });
    const b = await openPostgresStore({ url, poolSize: 2 });
    try {
      await a.openVectors({ name: "m", dim: 64 });
      const vb = (await b.openVectors({ name: "m", dim: 64 })).vectors;
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      // The slow transaction takes its id first and commits last.
      const slow = a.transaction(async (tx) => {
        await tx.vectors!.upsert(1, unit(1, 64));
        await held;
      });
      await Bun.sleep(20);
      await a.transaction(async (tx) => tx.vectors!.upsert(2, unit(2, 64)));
      expect((await vb.search(unit(2, 64), 1))[0]!.id).toBe(2); // b's horizon must not pass the slow one
      release();
      await slow;
      expect((await vb.search(unit(1, 64), 1))[0]!.id).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("two workers claiming from one queue take every job exactly once; a dead worker's lease runs out", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url, poolSize: 4 });
    try {
      const trail = { environment: { os: "linux", runtime: { name: "python" } } } as any;
      for (let i = 1; i <= 200; i++) {
        await store.trails.insertQueued({
          id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
          fingerprint: "fp",
          normalizerVersion: 2,
          contentRulesVersion: 1,
          errorType: null,
          trail,
          contentHash: `h${i}`,
          author: "a",
          client: "c",
          createdAt: i,
        });
      }
      const taken: number[] = [];
      const work = async (claims: PgJobClaims) => {
        for (;;) {
          const jobs = await claims.claim(7);
          if (jobs.length === 0) return;
          for (const j of jobs) {
            taken.push(j.trailSeq);
            await store.jobs.remove(j.trailSeq);
          }
        }
      };
      await Promise.all([work(new PgJobClaims(store.sql)), work(new PgJobClaims(store.sql))]);
      expect(taken.length).toBe(200);
      expect(new Set(taken).size).toBe(200);

      // A worker that claimed and died: nobody else gets its job until the lease runs out. Leases
      // go by the database's clock, so this part waits in real time (leases of 1.5 s).
      await store.trails.insertQueued(queuedTrailRow(999_999_999_999, trail));
      const dead = new PgJobClaims(store.sql, 1_500);
      const other = new PgJobClaims(store.sql, 1_500);
      expect(await dead.claim(5)).toHaveLength(1);
      expect(await other.claim(5)).toHaveLength(0);
      await Bun.sleep(1_700);
      expect(await other.claim(5)).toHaveLength(1);
      // A release gives a job back at once.
      await other.release((await store.jobs.next(5)).map((j) => j.trailSeq));
      expect(await dead.claim(5)).toHaveLength(1);
      // A worker whose release never arrived (the database went away mid-batch) takes its own
      // job again at its next claim; nobody else does before the lease runs out.
      expect(await other.claim(5)).toHaveLength(0);
      expect(await dead.claim(5)).toHaveLength(1);
      expect(dead.owner).toContain(`:${process.pid}:`);

      // A renewed lease runs from the renewal: a slow batch keeps its jobs; a job released meanwhile
      // (or taken over) is not taken back by a late renewal.
      const [held] = await dead.claim(5);
      await Bun.sleep(1_000);
      await dead.renew([held!.trailSeq]);
      await Bun.sleep(800); // past the first lease, within the renewed one
      expect(await other.claim(5)).toHaveLength(0);
      await Bun.sleep(1_000);
      expect(await other.claim(5)).toHaveLength(1);
      await dead.renew([held!.trailSeq]); // other holds it now
      expect(await dead.claim(5)).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  test("the queue counted for a publish includes the publishes in flight, which do not see each other's jobs", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url, poolSize: 4 });
    const trail = { environment: { os: "linux", runtime: { name: "python" } } } as any;
    try {
      for (let n = 1; n <= 30; n++) await store.trails.insertQueued(queuedTrailRow(n, trail));
      // 30 waiting and a limit of 100: far from it (more than QUEUE_TURNS_WITHIN), so the publishes
      // do not take turns and are in flight together.
      expect(await store.jobs.depth()).toBe(30);
      const first = await publishHeldOpen(store, 100, queuedTrailRow(31, trail));
      // The first publish's job is not committed: a plain count misses it, the publish's count does not.
      const second = await store.transaction(async (tx) => [await tx.jobs.depth(), await tx.jobs.depthForInsert(100)]);
      expect(second).toEqual([30, 31]);
      first.commit();
      expect(await first.counted).toBe(30);
      expect(await store.transaction((tx) => tx.jobs.depthForInsert(100))).toBe(31);
    } finally {
      await store.close();
    }
  });

  test("near the limit, a publish the committed jobs already refuse does not wait for another's turn", async () => {
    // Before: it queued for the turn of the publish in flight (held to that one's commit), so in a
    // burst the publishes to be refused waited one by one behind those stored and, on a loaded
    // machine, the last ran into the database deadline (test/lifecycle.test.ts's burst, once).
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url, poolSize: 4 });
    const trail = { environment: { os: "linux", runtime: { name: "python" } } } as any;
    let polling = true;
    try {
      for (let n = 1; n <= 3; n++) await store.trails.insertQueued(queuedTrailRow(n, trail));
      // A limit of 4 with 3 waiting: the first publish takes its turn and stays in flight.
      const first = await publishHeldOpen(store, 4, queuedTrailRow(4, trail));
      await store.trails.insertQueued(queuedTrailRow(5, trail)); // the queue is full without it
      const second = store.transaction((tx) => tx.jobs.depthForInsert(4));
      const waitsForTurn = (async () => {
        while (polling) {
          const [{ waiting }] = await store.sql`SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`;
          if (waiting > 0) return "waits for the other publish's turn";
          await Bun.sleep(10);
        }
        return "stopped";
      })();
      expect(await Promise.race([second, waitsForTurn])).toBe(4);
      polling = false;
      first.commit();
      expect(await first.counted).toBe(3);
    } finally {
      polling = false;
      await store.close();
    }
  });

  test("job leases go by the database's clock: a replica whose clock is skewed neither takes a lease still held nor waits on one that ran out", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url, poolSize: 4 });
    const trail = { environment: { os: "linux", runtime: { name: "python" } } } as any;
    // Replicas as the composition root makes them (compose.ts chooseSeams), one clock right, one
    // two minutes ahead, one two minutes behind.
    const replica = (skewMs: number, leaseMs: number) =>
      postgresSeams(store.sql, store.fingerprintFeed, () => Date.now() + skewMs, leaseMs).jobClaims!;
    try {
      await store.trails.insertQueued(queuedTrailRow(1, trail));
      const right = replica(0, 60_000);
      const ahead = replica(120_000, 60_000);
      expect(await right.claim(5)).toHaveLength(1);
      // Its clock says the 60 s lease ran out a minute ago: it must not take the job.
      expect(await ahead.claim(5)).toHaveLength(0);

      await store.trails.insertQueued(queuedTrailRow(2, trail));
      const behind = replica(-120_000, 60_000);
      const quick = replica(0, 300);
      expect((await quick.claim(5)).map((j) => j.trailSeq)).toHaveLength(1); // the second job (the first is right's)
      await Bun.sleep(500);
      // The 0.3 s lease ran out; by its clock it has two minutes to go: it must take the job.
      expect(await behind.claim(5)).toHaveLength(1);
      // And the lease it was given is a full one, not one that ran out two minutes ago.
      expect(await ahead.claim(5)).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  test("hourly counters: a transaction counting a search, a report and a label holds no row another connection waits for", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url, poolSize: 4 });
    const h = 3600_000;
    // A connection of its own (one server process), and one whose process falls in another slot.
    const holder = new SQL(url, { max: 1 });
    const slotOf = async (c: SQL) => Number((await c`SELECT pg_backend_pid() AS pid`)[0].pid) % COUNTER_SLOTS;
    const holderSlot = await slotOf(holder);
    const others: SQL[] = [];
    let other = new SQL(url, { max: 1 });
    while ((await slotOf(other)) === holderSlot) {
      others.push(other);
      other = new SQL(url, { max: 1 });
    }
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    try {
      let counted!: () => void;
      const holding = new Promise<void>((r) => (counted = r));
      const held = holder.begin(async (tx: any) => {
        await new PgStatsRepository(tx).bump("searches", 800 * h);
        await new PgStatsRepository(tx).addOutcome(800 * h, 10);
        await new PgSearchCounter(tx).add("HotLabelError", "anon-1", 800 * h);
        counted();
        await gate;
      });
      await holding;
      // The same counts from another connection while the first transaction is still open: with
      // one row per hour they waited for its commit (here: for ever); with slots they do not.
      const wait = (ms: number) => Bun.sleep(ms).then(() => "waited" as const);
      const stats = new PgStatsRepository(other);
      for (const count of [
        () => stats.bump("searches", 800 * h),
        () => stats.addOutcome(800 * h, 10),
        () => new PgSearchCounter(other).add("HotLabelError", "anon-2", 800 * h),
      ]) {
        expect(await Promise.race([count().then(() => "counted" as const), wait(2_000)])).toBe("counted");
      }
      release();
      await held;
      expect(await store.stats.series(800 * h)).toEqual([{ hour: 800 * h, name: "searches", value: 2 }]);
      expect(await store.stats.since(800 * h)).toMatchObject({ outcomes: 2, tokensSaved: 20 });
      expect(await store.searches.top(800 * h, 5, { minClients: 1, anyClients: [] })).toEqual([
        { label: "HotLabelError", clients: 2, searches: 2 },
      ]);
      // Once the hour is over, maintenance folds it into one row per key, counts unchanged.
      const rows = async () =>
        (
          await store.sql`SELECT (SELECT count(*) FROM series_hourly WHERE hour = 800)::int AS series,
            (SELECT count(*) FROM stats_hourly WHERE hour = 800)::int AS stats,
            (SELECT count(*) FROM search_hourly WHERE hour = 800)::int AS labels,
            (SELECT count(*) FROM series_hourly_slots WHERE hour = 800)::int AS series_slots,
            (SELECT count(*) FROM stats_hourly_slots WHERE hour = 800)::int AS stats_slots,
            (SELECT count(*) FROM search_hourly_slots WHERE hour = 800)::int AS label_slots`
        )[0];
      expect(await rows()).toEqual({ series: 0, stats: 0, labels: 0, series_slots: 2, stats_slots: 2, label_slots: 2 });
      expect(await store.stats.foldHoursBefore!(800 * h)).toBe(0); // the hour is not over
      // The slot rows of the two connections, one per table each.
      expect(await store.stats.foldHoursBefore!(801 * h)).toBe(6);
      expect(await rows()).toEqual({ series: 1, stats: 1, labels: 1, series_slots: 0, stats_slots: 0, label_slots: 0 });
      expect(await store.stats.series(800 * h)).toEqual([{ hour: 800 * h, name: "searches", value: 2 }]);
      expect(await store.stats.since(800 * h)).toMatchObject({ outcomes: 2, tokensSaved: 20 });
      expect(await store.searches.top(800 * h, 5, { minClients: 1, anyClients: [] })).toEqual([
        { label: "HotLabelError", clients: 2, searches: 2 },
      ]);
    } finally {
      release();
      await Promise.allSettled([holder, other, ...others].map((c) => c.close({ timeout: 0 })));
      await store.close();
    }
  });

  test("hourly counters: the fold goes by the database's clock, so a leader whose clock runs ahead neither folds the hour still counted nor deadlocks with the counts", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url, poolSize: 4 });
    const h = 3600_000;
    const conns = Array.from({ length: 12 }, () => new SQL(url, { max: 1 }));
    try {
      const [{ now }] = await store.sql`SELECT (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now`;
      const current = Math.floor(now / h);
      // Clients searched in the hour before and move into the current one, each connection in its
      // slot, while the maintenance leader (its clock two hours ahead) folds "the hours over".
      const clients = 1500;
      let pre = 0;
      await Promise.all(
        conns.map(async (c) => {
          while (pre < clients) await new PgSearchCounter(c).add("MovingError", `anon-${pre++}`, (current - 1) * h);
        }),
      );
      const aheadBefore = (current + 2) * h;
      let stop = false;
      const folding = (async () => {
        while (!stop) await store.stats.foldHoursBefore!(aheadBefore);
      })();
      let next = 0;
      const counting = Promise.all(
        conns.map(async (c) => {
          while (next < clients) {
            const i = next++;
            await c.begin(async (tx: any) => {
              await new PgSearchCounter(tx).add("MovingError", `anon-${i}`, current * h);
              await new PgStatsRepository(tx).bump("searches", current * h);
            });
          }
        }),
      );
      // Before: "deadlock detected" from a count (a failed search) or from the fold.
      await counting.finally(() => (stop = true));
      await folding;
      const byHour = await store.sql`SELECT hour::float8 AS hour, sum(n)::int AS n, sum(clients)::int AS clients
        FROM ${store.sql.unsafe(countedRows("search_hourly"))} GROUP BY hour ORDER BY hour`;
      expect(byHour.map((r: any) => [r.hour, r.n, r.clients])).toEqual([
        [current - 1, clients, 0],
        [current, clients, clients],
      ]);
      expect(await store.searches.top((current - 1) * h, 5, { minClients: 1, anyClients: [] })).toEqual([
        { label: "MovingError", clients, searches: 2 * clients },
      ]);
      // The current hour stays spread (one row per connection's slot), whatever the leader's clock.
      const [{ rows }] = await store.sql`SELECT count(*)::int AS rows FROM search_hourly_slots WHERE hour = ${current}`;
      expect(rows).toBeGreaterThan(1);
      // An hour over long enough ago is folded.
      await new PgStatsRepository(conns[0]!).bump("searches", (current - 3) * h);
      await new PgStatsRepository(conns[1]!).bump("searches", (current - 3) * h);
      await store.stats.foldHoursBefore!(aheadBefore);
      const [{ old, slots }] = await store.sql`SELECT (SELECT count(*) FROM series_hourly WHERE hour = ${current - 3})::int AS old,
        (SELECT count(*) FROM series_hourly_slots WHERE hour = ${current - 3})::int AS slots`;
      expect([old, slots]).toEqual([1, 0]);
      expect((await store.stats.series((current - 3) * h)).filter((p) => p.hour === (current - 3) * h)).toEqual([
        { hour: (current - 3) * h, name: "searches", value: 2 },
      ]);
    } finally {
      await Promise.allSettled(conns.map((c) => c.close({ timeout: 0 })));
      await store.close();
    }
  }, 60_000);

  test("migration 13 is a rolling upgrade: a replica of the release before keeps counting after it has run, and the new code reads its counts with its own", async () => {
    const url = await server.createDatabase();
    const sql = new SQL(url, { max: 2 });
    const h = 3600_000;
    // The statements a replica of the release before sends in every search's and every counted
    // report's transaction (repositories.ts before migration 13), and its hourly peak.
    const olderReplicaCounts = async (hour: number, client: string) => {
      await sql.begin((tx) => countSearchAsPreviousRelease(tx, "RollingError", client, hour));
      await sql`INSERT INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (${hour}, 1, 10)
        ON CONFLICT (hour) DO UPDATE SET outcomes = stats_hourly.outcomes + 1, tokens_saved = stats_hourly.tokens_saved + excluded.tokens_saved`;
      await sql`INSERT INTO series_hourly (hour, name, value) VALUES (${hour}, 'queue_depth', 4)
        ON CONFLICT (hour, name) DO UPDATE SET value = greatest(series_hourly.value, excluded.value)`;
    };
    // What the release before reads: its counter tables alone.
    const olderReplicaReads = async (hour: number) =>
      (
        await sql`SELECT (SELECT sum(value) FROM series_hourly WHERE hour >= ${hour} AND name = 'searches')::int AS searches,
          (SELECT sum(outcomes) FROM stats_hourly WHERE hour >= ${hour})::int AS outcomes,
          (SELECT sum(n) FROM search_hourly WHERE hour >= ${hour} AND label = 'RollingError')::int AS labelled`
      )[0];
    let store: Awaited<ReturnType<typeof openPostgresStore>> | null = null;
    try {
      await migratePostgres(
        sql,
        PG_MIGRATIONS.filter((m) => m.version <= 12),
      );
      await olderReplicaCounts(900, "anon-old-1");
      // A new replica starts (migration 13 runs) while the old one keeps serving.
      store = await openPostgresStore({ url, poolSize: 2 });
      await olderReplicaCounts(900, "anon-old-2");
      await store.stats.bump("searches", 900 * h);
      await store.stats.addOutcome(900 * h, 10);
      await store.searches.add("RollingError", "anon-new-1", 900 * h);
      await store.stats.peak("queue_depth", 900 * h, 6);
      // Each client moves to the next hour, on the other release's replica.
      await store.searches.add("RollingError", "anon-old-1", 901 * h);
      await olderReplicaCounts(901, "anon-new-1");
      const expected = async () => {
        expect(await store!.stats.series(900 * h)).toEqual([
          { hour: 900 * h, name: "queue_depth", value: 6 },
          { hour: 900 * h, name: "searches", value: 3 },
          { hour: 901 * h, name: "queue_depth", value: 4 },
          { hour: 901 * h, name: "searches", value: 1 },
        ]);
        expect(await store!.stats.since(900 * h)).toMatchObject({ outcomes: 4, tokensSaved: 40 });
        // Three clients, each counted once: the old replica's move took anon-new-1 off hour 900
        // only if hour 900's row had a client to lose (it had: the old replica's two); the new
        // replica's move of anon-old-1 took it off in its slot row.
        expect(await store!.searches.top(900 * h, 5, { minClients: 1, anyClients: [] })).toEqual([
          { label: "RollingError", clients: 3, searches: 5 },
        ]);
      };
      await expected();
      // The old replica reads its own counts; the new replica's wait for the fold of their hour.
      expect(await olderReplicaReads(900)).toEqual({ searches: 3, outcomes: 3, labelled: 3 });
      expect(await store.stats.foldHoursBefore!(902 * h)).toBeGreaterThan(0);
      await expected();
      expect(await olderReplicaReads(900)).toEqual({ searches: 4, outcomes: 4, labelled: 5 });
      const [{ slots }] = await sql`SELECT ((SELECT count(*) FROM series_hourly_slots) + (SELECT count(*) FROM stats_hourly_slots)
        + (SELECT count(*) FROM search_hourly_slots))::int AS slots`;
      expect(slots).toBe(0);
      // The old replica keeps counting into a folded hour, and the purges drop both kinds of rows.
      await olderReplicaCounts(901, "anon-old-3");
      await store.stats.bump("searches", 901 * h);
      expect((await store.stats.series(901 * h)).find((p) => p.name === "searches")?.value).toBe(3);
      await store.stats.purgeSeriesBefore(902 * h);
      await store.stats.purgeBefore(902 * h);
      expect(await store.stats.series(0)).toEqual([]);
      expect(await store.searches.top(0, 5, { minClients: 1, anyClients: [] })).toEqual([]);
      expect(await store.stats.since(0)).toMatchObject({ outcomes: 0, tokensSaved: 0 });
    } finally {
      await store?.close();
      await sql.close();
    }
  });

  test("hourly counters during a rolling upgrade: the release before's counts, the new code's and the fold running meanwhile lose and double nothing, and do not deadlock", async () => {
    const url = await server.createDatabase();
    const sql = new SQL(url, { max: 2 });
    await migratePostgres(
      sql,
      PG_MIGRATIONS.filter((m) => m.version <= 12),
    );
    const store = await openPostgresStore({ url, poolSize: 4 });
    const h = 3600_000;
    const conns = Array.from({ length: 12 }, () => new SQL(url, { max: 1 }));
    try {
      const [{ now }] = await store.sql`SELECT (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now`;
      const current = Math.floor(now / h);
      // A search as the release before counts it (repositories.ts before migration 13), and as this one does.
      const olderSearch = (c: SQL, client: string, hour: number) =>
        c.begin((tx) => countSearchAsPreviousRelease(tx, "MixedError", client, hour));
      const newerSearch = (c: SQL, client: string, hour: number) =>
        c.begin(async (tx: any) => {
          await new PgStatsRepository(tx).bump("searches", hour * h);
          await new PgSearchCounter(tx).add("MixedError", client, hour * h);
        });
      // Every client searched two hours ago on a replica of either release (half each), then
      // moves into the current hour, again on either release, while the leader (its clock two
      // hours ahead) folds in a loop: the hour before the move's is folded meanwhile, the current
      // one not (the database's clock).
      const clients = 1200;
      const search = (i: number, hour: number, k: number) =>
        (i + k) % 2 ? olderSearch(conns[k]!, `anon-${i}`, hour) : newerSearch(conns[k]!, `anon-${i}`, hour);
      let pre = 0;
      await Promise.all(
        conns.map(async (_, k) => {
          while (pre < clients) await search(pre++, current - 2, k);
        }),
      );
      let stop = false;
      let folds = 0;
      const folding = (async () => {
        while (!stop) {
          await store.stats.foldHoursBefore!((current + 2) * h);
          folds++;
        }
      })();
      let next = 0;
      await Promise.all(
        conns.map(async (_, k) => {
          while (next < clients) await search(next++, current, k);
        }),
      ).finally(() => (stop = true));
      await folding;
      expect(folds).toBeGreaterThan(1);
      const byHour = await store.sql`SELECT hour::float8 AS hour, sum(n)::int AS n
        FROM ${store.sql.unsafe(countedRows("search_hourly"))} GROUP BY hour ORDER BY hour`;
      expect(byHour.map((r: any) => [r.hour, r.n])).toEqual([
        [current - 2, clients],
        [current, clients],
      ]);
      expect((await store.stats.series((current - 2) * h)).map((p) => [p.hour / h, p.name, p.value])).toEqual([
        [current - 2, "searches", clients],
        [current, "searches", clients],
      ]);
      // Clients: each counted once in its latest hour, but for the moves the release before made
      // off an hour whose row had no client left for it (the new code's were in slot rows, folded
      // or not yet): the upgrade window's overcount, never an undercount.
      const [top] = await store.searches.top((current - 2) * h, 5, { minClients: 1, anyClients: [] });
      expect(top!.searches).toBe(2 * clients);
      expect(top!.clients).toBeGreaterThanOrEqual(clients);
      const [latest] = await store.searches.top(current * h, 5, { minClients: 1, anyClients: [] });
      expect(latest).toEqual({ label: "MixedError", clients, searches: clients });
    } finally {
      await Promise.allSettled(conns.map((c) => c.close({ timeout: 0 })));
      await store.close();
      await sql.close();
    }
  }, 60_000);

  test("maintenance leadership: one replica at a time, taken over when the leader is gone", async () => {
    const url = await server.createDatabase();
    const a = new SQL(url, { max: 2 });
    const b = new SQL(url, { max: 2 });
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const first = new AdvisoryLockLeadership(a).run("maintenance", () => held);
      await Bun.sleep(50);
      expect(await new AdvisoryLockLeadership(b).run("maintenance", async () => {})).toBe(false);
      expect(await new AdvisoryLockLeadership(b).run("other task", async () => {})).toBe(true);
      release();
      expect(await first).toBe(true);
      expect(await new AdvisoryLockLeadership(b).run("maintenance", async () => {})).toBe(true);
      // The leader's connection dies mid-task: the server drops its lock.
      const stuck = new AdvisoryLockLeadership(a).run("maintenance", () => new Promise<void>(() => {}));
      void stuck;
      await Bun.sleep(50);
      expect(await new AdvisoryLockLeadership(b).run("maintenance", async () => {})).toBe(false);
      await a.close({ timeout: 0 });
      await Bun.sleep(100);
      expect(await new AdvisoryLockLeadership(b).run("maintenance", async () => {})).toBe(true);
    } finally {
      await b.close();
    }
  });

  test("postings of documents indexed before migration 5 come from their tsvector: the same postings and scores as indexed now", async () => {
    const docs = [
      { error: "error err_require_esm require of es module not supported", body: "use dynamic import import esm module module" },
      { error: "modulenotfounderror no module named numpy", body: "pip install numpy numpy in the venv" },
      { error: "error module not found", body: "" },
      { error: "", body: "module module module esm" },
    ];
    const tokenCount = (text: string) => text.split(" ").filter(Boolean).length;
    const [before, fresh] = [await server.createDatabase(), await server.createDatabase()];
    const old = new SQL(before, { max: 2 });
    const now = new SQL(fresh, { max: 2 });
    try {
      // Written as version 4 wrote them: the tsvector, token counts and term statistics only.
      await migratePostgres(
        old,
        PG_MIGRATIONS.filter((m) => m.version <= 4),
      );
      for (const [i, doc] of docs.entries()) {
        const length = tokenCount(doc.error) + tokenCount(doc.body);
        await old`INSERT INTO lexical (id, doc, error_tokens, tokens)
          VALUES (${i + 1}, ${tsvectorLiteral(doc)}::tsvector, ${tokenCount(doc.error)}, ${length})`;
        for (const term of weightedTermCounts(doc).keys()) {
          await old`INSERT INTO lexical_terms (term, docs) VALUES (${term}, 1) ON CONFLICT (term) DO UPDATE SET docs = lexical_terms.docs + 1`;
        }
        await old`UPDATE lexical_totals SET docs = docs + 1, tokens = tokens + ${length}`;
      }
      await migratePostgres(old);
      await migratePostgres(now);
      const index = new PgLexicalIndex(now, false);
      for (const [i, doc] of docs.entries()) await index.add(i + 1, doc);
      const postings = async (sql: SQL) =>
        (await sql`SELECT term, id, count, tokens FROM lexical_postings ORDER BY term, id`).map((r: any) => ({ ...r }));
      const expected = docs.flatMap((doc, i) =>
        [...weightedTermCounts(doc)].map(([term, count]) => ({
          term,
          id: String(i + 1),
          count,
          tokens: tokenCount(doc.error) + tokenCount(doc.body),
        })),
      );
      expected.sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : Number(a.id) - Number(b.id)));
      expect(await postings(now)).toEqual(expected);
      expect(await postings(old)).toEqual(expected);
      for (const query of [["module"], ["esm", "numpy"], ["err_require_esm", "module", "found"], ["absent"]]) {
        const a = await new PgLexicalIndex(old, false).search(query, 10);
        expect(await index.search(query, 10)).toEqual(a);
        if (query[0] !== "absent") expect(a.length).toBeGreaterThan(0);
      }
    } finally {
      await old.close();
      await now.close();
    }
  });

  test("a term in more documents than the postings limit loses its postings; queries with it are scored from the documents, alike", async () => {
    const sql = new SQL(await server.createDatabase(), { max: 2 });
    try {
      await migratePostgres(sql);
      const index = new PgLexicalIndex(sql, false);
      const doc = (i: number) => ({ error: `failure code_${i % 7} widespread`, body: i % 3 === 0 ? "rare_word widespread" : "" });
      const add = (from: number, to: number) =>
        index.addMany(Array.from({ length: to - from }, (_, j) => ({ id: from + j + 1, doc: doc(from + j) })));
      const state = async () => {
        const [t] = await sql`SELECT docs, postings FROM lexical_terms WHERE term = 'widespread'`;
        const [{ n }] = await sql`SELECT count(*)::int AS n FROM lexical_postings WHERE term = 'widespread'`;
        return { docs: Number(t.docs), postings: t.postings, rows: n };
      };
      await add(0, POSTINGS_MIN_DOCS);
      expect(await state()).toEqual({ docs: POSTINGS_MIN_DOCS, postings: true, rows: POSTINGS_MIN_DOCS });
      const query = ["widespread", "rare_word", "code_3"];
      const fromPostings = spyOn(index as any, "fromPostings");
      const before = await index.search(query, 20);
      expect(fromPostings).toHaveBeenCalledTimes(1);
      await add(POSTINGS_MIN_DOCS, POSTINGS_MIN_DOCS + 1); // one more: past the limit
      expect(await state()).toEqual({ docs: POSTINGS_MIN_DOCS + 1, postings: false, rows: 0 });
      await add(POSTINGS_MIN_DOCS + 1, POSTINGS_MIN_DOCS + 5); // and it stays without
      expect(await state()).toEqual({ docs: POSTINGS_MIN_DOCS + 5, postings: false, rows: 0 });
      const after = await index.search(query, 20);
      expect(fromPostings).toHaveBeenCalledTimes(1); // the documents' path
      // The same documents score alike by either path: the first 1,000 are unchanged but for the
      // totals, so compare against the postings path on a database with the same five more.
      const other = new SQL(await server.createDatabase(), { max: 2 });
      try {
        await migratePostgres(other);
        const twin = new PgLexicalIndex(other, false);
        await twin.addMany(Array.from({ length: POSTINGS_MIN_DOCS + 5 }, (_, j) => ({ id: j + 1, doc: doc(j) })));
        expect(await twin.search(["rare_word", "code_3"], 20)).toEqual(await index.search(["rare_word", "code_3"], 20));
      } finally {
        await other.close();
      }
      expect(after.length).toBe(20);
      expect(before.length).toBe(20);
      // A term whose postings go while a query runs: the postings' answer is refused, not partial.
      await sql`UPDATE lexical_terms SET postings = false WHERE term = 'rare_word'`;
      const chosen = ["rare_word"];
      expect(await (index as any).fromPostings({ terms: chosen, idf: [1], avgLength: 3 }, 5)).toBeNull();
      // Removing a document removes its postings and its counts.
      await index.remove(3, doc(2));
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM lexical_postings WHERE id = 3`;
      expect(n).toBe(0);
    } finally {
      await sql.close();
    }
  });

  test("binary codes: one bit per positive dimension", () => {
    expect([...binaryCode(Float32Array.from([1, -1, 0, 2, 0, 0, 0, -3, 5, 0, 0, 0, 0, 0, 0, 0]))]).toEqual([0b1001, 0b1]);
  });
});

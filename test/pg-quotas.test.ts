// The shared quota counters on a real PostgreSQL (src/store/postgres/seams.ts PgQuotaCounters): uses
// arriving while a quota statement is in flight go together in the next one, and every use still
// gets the count it would have had were the uses sent one by one, across replicas.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { QuotaDecision } from "../src/store/seams";
import { migratePostgres } from "../src/store/postgres/migrations";
import { PgQuotaCounters } from "../src/store/postgres/seams";
import { type PostgresServer, plainRows, postgresUnavailable, startPostgres } from "./support/postgres";

const unavailable = postgresUnavailable();
if (unavailable) console.warn(`PostgreSQL quota tests skipped: ${unavailable}`);

/** A pool whose quota statements are counted (the upserts the counters send). */
function countingPool(url: string): { sql: SQL; statements: () => number } {
  const sql = new SQL(url, { max: 4 });
  let statements = 0;
  const counted = new Proxy(sql, {
    apply(target, thisArg, args) {
      if (Array.isArray(args[0]) && args[0].join("").includes("INSERT INTO quota_windows")) statements++;
      return Reflect.apply(target as any, thisArg, args);
    },
  });
  return { sql: counted, statements: () => statements };
}

/** The uses' `remaining` values, sorted from high to low. */
const remainingOf = (decisions: QuotaDecision[]) => decisions.map((d) => d.remaining).sort((a, b) => b - a);
const countdown = (limit: number) => Array.from({ length: limit }, (_, i) => limit - 1 - i);

describe.skipIf(unavailable !== null)("shared quota counters on PostgreSQL, uses counted in groups", () => {
  let server: PostgresServer;
  const pools: SQL[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  });

  afterAll(async () => {
    for (const p of pools) await p.close({ timeout: 0 }).catch(() => {});
    await server?.stop();
  });

  async function database(): Promise<string> {
    const url = await server.createDatabase();
    const sql = new SQL(url, { max: 2 });
    pools.push(sql);
    await migratePostgres(sql);
    return url;
  }

  function pool(url: string) {
    const p = countingPool(url);
    pools.push(p.sql);
    return p;
  }

  test("two replicas, 500 concurrent uses of one key, limit 300: exactly 300 allowed, remaining 299..0 once each, fewer statements than uses", async () => {
    const url = await database();
    const a = pool(url);
    const b = pool(url);
    const replicaA = new PgQuotaCounters(a.sql).window("general", 300, 60_000);
    const replicaB = new PgQuotaCounters(b.sql).window("general", 300, 60_000);
    const uses: Promise<QuotaDecision>[] = [];
    // In waves over several turns of the event loop, so some arrive while statements are in flight.
    for (let wave = 0; wave < 50; wave++) {
      for (let i = 0; i < 10; i++) uses.push(Promise.resolve((i % 2 ? replicaA : replicaB).take("192.0.2.1")));
      if (wave % 5 === 4) await Bun.sleep(1);
      else await Promise.resolve();
    }
    const decisions = await Promise.all(uses);
    const allowed = decisions.filter((d) => d.allowed);
    const refused = decisions.filter((d) => !d.allowed);
    expect(allowed.length).toBe(300);
    expect(remainingOf(allowed)).toEqual(countdown(300));
    expect(refused.every((d) => d.remaining === 0 && d.limit === 300 && d.reset >= 1 && d.reset <= 60)).toBe(true);
    expect(plainRows(await a.sql`SELECT used FROM quota_windows`)).toEqual([{ used: 300 }]);
    // One statement per use would be 500: the optimisation must not silently disappear.
    const statements = a.statements() + b.statements();
    expect(statements).toBeGreaterThanOrEqual(2);
    expect(statements).toBeLessThan(100);
    expect((await replicaA.peek("192.0.2.1")).remaining).toBe(0);
  });

  test("two replicas, several keys in every statement, arriving in different orders: each key gets exactly its limit, no deadlock", async () => {
    const url = await database();
    const a = pool(url);
    const b = pool(url);
    const replicaA = new PgQuotaCounters(a.sql).window("general", 40, 60_000);
    const replicaB = new PgQuotaCounters(b.sql).window("general", 40, 60_000);
    const keys = ["192.0.2.10", "192.0.2.11", "192.0.2.12", "192.0.2.13"];
    const uses: { key: string; use: Promise<QuotaDecision> }[] = [];
    for (let wave = 0; wave < 30; wave++) {
      // Replica A sees the keys in one order, B in the reverse, so their statements would lock
      // the shared rows in opposite orders were the rows not sorted.
      for (const key of keys) uses.push({ key, use: Promise.resolve(replicaA.take(key)) });
      for (const key of [...keys].reverse()) uses.push({ key, use: Promise.resolve(replicaB.take(key)) });
      if (wave % 3 === 2) await Bun.sleep(1);
      else await Promise.resolve();
    }
    const decided = await Promise.all(uses.map(async (u) => ({ key: u.key, decision: await u.use })));
    for (const key of keys) {
      const mine = decided.filter((u) => u.key === key).map((u) => u.decision);
      expect(mine.length).toBe(60);
      expect(remainingOf(mine.filter((d) => d.allowed))).toEqual(countdown(40));
      expect(mine.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
    }
    expect(plainRows(await a.sql`SELECT key, used FROM quota_windows ORDER BY key`)).toEqual(keys.map((key) => ({ key, used: 40 })));
    expect(a.statements() + b.statements()).toBeLessThan(60);
  });

  test("one use at a time is sent at once, alone, and counts down exactly", async () => {
    const url = await database();
    const p = pool(url);
    const window = new PgQuotaCounters(p.sql).window("publish", 3, 3600_000);
    const seen: QuotaDecision[] = [];
    for (let i = 0; i < 5; i++) seen.push(await window.take("198.51.100.4"));
    expect(seen.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    expect(p.statements()).toBe(5);
  });

  test("several quotas and keys (awkward ones too) in one statement, each counted on its own", async () => {
    const url = await database();
    const p = pool(url);
    const counters = new PgQuotaCounters(p.sql);
    const general = counters.window("general", 7, 60_000);
    const publish = counters.window("publish", 3, 3600_000);
    const draft = counters.window("draft", 0, 3600_000);
    const keys = ["192.0.2.9", "2001:db8::1", 'quote"comma,{brace}\\back', "ünïcode ключ"];
    // A first use alone, then everything else while it is in flight: one more statement carries the rest.
    const first = general.take(keys[0]!);
    await Promise.resolve(); // its statement is sent
    const uses: { quota: string; key: string; limit: number; use: Promise<QuotaDecision> }[] = [];
    for (let round = 0; round < 10; round++) {
      for (const key of keys) {
        uses.push({ quota: "general", key, limit: 7, use: Promise.resolve(general.take(key)) });
        uses.push({ quota: "publish", key, limit: 3, use: Promise.resolve(publish.take(key)) });
        if (round === 0) uses.push({ quota: "draft", key, limit: 0, use: Promise.resolve(draft.take(key)) });
      }
    }
    expect(await first).toMatchObject({ allowed: true, remaining: 6 });
    const decided = await Promise.all(uses.map(async (u) => ({ ...u, decision: await u.use })));
    expect(p.statements()).toBe(2);
    for (const quota of ["general", "publish", "draft"]) {
      for (const key of keys) {
        const mine = decided.filter((u) => u.quota === quota && u.key === key).map((u) => u.decision);
        const limit = quota === "general" ? 7 : quota === "publish" ? 3 : 0;
        const left = quota === "general" && key === keys[0] ? limit - 1 : limit; // the first use took one
        // In arrival order, as if one by one: the allowed ones first, counting down, then refusals.
        expect(mine.map((d) => [d.allowed, d.remaining])).toEqual(mine.map((_, i) => (i < left ? [true, left - 1 - i] : [false, 0])));
        expect((await (quota === "general" ? general : quota === "publish" ? publish : draft).peek(key)).remaining).toBe(0);
      }
    }
    const rows = plainRows(await p.sql`SELECT quota, key, used FROM quota_windows ORDER BY quota, key`);
    expect(rows.filter((r) => r.quota === "general").map((r) => r.used)).toEqual([7, 7, 7, 7]);
    expect(rows.filter((r) => r.quota === "publish").map((r) => r.used)).toEqual([3, 3, 3, 3]);
    expect(
      rows
        .filter((r) => r.quota === "publish")
        .map((r) => r.key)
        .sort(),
    ).toEqual([...keys].sort());
  });

  test("a window boundary inside one statement: the uses before it and after it count in their own windows", async () => {
    const url = await database();
    const p = pool(url);
    const boundary = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
    let now = boundary - 1;
    const window = new PgQuotaCounters(p.sql, () => now).window("general", 2, 60_000);
    const blocker = window.take("203.0.113.5");
    await Promise.resolve(); // its statement is in flight: the rest wait for the next one
    const before = [window.take("203.0.113.5"), window.take("203.0.113.5")];
    now = boundary;
    const after = [window.take("203.0.113.5"), window.take("203.0.113.5"), window.take("203.0.113.5")];
    expect(await blocker).toMatchObject({ allowed: true, remaining: 1, reset: 1 });
    expect((await Promise.all(before)).map((d) => [d.allowed, d.remaining, d.reset])).toEqual([
      [true, 0, 1],
      [false, 0, 1],
    ]);
    expect((await Promise.all(after)).map((d) => [d.allowed, d.remaining, d.reset])).toEqual([
      [true, 1, 60],
      [true, 0, 60],
      [false, 0, 60],
    ]);
    expect(p.statements()).toBe(2);
    const rows = plainRows(
      await p.sql`SELECT window_start::float8 AS start, window_end::float8 AS "end", used FROM quota_windows ORDER BY window_start`,
    );
    expect(rows).toEqual([
      { start: boundary - 60_000, end: boundary, used: 2 },
      { start: boundary, end: boundary + 60_000, used: 2 },
    ]);
  });

  test("a statement stuck on a row lock holds up no other key's uses past the stall bound; its own are counted exactly once the lock goes", async () => {
    const url = await database();
    const p = pool(url);
    const window = new PgQuotaCounters(p.sql, Date.now, 200).window("general", 5, 60_000);
    expect(await window.take("192.0.2.20")).toMatchObject({ allowed: true, remaining: 4 });
    const locker = new SQL(url, { max: 1 });
    pools.push(locker);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = locker.begin(async (tx) => {
      await tx`SELECT used FROM quota_windows WHERE key = '192.0.2.20' FOR UPDATE`;
      locked();
      await held;
    });
    try {
      await isLocked;
      const stuck = [window.take("192.0.2.20"), window.take("192.0.2.20")];
      await Bun.sleep(20); // their statement is waiting for the lock
      const other = await Promise.race([Promise.resolve(window.take("192.0.2.21")), Bun.sleep(10_000).then(() => null)]);
      expect(other).toMatchObject({ allowed: true, remaining: 4 });
      release();
      await holding;
      expect((await Promise.all(stuck)).map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 3],
        [true, 2],
      ]);
      expect(plainRows(await p.sql`SELECT key, used FROM quota_windows ORDER BY key`)).toEqual([
        { key: "192.0.2.20", used: 3 },
        { key: "192.0.2.21", used: 1 },
      ]);
    } finally {
      release();
      await holding.catch(() => {});
    }
  });

  // Last: it takes the server away.
  test("the database goes away mid-batch: every waiting use is decided by local counting, nothing hangs; back to shared counting after", async () => {
    const url = await database();
    const p = pool(url);
    const window = new PgQuotaCounters(p.sql).window("general", 1000, 60_000);
    const uses: Promise<QuotaDecision>[] = [];
    let going = true;
    const stream = (async () => {
      while (going) {
        for (let i = 0; i < 5; i++) uses.push(Promise.resolve(window.take(`192.0.2.${i}`)));
        await Bun.sleep(1);
      }
    })();
    await Bun.sleep(100);
    await server.pause({ mode: "immediate" });
    await Bun.sleep(100);
    going = false;
    await stream;
    const decisions = await Promise.race([Promise.all(uses), Bun.sleep(15_000).then(() => null)]);
    expect(decisions).not.toBeNull();
    expect(decisions!.every((d) => d.allowed && d.limit === 1000)).toBe(true);
    // While it is away, uses are still answered, from this replica's memory.
    const away = await Promise.race([Promise.resolve(window.take("192.0.2.200")), Bun.sleep(15_000).then(() => null)]);
    expect(away).toMatchObject({ allowed: true, remaining: 999 });

    await server.resume();
    const deadline = Date.now() + 15_000;
    let counted: QuotaDecision | null = null;
    while (Date.now() < deadline) {
      counted = await window.take("192.0.2.250");
      const rows = await p.sql`SELECT used FROM quota_windows WHERE key = '192.0.2.250'`.catch(() => []);
      if (rows.length === 1) break;
      await Bun.sleep(50);
    }
    expect(counted?.allowed).toBe(true);
    expect(plainRows(await p.sql`SELECT count(*)::int AS n FROM quota_windows WHERE key = '192.0.2.250'`)).toEqual([{ n: 1 }]);
  });
});

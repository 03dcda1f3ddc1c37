// Two colonies on one PostgreSQL database behind a round-robin proxy (docs/scale-out.md): every
// request may land on either replica, so what one replica wrote must be visible through the other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { rmSync } from "node:fs";
import { pseudonymSecret } from "../src/compose";
import { fingerprint } from "../src/core/fingerprint";
import type { RunningColony } from "../src/serve";
import { migratePostgres } from "../src/store/postgres/migrations";
import { countedRows } from "../src/store/postgres/repositories";
import type { Store } from "../src/store/ports";
import { PgQuotaCounters, QUOTA_PURGE_GRACE_MS } from "../src/store/postgres/seams";
import { startQuietColony, tempDir } from "./support/colony";
import { type PostgresServer, postgresUnavailable, startPostgres } from "./support/postgres";
import { type RoundRobinProxy, startRoundRobinProxy } from "./support/round-robin-proxy";
import { agent, json, sampleTrail } from "./support/trails";

const unavailable = postgresUnavailable();
if (unavailable) console.warn(`multi-replica tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)("two replicas on one PostgreSQL database behind a proxy", () => {
  let server: PostgresServer;
  let proxy: RoundRobinProxy;
  let quotaProxy: RoundRobinProxy | undefined;
  const replicas: RunningColony[] = [];
  const dirs: string[] = [];
  /** The database each replica runs on. */
  const databaseOf = new Map<RunningColony, string>();

  beforeAll(async () => {
    server = await startPostgres();
    proxy = startRoundRobinProxy((await startReplicas({})).map((r) => r.url));
  });

  /** Two colonies on a fresh database of the test server. */
  async function startReplicas(env: Record<string, string>): Promise<RunningColony[]> {
    const url = await server.createDatabase();
    const started: RunningColony[] = [];
    for (let i = 0; i < 2; i++) {
      const dir = tempDir("colony-replica-");
      dirs.push(dir);
      const colony = await startQuietColony({ ...env, COLONY_DATABASE_URL: url, COLONY_DATA_DIR: dir });
      replicas.push(colony);
      started.push(colony);
      databaseOf.set(colony, url);
    }
    return started;
  }

  afterAll(async () => {
    proxy?.stop();
    quotaProxy?.stop();
    for (const r of replicas) await r.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await server?.stop();
  });

  const viaProxy = (path: string, init?: RequestInit) => fetch(proxy.url + path, init);

  /** Polls the trail's status through the proxy (so through both replicas) until it is indexed. */
  async function untilIndexed(trailId: string, timeoutMs = 30_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await viaProxy(`/v1/trails/${trailId}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      if (body.status === "indexed") return body;
      if (Date.now() > deadline) throw new Error(`trail ${trailId} still ${body.status} after ${timeoutMs} ms`);
      await Bun.sleep(50);
    }
  }

  test("a trail published through the proxy is read back, looked up and found by search on both replicas", async () => {
    const error = "psycopg2.OperationalError: could not connect to server: Connection refused (replica test)";
    const published = await viaProxy("/v1/trails", json(sampleTrail({ error }), agent("agent-replica-1")));
    expect(published.status).toBe(202);
    const { trail_id } = (await published.json()) as any;
    // Read-your-writes: the status read right after the 202 lands on the other replica.
    const first = await viaProxy(`/v1/trails/${trail_id}`);
    expect(first.status).toBe(200);
    const status = await untilIndexed(trail_id);

    const before = [...proxy.sent];
    for (let i = 0; i < 2; i++) {
      const look = await viaProxy(`/v1/trails/by-fingerprint/${status.fingerprint}`);
      expect(look.status).toBe(200);
      expect(((await look.json()) as any).results.map((r: any) => r.trail_id)).toContain(trail_id);
    }
    // Search may lag the index by the vector feed's catch-up on the replica that did not embed it.
    const deadline = Date.now() + 1_000;
    const answeredBy = new Set<number>();
    while (answeredBy.size < 2) {
      const index = proxy.sent.reduce((a, b) => a + b, 0) % 2;
      const res = await viaProxy("/v1/search", json({ protocol_version: "1.0", query: error }));
      expect(res.status).toBe(200);
      const ids = ((await res.json()) as any).results.map((r: any) => r.trail_id);
      if (ids.includes(trail_id)) answeredBy.add(index);
      else if (Date.now() > deadline) throw new Error(`replica ${index} does not find the trail by search after 1 s`);
      else await Bun.sleep(20);
    }
    expect(proxy.sent[0]! - before[0]!).toBeGreaterThan(0);
    expect(proxy.sent[1]! - before[1]!).toBeGreaterThan(0);
  });

  test("the publish quota is shared: through the proxy it runs out after exactly N publishes over both replicas", async () => {
    const limit = 5;
    quotaProxy = startRoundRobinProxy((await startReplicas({ COLONY_PUBLISH_LIMIT: String(limit) })).map((r) => r.url));
    const publish = (i: number) =>
      fetch(`${quotaProxy!.url}/v1/trails`, json(sampleTrail({ error: `KeyError: 'shared-quota-${i}'` }), agent("agent-quota-1")));
    const remaining: string[] = [];
    for (let i = 0; i < limit; i++) {
      const res = await publish(i);
      expect(res.status).toBe(202);
      expect(res.headers.get("RateLimit-Limit")).toBe(String(limit));
      remaining.push(res.headers.get("RateLimit-Remaining")!);
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    for (let i = 0; i < 2; i++) {
      const refused = await publish(limit + i);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as any).error.code).toBe("publish_limited");
      expect(refused.headers.get("RateLimit-Remaining")).toBe("0");
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    }
    expect(quotaProxy.sent[0]).toBeGreaterThanOrEqual(3);
    expect(quotaProxy.sent[1]).toBeGreaterThanOrEqual(3);
  });

  test("hourly counters: searches through both replicas at once are counted exactly; maintenance folds the finished hours", async () => {
    const sql = new SQL(databaseOf.get(replicas[0]!)!, { max: 2 });
    try {
      const searches = await Promise.all(
        Array.from({ length: 24 }, () =>
          viaProxy("/v1/search", json({ query: "SlotCountedError: nothing stored about it", error_type: "SlotCountedError" })),
        ),
      );
      expect(searches.map((r) => r.status)).toEqual(Array(24).fill(200));
      const hot = async () => ((await (await viaProxy("/v1/stats")).json()) as any).hot.find((h: any) => h.label === "SlotCountedError");
      expect((await hot()).searches).toBe(24);
      // As if these counts were of an hour long over (moved three hours back, where no other
      // row is), the leader's maintenance folds their slot rows into one row per key, their sum.
      await sql`UPDATE series_hourly_slots SET hour = hour - 3 WHERE name = 'searches'`;
      await sql`UPDATE search_hourly_slots SET hour = hour - 3 WHERE label = 'SlotCountedError'`;
      const counted = async () =>
        (
          await sql`SELECT (SELECT sum(value) FROM ${sql.unsafe(countedRows("series_hourly"))} WHERE name = 'searches')::int AS searches,
            (SELECT count(*) FROM series_hourly WHERE name = 'searches')::int AS series_rows,
            (SELECT count(*) FROM series_hourly_slots WHERE name = 'searches')::int AS series_slot_rows,
            (SELECT sum(n) FROM ${sql.unsafe(countedRows("search_hourly"))} WHERE label = 'SlotCountedError')::int AS labelled,
            (SELECT count(*) FROM search_hourly WHERE label = 'SlotCountedError')::int AS label_rows,
            (SELECT count(*) FROM search_hourly_slots WHERE label = 'SlotCountedError')::int AS label_slot_rows`
        )[0];
      const before = await counted();
      expect(before.searches).toBeGreaterThanOrEqual(24);
      expect(before.labelled).toBe(24);
      expect(before.label_rows).toBe(0);
      expect(before.label_slot_rows).toBeGreaterThan(0);
      // (private: the hourly task, run here at once rather than an hour after start)
      await (replicas[0]!.service as unknown as { maintenance(): Promise<void> }).maintenance();
      const after = await counted();
      expect(after).toEqual({ ...before, series_rows: after.series_rows, series_slot_rows: 0, label_rows: 1, label_slot_rows: 0 });
      // One row for each hour the searches fell in (the test may straddle an hour).
      expect(after.series_rows).toBeLessThanOrEqual(2);
    } finally {
      await sql.close();
    }
  });

  test("shared quota counters: concurrent uses never count past the limit; maintenance purges ended windows", async () => {
    const sql = new SQL(await server.createDatabase(), { max: 8 });
    try {
      await migratePostgres(sql);
      const replicaA = new PgQuotaCounters(sql).window("publish", 7, 3600_000);
      const replicaB = new PgQuotaCounters(sql).window("publish", 7, 3600_000);
      const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? replicaA : replicaB).take("192.0.2.7")));
      expect(decisions.filter((d) => d.allowed).length).toBe(7);
      expect((await replicaB.peek("192.0.2.7")).remaining).toBe(0);
      expect((await replicaA.peek("192.0.2.8")).remaining).toBe(7);
      expect(await new PgQuotaCounters(sql).purgeExpired()).toBe(0);
      // A maintenance leader whose clock runs two hours ahead deleted the window the others still
      // counted in (their clients then had a fresh quota): windows end by the database's clock.
      const ahead = new PgQuotaCounters(sql, () => Date.now() + 2 * 3600_000);
      expect(await ahead.purgeExpired()).toBe(0);
      expect((await replicaA.take("192.0.2.7")).allowed).toBe(false);
      // A window that ended longer ago than the grace is deleted; one that ended within it is kept.
      const t = Date.now();
      await sql`INSERT INTO quota_windows (quota, key, window_start, window_end, used, granted, quota_limit) VALUES
        ('publish', 'old', ${t - 3600_000 - QUOTA_PURGE_GRACE_MS - 60_000}, ${t - QUOTA_PURGE_GRACE_MS - 60_000}, 1, 1, 7),
        ('publish', 'recent', ${t - 3600_000 - 60_000}, ${t - 60_000}, 1, 1, 7)`;
      expect(await ahead.purgeExpired()).toBe(1);
      expect(await sql`SELECT key FROM quota_windows ORDER BY key`).toEqual([{ key: "192.0.2.7" }, { key: "recent" }]);
    } finally {
      await sql.close();
    }
  });

  test("replicas started together key client pseudonyms alike: the first secret stored wins", async () => {
    const [a, b] = replicas as [RunningColony, RunningColony];
    const storeA = a.subsystems.store!;
    await storeA.kv.delete("pseudonym.secret"); // as on a fresh database
    // Both replicas read the key before either writes it: the interleaving of a start together.
    let read = 0;
    const bothRead = Promise.withResolvers<void>();
    const racing = (store: Store) => {
      const kv = new Proxy(store.kv, {
        get(target, key) {
          if (key === "get") {
            return async (k: string) => {
              const value = await target.get(k);
              if (++read === 2) bothRead.resolve();
              await bothRead.promise;
              return value;
            };
          }
          const member = Reflect.get(target, key, target);
          return typeof member === "function" ? member.bind(target) : member;
        },
      });
      return { kv } as Store;
    };
    const secrets = await Promise.all([pseudonymSecret(racing(storeA)), pseudonymSecret(racing(b.subsystems.store!))]);
    expect(secrets[0]).toBe(secrets[1]);
    expect(await storeA.kv.get("pseudonym.secret")).toBe(secrets[0]);
  });

  test("a lookup miss cached on one replica ends within 1 s once the other replica indexes the trail", async () => {
    const [a, b] = replicas as [RunningColony, RunningColony];
    // Only a indexes, so b can learn of the trail from a's notice alone.
    await b.service.worker!.stop();
    const error = "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379 (cache test)";
    const fp = fingerprint(error);
    expect((await fetch(`${b.url}/v1/trails/by-fingerprint/${fp}`)).status).toBe(404);
    expect((await fetch(`${b.url}/v1/trails/by-fingerprint/${fp}`)).status).toBe(404); // served from b's cache
    const published = await fetch(`${a.url}/v1/trails`, json(sampleTrail({ error }), agent("agent-replica-2")));
    expect(published.status).toBe(202);
    const { trail_id } = (await published.json()) as any;
    await a.service.worker!.drain();
    expect(((await (await fetch(`${a.url}/v1/trails/${trail_id}`)).json()) as any).status).toBe("indexed");
    const deadline = Date.now() + 1_000;
    for (;;) {
      const res = await fetch(`${b.url}/v1/trails/by-fingerprint/${fp}`);
      if (res.status === 200) {
        expect(((await res.json()) as any).results[0].trail_id).toBe(trail_id);
        break;
      }
      if (Date.now() > deadline) throw new Error(`replica b still answers ${res.status} 1 s after a indexed the trail`);
      await Bun.sleep(20);
    }
  });

  test("read-your-writes: once one replica says indexed, a lookup on the other finds the trail at once, and an outcome shows at once, without its notices", async () => {
    const [a, b] = replicas as [RunningColony, RunningColony];
    // b hears none of a's notices (as when they are slow): only reading before it answers tells it.
    const feed = (b.subsystems.store as unknown as { fingerprintFeed: { received(payload: string): void } }).fingerprintFeed;
    const received = feed.received;
    feed.received = () => {};
    try {
      const error = "pika.exceptions.AMQPConnectionError: connection refused (read-your-writes test)";
      const fp = fingerprint(error);
      expect((await fetch(`${b.url}/v1/trails/by-fingerprint/${fp}`)).status).toBe(404);
      expect((await fetch(`${b.url}/v1/trails/by-fingerprint/${fp}`)).status).toBe(404); // b has the miss cached
      const published = await fetch(`${a.url}/v1/trails`, json(sampleTrail({ error }), agent("agent-replica-3")));
      expect(published.status).toBe(202);
      const { trail_id } = (await published.json()) as any;
      await Promise.all(replicas.map((r) => r.service.worker?.drain()));
      expect(((await (await fetch(`${a.url}/v1/trails/${trail_id}`)).json()) as any).status).toBe("indexed");
      const searched = await fetch(`${b.url}/v1/search`, json({ protocol_version: "1.0", query: error }));
      expect(((await searched.json()) as any).results.map((r: any) => r.trail_id)).toContain(trail_id);
      const found = await fetch(`${b.url}/v1/trails/by-fingerprint/${fp}`);
      expect(found.status).toBe(200);
      const [first] = ((await found.json()) as any).results;
      expect([first.trail_id, first.outcomes.worked]).toEqual([trail_id, 0]); // now cached on b
      const report = { protocol_version: "1.0", outcome: "worked" };
      expect((await fetch(`${a.url}/v1/trails/${trail_id}/outcomes`, json(report, agent("agent-replica-4")))).status).toBe(202);
      const again = ((await (await fetch(`${b.url}/v1/trails/by-fingerprint/${fp}`)).json()) as any).results[0];
      expect(again.outcomes.worked).toBe(1);
    } finally {
      feed.received = received;
    }
  });

  test("a lookup's read-your-writes catch-up goes out beside the quota's round trip, not after it", async () => {
    const [a] = replicas as [RunningColony];
    const quotas = a.service.quotas;
    const takeGeneral = quotas.takeGeneral;
    const caughtUp = a.service.fingerprintChangesCaughtUp;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let catchUps = 0;
    quotas.takeGeneral = (address) => gate.then(() => takeGeneral.call(quotas, address));
    a.service.fingerprintChangesCaughtUp = () => {
      catchUps++;
      return caughtUp.call(a.service);
    };
    try {
      const lookup = fetch(`${a.url}/v1/trails/by-fingerprint/${fingerprint("ZeroDivisionError: division by zero (parallel catch-up)")}`);
      // The quota's answer is held back: the catch-up must already be under way.
      const deadline = Date.now() + 5_000;
      while (catchUps === 0 && Date.now() < deadline) await Bun.sleep(5);
      expect(catchUps).toBe(1);
      open();
      expect((await lookup).status).toBe(404);
      expect(catchUps).toBe(1);
    } finally {
      open();
      quotas.takeGeneral = takeGeneral;
      a.service.fingerprintChangesCaughtUp = caughtUp;
    }
  });
});

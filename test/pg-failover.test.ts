// High availability on PostgreSQL (docs/scale-out.md "High availability"), with real servers: a
// primary and a streaming standby made by pg_basebackup, a colony on libpq's multi-host URL
// (postgres://…@primary,standby/db?target_session_attrs=read-write), the primary killed and the
// standby promoted under it; and a server that stops answering (SIGSTOP) under a colony.
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { SQL } from "bun";
import { fingerprint } from "../src/core/fingerprint";
import type { RunningColony } from "../src/serve";
import { migratePostgresDatabase } from "../src/store/postgres/copy-side";
import { startQuietColony, tempDir } from "./support/colony";
import { answered, expectUnavailable, publish, statusOf, until } from "./support/faults";
import { type PostgresServer, plainRows, postgresUnavailable, startPostgres, startStandby } from "./support/postgres";
import { json } from "./support/trails";

const why = postgresUnavailable();
if (why) console.warn(`PostgreSQL failover tests skipped: ${why}`);

const servers: PostgresServer[] = [];
const colonies: RunningColony[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of colonies.splice(0)) await c.stop();
  for (const s of servers.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function startColony(url: string, env: Record<string, string> = {}): Promise<RunningColony> {
  const dir = tempDir("colony-pgha-");
  dirs.push(dir);
  const colony = await startQuietColony({ ...env, COLONY_DATABASE_URL: url, COLONY_DATA_DIR: dir });
  colonies.push(colony);
  return colony;
}

/** The same database on several servers, in this order, as one libpq multi-host URL. */
function multiHostUrl(database: string, servers: PostgresServer[], attrs = "read-write"): string {
  const hosts = servers.map((s) => `127.0.0.1:${s.port}`).join(",");
  return `postgres://colony@${hosts}/${database}?target_session_attrs=${attrs}`;
}

const databaseOf = (url: string) => new URL(url).pathname.slice(1);
const ready = async (c: RunningColony) => (await fetch(`${c.url}/readyz`)).status === 200;

/** The colony's connections to a server's database. */
async function colonyConnections(server: PostgresServer): Promise<number> {
  const admin = new SQL(server.url, { max: 1 });
  try {
    const [{ n }] = await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'colony'`;
    return n;
  } finally {
    await admin.close();
  }
}

describe.skipIf(why !== null)("PostgreSQL high availability", () => {
  test("the primary dies and the standby is promoted: the colony on a two-host URL is ready again on it without a restart, and every acknowledged trail is there", async () => {
    // Synchronous replication: a commit the primary acknowledged is on the standby too.
    const primary = await startPostgres({ settings: { synchronous_commit: "on" } });
    servers.push(primary);
    const database = databaseOf(await primary.createDatabase());
    const standby = await startStandby(primary, { synchronous: true, settings: { synchronous_commit: "on" } });
    servers.push(standby);
    const colony = await startColony(multiHostUrl(database, [primary, standby]));
    expect(await colonyConnections(primary)).toBeGreaterThan(0);
    expect(await colonyConnections(standby)).toBe(0);

    const acknowledged: { id: string; error: string }[] = [];
    for (let i = 0; i < 8; i++) {
      const error = `ConnectionResetError: [Errno 104] failover case ${i} before the primary died`;
      const res = await publish(colony.url, error);
      expect(res.status).toBe(202);
      acknowledged.push({ id: ((await res.json()) as any).trail_id, error });
      // Half of them indexed before the crash, the rest still queued or mid-enrichment.
      if (i === 3)
        for (const t of acknowledged)
          await until("indexed", 20_000, async () => ((await statusOf(colony.url, t.id)) === "indexed" ? true : undefined));
    }

    await primary.pause({ mode: "immediate" }); // a crash: no shutdown checkpoint, connections cut
    // The standby answers but is read-only: no host takes writes, and they fail as unavailable (not 500).
    await expectUnavailable(await answered(publish(colony.url, "BrokenPipeError: published between crash and promotion")), "publish");
    const unready = await answered(fetch(`${colony.url}/readyz`));
    expect(unready.status).toBe(503);
    const readiness = (await unready.json()) as any;
    expect(readiness).toMatchObject({ status: "unavailable", backend: "postgres", checks: { kv: { ok: false } } });
    expect(readiness.checks.kv.detail).toContain("PostgreSQL");
    expect((await answered(fetch(`${colony.url}/healthz`))).status).toBe(200);

    const promoting = performance.now();
    await standby.promote();
    const promoted = performance.now();
    await until("ready on the new primary", 15_000, async () => ((await ready(colony)) ? true : undefined));
    const readyMs = performance.now() - promoted;
    console.log(`ready ${readyMs.toFixed(0)} ms after pg_promote returned (promotion took ${(promoted - promoting).toFixed(0)} ms)`);
    expect(await colonyConnections(standby)).toBeGreaterThan(0);

    // Every trail acknowledged before the crash is on the new primary; the queued ones are enriched
    // there, each once.
    for (const t of acknowledged) {
      await until(`trail ${t.id} indexed`, 20_000, async () => ((await statusOf(colony.url, t.id)) === "indexed" ? true : undefined));
      expect((await fetch(`${colony.url}/v1/trails/by-fingerprint/${fingerprint(t.error)}`)).status).toBe(200);
    }
    const check = new SQL(`postgres://colony@127.0.0.1:${standby.port}/${database}`, { max: 1 });
    try {
      const laid = plainRows(await check`SELECT trail_id, count(*) AS n FROM events WHERE kind = 'laid' GROUP BY trail_id`);
      const ids = acknowledged.map((t) => t.id);
      expect(laid.filter((r) => ids.includes(r.trail_id)).map((r) => r.n)).toEqual(ids.map(() => 1));
    } finally {
      await check.close();
    }

    // New writes go to the new primary, and its vector change feed reaches the colony's index.
    const error = "psycopg2.OperationalError: server closed the connection unexpectedly (after the failover)";
    const res = await publish(colony.url, error);
    expect(res.status).toBe(202);
    const { trail_id } = (await res.json()) as any;
    await until("indexed after the failover", 20_000, async () =>
      (await statusOf(colony.url, trail_id)) === "indexed" ? true : undefined,
    );
    const found = await fetch(`${colony.url}/v1/search`, json({ protocol_version: "1.0", query: error }));
    expect(((await found.json()) as any).results.map((r: any) => r.trail_id)).toContain(trail_id);
  }, 60_000);

  test("the standby first in the URL: the colony picks the primary; with only a standby to reach (target_session_attrs=primary) it is unready and refuses writes as unavailable until it is promoted", async () => {
    const primary = await startPostgres();
    servers.push(primary);
    const database = databaseOf(await primary.createDatabase());
    const standby = await startStandby(primary);
    servers.push(standby);

    // `colony migrate` reads the same URL and works on the primary.
    const migrated = await migratePostgresDatabase(multiHostUrl(database, [standby, primary]));
    expect(migrated.description).toBe(`PostgreSQL colony@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/${database}`);
    expect(migrated.to).toBeGreaterThan(0);
    const colony = await startColony(multiHostUrl(database, [standby, primary]));
    expect(await colonyConnections(standby)).toBe(0);
    expect(await colonyConnections(primary)).toBeGreaterThan(0);
    const res = await publish(colony.url, "KeyError: 'standby first in the URL'");
    expect(res.status).toBe(202);
    await colony.stop();
    colonies.splice(0);

    // The standby and a port nobody listens on: no host takes writes, from the start.
    const nobody = await startPostgres();
    await nobody.stop();
    const stranded = await startColony(multiHostUrl(database, [standby, nobody], "primary"));
    const unready = await answered(fetch(`${stranded.url}/readyz`));
    expect(unready.status).toBe(503);
    const detail = ((await unready.json()) as any).checks.kv.detail as string;
    expect(detail).toContain(`127.0.0.1:${standby.port}: a standby`);
    expect(detail).toContain(`127.0.0.1:${nobody.port}: `);
    await expectUnavailable(await answered(publish(stranded.url, "KeyError: 'only a standby to write to'")), "publish");
    expect(await colonyConnections(standby)).toBe(0);

    await primary.pause({ mode: "immediate" });
    await standby.promote();
    await until("ready once the standby is promoted", 15_000, async () => ((await ready(stranded)) ? true : undefined));
    expect((await publish(stranded.url, "KeyError: 'written to the promoted standby'")).status).toBe(202);
  }, 60_000);

  test("a server that stops answering (SIGSTOP): requests get 503 unavailable within the bound, not a hang; answers again once it resumes", async () => {
    const server = await startPostgres();
    servers.push(server);
    const colony = await startColony(await server.createDatabase(), { COLONY_DATABASE_TIMEOUT_MS: "1500" });
    const before = await publish(colony.url, "TimeoutError: published before the server hung");
    expect(before.status).toBe(202);
    const { trail_id } = (await before.json()) as any;

    server.freeze();
    try {
      const started = performance.now();
      // Each within the bound and a little: the first call that goes unanswered tells the next
      // ones not to wait as long.
      await expectUnavailable(await answered(publish(colony.url, "TimeoutError: published while the server hung"), 4_000), "publish");
      await expectUnavailable(await answered(fetch(`${colony.url}/v1/trails/${trail_id}`), 4_000), "status read");
      const search = json({ protocol_version: "1.0", query: "TimeoutError server hung" });
      await expectUnavailable(await answered(fetch(`${colony.url}/v1/search`, search), 4_000), "search");
      expect((await answered(fetch(`${colony.url}/readyz`), 4_000)).status).toBe(503);
      expect((await answered(fetch(`${colony.url}/healthz`), 4_000)).status).toBe(200);
      console.log(`four requests answered 503 in ${(performance.now() - started).toFixed(0)} ms with a 1,500 ms bound`);
    } finally {
      server.thaw();
    }
    await until("ready once the server answers", 15_000, async () => ((await ready(colony)) ? true : undefined));
    expect((await publish(colony.url, "TimeoutError: published after the server resumed")).status).toBe(202);
  }, 60_000);
});

// Starts real colonies for tests: in-process on a loopback port, or as a separate process.
import { SQL } from "bun";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { parseTrustProxy } from "../../src/core/proxy-trust";
import type { EnrichmentWorker } from "../../src/service/enrichment-worker";
import { startColony, type RunningColony } from "../../src/serve";
import { countedRows } from "../../src/store/postgres/repositories";
import { REPO_DIR } from "./paths";
import { type PostgresServer, plainRows, postgresUnavailable, startPostgres } from "./postgres";
import { startRoundRobinProxy } from "./round-robin-proxy";
import { atRunEnd } from "./run-end";

/**
 * The store the behaviour suites run against: `COLONY_TEST_BACKEND=postgres` puts every test
 * colony on PostgreSQL (one throwaway server per test process, a fresh database per data
 * directory, so a colony restarted on the same directory finds its data again).
 * `COLONY_TEST_BACKEND=replicas` does the same, and every test colony is two replicas on that
 * database behind the round-robin proxy (see startReplicatedColony).
 */
export const TEST_BACKEND: "sqlite" | "postgres" =
  process.env.COLONY_TEST_BACKEND === "postgres" || process.env.COLONY_TEST_BACKEND === "replicas" ? "postgres" : "sqlite";
/** How many replicas stand behind each test colony's URL: 2 with `COLONY_TEST_BACKEND=replicas`. */
export const TEST_REPLICAS = process.env.COLONY_TEST_BACKEND === "replicas" ? 2 : 1;
if (TEST_BACKEND === "postgres") {
  const why = postgresUnavailable();
  if (why) throw new Error(`COLONY_TEST_BACKEND=${process.env.COLONY_TEST_BACKEND}, but PostgreSQL cannot run here: ${why}`);
}

let server: Promise<PostgresServer> | null = null;
const databaseOf = new Map<string, string>();

/** The test PostgreSQL server of this process (started on first use). */
export function testPostgres(): Promise<PostgresServer> {
  server ??= startPostgres();
  return server;
}

/** The environment that puts a colony on the test backend: its database URL, for PostgreSQL. */
export async function backendEnv(dataDir: string): Promise<Record<string, string>> {
  if (TEST_BACKEND !== "postgres") return {};
  let url = databaseOf.get(dataDir);
  if (!url) {
    url = await (await testPostgres()).createDatabase();
    databaseOf.set(dataDir, url);
  }
  return { COLONY_DATABASE_URL: url };
}

export interface TestColony extends RunningColony {
  dataDir: string;
  /** The processes behind `url`: one, or two behind the proxy with COLONY_TEST_BACKEND=replicas. */
  replicas: RunningColony[];
  /** Stops the colony and deletes its data directory. */
  dispose(): Promise<void>;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Raw SQL on the colony's store (either backend), `$1`-style parameters: for checking what was stored. */
  query(text: string, ...params: unknown[]): Promise<any[]>;
}

/**
 * An hourly counter table's counted rows, for a FROM clause in a colony's `query`: the table on
 * SQLite; on PostgreSQL the table and its slot rows (migration 13), named like the table (a key may
 * come several times: sum by key).
 */
export function countedIn(colony: RunningColony, table: "series_hourly" | "search_hourly" | "stats_hourly"): string {
  return colony.subsystems.db ? table : countedRows(table);
}

// Every directory tempDir makes goes when the run ends, whatever the test did with it: tests that
// forgot to (or could not, on failure) left about 19 data directories per suite run behind.
const madeDirs: string[] = [];
atRunEnd(() => {
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory under the system's temporary directory, deleted when the test run ends. */
export function tempDir(prefix = "colony-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}

/** A colony in this process on a free loopback port, logs off; `env` overrides those defaults. */
export function startQuietColony(env: Record<string, string | undefined>): Promise<RunningColony> {
  // Tests that write rows as an older release would call recheckStoredPasses themselves; the
  // replica's own timer (5 s by default) would otherwise bring such rows up to date at a moment the
  // test does not choose. A test of the timer passes COLONY_STORED_PASS_RECHECK_MS: undefined.
  return startColony(
    loadConfig({ HOME: process.env.HOME, COLONY_PORT: "0", COLONY_LOG_LEVEL: "silent", COLONY_STORED_PASS_RECHECK_MS: "3600000", ...env }),
  );
}

export async function startTestColony(env: Record<string, string> = {}): Promise<TestColony> {
  await clearOfQuotaWindowEdge(env);
  if (TEST_REPLICAS > 1) return startReplicatedColony(env);
  const dataDir = env.COLONY_DATA_DIR ?? tempDir();
  const colony = await startQuietColony({
    ...(env.COLONY_DATABASE_URL ? {} : await backendEnv(dataDir)),
    ...env,
    COLONY_DATA_DIR: dataDir,
  });
  return {
    ...colony,
    replicas: [colony],
    dataDir,
    fetch: (path, init) => fetch(colony.url + path, init),
    async query(text, ...params) {
      const { db, store } = colony.subsystems;
      if (db) return db.query(text.replace(/\$(\d+)/g, "?$1")).all(...(params as any[]));
      return plainRows(await (store as unknown as { sql: import("bun").SQL }).sql.unsafe(text, params));
    },
    async dispose() {
      await colony.stop();
      if (!env.COLONY_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** How long a test counting a quota exactly may take at most (most take about a second). */
const QUOTA_TEST_MS = 5_000;

/**
 * On PostgreSQL the quota windows start on the clock's minute (hour for publishes and drafts:
 * src/store/postgres/seams.ts), not when the colony starts as on SQLite; a test counting what is
 * left of a quota saw it full again when a minute began mid-test (19, 18, 17, 16, 19, 18). A test
 * colony with a quota set starts clear of the next minute: when less than QUOTA_TEST_MS is left of
 * the current one, it waits for the next.
 */
export async function clearOfQuotaWindowEdge(env: Record<string, string>, now = Date.now()): Promise<number> {
  if (TEST_BACKEND !== "postgres" || !Object.keys(env).some((k) => /^COLONY_\w+_LIMIT$/.test(k))) return 0;
  const left = 60_000 - (now % 60_000);
  if (left >= QUOTA_TEST_MS) return 0;
  await Bun.sleep(left + 50);
  return left + 50;
}

/**
 * A test colony as a scaled-out deployment runs it: TEST_REPLICAS colonies on one PostgreSQL
 * database (the data directory's, so a restart on the same directory finds its data again), each
 * with its own data directory under it, behind the round-robin proxy, which is what `url`,
 * `fetch`, `port`, COLONY_PORT and the public URL (approve links, allowed Origin) point at. The proxy is one
 * more hop in front, so a COLONY_TRUST_PROXY setting trusts it too. `service` and `subsystems`
 * are the first replica's (the store is shared); `service.worker` stands for every replica's
 * worker (drain, stop and notify reach them all); `stop` stops every replica, then the proxy.
 */
async function startReplicatedColony(env: Record<string, string>): Promise<TestColony> {
  const dataDir = env.COLONY_DATA_DIR ?? tempDir();
  const database = env.COLONY_DATABASE_URL ? {} : await backendEnv(dataDir);
  // A COLONY_PORT the test chose is where its clients go: the proxy's port.
  const proxy = startRoundRobinProxy([], { port: Number(env.COLONY_PORT ?? 0) });
  const trust = env.COLONY_TRUST_PROXY === undefined ? {} : { COLONY_TRUST_PROXY: trustOneMoreProxy(env.COLONY_TRUST_PROXY) };
  const replicas: RunningColony[] = [];
  try {
    for (let i = 0; i < TEST_REPLICAS; i++) {
      const dir = join(dataDir, `replica-${i + 1}`);
      mkdirSync(dir, { recursive: true });
      replicas.push(
        await startQuietColony({
          COLONY_PUBLIC_URL: proxy.url,
          ...database,
          ...env,
          ...trust,
          COLONY_PORT: "0",
          COLONY_DATA_DIR: dir,
        }),
      );
    }
  } catch (err) {
    for (const r of replicas) await r.stop();
    proxy.stop();
    throw err;
  }
  proxy.setUpstreams(replicas.map((r) => r.url));
  const first = replicas[0]!;
  const workers = replicas.map((r) => r.service.worker).filter((w): w is EnrichmentWorker => !!w);
  const worker = first.service.worker && everyWorker(first.service.worker, workers);
  const service = new Proxy(first.service, {
    get: (target, key) => (key === "worker" ? worker : Reflect.get(target, key, target)),
  });
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await Promise.all(replicas.map((r) => r.stop()));
      proxy.stop();
    })();
    return stopping;
  };
  return {
    url: proxy.url,
    port: Number(new URL(proxy.url).port),
    localUrl: proxy.url,
    service,
    subsystems: first.subsystems,
    replicas,
    dataDir,
    stop,
    fetch: (path, init) => fetch(proxy.url + path, init),
    async query(text, ...params) {
      return plainRows(await (first.subsystems.store as unknown as { sql: import("bun").SQL }).sql.unsafe(text, params));
    },
    async dispose() {
      await stop();
      if (!env.COLONY_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The setting for a colony behind one more proxy (on loopback) than the test asked for. */
function trustOneMoreProxy(setting: string): string {
  const trust = parseTrustProxy(setting);
  if (!trust || trust.kind === "off") return setting;
  if (trust.kind === "hops") return String(trust.hops + 1);
  return [...trust.entries, "127.0.0.1"].join(", ");
}

/** One replica's worker whose drain, stop and notify reach every replica's worker. */
function everyWorker(first: EnrichmentWorker, all: EnrichmentWorker[]): EnrichmentWorker {
  const together: Partial<EnrichmentWorker> = {
    notify: () => {
      for (const w of all) w.notify();
    },
    drain: async (timeoutMs?: number) => {
      await Promise.all(all.map((w) => w.drain(timeoutMs)));
    },
    stop: async () => {
      await Promise.all(all.map((w) => w.stop()));
    },
  };
  return new Proxy(first, {
    get: (target, key) => (key in together ? together[key as keyof EnrichmentWorker] : Reflect.get(target, key, target)),
  });
}

/** The PostgreSQL database of a test colony (COLONY_TEST_BACKEND postgres or replicas). */
export function testDatabaseUrl(colony: TestColony): string {
  const url = databaseOf.get(colony.dataDir);
  if (!url) throw new Error("this colony's database is not a test database");
  return url;
}

/**
 * Makes the colony's store refuse writes (or take them again): SQLite's query_only, or on
 * PostgreSQL a read-only database (what a colony meets on a standby after a failover), its open
 * connections cut so every new one is read-only.
 */
export async function setStoreWritable(colony: TestColony, writable: boolean): Promise<void> {
  const { db } = colony.subsystems;
  if (db) {
    db.exec(`PRAGMA query_only = ${writable ? "OFF" : "ON"}`);
    return;
  }
  const name = new URL(testDatabaseUrl(colony)).pathname.slice(1);
  const admin = new SQL((await testPostgres()).url, { max: 1 });
  try {
    await admin.unsafe(`ALTER DATABASE ${name} SET default_transaction_read_only = ${writable ? "off" : "on"}`);
    // The setting reaches sessions opened from now on: every older session is ended, each once it
    // is idle (a query cut mid-flight is a different fault). A session busy at the ALTER (a
    // replica's background poll) used to survive read-write and take the next write. Going back
    // to writable affects sessions opened from now on (the cut ones reopen as they are needed).
    if (!writable) {
      const [{ since }] = await admin`SELECT now() AS since`;
      const deadline = performance.now() + 10_000;
      for (;;) {
        await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = ${name} AND pid <> pg_backend_pid() AND state = 'idle' AND backend_start < ${since}`;
        const [{ left }] = await admin`SELECT count(*)::int AS left FROM pg_stat_activity
          WHERE datname = ${name} AND pid <> pg_backend_pid() AND backend_start < ${since}`;
        if (left === 0) break;
        if (performance.now() > deadline) throw new Error(`${left} sessions of ${name} stayed busy for 10 s`);
        await Bun.sleep(10);
      }
    }
  } finally {
    await admin.close();
  }
}

/** Spawns `bun src/main.ts …` as its own process. */
export function spawnColony(args: string[], env: Record<string, string>) {
  return Bun.spawn([join(REPO_DIR, "node_modules/.bin/bun"), join(REPO_DIR, "src/main.ts"), ...args], {
    cwd: REPO_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", COLONY_LOG_LEVEL: "silent", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
}

export async function waitFor(url: string, status = 200, timeoutMs = 15_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status === status) return res;
      last = res.status;
    } catch (err) {
      last = err;
    }
    await Bun.sleep(50);
  }
  throw new Error(`${url} did not answer ${status} in ${timeoutMs} ms (last: ${String(last)})`);
}

export { freePort } from "./ports";

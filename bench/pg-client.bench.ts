// Which PostgreSQL client (issue 18): Bun's built-in SQL against the `pg` package, on primary-key
// lookups from a 100,000-row table of a throwaway server (test/support/postgres.ts): one
// connection with one query at a time, and a pool with 64 queries in flight; rounds interleaved
// A/B, with the CPU each side spends per query (this process, and the PostgreSQL server with its
// backends, from /proc). Then a pool-size sweep of Bun.SQL with 64 in flight (COLONY_DATABASE_POOL).
//
// `pg` is not a dependency of Colony: install it outside the project to compare, e.g.
//   mkdir -p /tmp/pgclient && (cd /tmp/pgclient && npm init -y >/dev/null && npm install pg)
//   BENCH_PG_MODULE=/tmp/pgclient/node_modules/pg node_modules/.bin/bun bench/pg-client.bench.ts
// Without it the `pg` rows are skipped (said in one line). Sizes: BENCH_PG_CLIENT_SECONDS (per
// run, default 5; --quick 2), BENCH_PG_CLIENT_ROUNDS (default 3; --quick 1).
import { SQL } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { postgresUnavailable, startPostgres } from "../test/support/postgres";
import { treeCpuMs } from "./lib/cpu";
import { f1, Figures, log, QUICK, REPO_DIR } from "./lib/report";

const SECONDS = Number(process.env.BENCH_PG_CLIENT_SECONDS ?? (QUICK ? 2 : 5));
const ROUNDS = Number(process.env.BENCH_PG_CLIENT_ROUNDS ?? (QUICK ? 1 : 3));
const ROWS = 100_000;
const IN_FLIGHT = 64;
const POOL = 16;
const SWEEP = [1, 2, 4, 8, 16, 32, 64];
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const unavailable = postgresUnavailable();
if (unavailable) {
  log(`client benchmark skipped: ${unavailable}`);
  process.exit(0);
}

/** The `pg` package from BENCH_PG_MODULE, else from the project's node_modules (not a dependency). */
async function loadPg(): Promise<any | null> {
  const candidates = [process.env.BENCH_PG_MODULE, join(REPO_DIR, "node_modules/pg")].filter((p): p is string => !!p && existsSync(p));
  for (const path of candidates) {
    try {
      const mod = await import(path);
      return mod.default ?? mod;
    } catch (err) {
      log(`could not load pg from ${path}: ${err}`);
    }
  }
  return null;
}

interface Client {
  name: string;
  query(id: number): Promise<unknown>;
  close(): Promise<void>;
}

function bunClient(url: string, max: number): Client {
  const sql = new SQL(url, { max });
  return {
    name: `Bun.SQL (pool ${max})`,
    query: (id) => sql`SELECT id, value FROM pk_bench WHERE id = ${id}`,
    close: () => sql.close(),
  };
}

function pgClient(pg: any, url: string, max: number): Client {
  const pool = new pg.Pool({ connectionString: url, max });
  return {
    name: `pg ${pg.version ?? ""} (pool ${max})`.replace("  ", " "),
    query: (id) => pool.query("SELECT id, value FROM pk_bench WHERE id = $1", [id]),
    close: () => pool.end(),
  };
}

/** Runs `inFlight` loops of lookups for SECONDS; queries/s and CPU µs per query (client, server). */
async function measure(client: Client, inFlight: number, postmaster: number) {
  for (let i = 0; i < 500; i++) await client.query(1 + ((i * 7919) % ROWS)); // warm the connections
  await Promise.all(Array.from({ length: inFlight }, (_, i) => client.query(1 + i)));
  let n = 0;
  let seed = 12345;
  const deadline = performance.now() + SECONDS * 1000;
  const cpu0 = process.cpuUsage();
  const pg0 = treeCpuMs(postmaster);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < deadline) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        await client.query(1 + (seed % ROWS));
        n++;
      }
    }),
  );
  const wallS = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  return {
    per_s: n / wallS,
    client_cpu_us: (used.user + used.system) / n,
    server_cpu_us: ((treeCpuMs(postmaster) - pg0) * 1000) / n,
    load: loadavg(),
  };
}

const figures = new Figures("pg-client");
const pg = await loadPg();
if (!pg)
  log(
    "`pg` not found: its rows are skipped (install it outside the project: mkdir -p /tmp/pgclient && cd /tmp/pgclient && npm install pg; then BENCH_PG_MODULE=/tmp/pgclient/node_modules/pg)",
  );
const server = await startPostgres();
try {
  const url = await server.createDatabase("pk_bench");
  const setup = new SQL(url, { max: 1 });
  await setup.unsafe(`CREATE TABLE pk_bench (id integer PRIMARY KEY, value text NOT NULL);
    INSERT INTO pk_bench SELECT i, md5(i::text) || md5((i * 7)::text) FROM generate_series(1, ${ROWS}) AS i;
    ANALYZE pk_bench;`);
  const [{ pid }] = await setup`SELECT pg_backend_pid() AS pid`;
  const postmaster = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
  await setup.close();
  log(`${ROWS} rows; ${SECONDS} s per run, ${ROUNDS} rounds interleaved; load average ${loadavg()}`);

  const modes = [
    { label: "one connection, one query at a time", max: 1, inFlight: 1 },
    { label: `pool of ${POOL}, ${IN_FLIGHT} in flight`, max: POOL, inFlight: IN_FLIGHT },
  ];
  const results: Record<string, any[]> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of modes) {
      const clients = [bunClient(url, mode.max), ...(pg ? [pgClient(pg, url, mode.max)] : [])];
      for (const client of round % 2 ? clients : clients.reverse()) {
        const r = await measure(client, mode.inFlight, postmaster);
        await client.close();
        const key = `${client.name.startsWith("Bun") ? "bun" : "pg"}, ${mode.label}`;
        (results[key] ??= []).push(r);
        log(
          `round ${round}, ${client.name}, ${mode.label}: ${f1(r.per_s)} queries/s; CPU per query: client ${f1(r.client_cpu_us)} µs, ` +
            `PostgreSQL ${f1(r.server_cpu_us)} µs; load ${r.load}`,
        );
      }
    }
  }
  log("");
  for (const [key, runs] of Object.entries(results)) {
    const mean = (f: string) => runs.reduce((a, r) => a + r[f], 0) / runs.length;
    log(
      `${key.padEnd(55)} mean ${f1(mean("per_s"))} /s (runs: ${runs.map((r) => f1(r.per_s)).join(", ")}); ` +
        `client ${f1(mean("client_cpu_us"))} µs, PostgreSQL ${f1(mean("server_cpu_us"))} µs per query`,
    );
  }
  figures.set("clients", results);

  // Pool size sweep, Bun.SQL, 64 in flight.
  const sweep: Record<number, unknown> = {};
  for (const max of SWEEP) {
    const client = bunClient(url, max);
    const r = await measure(client, IN_FLIGHT, postmaster);
    await client.close();
    sweep[max] = r;
    log(
      `pool sweep, Bun.SQL pool ${String(max).padStart(2)}, ${IN_FLIGHT} in flight: ${f1(r.per_s)} queries/s; client ${f1(r.client_cpu_us)} µs, ` +
        `PostgreSQL ${f1(r.server_cpu_us)} µs per query; load ${r.load}`,
    );
  }
  figures.set("pool_sweep", sweep);
} finally {
  await server.stop();
}
figures.write();

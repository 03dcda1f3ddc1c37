// The hourly counters on PostgreSQL under durable commits (bench/RESULTS.md, session 13): a
// search's and an outcome report's transactions as the store writes them, with the hour's counters
// in one row (before, migration 12, the statements as they were) and spread over slots (migration
// 13, the store's own repositories). A throwaway server (test/support/postgres.ts) with fsync,
// synchronous_commit and full_page_writes on (the tests' servers have them off, and then no row
// lock is held through a disk flush). Each run: N clients, each a loop of one transaction at a time
// on a pool of 32 connections, for BENCH_PG_COUNTERS_SECONDS (default 3; --quick 1); before and
// after alternate, BENCH_PG_COUNTERS_ROUNDS rounds (default 3; --quick 1), the median shown; clients
// per run BENCH_PG_COUNTERS_CLIENTS (default 1,16,32).
// Then the reads that sum a key's row and its slot rows: the console's series over 48 hours and 30
// days, the stats' sums and hot labels over 24 hours, with every hour's counters in one row (the
// counter tables), in all 16 slot rows (the slot tables), and folded as the hourly maintenance
// leaves them.
//   node_modules/.bin/bun bench/pg-counters.bench.ts [--quick]
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { postgresUnavailable, startPostgres } from "../test/support/postgres";
import { migratePostgres, PG_MIGRATIONS } from "../src/store/postgres/migrations";
import { COUNTER_SLOTS, PgSearchCounter, PgStatsRepository } from "../src/store/postgres/repositories";
import { f1, Figures, log, QUICK } from "./lib/report";
import { countSearchAsPreviousRelease } from "../test/support/previous-release-counters";

const SECONDS = Number(process.env.BENCH_PG_COUNTERS_SECONDS ?? (QUICK ? 1 : 3));
const ROUNDS = Number(process.env.BENCH_PG_COUNTERS_ROUNDS ?? (QUICK ? 1 : 3));
const CLIENTS = (process.env.BENCH_PG_COUNTERS_CLIENTS ?? "1,16,32").split(",").map(Number);
const POOL = 32;
const HOUR_MS = 3_600_000;
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const unavailable = postgresUnavailable();
if (unavailable) {
  log(`counter benchmark skipped: ${unavailable}`);
  process.exit(0);
}

type Tx = SQL;
/** One transaction of a kind: a search (its event, the hour's search count, its label's count) or a counted report. */
type Body = (tx: Tx, i: number) => Promise<unknown>;

// The statements before migration 13 (src/store/postgres/repositories.ts at a3e4ab7).
const before: Record<string, Body> = {
  search: async (tx, i) => {
    const hour = Math.floor(Date.now() / HOUR_MS);
    await tx`INSERT INTO events (kind, agent, trail_id, text, at) VALUES ('search', 'bench', NULL, 'HotLabelError: x', ${Date.now()})`;
    await countSearchAsPreviousRelease(tx, "HotLabelError", `anon-${i % 1000}`, hour);
  },
  report: async (tx) => {
    const hour = Math.floor(Date.now() / HOUR_MS);
    const max = Number.MAX_SAFE_INTEGER;
    await tx`INSERT INTO events (kind, agent, trail_id, text, at) VALUES ('reinforced', 'bench', NULL, 'worked', ${Date.now()})`;
    await tx`INSERT INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (${hour}, 1, 500)
      ON CONFLICT (hour) DO UPDATE SET
        outcomes = least(stats_hourly.outcomes + 1, ${max}::bigint),
        tokens_saved = CASE WHEN stats_hourly.tokens_saved > ${max}::bigint - excluded.tokens_saved THEN ${max}::bigint
                            ELSE stats_hourly.tokens_saved + excluded.tokens_saved END`;
    await tx`INSERT INTO series_hourly (hour, name, value) VALUES (${hour}, 'outcomes', 1)
      ON CONFLICT (hour, name) DO UPDATE SET value = series_hourly.value + excluded.value`;
  },
};

const after: Record<string, Body> = {
  search: async (tx, i) => {
    await tx`INSERT INTO events (kind, agent, trail_id, text, at) VALUES ('search', 'bench', NULL, 'HotLabelError: x', ${Date.now()})`;
    await new PgStatsRepository(tx).bump("searches", Date.now());
    await new PgSearchCounter(tx).add("HotLabelError", `anon-${i % 1000}`, Date.now());
  },
  report: async (tx) => {
    await tx`INSERT INTO events (kind, agent, trail_id, text, at) VALUES ('reinforced', 'bench', NULL, 'worked', ${Date.now()})`;
    const stats = new PgStatsRepository(tx);
    await stats.addOutcome(Date.now(), 500);
    await stats.bump("outcomes", Date.now());
  },
};

/** Transactions a second: `clients` loops of one transaction at a time, for SECONDS. */
async function run(sql: SQL, clients: number, body: Body): Promise<number> {
  let n = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < end) {
        await sql.begin((tx) => body(tx as unknown as Tx, n * 7 + c));
        n++;
      }
    }),
  );
  return n / SECONDS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const server = await startPostgres({ settings: { fsync: "on", synchronous_commit: "on", full_page_writes: "on" } });
const figures = new Figures("pg-counters");
try {
  log(
    `PostgreSQL counters, durable commits (fsync on): ${cpus().length} CPUs, ${SECONDS} s a run, ${ROUNDS} round(s), pool ${POOL}, ${COUNTER_SLOTS} slots, load ${loadavg()}`,
  );
  const oldUrl = await server.createDatabase();
  const newUrl = await server.createDatabase();
  const oldSql = new SQL(oldUrl, { max: POOL });
  const newSql = new SQL(newUrl, { max: POOL });
  await migratePostgres(
    oldSql,
    PG_MIGRATIONS.filter((m) => m.version <= 12),
  );
  await migratePostgres(newSql);
  const results: Record<string, unknown>[] = [];
  log("| transaction | clients | one row an hour (before) | slots (after) |");
  log("|---|---|---|---|");
  for (const kind of ["search", "report"] as const) {
    for (const clients of CLIENTS) {
      const a: number[] = [];
      const b: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        a.push(await run(oldSql, clients, before[kind]!));
        b.push(await run(newSql, clients, after[kind]!));
      }
      const row = { kind, clients, before: median(a), after: median(b), before_runs: a, after_runs: b };
      results.push(row);
      const range = (xs: number[]) => (xs.length > 1 ? ` (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})` : "");
      log(`| ${kind} | ${clients} | ${Math.round(row.before)} tx/s${range(a)} | ${Math.round(row.after)} tx/s${range(b)} |`);
    }
  }
  figures.set("throughput", results);

  // The reads: every hour of 30 days and every series in one row, then in every slot (maintenance
  // not run: the worst case), then with the finished hours folded (as the hourly maintenance leaves
  // them: only the current hour spread). Hot labels: 300 labels searched every hour for 48 hours.
  const reads: Record<string, unknown>[] = [];
  const now = Date.now();
  const hourNow = Math.floor(now / HOUR_MS);
  for (const layout of ["one row", "every hour in 16 slots", "folded: the current hour in 16 slots"] as const) {
    const slots = layout === "one row" ? 1 : COUNTER_SLOTS;
    const url = await server.createDatabase();
    const sql = new SQL(url, { max: 4 });
    await migratePostgres(sql);
    // One row: the counter tables alone (the previous release's layout, and every hour the fold
    // has reached); slots: the slot tables alone (suffix of the counter table, migration 13).
    const into = layout === "one row" ? "" : "_slots";
    const slot = layout === "one row" ? "" : "slot, ";
    const slotValue = layout === "one row" ? "" : "s, ";
    await sql.unsafe(`INSERT INTO series_hourly${into} (hour, name, ${slot}value)
      SELECT h, n, ${slotValue}1 FROM generate_series(${hourNow - 719}::bigint, ${hourNow}::bigint) h,
        unnest(ARRAY['searches','publishes','outcomes','indexed','merged','rejected','failed']) n, generate_series(0, ${slots - 1}) s`);
    await sql.unsafe(`INSERT INTO stats_hourly${into} (hour, ${slot}outcomes, tokens_saved)
      SELECT h, ${slotValue}1, 100 FROM generate_series(${hourNow - 719}::bigint, ${hourNow}::bigint) h, generate_series(0, ${slots - 1}) s`);
    await sql.unsafe(`INSERT INTO search_hourly${into} (hour, label, ${slot}n, clients)
      SELECT h, 'Label' || l || 'Error', ${slotValue}10, 1 FROM generate_series(${hourNow - 47}::bigint, ${hourNow}::bigint) h,
        generate_series(1, 300) l, generate_series(0, ${slots - 1}) s`);
    const stats = new PgStatsRepository(sql);
    let foldMs: number | null = null;
    if (layout.startsWith("folded")) {
      const t = performance.now();
      await stats.foldHoursBefore(hourNow * HOUR_MS);
      foldMs = performance.now() - t;
    }
    for (const table of ["series_hourly", "stats_hourly", "search_hourly"]) {
      await sql.unsafe(`VACUUM ANALYZE ${table}`);
      await sql.unsafe(`VACUUM ANALYZE ${table}_slots`);
    }
    const counter = new PgSearchCounter(sql);
    const time = async (f: () => Promise<unknown>) => {
      for (let i = 0; i < 5; i++) await f();
      const t: number[] = [];
      for (let i = 0; i < (QUICK ? 10 : 40); i++) {
        const s = performance.now();
        await f();
        t.push(performance.now() - s);
      }
      return median(t);
    };
    const row = {
      layout,
      fold_ms: foldMs,
      series_48h_ms: await time(() => stats.series(now - 47 * HOUR_MS)),
      series_30d_ms: await time(() => stats.series(now - 719 * HOUR_MS)),
      stats_24h_ms: await time(() => stats.since(now - 24 * HOUR_MS)),
      hot_24h_ms: await time(() => counter.top(now - 24 * HOUR_MS, 10, { minClients: 3, anyClients: [] })),
    };
    reads.push(row);
    log(
      `reads, ${layout}: series 48 h ${f1(row.series_48h_ms)} ms, 30 days ${f1(row.series_30d_ms)} ms; stats 24 h ${f1(row.stats_24h_ms)} ms; hot labels 24 h ${f1(row.hot_24h_ms)} ms (medians)${foldMs === null ? "" : `; the fold itself ${Math.round(foldMs)} ms`}`,
    );
    await sql.close();
  }
  figures.set("reads", reads);
  await oldSql.close();
  await newSql.close();
  log(`load after: ${loadavg()}`);
} finally {
  await server.stop();
}
figures.write();

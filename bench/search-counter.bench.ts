// The hot-label counter a search writes and /v1/stats reads (src/store/ports.ts SearchCounter), on
// both stores, before and after it counted distinct clients (session 12):
//   - before: one upsert of (hour, label) n + 1;
//   - after: the client's row in search_clients moves to this hour, and search_hourly gains the
//     client in this hour (and an earlier hour loses it): SqliteSearchCounter / PgSearchCounter.add.
// Both write the same searches: CLIENTS client addresses over LABELS labels (a few popular ones
// searched by many, most by few), SEARCHES_PER_HOUR searches an hour for 48 hours, then the
// measured searches in the last hour. Figures: the write's cost per search, alone in a
// transaction of its own (SQLite: the statements and the commit; PostgreSQL: one round trip, one
// client) and 16 in flight on PostgreSQL; and the read behind `hot` on the data left.
// Run: node_modules/.bin/bun bench/search-counter.bench.ts [--quick]
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { HOT_LABEL_RULE } from "../src/core/hot-label";
import { migratePostgres, PG_MIGRATIONS } from "../src/store/postgres/migrations";
import { PgSearchCounter } from "../src/store/postgres/repositories";
import { openDatabase } from "../src/store/sqlite/database";
import { SqliteSearchCounter } from "../src/store/sqlite/lexical";
import { postgresUnavailable, startPostgres } from "../test/support/postgres";
import { f2, f3, Figures, log, QUICK, rng, summarize } from "./lib/report";

const HOUR = 3600_000;
const CLIENTS = QUICK ? 500 : 3000;
const LABELS = 300;
const SEARCHES_PER_HOUR = QUICK ? 500 : 3000;
const MEASURED = QUICK ? 500 : 2000;
const READS = 200;

const figures = new Figures("search-counter");
const rand = rng(12);
const now = Math.floor(Date.now() / HOUR) * HOUR;
/** A label: the square skews toward the first ones (a few errors searched by many). */
const label = () => `Label${Math.floor(rand() ** 2 * LABELS)}Error`;
const client = () => `anon-${Math.floor(rand() * CLIENTS)}`;
const history = Array.from({ length: 48 * SEARCHES_PER_HOUR }, (_, i) => ({
  label: label(),
  client: client(),
  at: now - 47 * HOUR + Math.floor((i / SEARCHES_PER_HOUR) * HOUR),
}));
const measured = Array.from({ length: MEASURED }, (_, i) => ({ label: label(), client: client(), at: now + 1 + i }));
const since = now - 23 * HOUR;

const OLD_SQLITE_ADD = `INSERT INTO search_hourly (hour, label, n) VALUES (?, ?, 1) ON CONFLICT (hour, label) DO UPDATE SET n = n + 1`;
const OLD_SQLITE_TOP = `SELECT label, sum(n) AS searches FROM search_hourly WHERE hour >= ? GROUP BY label ORDER BY searches DESC, label ASC LIMIT ?`;

async function timeEach<T>(items: T[], fn: (item: T) => Promise<unknown> | unknown): Promise<number[]> {
  const ms: number[] = [];
  for (const item of items) {
    const t = performance.now();
    await fn(item);
    ms.push(performance.now() - t);
  }
  return ms;
}

// SQLite: a colony database at the current schema; "before" writes the same table the old way.
{
  const dir = mkdtempSync(join(tmpdir(), "colony-bench-counter-"));
  try {
    const db = openDatabase({ dataDir: dir, sqliteVecPath: getLoadablePath() });
    const counter = new SqliteSearchCounter(db);
    const old = db.query(OLD_SQLITE_ADD);
    const inTransaction = async (fn: () => unknown) => {
      db.exec("BEGIN IMMEDIATE");
      await fn();
      db.exec("COMMIT");
    };
    const results: Record<string, unknown> = {};
    for (const [name, add] of [
      ["before", (s: (typeof history)[number]) => old.run(Math.floor(s.at / HOUR), s.label)],
      ["after", (s: (typeof history)[number]) => counter.add(s.label, s.client, s.at)],
    ] as const) {
      db.exec("DELETE FROM search_hourly; DELETE FROM search_clients");
      await inTransaction(async () => {
        for (const s of history) await add(s);
      });
      const write = summarize(await timeEach(measured, (s) => inTransaction(() => add(s))));
      const rows = {
        search_hourly: db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_hourly").get()!.n,
        search_clients: db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_clients").get()!.n,
      };
      const top =
        name === "before" ? () => db.query(OLD_SQLITE_TOP).all(Math.floor(since / HOUR), 10) : () => counter.top(since, 10, HOT_LABEL_RULE);
      for (let i = 0; i < 20; i++) await top();
      const read = summarize(await timeEach(Array.from({ length: READS }), top));
      log(
        `SQLite ${name.padEnd(6)}: write p50 ${f3(write.p50)} ms p99 ${f3(write.p99)} ms (own transaction); hot read p50 ${f2(read.p50)} ms; rows ${JSON.stringify(rows)}`,
      );
      results[name] = { write_ms: write, hot_read_ms: read, rows };
    }
    figures.set("sqlite", results);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// PostgreSQL: the throwaway test server (fsync off), one database per variant.
const unavailable = postgresUnavailable();
if (unavailable) {
  log(`PostgreSQL skipped: ${unavailable}`);
} else {
  const server = await startPostgres();
  try {
    const results: Record<string, unknown> = {};
    for (const name of ["before", "after"] as const) {
      const sql = new SQL(await server.createDatabase(), { max: 16 });
      try {
        // Before: a schema whose key is (hour, label), as that counter's was (slots came in migration 13).
        await migratePostgres(sql, name === "before" ? PG_MIGRATIONS.filter((m) => m.version <= 12) : PG_MIGRATIONS);
        const counter = new PgSearchCounter(sql);
        const add: (s: (typeof history)[number]) => Promise<unknown> =
          name === "before"
            ? (s: (typeof history)[number]) =>
                sql`INSERT INTO search_hourly (hour, label, n) VALUES (${Math.floor(s.at / HOUR)}, ${s.label}, 1)
                  ON CONFLICT (hour, label) DO UPDATE SET n = search_hourly.n + 1`
            : (s: (typeof history)[number]) => counter.add(s.label, s.client, s.at);
        // The history, 16 at a time.
        for (let i = 0; i < history.length; i += 16) await Promise.all(history.slice(i, i + 16).map(add));
        await sql`ANALYZE`;
        const one = summarize(await timeEach(measured, add));
        const t = performance.now();
        for (let i = 0; i < measured.length; i += 16) await Promise.all(measured.slice(i, i + 16).map(add));
        const perSecond = measured.length / ((performance.now() - t) / 1000);
        const [rows] = await sql`SELECT (SELECT count(*)::int FROM search_hourly) AS search_hourly,
          (SELECT count(*)::int FROM search_clients) AS search_clients`;
        const top =
          name === "before"
            ? () => sql`SELECT label, sum(n)::int AS searches FROM search_hourly WHERE hour >= ${Math.floor(since / HOUR)}
                GROUP BY label ORDER BY searches DESC, label ASC LIMIT 10`
            : () => counter.top(since, 10, HOT_LABEL_RULE);
        for (let i = 0; i < 20; i++) await top();
        const read = summarize(await timeEach(Array.from({ length: READS }), top));
        log(
          `PostgreSQL ${name.padEnd(6)}: write p50 ${f3(one.p50)} ms p99 ${f3(one.p99)} ms (one client), ${Math.round(perSecond)}/s with 16 in flight; hot read p50 ${f2(read.p50)} ms; rows ${JSON.stringify({ ...rows })}`,
        );
        results[name] = { write_ms: one, writes_per_s_16: perSecond, hot_read_ms: read, rows: { ...rows } };
      } finally {
        await sql.close();
      }
    }
    figures.set("postgres", results);
  } finally {
    await server.stop();
  }
}
figures.set("sizes", { clients: CLIENTS, labels: LABELS, searches_per_hour: SEARCHES_PER_HOUR, hours: 48, measured: MEASURED });
figures.write();

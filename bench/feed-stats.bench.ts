// Feed and stats (issue 6) at 100,000 trails and 1,000,000 events: GET /v1/feed (first page,
// filters, a deep cursor), GET /v1/activity and GET /v1/stats latency p50/p99 from one client
// against a separate colony process (target p50 < 5 ms), and the EXPLAIN QUERY PLAN of every
// query behind them, to confirm none scans a whole table.
// Data: a few thousand trails go through the real service (publish + enrichment); the rest of
// the 100,000 are copies of those rows made with SQL (new ids, merge keys, times, counts), and
// the events, outcomes and hourly aggregates are inserted directly with SQL as well.
// Run: node_modules/.bin/bun bench/feed-stats.bench.ts [--quick]
import { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { CATEGORIES } from "../src/core/category";
import { HOT_LABEL_MIN_CLIENTS } from "../src/core/hot-label";
import { benchDir, inProcessColony, removeDir, seedTrails, spawnColony } from "./lib/colony";
import { synthesizedTrails } from "./lib/corpus";
import { f1, f2, Figures, log, pick, QUICK, REPO_DIR, rng, summarize, verdict } from "./lib/report";

const REAL_TRAILS = QUICK ? 500 : 3000;
const TRAILS = QUICK ? 10_000 : 100_000;
const EVENTS = QUICK ? 100_000 : 1_000_000;
const OUTCOMES = QUICK ? 20_000 : 200_000;
/** Notes one address left on the trail at the top of the feed (uncounted repeats, 5.5 h at the general quota). */
const HOT_NOTES = QUICK ? 20_000 : 200_000;
const AGENTS_PER_HOUR = QUICK ? 300 : 3000;
const SAMPLES = QUICK ? 200 : 1000;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

const figures = new Figures("feed-stats");
const rand = rng(21);
const dir = benchDir();
try {
  let t0 = performance.now();
  const colony = await inProcessColony(dir);
  await seedTrails(colony, synthesizedTrails(REPO_DIR, REAL_TRAILS, 13));
  await colony.stop();
  const realS = (performance.now() - t0) / 1000;

  t0 = performance.now();
  const db = new Database(join(dir, "colony.db"));
  db.exec("PRAGMA journal_mode = WAL");
  const now = Date.now();
  const base = db.query<Record<string, any>, []>("SELECT * FROM trails WHERE status = 'indexed'").all();
  const insertTrail = db.query(
    `INSERT INTO trails (id, status, fingerprint, error_type, content, content_hash, author, created_at, indexed_at,
       category, quality, risk, worked, partially_worked, failed, strength, merge_key, reinforced_at, runtime, tokens_spent)
     VALUES (?, 'indexed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    for (let i = base.length; i < TRAILS; i++) {
      const b = base[i % base.length]!;
      const created = now - Math.floor(rand() * 90 * DAY);
      const reinforced = Math.min(now, created + Math.floor(rand() * 30 * DAY));
      const worked = Math.floor(rand() * 8);
      insertTrail.run(
        randomUUID(),
        b.fingerprint,
        b.error_type,
        b.content,
        `${b.content_hash}-${i}`,
        `agent-${i % 5000}`,
        created,
        created,
        b.category,
        b.quality,
        b.risk,
        worked,
        Math.floor(rand() * 3),
        Math.floor(rand() * 3),
        rand(),
        `${b.merge_key}-${i}`,
        reinforced,
        b.runtime,
        b.tokens_spent,
      );
    }
    db.query("UPDATE counters SET value = (SELECT count(*) FROM trails WHERE status = 'indexed') WHERE name = 'trails_indexed'").run();
  })();
  const maxSeq = db.query<{ m: number }, []>("SELECT max(seq) AS m FROM trails").get()!.m;
  const KINDS = ["laid", "search", "reinforced", "weakened", "search", "search"];
  const insertEvent = db.query("INSERT INTO events (kind, agent, trail_id, text, at) VALUES (?, ?, NULL, ?, ?)");
  db.transaction(() => {
    for (let i = 0; i < EVENTS; i++) {
      const kind = pick(KINDS, rand);
      insertEvent.run(kind, `agent-${i % 5000}`, `${kind} for ModuleNotFoundError: ${i % 500} result(s)`, now - (EVENTS - i) * 1000);
    }
  })();
  const insertOutcome = db.query(
    "INSERT INTO outcomes (trail_seq, agent, outcome, counted, notes, model, at) VALUES (?, ?, ?, 1, ?, 'bench', ?)",
  );
  db.transaction(() => {
    for (let i = 0; i < OUTCOMES; i++) {
      const seq = 1 + Math.floor(rand() * maxSeq);
      const notes = rand() < 0.3 ? `worked after pinning the version (${i})` : null;
      insertOutcome.run(
        seq,
        `agent-${i % 5000}`,
        pick(["worked", "failed", "partially_worked"], rand),
        notes,
        now - Math.floor(rand() * 30 * DAY),
      );
    }
  })();
  // One trail flooded with notes: the replies of a feed page must not read them all.
  const hotSeq = db
    .query<{ seq: number }, []>("SELECT seq FROM trails WHERE status = 'indexed' ORDER BY reinforced_at DESC, seq DESC LIMIT 1")
    .get()!.seq;
  const insertHot = db.query(
    "INSERT INTO outcomes (trail_seq, agent, client, outcome, counted, notes, model, at) VALUES (?, 'agent-spam', 'anon-spammer', 'failed', 0, ?, 'bench', ?)",
  );
  db.transaction(() => {
    for (let i = 0; i < HOT_NOTES; i++) insertHot.run(hotSeq, `spam reply ${i} `.padEnd(200, "x"), now - i * 50);
  })();
  const hourNow = Math.floor(now / HOUR);
  const insertStats = db.query("INSERT OR REPLACE INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (?, ?, ?)");
  // Agents active in the window: hourly buckets (schema up to v4) or one row per agent with its
  // last activity (agent_activity, v5). Whichever the current schema has is filled.
  const hasTable = (t: string) => db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t) !== null;
  const agentTable = hasTable("agent_activity") ? "agent_activity" : "agents_hourly";
  const insertAgent =
    agentTable === "agent_activity"
      ? db.query("INSERT INTO agent_activity (agent, at) VALUES (?1, ?2) ON CONFLICT (agent) DO UPDATE SET at = max(at, excluded.at)")
      : db.query("INSERT OR IGNORE INTO agents_hourly (agent, hour) VALUES (?1, ?2)");
  // Searches per label and hour; from schema 13 also the distinct clients counted in each hour,
  // each one a row of search_clients (not read by /v1/stats, but in the database as in a colony).
  const hasClients = db.query("SELECT 1 FROM pragma_table_info('search_hourly') WHERE name = 'clients'").get() !== null;
  const insertSearch = hasClients
    ? db.query("INSERT OR REPLACE INTO search_hourly (hour, label, n, clients) VALUES (?, ?, ?, ?)")
    : db.query("INSERT OR REPLACE INTO search_hourly (hour, label, n) VALUES (?, ?, ?)");
  const insertClient = hasClients ? db.query("INSERT OR REPLACE INTO search_clients (label, client, hour) VALUES (?, ?, ?)") : null;
  db.transaction(() => {
    for (let h = hourNow - 47; h <= hourNow; h++) {
      insertStats.run(h, 100 + Math.floor(rand() * 900), Math.floor(rand() * 1e6));
      for (let a = 0; a < AGENTS_PER_HOUR; a++) {
        const agent = `agent-${Math.floor(rand() * 20_000)}`;
        insertAgent.run(agent, agentTable === "agent_activity" ? h * HOUR + Math.floor(rand() * HOUR) : h);
      }
      for (let l = 0; l < 300; l++) {
        const n = 1 + Math.floor(rand() * 50);
        if (!insertClient) {
          insertSearch.run(h, `Label${l}Error`, n);
          continue;
        }
        const clients = 1 + Math.floor(rand() * Math.min(n, 20));
        insertSearch.run(h, `Label${l}Error`, n, clients);
        for (let c = 0; c < clients; c++) insertClient.run(`Label${l}Error`, `anon-${h}-${c}`, h);
      }
    }
  })();
  const count = (t: string) => db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${t}`).get()!.n;
  const sizes = Object.fromEntries(
    ["trails", "events", "outcomes", "stats_hourly", agentTable, "search_hourly", ...(hasClients ? ["search_clients"] : [])].map((t) => [
      t,
      count(t),
    ]),
  );
  db.exec("ANALYZE");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const sqlS = (performance.now() - t0) / 1000;
  log(`data: ${REAL_TRAILS} trails through the service (${f1(realS)} s), the rest inserted with SQL (${f1(sqlS)} s)`);
  log(
    `rows: ${Object.entries(sizes)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
  figures.set("data", { real_trails: REAL_TRAILS, rows: sizes, real_s: realS, sql_s: sqlS, note: "ANALYZE run after the SQL inserts" });

  // Query plans of every query behind /v1/feed, /v1/activity and /v1/stats (same SQL as the store).
  const seqs = [hotSeq, ...Array.from({ length: 19 }, (_, i) => i + 1)];
  const PLANS: [string, string, unknown[]][] = [
    ["feed, first page", "SELECT * FROM trails WHERE status = 'indexed' ORDER BY reinforced_at DESC, seq DESC LIMIT ?", [21]],
    [
      "feed, category",
      "SELECT * FROM trails WHERE status = 'indexed' AND category = ? ORDER BY reinforced_at DESC, seq DESC LIMIT ?",
      ["dependency", 21],
    ],
    [
      "feed, runtime",
      "SELECT * FROM trails WHERE status = 'indexed' AND runtime = ? ORDER BY reinforced_at DESC, seq DESC LIMIT ?",
      ["python", 21],
    ],
    // Both spellings of the keyset condition: the OR form cannot seek the index, the row value can.
    [
      "feed, cursor (OR form)",
      "SELECT * FROM trails WHERE status = 'indexed' AND (reinforced_at < ? OR (reinforced_at = ? AND seq < ?)) ORDER BY reinforced_at DESC, seq DESC LIMIT ?",
      [now - 45 * DAY, now - 45 * DAY, 1e9, 21],
    ],
    [
      "feed, cursor (row value)",
      "SELECT * FROM trails WHERE status = 'indexed' AND (reinforced_at, seq) < (?, ?) ORDER BY reinforced_at DESC, seq DESC LIMIT ?",
      [now - 45 * DAY, 1e9, 21],
    ],
    // Run once per trail of the page (the flooded one here).
    [
      "feed replies (per trail)",
      "SELECT trail_seq, agent, client, outcome, counted, notes, model, at FROM outcomes INDEXED BY outcomes_with_notes WHERE trail_seq = ? AND notes IS NOT NULL ORDER BY at DESC, id DESC LIMIT ?",
      [hotSeq, 3],
    ],
    ["activity", "SELECT kind, agent, trail_id AS trailId, text, at FROM events ORDER BY id DESC LIMIT ?", [20]],
    ["stats: trails", "SELECT value FROM counters WHERE name = 'trails_indexed'", []],
    ["stats: outcomes, tokens", "SELECT sum(outcomes) AS o, sum(tokens_saved) AS t FROM stats_hourly WHERE hour >= ?", [hourNow - 24]],
    agentTable === "agent_activity"
      ? ["stats: agents", "SELECT count(*) AS n FROM agent_activity WHERE at >= ?", [now - DAY]]
      : ["stats: agents", "SELECT count(DISTINCT agent) AS n FROM agents_hourly WHERE hour >= ?", [hourNow - 24]],
    // As SqliteSearchCounter.top: by distinct clients from schema 13, by searches before.
    hasClients
      ? [
          "stats: hot",
          `SELECT label, sum(clients) AS clients FROM search_hourly WHERE hour >= ? GROUP BY label HAVING sum(clients) >= ? OR (sum(clients) > 0 AND label IN (${CATEGORIES.map(() => "?").join(", ")})) ORDER BY sum(clients) DESC, label ASC LIMIT ?`,
          [hourNow - 24, HOT_LABEL_MIN_CLIENTS, ...CATEGORIES, 10],
        ]
      : [
          "stats: hot",
          "SELECT label, sum(n) AS searches FROM search_hourly WHERE hour >= ? GROUP BY label ORDER BY searches DESC, label ASC LIMIT ?",
          [hourNow - 24, 10],
        ],
  ];
  log("");
  log("EXPLAIN QUERY PLAN, and each query alone in-process (200 runs):");
  const plans: Record<string, string[]> = {};
  const queryMs: Record<string, unknown> = {};
  let fullScans = 0;
  for (const [name, sql, params] of PLANS) {
    const rows = db.query<{ detail: string }, any[]>(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as any[]));
    plans[name] = rows.map((r) => r.detail);
    // "SCAN <table>" reads the table in storage (or index) order. With a LIMIT and no sort step
    // it stops after LIMIT rows; with a sort step, or without a LIMIT, it reads every row.
    const sorted = rows.some((r) => r.detail.includes("TEMP B-TREE FOR ORDER BY"));
    const scans = rows.filter((r) => /^SCAN (trails|events|outcomes|stats_hourly|agents_hourly|search_hourly|counters)\b/.test(r.detail));
    const full = scans.length > 0 && (sorted || !/\bLIMIT\b/.test(sql));
    if (full) fullScans++;
    // Time the query itself, in-process, on the same data.
    const stmt = db.query(sql);
    for (let i = 0; i < 20; i++) stmt.all(...(params as any[]));
    const ms: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      stmt.all(...(params as any[]));
      ms.push(performance.now() - t);
    }
    const q = summarize(ms);
    queryMs[name] = q;
    const note = full ? "   <- FULL SCAN" : scans.length ? "   (ordered scan, stops at LIMIT unless a WHERE term skips rows)" : "";
    log(`  ${name.padEnd(24)} p50 ${f2(q.p50).padStart(6)} ms  ${plans[name]!.join(" | ")}${note}`);
  }
  // Before: one window over every note of the page's trails, the flooded trail's 200,000 included.
  const windowed = db.query(
    `SELECT * FROM (SELECT trail_seq, agent, outcome, counted, notes, model, at, row_number() OVER (PARTITION BY trail_seq ORDER BY at DESC, id DESC) AS n FROM outcomes WHERE notes IS NOT NULL AND trail_seq IN (${seqs.map(() => "?").join(",")})) WHERE n <= ? ORDER BY trail_seq, at DESC`,
  );
  const windowMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    windowed.all(...seqs, 3);
    windowMs.push(performance.now() - t);
  }
  log(
    `  ${"feed replies (before)".padEnd(24)} p50 ${f2(summarize(windowMs).p50).padStart(6)} ms  one window over every note of 20 trails, ${HOT_NOTES} on one`,
  );
  queryMs["feed replies (before: one window)"] = summarize(windowMs);
  figures.set("query_ms", queryMs);
  log(`queries with a full table scan: ${fullScans}`);
  figures.set("plans", plans);
  figures.set("full_scans", fullScans);
  db.close();

  // Latency over HTTP, one client.
  const proc = await spawnColony(dir);
  try {
    const get = async (path: string) => {
      const t = performance.now();
      const res = await fetch(proc.url + path, { headers: { "X-Colony-Agent": "bench-feed" } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${body.slice(0, 200)}`);
      return { ms: performance.now() - t, body };
    };
    const page2 = JSON.parse((await get("/v1/feed?limit=20")).body).next_cursor as string;
    // A cursor about 50,000 trails deep: page through with the biggest page a few times is too
    // slow, so take the cursor of the trail at that position directly.
    const deepDb = new Database(join(dir, "colony.db"), { readonly: true });
    const deep = deepDb
      .query<{ r: number; s: number }, [number]>(
        "SELECT reinforced_at AS r, seq AS s FROM trails WHERE status = 'indexed' ORDER BY reinforced_at DESC, seq DESC LIMIT 1 OFFSET ?",
      )
      .get(Math.floor(TRAILS / 2))!;
    deepDb.close();
    const deepCursor = Buffer.from(JSON.stringify([deep.r, deep.s])).toString("base64url");
    const routes: [string, string][] = [
      ["/v1/feed (first page, 20)", "/v1/feed"],
      ["/v1/feed?limit=50", "/v1/feed?limit=50"],
      ["/v1/feed, page 2 (cursor)", `/v1/feed?cursor=${page2}`],
      [`/v1/feed, cursor ${Math.floor(TRAILS / 2)} deep`, `/v1/feed?cursor=${deepCursor}`],
      ["/v1/feed?category=dependency", "/v1/feed?category=dependency"],
      ["/v1/feed?runtime=python", "/v1/feed?runtime=python"],
      ["/v1/activity", "/v1/activity"],
      ["/v1/stats", "/v1/stats"],
    ];
    log("");
    log(`latency, one client, ${SAMPLES} requests each (after 50 warm-up):`);
    const lat: Record<string, unknown> = {};
    for (const [name, path] of routes) {
      for (let i = 0; i < 50; i++) await get(path);
      const ms: number[] = [];
      let bytes = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const r = await get(path);
        ms.push(r.ms);
        bytes = r.body.length;
      }
      const s = summarize(ms);
      const gated = name.startsWith("/v1/feed (first") || name === "/v1/stats";
      log(
        `  ${name.padEnd(34)} p50 ${f2(s.p50).padStart(6)} ms  p99 ${f2(s.p99).padStart(6)} ms  (${f1(bytes / 1024)} KB)${gated ? `   target p50 < 5 ms: ${verdict(s.p50 < 5)}` : ""}`,
      );
      lat[name] = { ...s, bytes, ...(gated ? { target_p50_ms: 5, met: s.p50 < 5 } : {}) };
    }
    figures.set("latency", lat);
    const rss = await proc.rss();
    log(`colony RSS: ${f1(rss / 1e6)} MB`);
    figures.set("colony_rss_mb", rss / 1e6);
  } finally {
    await proc.stop();
  }
} finally {
  removeDir(dir);
}
figures.write();

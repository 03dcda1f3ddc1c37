// PostgreSQL scale-out (issue 18), on the same synthesized trails in both backends:
//   - fingerprint lookups/s (wrk, warm caches, cycling every indexed fingerprint) and search
//     p50/p99 (one client, the query pool of search-speed.bench.ts) for SQLite (one process),
//     PostgreSQL with one replica, and two replicas behind a round-robin proxy (nginx when
//     installed, else the test-only Bun proxy, each a process of its own); A/B interleaved rounds;
//   - CPU-seconds per 1,000 requests of every process: the SQLite colony, each replica, the
//     PostgreSQL server (postmaster and every backend, from /proc) and the proxy;
//   - cross-replica visibility: publish on replica A, then how soon replica B answers a lookup
//     (whose miss B had cached) and a search with the trail, and how soon the vector change feed
//     alone (NOTIFY + catch-up, no read-your-writes catch-up) has the code in another process's memory;
//   - the shared quota's round trip per request (one upsert per group of uses in flight), timed and costed on its own;
//   - COLONY_DATABASE_POOL sweep (lookups and 16-client searches on one replica).
// Seeding goes through the service in-process (publish + enrichment drain), once per backend, with
// the same deterministic trails. PostgreSQL is a throwaway server (test/support/postgres.ts:
// Debian's postgresql-15, fsync off: reads are unaffected, writes are cheaper than on a durable server).
// Sizes: BENCH_PG_TRAILS (default 100000; --quick 3000), BENCH_PG_ROUNDS (interleaved rounds,
// default 2), BENCH_PG_SECONDS (wrk seconds, default 8), BENCH_PG_POOLS (sweep, default
// "4,16,64"; "" skips it), BENCH_PG_PROXY=bun to use the Bun proxy even with nginx installed.
// Run: node_modules/.bin/bun bench/postgres.bench.ts [--quick]
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { lexicalIndexTokens } from "../src/core/lexical";
import { CANDIDATES_PER_RETRIEVER } from "../src/service/search";
import { PgQuotaCounters } from "../src/store/postgres/seams";
import { VECTORS_CHANNEL } from "../src/store/postgres/store";
import { PgVectorIndex } from "../src/store/postgres/vectors";
import { loadSharedEval } from "../test/support/paths";
import { postgresUnavailable, startPostgres } from "../test/support/postgres";
import { type ColonyProcess, benchDir, inProcessColony, removeDir, seedTrails, spawnColony } from "./lib/colony";
import { synthesizedQueries, synthesizedTrails } from "./lib/corpus";
import { CpuMeter, cpuMs, treeCpuMs } from "./lib/cpu";
import { type ProxyProcess, startProxy } from "./lib/proxy";
import { f1, f2, f3, Figures, log, QUICK, REPO_DIR, rng, shuffle, summarize, verdict } from "./lib/report";
import { cyclingScript, hasWrk, runWrk } from "./lib/wrk";

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const TRAILS = Number(env("BENCH_PG_TRAILS", QUICK ? "3000" : "100000"));
const ROUNDS = Number(env("BENCH_PG_ROUNDS", QUICK ? "1" : "2"));
const WRK_SECONDS = Number(env("BENCH_PG_SECONDS", QUICK ? "3" : "8"));
const SEARCHES = Number(env("BENCH_PG_SEARCHES", QUICK ? "60" : "300"));
const VISIBILITY = Number(env("BENCH_PG_VISIBILITY", QUICK ? "20" : "100"));
const POOLS = env("BENCH_PG_POOLS", QUICK ? "" : "4,16,64")
  .split(",")
  .filter(Boolean)
  .map(Number);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const unavailable = postgresUnavailable();
if (unavailable) {
  log(`PostgreSQL section skipped: ${unavailable}`);
  process.exit(0);
}
if (!hasWrk()) {
  log("PostgreSQL section skipped: wrk is not installed (make bench installs it)");
  process.exit(0);
}

const figures = new Figures("postgres");
const commit = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: REPO_DIR }).stdout.toString().trim();
log(`commit ${commit}; ${TRAILS} trails, ${ROUNDS} interleaved rounds, wrk ${WRK_SECONDS} s; load average ${loadavg()}`);
figures.set("config", {
  trails: TRAILS,
  rounds: ROUNDS,
  wrk_seconds: WRK_SECONDS,
  searches: SEARCHES,
  visibility: VISIBILITY,
  pools: POOLS,
  commit,
});

const { cases, negatives } = loadSharedEval();
const evalQueries = [...cases.flatMap((c) => [c.paraphrase, c.related].filter((q): q is string => !!q)), ...negatives];
// The same pool and order as search-speed.bench.ts, so the SQLite figure compares with session 2's.
const queries = shuffle([...evalQueries, ...synthesizedQueries(REPO_DIR, 400)], rng(9));

const pg = await startPostgres();
const dbUrl = await pg.createDatabase("colony_bench");
const admin = new SQL(dbUrl, { max: 4 });
const [{ pid: backendPid }] = await admin`SELECT pg_backend_pid() AS pid`;
const postmasterPid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${backendPid}/status`, "utf8"))![1]);
const sqliteDir = benchDir("colony-bench-pg-sqlite-");
const replicaDirs = [benchDir("colony-bench-pg-a-"), benchDir("colony-bench-pg-b-"), benchDir("colony-bench-pg-seed-")];
const running: { stop(): Promise<void> }[] = [];

try {
  // 1. The same trails into both backends, through the service.
  const seeded: Record<string, { publishS: number; drainS: number; totalS: number }> = {};
  const parts: Record<string, Record<string, ReturnType<typeof summarize>>> = {};
  for (const [backend, dir, extra] of [
    ["sqlite", sqliteDir, {}],
    ["postgres", replicaDirs[2]!, { COLONY_DATABASE_URL: dbUrl }],
  ] as const) {
    const colony = await inProcessColony(dir, extra);
    const cpu0 = process.cpuUsage();
    const pg0 = treeCpuMs(postmasterPid);
    seeded[backend] = await seedTrails(colony, synthesizedTrails(REPO_DIR, TRAILS, 7, 0), {
      chunk: 5000,
      onProgress: (n) => {
        if (n % 20_000 === 0) log(`  ${backend}: seeded ${n} (load average ${loadavg()})`);
      },
    });
    const used = process.cpuUsage(cpu0);
    parts[backend] = await searchParts(colony);
    await colony.stop();
    const s = seeded[backend]!;
    log(
      `seeded ${TRAILS} trails into ${backend} in ${f1(s.totalS)} s (publish ${f1(s.publishS)} s, enrichment ${f1(s.drainS)} s; ` +
        `${f1(TRAILS / s.totalS)} trails/s); seeding process CPU ${f1((used.user + used.system) / 1e6)} s` +
        (backend === "postgres" ? `, PostgreSQL CPU ${f1((treeCpuMs(postmasterPid) - pg0) / 1000)} s` : ""),
    );
    Bun.gc(true);
  }
  figures.set("seeding", seeded);
  figures.set("search_parts_in_process", parts);

  // The same data on both sides: indexed trails and their fingerprints.
  const lite = new Database(join(sqliteDir, "colony.db"), { readonly: true });
  const fps = lite.query<{ fingerprint: string }, []>("SELECT DISTINCT fingerprint FROM trails WHERE status = 'indexed' ORDER BY 1").all();
  const liteIndexed = lite.query<{ n: number }, []>("SELECT count(*) AS n FROM trails WHERE status = 'indexed'").get()!.n;
  lite.close();
  const [pgCounts] = await admin`SELECT count(*)::int AS n, count(DISTINCT fingerprint)::int AS f FROM trails WHERE status = 'indexed'`;
  const [{ v: pgVectors }] = await admin`SELECT count(*)::int AS v FROM vectors`;
  log(
    `indexed trails: SQLite ${liteIndexed} (${fps.length} fingerprints), PostgreSQL ${pgCounts.n} (${pgCounts.f} fingerprints, ${pgVectors} vectors)`,
  );
  if (liteIndexed !== pgCounts.n || fps.length !== pgCounts.f) throw new Error("the two backends do not hold the same trails");
  const [{ size: pgSize }] = await admin`SELECT pg_database_size(current_database())::float8 AS size`;
  log(`PostgreSQL database size ${f1(pgSize / 1e6)} MB; load average ${loadavg()}`);
  figures.set("data", { indexed: liteIndexed, fingerprints: fps.length, pg_database_mb: pgSize / 1e6 });

  // 2. The processes: a SQLite colony, two replicas on the database, the proxy.
  const pgEnv = (pool = 16) => ({ COLONY_DATABASE_URL: dbUrl, COLONY_DATABASE_POOL: String(pool) });
  const t0 = performance.now();
  const lone = await spawnColony(sqliteDir);
  running.push(lone);
  const sqliteStartMs = performance.now() - t0;
  const t1 = performance.now();
  const replicaA = await spawnColony(replicaDirs[0]!, pgEnv());
  running.push(replicaA);
  const pgStartMs = performance.now() - t1;
  const replicaB = await spawnColony(replicaDirs[1]!, pgEnv());
  running.push(replicaB);
  const proxy: ProxyProcess = await startProxy([replicaA.url, replicaB.url], {
    prefer: process.env.BENCH_PG_PROXY === "bun" ? "bun" : "nginx",
  });
  running.push(proxy);
  log(
    `start -> /readyz 200: SQLite colony ${f1(sqliteStartMs)} ms, PostgreSQL replica ${f1(pgStartMs)} ms (loads ${pgVectors} codes); proxy: ${proxy.kind}`,
  );
  figures.set("start_ms", { sqlite: sqliteStartMs, postgres_replica: pgStartMs });
  figures.set("proxy", proxy.kind);
  for (const [name, p] of [
    ["sqlite colony", lone],
    ["replica A", replicaA],
    ["replica B", replicaB],
  ] as const)
    log(`  RSS after start, ${name}: ${f1((await p.rss()) / 1e6)} MB`);

  const meter = new CpuMeter()
    .add("sqlite_colony", () => cpuMs(lone.pid))
    .add("replica_a", () => cpuMs(replicaA.pid))
    .add("replica_b", () => cpuMs(replicaB.pid))
    .add("postgres", () => treeCpuMs(postmasterPid))
    .add("proxy", () => treeCpuMs(proxy.pid));
  const targets = [
    { name: "sqlite", label: "SQLite, 1 process", url: lone.url, processes: ["sqlite_colony"] },
    { name: "pg1", label: "PostgreSQL, 1 replica", url: replicaA.url, processes: ["replica_a", "postgres"] },
    {
      name: "pg2",
      label: `PostgreSQL, 2 replicas behind ${proxy.kind}`,
      url: proxy.url,
      processes: ["replica_a", "replica_b", "postgres", "proxy"],
    },
  ];
  const perThousand = (used: Record<string, number>, processes: string[], n: number) =>
    Object.fromEntries(processes.map((p) => [p, used[p]! / n])); // ms per request = CPU-s per 1,000
  const describeCpu = (cpu: Record<string, number>) =>
    Object.entries(cpu)
      .map(([k, v]) => `${k} ${f3(v)}`)
      .join(", ") + ` (sum ${f3(Object.values(cpu).reduce((a, b) => a + b, 0))})`;

  // 3. Lookups: warm every cache (each replica behind the proxy too), then wrk, rounds interleaved.
  const headers = { "content-type": "application/json", "X-Colony-Agent": "bench-postgres" };
  for (const url of [lone.url, replicaA.url, replicaB.url]) await warmLookups(url);
  /** Every fingerprint once (16 in flight), so the timed runs see warm lookup caches. */
  async function warmLookups(url: string) {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < fps.length) {
          const { fingerprint } = fps[next++]!;
          const res = await fetch(`${url}/v1/trails/by-fingerprint/${fingerprint}`, { headers });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`lookup warm-up on ${url} answered ${res.status}`);
        }
      }),
    );
  }
  const lookupScript = cyclingScript(fps.map((f) => ({ method: "GET" as const, path: `/v1/trails/by-fingerprint/${f.fingerprint}` })));
  const lookups: Record<string, any[]> = { sqlite: [], pg1: [], pg2: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const t of targets) {
      const before = meter.snapshot();
      const w = await runWrk({ url: t.url, threads: 1, connections: 16, seconds: WRK_SECONDS, script: lookupScript });
      const cpu = perThousand(meter.since(before), t.processes, w.requests);
      lookups[t.name]!.push({ ...w, cpu_s_per_1000: cpu, load: loadavg() });
      log(
        `lookups round ${round}, ${t.label}: ${f1(w.requestsPerSec)} req/s, p50 ${f2(w.p50Ms)} ms, p99 ${f2(w.p99Ms)} ms` +
          `${w.non2xx ? `, NON-2XX ${w.non2xx}` : ""}; CPU-s per 1,000: ${describeCpu(cpu)}; load ${loadavg()}`,
      );
    }
  }
  figures.set("lookups", lookups);

  // 4. Searches, one client, rounds interleaved, same queries for every target.
  const search = (url: string, query: string) =>
    fetch(`${url}/v1/search`, { method: "POST", headers, body: JSON.stringify({ query, limit: 5 }) });
  for (const t of targets) for (const q of queries.slice(0, 30)) await (await search(t.url, q)).arrayBuffer();
  const searches: Record<string, any[]> = { sqlite: [], pg1: [], pg2: [] };
  const perRound = Math.ceil(SEARCHES / ROUNDS);
  for (let round = 1; round <= ROUNDS; round++) {
    const qs = queries.slice(30 + (round - 1) * perRound, 30 + round * perRound);
    for (const t of targets) {
      const before = meter.snapshot();
      const ms: number[] = [];
      for (const q of qs) {
        const t0 = performance.now();
        const res = await search(t.url, q);
        await res.arrayBuffer();
        ms.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`${t.label}: search answered ${res.status}`);
      }
      const cpu = perThousand(meter.since(before), t.processes, qs.length);
      searches[t.name]!.push({ wall_ms: ms, cpu_s_per_1000: cpu, load: loadavg() });
      const s = summarize(ms);
      log(
        `searches round ${round}, ${t.label}: ${qs.length}, p50 ${f2(s.p50)} ms, p99 ${f2(s.p99)} ms; CPU-s per 1,000: ${describeCpu(cpu)}; load ${loadavg()}`,
      );
    }
  }
  const searchSummary = Object.fromEntries(
    Object.entries(searches).map(([k, rounds]) => {
      const all = summarize(rounds.flatMap((r) => r.wall_ms));
      const cpu: Record<string, number> = {};
      for (const r of rounds)
        for (const [p, v] of Object.entries(r.cpu_s_per_1000 as Record<string, number>)) cpu[p] = (cpu[p] ?? 0) + v / rounds.length;
      return [k, { wall: all, cpu_s_per_1000: cpu }];
    }),
  );
  for (const t of targets) {
    const s = searchSummary[t.name]!;
    log(`searches, all rounds, ${t.label}: p50 ${f2(s.wall.p50)} ms, p99 ${f2(s.wall.p99)} ms (n ${s.wall.n})`);
  }
  figures.set("searches", searchSummary);

  // 5. Searches with 16 concurrent clients (throughput; CPU per search under load).
  const searchScript = cyclingScript(
    queries.map((q) => ({ method: "POST" as const, path: "/v1/search", body: JSON.stringify({ query: q, limit: 5 }) })),
  );
  const searches16: Record<string, any> = {};
  for (const t of targets) {
    const before = meter.snapshot();
    const w = await runWrk({ url: t.url, threads: 2, connections: 16, seconds: WRK_SECONDS, script: searchScript });
    const cpu = perThousand(meter.since(before), t.processes, w.requests);
    searches16[t.name] = { ...w, cpu_s_per_1000: cpu, load: loadavg() };
    log(
      `searches, 16 clients (wrk -t2 -c16), ${t.label}: ${f1(w.requestsPerSec)} /s, p50 ${f2(w.p50Ms)} ms, p99 ${f2(w.p99Ms)} ms` +
        `${w.non2xx ? `, NON-2XX ${w.non2xx}` : ""}; CPU-s per 1,000: ${describeCpu(cpu)}`,
    );
  }
  figures.set("searches_16_clients", searches16);

  // 6. The shared quota's round trip: what every request on PostgreSQL pays (one upsert, shared by
  //    the uses in flight together), alone.
  const quotaRuns: Record<string, unknown> = {};
  {
    const quotaSql = new SQL(dbUrl, { max: 16 });
    const windowOf = () => new PgQuotaCounters(quotaSql).window("bench", 1_000_000_000, 60_000);
    const n = QUICK ? 2000 : 10_000;
    for (const [name, inFlight, keys] of [
      ["sequential, one key", 1, 1],
      ["16 in flight, one key (one client address: one hot row)", 16, 1],
      ["16 in flight, 16 keys", 16, 16],
    ] as const) {
      const w = windowOf();
      for (let i = 0; i < 200; i++) await w.take(`warm-${i % keys}`);
      const cpu0 = process.cpuUsage();
      const pg0 = treeCpuMs(postmasterPid);
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async (_, worker) => {
          while (next < n) {
            next++;
            await w.take(`key-${worker % keys}`);
          }
        }),
      );
      const wallS = (performance.now() - t0) / 1000;
      const used = process.cpuUsage(cpu0);
      const clientUs = (used.user + used.system) / n;
      const pgUs = ((treeCpuMs(postmasterPid) - pg0) * 1000) / n;
      quotaRuns[name] = { n, per_s: n / wallS, client_cpu_us: clientUs, postgres_cpu_us: pgUs };
      log(`quota upsert, ${name}: ${f1(n / wallS)} /s; CPU per use: client (Bun.SQL) ${f1(clientUs)} µs, PostgreSQL ${f1(pgUs)} µs`);
    }
    await quotaSql.close();
  }
  figures.set("quota_round_trip", quotaRuns);

  // 7. Cross-replica visibility: publish on A; B answers a lookup (its miss cached first) and a
  //    search; a third process's vector index fed only by NOTIFY + catch-up (the replicas' feed).
  const dimRow = await admin`SELECT length(code) * 8 AS dim FROM vectors LIMIT 1`;
  const observerSql = new SQL(dbUrl, { max: 2 });
  const observer = new PgVectorIndex(observerSql, Number(dimRow[0]!.dim));
  await observer.catchUp();
  let lastGrowth = 0;
  let lastNotify = 0;
  const onNotify = () => {
    lastNotify = performance.now();
    const before = observer.codes.count;
    void observer
      .catchUp()
      .then(() => {
        if (observer.codes.count > before) lastGrowth = performance.now();
      })
      .catch(() => {});
  };
  const feed = await observerSql.listen(VECTORS_CHANNEL, onNotify);
  const vis = {
    indexed_on_a_ms: [] as number[],
    lookup_on_b_ms: [] as number[],
    search_on_b_ms: [] as number[],
    feed_ms: [] as number[],
    feed_after_notify_ms: [] as number[],
    feed_from_publish_ms: [] as number[],
  };
  const visBefore = meter.snapshot();
  for (let i = 0; i < VISIBILITY; i++) {
    const token = `${Date.now().toString(36)}${i}`;
    const error = `QuorumProbeError: replica visibility probe ${token} found no ledger shard for tenant vis${i}`;
    const trail = {
      protocol_version: "1.0",
      problem: { error, error_type: "QuorumProbeError", root_cause: `The probe ${token} asked a shard the ledger had not announced.` },
      solution: {
        summary: `Announce the ledger shard for tenant vis${i} before the probe runs, then retry the probe ${token}.`,
        steps: ["Announce the shard", "Retry the probe"],
      },
      agent_info: { model: "bench", framework: "bench" },
      environment: { os: "linux", runtime: { name: "python", version: "3.12.1" } },
    };
    const countBefore = observer.codes.count;
    const tPublish = performance.now();
    const res = await fetch(`${replicaA.url}/v1/trails`, { method: "POST", headers, body: JSON.stringify(trail) });
    const published = (await res.json()) as { trail_id: string; fingerprint: string };
    if (res.status !== 202) throw new Error(`publish on A answered ${res.status}: ${JSON.stringify(published)}`);
    // B caches the miss now, so the lookup below measures the fingerprint feed's invalidation.
    const miss = await fetch(`${replicaB.url}/v1/trails/by-fingerprint/${published.fingerprint}`, { headers });
    await miss.arrayBuffer();
    let tIndexed = 0;
    for (;;) {
      const st = (await (await fetch(`${replicaA.url}/v1/trails/${published.trail_id}`, { headers })).json()) as { status: string };
      if (st.status === "indexed") {
        tIndexed = performance.now();
        break;
      }
      if (performance.now() - tPublish > 30_000) throw new Error(`trail ${published.trail_id} not indexed on A after 30 s`);
      await Bun.sleep(2);
    }
    const until = async (probe: () => Promise<boolean>) => {
      for (;;) {
        if (await probe()) return performance.now() - tIndexed;
        if (performance.now() - tIndexed > 10_000) return Number.POSITIVE_INFINITY;
        await Bun.sleep(2);
      }
    };
    const lookupMs = await until(async () => {
      const r = await fetch(`${replicaB.url}/v1/trails/by-fingerprint/${published.fingerprint}`, { headers });
      const body = (await r.json()) as { results?: { trail_id: string }[] };
      return r.status === 200 && !!body.results?.some((x) => x.trail_id === published.trail_id);
    });
    const searchMs = await until(async () => {
      const r = await search(replicaB.url, error);
      const body = (await r.json()) as { results?: { trail_id: string }[] };
      return !!body.results?.some((x) => x.trail_id === published.trail_id);
    });
    // The feed alone: wait for the observer's index to hold the new code.
    while (observer.codes.count <= countBefore && performance.now() - tPublish < 10_000) await Bun.sleep(1);
    vis.indexed_on_a_ms.push(tIndexed - tPublish);
    vis.lookup_on_b_ms.push(lookupMs);
    vis.search_on_b_ms.push(searchMs);
    vis.feed_ms.push(lastGrowth - tIndexed);
    vis.feed_after_notify_ms.push(lastGrowth - lastNotify);
    vis.feed_from_publish_ms.push(lastGrowth - tPublish);
  }
  const visCpu = meter.since(visBefore);
  await feed.unlisten();
  await observerSql.close();
  const visSummary = Object.fromEntries(Object.entries(vis).map(([k, v]) => [k, summarize(v)]));
  log(`cross-replica visibility over ${VISIBILITY} trails published on replica A (ms; p50 / p99 / max):`);
  const show = (label: string, s: ReturnType<typeof summarize>) => log(`  ${label.padEnd(72)} ${f1(s.p50)} / ${f1(s.p99)} / ${f1(s.max)}`);
  show("publish 202 -> A reports indexed (enrichment; polled every ~2 ms)", visSummary.indexed_on_a_ms!);
  show("A indexed -> B's lookup finds it (B had cached the miss)", visSummary.lookup_on_b_ms!);
  show("A indexed -> B's search finds it (catch-up before the search)", visSummary.search_on_b_ms!);
  show("A indexed -> code in another process's index by the feed alone", visSummary.feed_ms!);
  show("  of which NOTIFY received -> caught up", visSummary.feed_after_notify_ms!);
  show("publish 202 -> code in another process's index by the feed alone", visSummary.feed_from_publish_ms!);
  const visP99 = Math.max(visSummary.lookup_on_b_ms!.p99, visSummary.search_on_b_ms!.p99, visSummary.feed_ms!.p99);
  figures.set("visibility", { ...visSummary, cpu_ms_during: visCpu });

  // 8. COLONY_DATABASE_POOL sweep on one replica (B stopped while A restarts with each size).
  const poolRuns: Record<string, unknown>[] = [];
  if (POOLS.length > 0) {
    await proxy.stop();
    running.splice(running.indexOf(proxy), 1);
    for (const r of [replicaA, replicaB]) {
      await r.stop();
      running.splice(running.indexOf(r), 1);
    }
    for (const pool of POOLS) {
      const replica: ColonyProcess = await spawnColony(replicaDirs[0]!, pgEnv(pool));
      running.push(replica);
      await warmLookups(replica.url);
      const m = new CpuMeter().add("replica", () => cpuMs(replica.pid)).add("postgres", () => treeCpuMs(postmasterPid));
      let before = m.snapshot();
      const l = await runWrk({ url: replica.url, threads: 1, connections: 64, seconds: WRK_SECONDS, script: lookupScript });
      const lcpu = perThousand(m.since(before), ["replica", "postgres"], l.requests);
      before = m.snapshot();
      const s = await runWrk({ url: replica.url, threads: 2, connections: 16, seconds: WRK_SECONDS, script: searchScript });
      const scpu = perThousand(m.since(before), ["replica", "postgres"], s.requests);
      poolRuns.push({ pool, lookups: { ...l, cpu_s_per_1000: lcpu }, searches16: { ...s, cpu_s_per_1000: scpu }, load: loadavg() });
      log(
        `pool ${String(pool).padStart(3)}: lookups (wrk -c64) ${f1(l.requestsPerSec)} /s p99 ${f2(l.p99Ms)} ms, CPU ${describeCpu(lcpu)}; ` +
          `searches (wrk -c16) ${f1(s.requestsPerSec)} /s p50 ${f2(s.p50Ms)} p99 ${f2(s.p99Ms)} ms, CPU ${describeCpu(scpu)}; load ${loadavg()}`,
      );
      await replica.stop();
      running.splice(running.indexOf(replica), 1);
    }
  }
  figures.set("pool_sweep", poolRuns);

  // 9. Goals.
  const best = (k: string) => Math.max(...lookups[k]!.map((w) => w.requestsPerSec));
  const mean = (k: string) => lookups[k]!.reduce((a, w) => a + w.requestsPerSec, 0) / lookups[k]!.length;
  const ratio1 = mean("pg1") / mean("sqlite");
  const ratio2 = mean("pg2") / mean("sqlite");
  const goals = {
    lookups_pg1_over_sqlite: ratio1,
    lookups_pg2_over_sqlite: ratio2,
    lookups_at_least_half: ratio1 >= 0.5,
    search_p50_pg1_under_15ms: searchSummary.pg1!.wall.p50 < 15,
    search_p50_pg2_under_15ms: searchSummary.pg2!.wall.p50 < 15,
    visibility_p99_under_1s: visP99 < 1000,
    sqlite_search_p50: searchSummary.sqlite!.wall.p50,
  };
  log("");
  log(`goals at ${TRAILS} trails (load average ${loadavg()}):`);
  log(
    `  PostgreSQL lookups >= 0.5 x SQLite: 1 replica ${f2(ratio1)} x (mean ${f1(mean("pg1"))} vs ${f1(mean("sqlite"))} req/s; best ${f1(best("pg1"))} vs ${f1(best("sqlite"))}), ` +
      `2 replicas ${f2(ratio2)} x: ${verdict(goals.lookups_at_least_half)}`,
  );
  log(
    `  search p50 < 15 ms: 1 replica ${f2(searchSummary.pg1!.wall.p50)} ms, 2 replicas ${f2(searchSummary.pg2!.wall.p50)} ms: ` +
      `${verdict(goals.search_p50_pg1_under_15ms && goals.search_p50_pg2_under_15ms)} (SQLite ${f2(searchSummary.sqlite!.wall.p50)} ms)`,
  );
  log(`  cross-replica visibility p99 < 1 s: worst p99 ${f1(visP99)} ms: ${verdict(goals.visibility_p99_under_1s)}`);
  figures.set("goals", goals);
} finally {
  for (const r of running.reverse()) await r.stop().catch(() => {});
  await admin.close().catch(() => {});
  await pg.stop();
  removeDir(sqliteDir);
  for (const d of replicaDirs) removeDir(d);
}
figures.write();

/** The parts of a search timed in-process on the seeding colony (each part alone, same queries). */
async function searchParts(colony: Awaited<ReturnType<typeof inProcessColony>>) {
  const { store, vectors, embedder } = colony.subsystems;
  const qs = queries.slice(0, QUICK ? 50 : 150);
  const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-postgres", agentDeclared: true };
  const vecs = await embedder!.embed(qs);
  const time = async (fn: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < 10; i++) await fn(i); // warm-up
    const ms: number[] = [];
    for (let i = 0; i < qs.length; i++) {
      const t0 = performance.now();
      await fn(i);
      ms.push(performance.now() - t0);
    }
    return summarize(ms);
  };
  const out = {
    vector_search: await time((i) => vectors!.search(vecs[i]!, CANDIDATES_PER_RETRIEVER)),
    lexical_search: await time((i) => store!.lexical.search(lexicalIndexTokens(qs[i]!), CANDIDATES_PER_RETRIEVER)),
    whole_search: await time((i) => colony.service.search.search({ query: qs[i]!, limit: 5 }, caller)),
  };
  log(
    `  in-process parts (p50 / p99 ms): vector KNN ${f2(out.vector_search.p50)} / ${f2(out.vector_search.p99)}, ` +
      `lexical ${f2(out.lexical_search.p50)} / ${f2(out.lexical_search.p99)}, whole search ${f2(out.whole_search.p50)} / ${f2(out.whole_search.p99)}`,
  );
  return out;
}

// CPU cost per request of a colony process, for A/B comparisons on a busy machine: wall-clock
// figures (requests/s, latency) move with whatever else runs, while the CPU time the server spends
// per request (utime + stime of the colony process, from /proc/<pid>/stat) barely does. Measures:
//   - fingerprint lookups (warm cache, cycling every indexed fingerprint, wrk -t1 -c8);
//   - searches (POST /v1/search, one client, synthesized agent queries);
//   - publishes (POST /v1/trails, one client) including their enrichment: CPU per trail from the
//     first publish until the queue is empty.
// With --data, the directory is seeded once (in-process, through the service) and kept, so two
// checkouts can be measured on the same data, one after the other (--run N publishes trails no
// other run published); without it, a temporary directory with 10,000 trails is used and removed:
//   node_modules/.bin/bun bench/cpu-cost.bench.ts [--quick] [--data DIR] [--seed N] [--run N]
import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { benchDir, inProcessColony, removeDir, seedTrails, spawnColony } from "./lib/colony";
import { synthesizedQueries, synthesizedTrails } from "./lib/corpus";
import { f1, f2, f3, Figures, flag, log, QUICK, REPO_DIR, summarize } from "./lib/report";
import { cyclingScript, hasWrk, runWrk } from "./lib/wrk";

const keptDir = flag("--data");
const dataDir = keptDir ?? benchDir();
const SEED = Number(flag("--seed") ?? (QUICK ? 2000 : keptDir ? 100_000 : 10_000));
const RUN = Number(flag("--run") ?? 1);
const LOOKUP_SECONDS = Number(flag("--lookup-seconds") ?? (QUICK ? 3 : 10));
const SEARCHES = Number(flag("--searches") ?? (QUICK ? 50 : 200));
const PUBLISHES = Number(flag("--publishes") ?? (QUICK ? 50 : 300));

const TICKS_PER_S = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** CPU milliseconds the process has used so far (all threads). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at state, field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_S;
}

const figures = new Figures("cpu-cost");
const commit = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: REPO_DIR }).stdout.toString().trim();
log(
  `commit ${commit}, data ${dataDir}, run ${RUN}, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
);

if (!existsSync(join(dataDir, "colony.db"))) {
  const seeding = await inProcessColony(dataDir);
  const seeded = await seedTrails(seeding, synthesizedTrails(REPO_DIR, SEED, 7, 0), { chunk: 5000 });
  await seeding.stop();
  log(`seeded ${SEED} trails in ${f1(seeded.totalS)} s`);
}

const colony = await spawnColony(dataDir);
try {
  const db = new Database(join(dataDir, "colony.db"), { readonly: true });
  const fps = db.query<{ fingerprint: string }, []>("SELECT DISTINCT fingerprint FROM trails WHERE status = 'indexed'").all();
  const indexed = db.query<{ n: number }, []>("SELECT count(*) AS n FROM trails WHERE status = 'indexed'").get()!.n;
  db.close();
  log(`${indexed} indexed trails, ${fps.length} fingerprints`);
  const headers = { "content-type": "application/json", "X-Colony-Agent": "bench-cpu-cost" };

  // 1. Lookups: one warm-up pass fills the cache, then wrk cycles over every fingerprint.
  if (hasWrk()) {
    for (const { fingerprint } of fps)
      await (await fetch(`${colony.url}/v1/trails/by-fingerprint/${fingerprint}`, { headers })).arrayBuffer();
    const script = cyclingScript(fps.map((f) => ({ method: "GET" as const, path: `/v1/trails/by-fingerprint/${f.fingerprint}` })));
    const before = cpuMs(colony.pid);
    const wrk = await runWrk({ url: colony.url, threads: 1, connections: 8, seconds: LOOKUP_SECONDS, script });
    const used = cpuMs(colony.pid) - before;
    const perRequestUs = (used * 1000) / wrk.requests;
    log(
      `lookups: ${wrk.requests} in ${LOOKUP_SECONDS} s (${f1(wrk.requestsPerSec)} req/s, p50 ${f2(wrk.p50Ms)} ms); colony CPU ${f1(perRequestUs)} µs per lookup`,
    );
    figures.set("lookup", {
      requests: wrk.requests,
      per_s: wrk.requestsPerSec,
      p50_ms: wrk.p50Ms,
      cpu_us_per_request: perRequestUs,
      non2xx: wrk.non2xx,
    });
  } else {
    log("wrk not installed: lookups skipped");
  }

  // 2. Searches, one client.
  const queries = synthesizedQueries(REPO_DIR, SEARCHES + 20, 3);
  const search = (query: string) =>
    fetch(`${colony.url}/v1/search`, { method: "POST", headers, body: JSON.stringify({ query, limit: 5 }) });
  for (const q of queries.slice(0, 20)) await (await search(q)).arrayBuffer(); // warm-up
  const searchMs: number[] = [];
  let before = cpuMs(colony.pid);
  for (const q of queries.slice(20)) {
    const t0 = performance.now();
    const res = await search(q);
    await res.arrayBuffer();
    searchMs.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`search answered ${res.status}`);
  }
  const searchCpu = (cpuMs(colony.pid) - before) / SEARCHES;
  const s = summarize(searchMs);
  log(`searches: ${SEARCHES}, wall p50 ${f2(s.p50)} ms, p99 ${f2(s.p99)} ms; colony CPU ${f3(searchCpu)} ms per search`);
  figures.set("search", { n: SEARCHES, wall: s, cpu_ms_per_search: searchCpu });

  // 3. Publishes and their enrichment; trails no earlier run published (their own commands).
  const trails = synthesizedTrails(REPO_DIR, PUBLISHES, 7, 10_000_000 + RUN * PUBLISHES);
  const publishMs: number[] = [];
  before = cpuMs(colony.pid);
  const started = performance.now();
  for (const t of trails) {
    const t0 = performance.now();
    const res = await fetch(`${colony.url}/v1/trails`, { method: "POST", headers, body: JSON.stringify(t) });
    await res.arrayBuffer();
    publishMs.push(performance.now() - t0);
    if (res.status !== 202) throw new Error(`publish answered ${res.status}`);
  }
  for (;;) {
    const ready = (await (await fetch(`${colony.url}/readyz`)).json()) as { queue_depth: number };
    if (ready.queue_depth === 0) break;
    // Not faster: each /readyz runs its probes (a key-value write, a vector query, an embedding),
    // whose CPU would count as the publishes'.
    await Bun.sleep(100);
  }
  const publishWallS = (performance.now() - started) / 1000;
  const publishCpu = (cpuMs(colony.pid) - before) / PUBLISHES;
  const p = summarize(publishMs);
  log(
    `publishes: ${PUBLISHES}, 202 p50 ${f2(p.p50)} ms, all enriched after ${f1(publishWallS)} s (${f1(PUBLISHES / publishWallS)} trails/s); ` +
      `colony CPU ${f3(publishCpu)} ms per trail (publish + enrichment)`,
  );
  figures.set("publish", { n: PUBLISHES, wall_202: p, trails_per_s: PUBLISHES / publishWallS, cpu_ms_per_trail: publishCpu });
} finally {
  await colony.stop();
  if (!keptDir) removeDir(dataDir);
}
figures.write();

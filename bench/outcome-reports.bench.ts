// Outcome reports over HTTP against a separate colony process on loopback, per store
// (`--backend sqlite|postgres|both`, both by default; PostgreSQL is a throwaway server):
//   - one client, sequential: latency p50/p99 of counted reports, each on another trail;
//   - 32 clients at once, every report on ONE trail (they queue on its row: holdTrail, FOR UPDATE
//     on PostgreSQL): reports/s, latency p50/p99, answers other than 202;
//   - the same with not_applicable reports, which never count (FOR KEY SHARE on PostgreSQL);
//   - 32 clients at once, reports spread over the trails: reports/s, latency p50/p99.
// Every report comes from an agent and an address of its own (COLONY_TRUST_PROXY=1, X-Forwarded-For),
// so each counts (a repeat or a second report of one address a day would not).
// On the way it times what it needs anyway: the publish burst that seeds the trails (32 clients,
// first publish -> queue empty, the enrichment throughput), GET /v1/stats p50/p99 after the
// reports, and restarts on the data just written (exec -> /readyz 200: the start-time checks).
// Beside each figure, the CPU it cost per operation (the colony process, plus the PostgreSQL server
// and its backends), which holds better than latency on a machine busy with other work.
// Sizes: TRAILS (--quick 300, else 1000) seeded, SEQUENTIAL reports (100 / 300), ONE_TRAIL and
// SPREAD reports (320 / 960 each), RESTARTS (3).
// Run: node_modules/.bin/bun bench/outcome-reports.bench.ts [--quick] [--backend both]
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { type Backend, backendEnv, chosenBackends, stopBackends } from "./lib/backend";
import { benchDir, type ColonyProcess, removeDir, spawnColony } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { cpuMs, treeCpuMs } from "./lib/cpu";
import { args, f1, f2, Figures, log, QUICK, REPO_DIR, summarize } from "./lib/report";

const TRAILS = QUICK ? 300 : 1000;
const SEQUENTIAL = QUICK ? 100 : 300;
const CONCURRENT = QUICK ? 320 : 960;
const CLIENTS = 32;
const STATS_SAMPLES = QUICK ? 100 : 300;
const RESTARTS = 3;
// Both stores unless one is asked for: the row locks differ between them.
const backends: Backend[] = args.some((a) => a.startsWith("--backend")) ? chosenBackends() : ["sqlite", "postgres"];

const figures = new Figures("outcome-reports");
const trails = distractorTrails(REPO_DIR, TRAILS, 12);
let reporter = 0; // every report from an agent and an address of its own

const json = { "content-type": "application/json" };
const sender = (i: number) => ({
  ...json,
  "X-Colony-Agent": `bench-reporter-${i}`,
  "X-Forwarded-For": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
});

type Outcome = "worked" | "failed" | "not_applicable";

async function report(url: string, trailId: string, outcome?: Outcome): Promise<{ ms: number; status: number; counted: boolean }> {
  const i = ++reporter;
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/trails/${trailId}/outcomes`, {
    method: "POST",
    headers: sender(i),
    body: JSON.stringify({ protocol_version: "1.0", outcome: outcome ?? (i % 4 === 0 ? "failed" : "worked") }),
  });
  const body = (await res.json()) as { counted?: boolean };
  return { ms: performance.now() - t0, status: res.status, counted: body.counted === true };
}

/** `total` reports from CLIENTS clients at once, the trail of each chosen by `trailOf`. */
async function concurrently(url: string, total: number, trailOf: (n: number) => string, outcome?: Outcome) {
  const ms: number[] = [];
  const statuses: Record<number, number> = {};
  let counted = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < total) {
        const r = await report(url, trailOf(next++), outcome);
        ms.push(r.ms);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.counted) counted++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { ...summarize(ms), per_s: total / seconds, statuses, counted };
}

async function queueDepth(url: string): Promise<number> {
  return ((await (await fetch(`${url}/readyz`)).json()) as { queue_depth: number }).queue_depth;
}

/** The postmaster of the server behind `url`: the parent of a backend's process. */
async function postmasterOf(url: string): Promise<number> {
  const sql = new SQL(url, { max: 1 });
  try {
    const [{ pid }] = await sql`SELECT pg_backend_pid() AS pid`;
    return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
  } finally {
    await sql.close();
  }
}

async function measure(backend: Backend): Promise<Record<string, unknown>> {
  const dir = benchDir("colony-bench-outcomes-");
  const env: Record<string, string> = { ...(await backendEnv(backend)), COLONY_TRUST_PROXY: "1" };
  const postmaster = env.COLONY_DATABASE_URL ? await postmasterOf(env.COLONY_DATABASE_URL) : null;
  const out: Record<string, unknown> = {};
  let colony: ColonyProcess | null = await spawnColony(dir, env);
  // CPU ms of the colony and of the PostgreSQL server since `before`, per operation.
  const cpuNow = () => ({ colony: cpuMs(colony!.pid), postgres: postmaster ? treeCpuMs(postmaster) : 0 });
  const cpuPer = (before: ReturnType<typeof cpuNow>, n: number) => {
    const now = cpuNow();
    return { colony_ms: (now.colony - before.colony) / n, postgres_ms: (now.postgres - before.postgres) / n };
  };
  const cpuText = (c: { colony_ms: number; postgres_ms: number }) =>
    `; CPU per op ${f2(c.colony_ms)} ms colony` + (postmaster ? ` + ${f2(c.postgres_ms)} ms PostgreSQL` : "");
  try {
    // 1. The seed: a burst of publishes, then the queue drained.
    const ids: string[] = [];
    let next = 0;
    const burstCpu = cpuNow();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        while (next < trails.length) {
          const res = await fetch(`${colony!.url}/v1/trails`, {
            method: "POST",
            headers: { ...json, "X-Colony-Agent": `bench-publisher-${c}` },
            body: JSON.stringify(trails[next++]),
          });
          if (res.status !== 202) throw new Error(`publish answered ${res.status}`);
          ids.push(((await res.json()) as { trail_id: string }).trail_id);
        }
      }),
    );
    const publishedMs = performance.now() - t0;
    while ((await queueDepth(colony.url)) > 0) await Bun.sleep(5);
    const drainedMs = performance.now() - t0;
    const burstCpuPer = cpuPer(burstCpu, TRAILS);
    const indexed: string[] = [];
    for (const id of ids) {
      const { status } = (await (await fetch(`${colony.url}/v1/trails/${id}`)).json()) as { status: string };
      if (status === "indexed") indexed.push(id);
    }
    out.burst = {
      trails: TRAILS,
      publish_ms: publishedMs,
      drained_ms: drainedMs,
      per_s: TRAILS / (drainedMs / 1000),
      indexed: indexed.length,
      cpu: burstCpuPer,
    };
    log(
      `[${backend}] burst of ${TRAILS} (${CLIENTS} clients): accepted in ${f1(publishedMs)} ms, queue empty after ${f1(drainedMs)} ms ` +
        `= ${f1(TRAILS / (drainedMs / 1000))} trails/s; ${indexed.length} indexed${cpuText(burstCpuPer)}`,
    );

    // 2. One client, sequential, each report on another trail.
    const seq: number[] = [];
    const seqCpu = cpuNow();
    for (let i = 0; i < SEQUENTIAL; i++) {
      const r = await report(colony.url, indexed[i % indexed.length]!);
      if (r.status !== 202 || !r.counted) throw new Error(`sequential report: ${r.status}, counted ${r.counted}`);
      seq.push(r.ms);
    }
    const seqCpuPer = cpuPer(seqCpu, SEQUENTIAL);
    out.sequential_ms = { ...summarize(seq), cpu: seqCpuPer };
    log(
      `[${backend}] report, one client, ${SEQUENTIAL} counted: p50 ${f2(summarize(seq).p50)} ms, p99 ${f2(summarize(seq).p99)} ms${cpuText(seqCpuPer)}`,
    );

    // 3. Many clients, one trail.
    const hot = indexed[indexed.length - 1]!;
    let c0 = cpuNow();
    const one = { ...(await concurrently(colony.url, CONCURRENT, () => hot)), cpu: cpuPer(c0, CONCURRENT) };
    out.one_trail = one;
    log(
      `[${backend}] ${CONCURRENT} reports on ONE trail, ${CLIENTS} at once: ${f1(one.per_s)} reports/s, p50 ${f2(one.p50)} ms, ` +
        `p99 ${f2(one.p99)} ms, answers ${JSON.stringify(one.statuses)}, counted ${one.counted}${cpuText(one.cpu)}`,
    );

    // 3b. The same for reports that cannot count (not_applicable): since session 12 they hold the
    // trail too (FOR KEY SHARE on PostgreSQL, which FOR UPDATE holders wait for).
    c0 = cpuNow();
    const uncounted = { ...(await concurrently(colony.url, CONCURRENT, () => hot, "not_applicable")), cpu: cpuPer(c0, CONCURRENT) };
    out.one_trail_uncounted = uncounted;
    log(
      `[${backend}] ${CONCURRENT} not_applicable reports on ONE trail, ${CLIENTS} at once: ${f1(uncounted.per_s)} reports/s, ` +
        `p50 ${f2(uncounted.p50)} ms, p99 ${f2(uncounted.p99)} ms, answers ${JSON.stringify(uncounted.statuses)}${cpuText(uncounted.cpu)}`,
    );

    // 4. Many clients, spread over the trails (not the hot one).
    c0 = cpuNow();
    const spread = {
      ...(await concurrently(colony.url, CONCURRENT, (n) => indexed[n % (indexed.length - 1)]!)),
      cpu: cpuPer(c0, CONCURRENT),
    };
    out.spread = spread;
    log(
      `[${backend}] ${CONCURRENT} reports spread over ${indexed.length - 1} trails, ${CLIENTS} at once: ${f1(spread.per_s)} reports/s, ` +
        `p50 ${f2(spread.p50)} ms, p99 ${f2(spread.p99)} ms, answers ${JSON.stringify(spread.statuses)}, counted ${spread.counted}${cpuText(spread.cpu)}`,
    );

    // 5. /v1/stats, one client.
    const stats: number[] = [];
    c0 = cpuNow();
    for (let i = 0; i < STATS_SAMPLES; i++) {
      const t = performance.now();
      const res = await fetch(`${colony.url}/v1/stats`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/v1/stats answered ${res.status}`);
      stats.push(performance.now() - t);
    }
    const statsCpu = cpuPer(c0, STATS_SAMPLES);
    out.stats_ms = { ...summarize(stats), cpu: statsCpu };
    log(
      `[${backend}] GET /v1/stats, one client, ${STATS_SAMPLES}: p50 ${f2(summarize(stats).p50)} ms, p99 ${f2(summarize(stats).p99)} ms${cpuText(statsCpu)}`,
    );

    // 6. Restarts on this data: exec -> /readyz 200 (spawnColony polls every 50 ms).
    // The CPU is the new process's own until it answered ready (its PostgreSQL queries: beside).
    const restarts: number[] = [];
    const restartCpu: number[] = [];
    for (let i = 0; i < RESTARTS; i++) {
      await colony.stop();
      colony = null;
      const pg0 = postmaster ? treeCpuMs(postmaster) : 0;
      const t = performance.now();
      colony = await spawnColony(dir, env);
      restarts.push(performance.now() - t);
      restartCpu.push(cpuMs(colony.pid) + (postmaster ? treeCpuMs(postmaster) - pg0 : 0));
    }
    out.restart_ms = restarts;
    out.restart_cpu_ms = restartCpu;
    log(
      `[${backend}] restart on ${TRAILS} trails, exec -> /readyz: ${restarts.map((ms) => f1(ms)).join(", ")} ms; ` +
        `CPU ${restartCpu.map((ms) => f1(ms)).join(", ")} ms`,
    );
  } finally {
    await colony?.stop();
    removeDir(dir);
  }
  return out;
}

try {
  for (const backend of backends) figures.set(backend, await measure(backend));
} finally {
  await stopBackends();
}
figures.write();

// Trail lifecycle (issue 3), against a separate colony process on loopback:
//   - publish latency (202) p50/p99, one client, sequential;
//   - publish -> indexed latency on an idle colony (target p50 < 100 ms, default model);
//   - enrichment throughput under a burst (N trails published by 32 concurrent clients, then the
//     drain timed; target >= 200 trails/s);
//   - GET /v1/trails/by-fingerprint at 10,000 trails, wrk -t2 -c50, beside a plain Elysia route
//     measured in the same run (target: at least half its requests/s, p99 < 10 ms); servers on
//     core 0 and wrk on core 1 when taskset is there, after one warm-up pass over the fingerprints.
// Run: node_modules/.bin/bun bench/lifecycle.bench.ts [--quick]
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { benchDir, inProcessColony, removeDir, seedTrails, spawnColony, spawnPlainElysia } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { f1, f2, Figures, log, QUICK, REPO_DIR, summarize, verdict } from "./lib/report";
import { canPin, cyclingScript, hasWrk, pinProcess, runWrk } from "./lib/wrk";

const SEED_TRAILS = QUICK ? 1000 : 10_000;
const PUBLISH_SAMPLES = QUICK ? 50 : 300;
const IDLE_SAMPLES = QUICK ? 20 : 100;
const BURST = QUICK ? 300 : 2000;
const WRK_SECONDS = QUICK ? 3 : 10;

const figures = new Figures("lifecycle");
const pool = distractorTrails(REPO_DIR, SEED_TRAILS + PUBLISH_SAMPLES + IDLE_SAMPLES + BURST, 11);
const seedSet = pool.slice(0, SEED_TRAILS);
let rest = pool.slice(SEED_TRAILS);
const take = (n: number) => {
  const out = rest.slice(0, n);
  rest = rest.slice(n);
  return out;
};

const dir = benchDir();
try {
  // 1. Seed through the service in-process (not what is measured here).
  const seeding = await inProcessColony(dir);
  const seeded = await seedTrails(seeding, seedSet);
  await seeding.stop();
  log(`seeded ${SEED_TRAILS} trails in-process in ${f1(seeded.totalS)} s (publish ${f1(seeded.publishS)} s, drain ${f1(seeded.drainS)} s)`);
  log(`enrichment drain capacity, in-process (queues of up to 5000): ${f1(SEED_TRAILS / seeded.drainS)} trails/s`);
  figures.set("seed", { trails: SEED_TRAILS, ...seeded, drain_per_s: SEED_TRAILS / seeded.drainS });

  const colony = await spawnColony(dir);
  const headers = { "content-type": "application/json", "X-Colony-Agent": "bench-publisher" };
  const post = (trail: unknown) => fetch(`${colony.url}/v1/trails`, { method: "POST", headers, body: JSON.stringify(trail) });
  try {
    // 2. Publish latency, one client.
    const publishMs: number[] = [];
    for (const t of take(PUBLISH_SAMPLES)) {
      const t0 = performance.now();
      const res = await post(t);
      await res.arrayBuffer();
      publishMs.push(performance.now() - t0);
      if (res.status !== 202) throw new Error(`publish answered ${res.status}`);
    }
    const pub = summarize(publishMs);
    log(`publish (202), one client, ${pub.n} trails: p50 ${f2(pub.p50)} ms, p99 ${f2(pub.p99)} ms`);
    figures.set("publish_latency_ms", pub);
    await waitIdle(colony.url);

    // 3. Publish -> indexed on an idle colony: poll the status back to back.
    const idleMs: number[] = [];
    const statuses: Record<string, number> = {};
    for (const t of take(IDLE_SAMPLES)) {
      const t0 = performance.now();
      const res = await post(t);
      const { trail_id } = (await res.json()) as { trail_id: string };
      let status = "queued";
      while (status === "queued") {
        status = ((await (await fetch(`${colony.url}/v1/trails/${trail_id}`)).json()) as { status: string }).status;
      }
      idleMs.push(performance.now() - t0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      await Bun.sleep(20); // idle between trails
    }
    const idle = summarize(idleMs);
    log(
      `publish -> final status, idle colony, ${idle.n} trails: p50 ${f1(idle.p50)} ms, p99 ${f1(idle.p99)} ms ` +
        `(${JSON.stringify(statuses)})   target p50 < 100 ms: ${verdict(idle.p50 < 100)}`,
    );
    figures.set("publish_to_indexed_idle_ms", { ...idle, statuses, target_p50_ms: 100, met: idle.p50 < 100 });

    // 4. Burst: N trails from 32 concurrent clients, then wait for the queue to empty.
    const burst = take(BURST);
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < burst.length) {
          const res = await post(burst[next++]);
          await res.arrayBuffer();
          if (res.status !== 202) throw new Error(`burst publish answered ${res.status}`);
        }
      }),
    );
    const published = performance.now() - t0;
    const depthAfterPublish = await queueDepth(colony.url);
    await waitIdle(colony.url, 5);
    const drained = performance.now() - t0;
    const throughput = BURST / (drained / 1000);
    log(
      `burst of ${BURST}: published in ${f1(published)} ms (${f1(BURST / (published / 1000))} trails/s accepted), ` +
        `queue ${depthAfterPublish} when the last 202 came, empty after ${f1(drained)} ms`,
    );
    log(
      `enrichment throughput (burst, first publish -> queue empty): ${f1(throughput)} trails/s   target >= 200: ${verdict(throughput >= 200)}`,
    );
    const afterPublish = depthAfterPublish > 0 ? depthAfterPublish / ((drained - published) / 1000) : NaN;
    log(`  drain after the last 202 alone: ${depthAfterPublish} trails in ${f1(drained - published)} ms = ${f1(afterPublish)} trails/s`);
    figures.set("burst", {
      trails: BURST,
      publish_ms: published,
      queue_after_publish: depthAfterPublish,
      drained_ms: drained,
      throughput_per_s: throughput,
      drain_after_publish_per_s: afterPublish,
      target_per_s: 200,
      met: throughput >= 200,
    });

    // 5. Fingerprint lookups at SEED_TRAILS trails vs a plain Elysia route.
    if (!hasWrk()) {
      log("wrk not installed (apt-get install wrk): lookup throughput skipped");
      figures.set("lookups", "skipped: wrk missing");
    } else {
      const db = new Database(join(dir, "colony.db"), { readonly: true });
      const fps = db
        .query<{ fingerprint: string }, [number]>("SELECT DISTINCT fingerprint FROM trails WHERE status = 'indexed' ORDER BY seq LIMIT ?")
        .all(SEED_TRAILS)
        .map((r) => r.fingerprint);
      const indexed = db.query<{ n: number }, []>("SELECT count(*) AS n FROM trails WHERE status = 'indexed'").get()!.n;
      db.close();
      const script = cyclingScript(fps.map((fp) => ({ method: "GET", path: `/v1/trails/by-fingerprint/${fp}` })));
      // The same client work for the plain route: wrk's Lua request() costs the client CPU too.
      const plainScript = cyclingScript(fps.map(() => ({ method: "GET", path: "/x" })));
      const plain = await spawnPlainElysia();
      try {
        // On two or more cores, servers on core 0 and wrk on core 1: otherwise the load generator
        // and the server under test fight for the same cores and the figures swing by ±20%.
        const pinned = canPin();
        if (pinned) {
          pinProcess(colony.pid, 0);
          pinProcess(plain.pid, 0);
        }
        const wrk = { threads: 2, connections: 50, seconds: WRK_SECONDS, core: pinned ? 1 : undefined };
        // Warm-up: one pass fills the lookup cache (what a running colony's traffic does); the
        // cold pass is reported beside the steady state.
        const cold = await runWrk({ ...wrk, seconds: Math.max(2, WRK_SECONDS / 2), url: colony.url, script });
        const plainRun = await runWrk({ ...wrk, url: `${plain.url}/x` });
        const plainCycling = await runWrk({ ...wrk, url: plain.url, script: plainScript });
        const cycling = await runWrk({ ...wrk, url: colony.url, script });
        const hot = await runWrk({ ...wrk, url: `${colony.url}/v1/trails/by-fingerprint/${fps[0]}` });
        // The colony's own trivial route through Elysia: the cost of its request layer there.
        const healthz = await runWrk({ ...wrk, url: `${colony.url}/healthz` });
        const plainAgain = await runWrk({ ...wrk, url: `${plain.url}/x` });
        const ceiling = Math.max(plainRun.requestsPerSec, plainAgain.requestsPerSec, plainCycling.requestsPerSec);
        const row = (name: string, r: typeof plainRun) =>
          log(
            `  ${name.padEnd(48)} ${f1(r.requestsPerSec).padStart(10)} req/s  p50 ${f2(r.p50Ms)} ms  p99 ${f2(r.p99Ms)} ms` +
              `${r.non2xx ? `  non-2xx ${r.non2xx}` : ""}${r.socketErrors ? `  ${r.socketErrors}` : ""}`,
          );
        log(
          `lookups at ${indexed} indexed trails, wrk -t2 -c50 -d${WRK_SECONDS}s` +
            (pinned ? ", servers pinned to core 0 and wrk to core 1:" : " (not pinned: taskset or a second core missing):"),
        );
        row("plain Elysia route (before)", plainRun);
        row(`plain Elysia route, cycling script`, plainCycling);
        row(`by-fingerprint, cycling ${fps.length}, cold cache`, cold);
        row(`by-fingerprint, cycling ${fps.length} fingerprints`, cycling);
        row("by-fingerprint, one hot fingerprint", hot);
        row("colony GET /healthz (through Elysia)", healthz);
        row("plain Elysia route (after)", plainAgain);
        const ratio = cycling.requestsPerSec / ceiling;
        const met = ratio >= 0.5 && cycling.p99Ms < 10;
        log(`  cycling lookups = ${f2(ratio)} x the best plain run; target >= 0.5 x and p99 < 10 ms: ${verdict(met)}`);
        figures.set("lookups", {
          indexed_trails: indexed,
          fingerprints: fps.length,
          pinned,
          plain_before: plainRun,
          plain_cycling: plainCycling,
          cold,
          cycling,
          hot,
          healthz,
          plain_after: plainAgain,
          ratio_to_plain: ratio,
          hot_ratio_to_plain: hot.requestsPerSec / ceiling,
          met,
        });
      } finally {
        await plain.stop();
      }
    }
    const rss = await colony.rss();
    log(`colony RSS at the end: ${f1(rss / 1e6)} MB`);
    figures.set("colony_rss_mb", rss / 1e6);
  } finally {
    await colony.stop();
  }
} finally {
  removeDir(dir);
}
figures.write();

async function queueDepth(url: string): Promise<number> {
  const body = (await (await fetch(`${url}/readyz`)).json()) as { queue_depth: number };
  return body.queue_depth;
}

async function waitIdle(url: string, intervalMs = 20): Promise<void> {
  const deadline = Date.now() + 600_000;
  while ((await queueDepth(url)) > 0) {
    if (Date.now() > deadline) throw new Error("queue did not drain");
    await Bun.sleep(intervalMs);
  }
}

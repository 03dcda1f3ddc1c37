// Whether enrichment serializes on the lexical index writers' lock on PostgreSQL (bench/RESULTS.md,
// session 18): two replicas in this process (each with its worker and the embedded model) on one
// throwaway server with durable commits; C clients publish N distinct trails, alternating between
// the replicas, and a sampler reads pg_locks every ~2 ms until the queue is empty: the share of
// samples in which a transaction holds the lock, and in which another waits for it.
// BENCH_LEXICAL_LOCK_CLIENTS (default 8,16), BENCH_LEXICAL_LOCK_TRAILS (default 320; --quick 64).
//   node_modules/.bin/bun bench/run.ts --only lexical-lock [--quick]
import { SQL } from "bun";
import { readFileSync, rmSync } from "node:fs";
import type { RunningColony } from "../src/serve";
import { startQuietColony, tempDir } from "../test/support/colony";
import { postgresUnavailable, startPostgres } from "../test/support/postgres";
import { agentAt, json, sampleTrail } from "../test/support/trails";
import { log, QUICK } from "./lib/report";

const CLIENTS = (process.env.BENCH_LEXICAL_LOCK_CLIENTS ?? "8,16").split(",").map(Number);
const N = Number(process.env.BENCH_LEXICAL_LOCK_TRAILS ?? (QUICK ? 64 : 320));
/** The index writers' advisory lock (src/store/postgres/lexical.ts LEXICAL_WRITERS). */
const LEX = 0x636f6c6c6578;
const unavailable = postgresUnavailable();
if (unavailable) {
  log(`lexical-lock benchmark skipped: ${unavailable}`);
  process.exit(0);
}
const server = await startPostgres({ settings: { fsync: "on", synchronous_commit: "on", full_page_writes: "on" } });
let run = 0;
try {
  for (const clients of CLIENTS) {
    const url = await server.createDatabase();
    const dirs = [tempDir("lexlock-"), tempDir("lexlock-")];
    const env = {
      COLONY_DATABASE_URL: url,
      COLONY_TRUST_PROXY: "1",
      COLONY_RATE_LIMIT: "1000000",
      COLONY_PUBLISH_LIMIT: "1000000",
      COLONY_MAX_QUEUE: "100000",
    };
    const replicas: RunningColony[] = [];
    for (const d of dirs) replicas.push(await startQuietColony({ ...env, COLONY_DATA_DIR: d }));
    const watcher = new SQL(url, { max: 1 });
    let samples = 0,
      held = 0,
      waited = 0,
      waiters = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [r] = await watcher`SELECT count(*) FILTER (WHERE granted)::int AS held, count(*) FILTER (WHERE NOT granted)::int AS waiting
          FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND classid = ${Math.floor(LEX / 2 ** 32)} AND objid = ${LEX % 2 ** 32}`;
        samples++;
        if (r.held > 0) held++;
        if (r.waiting > 0) waited++;
        waiters += r.waiting;
        await Bun.sleep(2);
      }
    })();
    run++;
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        while (next < N) {
          const i = next++;
          const res = await fetch(
            replicas[i % 2]!.url + "/v1/trails",
            json(
              sampleTrail({
                error: `KeyError: 'lexlock_${run}_${i}_${c}' in settings module ${i}`,
                commands: [`pip install lexlock-${run}-${i}`],
              }),
              agentAt(`lexlock-${i}`),
            ),
          );
          if (res.status !== 202) throw new Error(`publish ${res.status} ${await res.text()}`);
        }
      }),
    );
    const published = performance.now() - t0;
    for (;;) {
      const [{ n }] = await watcher`SELECT count(*)::int AS n FROM jobs`;
      if (n === 0) break;
      await Bun.sleep(20);
    }
    const total = performance.now() - t0;
    sampling = false;
    await sampler;
    const [{ indexed }] = await watcher`SELECT count(*)::int AS indexed FROM trails WHERE status = 'indexed'`;
    log(
      `${clients} clients, ${N} trails: published in ${(published / 1000).toFixed(2)} s, all enriched in ${(total / 1000).toFixed(2)} s (${indexed} indexed, ${(indexed / (total / 1000)).toFixed(0)}/s); lexical lock held in ${((100 * held) / samples).toFixed(1)}% of ${samples} samples, someone waiting for it in ${((100 * waited) / samples).toFixed(1)}% (mean waiters ${(waiters / samples).toFixed(2)}); load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
    );
    await watcher.close();
    for (const r of replicas) await r.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
} finally {
  await server.stop();
}

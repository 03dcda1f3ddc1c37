// What request metrics cost on the hottest route: cached fingerprint lookups (wrk -t2 -c50) against
// two colonies on the same data, one with metrics off (no COLONY_ADMIN_TOKEN) and one with them on
// (a token: the Prometheus adapter counts every request). The runs are interleaved A/B/A/B… so a
// machine shared with other work loads both sides alike; the medians are compared.
//   node_modules/.bin/bun bench/metrics-overhead.bench.ts [--quick]
import { cpSync } from "node:fs";
import { sampleTrail } from "../test/support/trails";
import { benchDir, inProcessColony, removeDir, seedTrails, spawnColony } from "./lib/colony";
import { canPin, hasWrk, pinProcess, runWrk } from "./lib/wrk";

const quick = process.env.BENCH_QUICK === "1" || process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 6;
const SECONDS = quick ? 2 : 5;
const log = (s: string) => console.log(s);

if (!hasWrk()) {
  log("wrk not installed (apt-get install wrk): metrics overhead skipped");
  process.exit(0);
}

const seedDir = benchDir();
const seeding = await inProcessColony(seedDir);
await seedTrails(seeding, [sampleTrail()]);
const fp = (
  await seeding.service.search.search(
    { query: sampleTrail().problem.error },
    { agent: "bench-seeder", address: "127.0.0.1", agentDeclared: true, client: "anon-bench" },
  )
).fingerprint;
await seeding.stop();
const otherDir = benchDir();
cpSync(seedDir, otherDir, { recursive: true });

const off = await spawnColony(seedDir);
const on = await spawnColony(otherDir, { COLONY_ADMIN_TOKEN: "bench-operator-token-0123456789" });
const pinned = canPin();
if (pinned) for (const p of [off, on]) pinProcess(p.pid, 0);
const wrk = { threads: 2, connections: 50, seconds: SECONDS, core: pinned ? 1 : undefined };
const path = `/v1/trails/by-fingerprint/${fp}`;
try {
  for (const c of [off, on]) await runWrk({ ...wrk, seconds: 1, url: c.url + path }); // warm the caches and the JIT
  const rates = { off: [] as number[], on: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which side goes first, so neither always follows the other.
    const order = i % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
    for (const side of order) {
      const r = await runWrk({ ...wrk, url: (side === "off" ? off : on).url + path });
      if (r.non2xx > 0) throw new Error(`${side}: ${r.non2xx} answers were not 200`);
      rates[side].push(r.requestsPerSec);
      log(`  round ${i + 1} metrics ${side}: ${Math.round(r.requestsPerSec)} req/s, p99 ${r.p99Ms} ms`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const mOff = median(rates.off);
  const mOn = median(rates.on);
  // Each round's two runs are back to back: their ratio is less exposed to load that comes and goes.
  const paired = median(rates.on.map((r, i) => r / rates.off[i]!));
  const metrics = await (await fetch(`${on.url}/metrics`, { headers: { authorization: "Bearer bench-operator-token-0123456789" } })).text();
  const counted = /colony_http_requests_total\{method="GET",route="\/v1\/trails\/by-fingerprint\/:fp",status="200"\} (\d+)/.exec(
    metrics,
  )?.[1];
  log(
    `cached lookups, wrk -t2 -c50 -d${SECONDS}s × ${ROUNDS} interleaved rounds${pinned ? " (colonies on core 0, wrk on core 1)" : ""}: ` +
      `median ${Math.round(mOff)} req/s with metrics off, ${Math.round(mOn)} req/s on = ${((mOn / mOff - 1) * 100).toFixed(1)} % ` +
      `; median of the per-round ratios on/off ${paired.toFixed(3)} (the on side counted ${counted} lookups)`,
  );
} finally {
  await off.stop();
  await on.stop();
  removeDir(seedDir);
  removeDir(otherDir);
}

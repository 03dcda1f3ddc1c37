// The fingerprint-lookup cache and a colony at rest, at 5,000 trails (bench15, an A/B across the
// session's changes; the same file runs in both trees):
//   1. seeds TRAILS synthesized trails in-process (publish + drain), then closes;
//   2. a colony process on that data: its RSS at rest (5 s after /readyz), cached lookups over HTTP
//      by current fingerprints (one client; p50/p99 and the colony's CPU a lookup, from /proc) and
//      its RSS once every answer is cached;
//   3. in-process, a fresh FingerprintLookups over the same data: the heap each cached answer holds
//      (Bun.gc(true), heapUsed) and what the cache counts against its budget, for answers asked by
//      current fingerprints and by the older normalizers' fingerprints (read through aliases); the
//      in-process latency of a cached answer.
// Run: node_modules/.bin/bun bench/lookup-cache.bench.ts [--trails 5000]
import { heapStats } from "bun:jsc";
import { fingerprint, olderFingerprints } from "../src/core/fingerprint";
import { FingerprintLookups } from "../src/http/routes/lookup";
import { benchDir, inProcessColony, removeDir, seedTrails, spawnColony } from "./lib/colony";
import { synthesizedTrails } from "./lib/corpus";
import { f1, f2, flag, log, percentile, REPO_DIR } from "./lib/report";

const TRAILS = Number(flag("--trails") ?? 5000);
const HTTP_ROUNDS = 4;

const ticksOf = async (pid: number) => {
  const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
};
const rssMb = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await Bun.file(`/proc/${pid}/status`).text())?.[1] ?? 0) / 1024;
const heapUsed = () => {
  Bun.gc(true);
  return heapStats().heapSize;
};

const dir = benchDir();
try {
  const seeding = await inProcessColony(dir);
  const trails = synthesizedTrails(REPO_DIR, TRAILS, 7, 0);
  const t0 = performance.now();
  await seedTrails(seeding, trails, { chunk: 5000 });
  log(`seeded ${trails.length} trails in ${f1((performance.now() - t0) / 1000)} s`);
  await seeding.stop();

  const current = new Set<string>();
  const older = new Set<string>();
  for (const t of trails) {
    const fp = fingerprint(t.problem.error);
    current.add(fp);
    for (const o of olderFingerprints(t.problem.error)) older.add(o);
  }
  const currentFps = [...current];
  const olderFps = [...older].filter((fp) => !current.has(fp));

  // 2. The colony process.
  const colony = await spawnColony(dir);
  await Bun.sleep(5000);
  const restMb = await rssMb(colony.pid);
  log(`colony RSS at rest, ${TRAILS} trails: ${f1(restMb)} MB`);
  const ms: number[] = [];
  let lookups = 0;
  let ticks = 0;
  for (let round = 0; round <= HTTP_ROUNDS; round++) {
    const c0 = await ticksOf(colony.pid);
    for (const fp of currentFps) {
      const a = performance.now();
      const res = await fetch(`${colony.url}/v1/trails/by-fingerprint/${fp}`);
      await res.arrayBuffer();
      if (round > 0) ms.push(performance.now() - a);
    }
    // Round 0 fills the cache.
    if (round > 0) {
      ticks += (await ticksOf(colony.pid)) - c0;
      lookups += currentFps.length;
    }
  }
  const fullMb = await rssMb(colony.pid);
  log(
    `cached lookups over HTTP (${currentFps.length} fingerprints x ${HTTP_ROUNDS}): p50 ${f2(percentile(ms, 50))} ms, p99 ${f2(percentile(ms, 99))} ms, ` +
      `colony CPU ${f2((ticks * 10_000) / lookups)} µs a lookup`,
  );
  log(`colony RSS with every answer cached: ${f1(fullMb)} MB`);
  await colony.stop();
  const { service, stop } = await inProcessColony(dir);

  // 3. In-process: heap and accounting per answer.
  for (const [what, fps] of [
    ["current fingerprints", currentFps],
    ["older normalizers' fingerprints (aliases)", olderFps],
  ] as const) {
    if (fps.length === 0) {
      log(`${what}: none`);
      continue;
    }
    const h0 = heapUsed();
    const cache = new FingerprintLookups(service);
    let found = 0;
    for (const fp of fps) if ((await cache.answer(fp, null)).status === 200) found++;
    const h1 = heapUsed();
    const counted = (cache as unknown as { bytes: number }).bytes;
    const reps = 20;
    const c0 = process.cpuUsage();
    const a = performance.now();
    for (let r = 0; r < reps; r++) for (const fp of fps) cache.answer(fp, null);
    const wallNs = ((performance.now() - a) * 1e6) / (reps * fps.length);
    const c = process.cpuUsage(c0);
    log(
      `${what}: ${fps.length} answers (${found} found); heap ${f1((h1 - h0) / fps.length)} B an answer, counted ${f1(counted / fps.length)} B; ` +
        `cached answer in-process ${f1(wallNs)} ns (CPU ${f1(((c.user + c.system) * 1000) / (reps * fps.length))} ns)`,
    );
    if (cache.answer(fps[0]!, null) instanceof Promise) log("  (not cached!)");
  }
  await stop();
} finally {
  removeDir(dir);
}

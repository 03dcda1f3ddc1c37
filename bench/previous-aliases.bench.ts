// What recording the previous normalizers' fingerprints as aliases costs (docs/fingerprint.md,
// "Aliases of the previous normalizers"):
//   1. CPU per error text of its current fingerprint alone and of every version's (what enrichment
//      and re-fingerprinting compute for a trail), and how many alias rows a trail gets, over the
//      external sets' real reports (test/fixtures/fingerprint-real-variants*.json; not the dev set)
//      and over the error lines of the distractor trails part 2 publishes.
//      Only in a tree that has the rule (trailFingerprints).
//   2. Publish -> indexed in-process, per store: TRAILS distractor trails published through the
//      service one after the other, then the queue drained; this process's CPU per trail (publish
//      and enrichment together: the worker runs beside the publishes) and the publish call's
//      latency. The same file runs in a tree without the rule, for an A/B.
// Run: node_modules/.bin/bun bench/previous-aliases.bench.ts [--quick] [--backend sqlite|postgres|both]
import { loadavg } from "node:os";
import { fingerprint } from "../src/core/fingerprint";
import type { Caller } from "../src/service/errors";
import { loadRealVariantSets } from "../test/support/real-variants";
import { type Backend, backendEnv, chosenBackends, stopBackends } from "./lib/backend";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { args, f1, f2, Figures, log, percentile, QUICK, REPO_DIR } from "./lib/report";

const TRAILS = QUICK ? 200 : 600;
const ROUNDS = QUICK ? 3 : 8;
const figures = new Figures("previous-aliases");
const result: Record<string, unknown> = {};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// 1. The computation alone.
const rule = (await import("../src/service/refingerprint")) as Record<string, unknown>;
const trailFingerprints = rule.trailFingerprints as ((error: string) => { current: string; previous: string[] }) | undefined;
const pool = distractorTrails(REPO_DIR, TRAILS + 50, 14);
const corpora: [string, string[]][] = [
  ["real reports", loadRealVariantSets().flatMap(({ set }) => set.groups.flatMap((g) => g.reports.map((r) => r.text)))],
  ["the error lines of the trails published below", pool.map((t) => t.problem.error)],
];
for (const [what, texts] of trailFingerprints ? corpora : []) {
  if (!trailFingerprints) break;
  for (const t of texts) trailFingerprints(t); // warm-up
  const current: number[] = [];
  const every: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ["current", "every"] : ["every", "current"];
    for (const which of order) {
      const c0 = cpuMs();
      for (const t of texts) which === "current" ? fingerprint(t) : trailFingerprints(t);
      (which === "current" ? current : every).push(((cpuMs() - c0) * 1000) / texts.length);
    }
  }
  const rows = texts.map((t) => trailFingerprints(t).previous.length);
  const histogram = new Map<number, number>();
  for (const n of rows) histogram.set(n, (histogram.get(n) ?? 0) + 1);
  Object.assign(result, {
    [`${what}: texts`]: texts.length,
    [`${what}: current_us`]: percentile(current, 50),
    [`${what}: every_version_us`]: percentile(every, 50),
    [`${what}: alias_rows_mean`]: rows.reduce((a, b) => a + b, 0) / rows.length,
  });
  log(
    `fingerprint of ${texts.length} texts (${what}), CPU per text, median of ${ROUNDS} rounds: current only ${f1(percentile(current, 50))} µs (${f1(Math.min(...current))}-${f1(Math.max(...current))}), every version ${f1(percentile(every, 50))} µs (${f1(Math.min(...every))}-${f1(Math.max(...every))})`,
  );
  log(
    `alias rows a trail gets (${what}): mean ${f2(result[`${what}: alias_rows_mean`] as number)}; ${[...histogram.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([n, c]) => `${n}: ${c}`)
      .join(", ")}`,
  );
}

// 2. Publish -> indexed.
const caller = (i: number): Caller => ({
  address: "127.0.0.1",
  client: `anon-bench-${i % 50}`,
  agent: `bench-agent-${i % 50}`,
  agentDeclared: true,
});
const backends: Backend[] = args.some((a) => a.startsWith("--backend")) ? chosenBackends() : ["sqlite", "postgres"];
for (const backend of backends) {
  const dir = benchDir("colony-bench-aliases-");
  const colony = await inProcessColony(dir, await backendEnv(backend));
  try {
    const trails = colony.service.trails;
    for (const [i, t] of pool.slice(0, 50).entries()) await trails.publish(t, caller(i)); // warm-up
    await colony.service.worker!.drain(600_000);
    const latencies: number[] = [];
    const c0 = cpuMs();
    const t0 = performance.now();
    for (const [i, t] of pool.slice(50).entries()) {
      const p0 = performance.now();
      await trails.publish(t, caller(i));
      latencies.push(performance.now() - p0);
    }
    await colony.service.worker!.drain(600_000);
    const wallS = (performance.now() - t0) / 1000;
    const cpuPerTrail = (cpuMs() - c0) / TRAILS;
    result[`${backend}_cpu_ms_per_trail`] = cpuPerTrail;
    result[`${backend}_trails_per_s`] = TRAILS / wallS;
    result[`${backend}_publish_p50_ms`] = percentile(latencies, 50);
    log(
      `${backend}: ${TRAILS} trails published then drained in ${f2(wallS)} s (${f1(TRAILS / wallS)} trails/s); CPU ${f2(cpuPerTrail)} ms a trail (publish + enrichment, this process); publish call p50 ${f2(percentile(latencies, 50))} ms, p99 ${f2(percentile(latencies, 99))} ms`,
    );
  } finally {
    await colony.stop();
    removeDir(dir);
  }
}
await stopBackends();
result.load_average = loadavg()
  .map((x) => x.toFixed(2))
  .join(" ");
log(`load average ${result.load_average}`);
for (const [k, v] of Object.entries(result)) figures.set(k, v);
figures.write();

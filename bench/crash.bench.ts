// Crash safety, full run: ≥ 20 rounds of SIGKILL at seeded random moments under a mixed workload,
// then SIGTERM in the middle of a burst. Prints rounds survived, operations acknowledged and
// anything lost (must be 0); exits 1 when anything was lost or an invariant broke.
//   bun bench/crash.bench.ts [--rounds N] [--seed S] [--clients C] [--source] [--quick: 3 rounds]
import { runCrashHarness, sigtermBurst } from "../test/support/crash-harness";

const args = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const mode = args.includes("--source") ? "source" : "binary";
const quick = args.includes("--quick") || process.env.BENCH_QUICK === "1";
const rounds = opt("rounds", quick ? 3 : 20);
const seed = opt("seed", 20261121);

const t0 = performance.now();
const report = await runCrashHarness({
  rounds,
  seed,
  clients: opt("clients", 8),
  minRunMs: 200,
  maxRunMs: 3000,
  mode,
  log: (l) => console.log(l),
});
const s = ((performance.now() - t0) / 1000).toFixed(1);
const acked = Object.entries(report.acknowledged)
  .filter(([k]) => k !== "searches")
  .reduce((a, [, v]) => a + v, 0);
console.log(
  `\nSIGKILL rounds survived: ${report.rounds - new Set(report.lost.map((l) => l.split(":")[0])).size}/${report.rounds} (seed ${seed}, ${s} s)`,
);
console.log(`requests sent: ${report.sent}; writes acknowledged: ${acked} ${JSON.stringify(report.acknowledged)}`);
console.log(`final store: ${JSON.stringify(report.final)}`);
console.log(`lost: ${report.lost.length}`);
for (const l of report.lost.slice(0, 20)) console.log(`  LOST ${l}`);
console.log(`violations: ${report.violations.length}`);
for (const v of report.violations.slice(0, 20)) console.log(`  ${v}`);

const term = await sigtermBurst({ clients: 32, seed, mode });
console.log(`\nSIGTERM mid-burst: ${JSON.stringify({ ...term, improper: term.improper.length })}`);
for (const i of term.improper.slice(0, 10)) console.log(`  improper: ${i}`);
const termOk = term.exitCode === 0 && term.improper.length === 0 && term.failedBefore === 0 && term.finalAfterRestart === term.acknowledged;
console.log(`SIGTERM: ${termOk ? "ok" : "FAILED"}`);
process.exit(report.lost.length === 0 && report.violations.length === 0 && termOk ? 0 : 1);

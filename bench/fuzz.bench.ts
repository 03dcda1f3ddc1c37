// Hostile input, full run: ≥ 100,000 seeded fuzz requests over every route against the built
// binary (its own process), then health, integrity and a normal publish and search.
//   bun bench/fuzz.bench.ts [--requests N] [--seed S] [--concurrency C] [--source] [--quick: 5,000 requests]
import { rmSync } from "node:fs";
import { ColonyProcess, UNLIMITED_ENV } from "../test/support/colony-process";
import { tempDir } from "../test/support/colony";
import { afterFuzzHealth, runFuzz } from "../test/support/fuzz";

const args = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const quick = args.includes("--quick") || process.env.BENCH_QUICK === "1";
const requests = opt("requests", quick ? 5_000 : 100_000);
const seed = opt("seed", 20261121);
const dataDir = tempDir("colony-fuzz-");
const colony = await ColonyProcess.create({
  dataDir,
  mode: args.includes("--source") ? "source" : "binary",
  env: { ...UNLIMITED_ENV, COLONY_ADMIN_TOKEN: "fuzz-operator-token-1234" },
});
await colony.start();
let failed = true;
try {
  const r = await runFuzz(colony, { requests, seed, concurrency: opt("concurrency", 16), log: (l) => console.log(l) });
  const after = await afterFuzzHealth(colony, dataDir);
  const errorLines = colony.stderr.split("\n").filter((l) => /"level":"error"/.test(l));
  console.log(`\nfuzz: ${r.requests} requests in ${r.seconds.toFixed(1)} s (seed ${seed}), ${(r.requests / r.seconds).toFixed(0)}/s`);
  console.log(`statuses: ${JSON.stringify(r.byStatus)}`);
  console.log(`cases: ${JSON.stringify(r.byKind)}`);
  console.log(
    `5xx: ${r.serverErrors.length}; bad error shapes: ${r.badShapes.length}; missing RateLimit headers: ${r.missingRateLimit.length}`,
  );
  console.log(
    `failed expectations: ${r.failedExpectations.length}; connections dropped without answer: ${r.transportFailures.length}; rejected by Bun's HTTP parser: ${r.parserRejections} ${JSON.stringify(r.parserStatuses)}`,
  );
  console.log(
    `error lines logged: ${errorLines.length}; after the fuzz: ${after.length === 0 ? "alive, integrity ok, publish and search work" : after.join("; ")}`,
  );
  for (const list of [r.serverErrors, r.badShapes, r.missingRateLimit, r.failedExpectations, r.transportFailures, errorLines])
    for (const l of list.slice(0, 10)) console.log(`  ${l.slice(0, 400)}`);
  failed =
    r.serverErrors.length +
      r.badShapes.length +
      r.missingRateLimit.length +
      r.failedExpectations.length +
      r.transportFailures.length +
      after.length +
      errorLines.length >
    0;
} finally {
  await colony.stop("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

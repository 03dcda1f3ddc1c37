// CPU cost of the error normalizer, per version, on every text of the retrieval dev set (error
// lines and queries: one-line errors, pasted tracebacks and CI logs). The versions run interleaved,
// round after round, and CPU time of this process is measured (not wall time), so other load on
// the machine shifts all versions alike. The normalizer runs on every publish, lookup and search.
// Run: node_modules/.bin/bun bench/normalizer.bench.ts [--quick]
import { loadavg } from "node:os";
import { NORMALIZER_VERSIONS, normalizeError } from "../src/core/fingerprint";
import { loadDevset } from "../test/support/devset";
import { f1, Figures, log, percentile, QUICK } from "./lib/report";

const figures = new Figures("normalizer");
const devset = loadDevset();
const texts = devset.cases.flatMap((c) => [c.error_line, ...c.queries.map((q) => q.text)]);
const rounds = QUICK ? 4 : 12;
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

for (const v of NORMALIZER_VERSIONS) for (const t of texts) normalizeError(t, v); // warm-up
const perText = new Map<number, number[]>(NORMALIZER_VERSIONS.map((v) => [v, []]));
for (let round = 0; round < rounds; round++) {
  // Alternate the order each round, so no version always runs first.
  const order = round % 2 === 0 ? [...NORMALIZER_VERSIONS] : [...NORMALIZER_VERSIONS].reverse();
  for (const v of order) {
    const c0 = cpuMs();
    for (const t of texts) normalizeError(t, v);
    perText.get(v)!.push(((cpuMs() - c0) * 1000) / texts.length);
  }
}
const load = loadavg()
  .map((x) => x.toFixed(2))
  .join(" ");
const result: Record<string, unknown> = { texts: texts.length, rounds, load_average: load };
for (const v of NORMALIZER_VERSIONS) {
  const xs = perText.get(v)!;
  result[`v${v}_us_median`] = percentile(xs, 50);
  log(
    `normalizer ${v}: ${f1(percentile(xs, 50))} µs CPU per text, median of ${rounds} rounds (min ${f1(Math.min(...xs))}, max ${f1(Math.max(...xs))}), redaction included`,
  );
}
log(`${texts.length} texts of eval/devset.json; load average ${load}`);

// Hostile texts at the query limit (2,000 characters): long runs of blanks and punctuation, which
// made regexes that start with a run of blanks quadratic (src/core/fingerprint.test.ts).
const hostile = [`Error: x${" ".repeat(1990)}y`, `Error: x${"\t".repeat(1990)}y`, `x${" ".repeat(1990)})y`, `E: ${". ".repeat(995)}y`];
for (const v of NORMALIZER_VERSIONS) {
  const c0 = cpuMs();
  for (let i = 0; i < 5; i++) for (const t of hostile) normalizeError(t, v);
  const ms = (cpuMs() - c0) / (5 * hostile.length);
  result[`v${v}_hostile_ms`] = ms;
  log(`normalizer ${v}: ${ms.toFixed(2)} ms CPU per hostile 2,000-character text (runs of blanks)`);
}
figures.set("normalizer", result);
figures.write();

// Tuning aid (issue 16): the tune split's variants whose fingerprint differs from their case's
// error line, with both normal forms, grouped by miss class. Only the tune split is printed: the
// holdout split is for reporting, never for reading. Last, the same-fingerprint rate over all tune
// variants and over those of relation `same`. Run: bun bench/fingerprint-misses.ts [CLASS]
import { normalizeError } from "../src/core/fingerprint";
import { loadDevset } from "../test/support/devset";

const only = process.argv[2];
const devset = loadDevset();
let n = 0;
let misses = 0;
// Variants issue 16 defines (relation=same: the same error, different surroundings) and how many
// share their case's fingerprint, as bench/devset.bench.ts counts them, tune split only.
let sameN = 0;
let sameJoined = 0;
for (const c of devset.cases.filter((c) => c.split === "tune")) {
  const base = normalizeError(c.error_line);
  for (const q of c.queries.filter((q) => q.kind === "variant")) {
    n++;
    const got = normalizeError(q.text);
    if (q.relation === "same") {
      sameN++;
      if (got === base) sameJoined++;
    }
    if (got === base) continue;
    misses++;
    if (only && !(q.classes ?? []).includes(only)) continue;
    console.log(`--- ${c.id} [${(q.classes ?? []).join(",")}]${q.derived ? ` derived=${q.derived}` : ""}`);
    console.log(`  CASE: ${base}`);
    console.log(`  VAR:  ${got}`);
  }
}
console.log(`tune variants: ${n}, same fingerprint ${n - misses} (${((n - misses) / n).toFixed(3)}), misses ${misses}`);
console.log(
  `tune variants of relation same (issue 16's definition): ${sameN}, same fingerprint ${sameJoined} (${(sameJoined / sameN).toFixed(3)})`,
);

// Tuning aid (issue 16): the tune split's variants whose fingerprint differs from their case's
// error line, with both normal forms, grouped by miss class. Only the tune split is printed: the
// holdout split is for reporting, never for reading. Run: bun bench/fingerprint-misses.ts [CLASS]
import { normalizeError } from "../src/core/fingerprint";
import { loadDevset } from "../test/support/devset";

const only = process.argv[2];
const devset = loadDevset();
let n = 0;
let misses = 0;
for (const c of devset.cases.filter((c) => c.split === "tune")) {
  const base = normalizeError(c.error_line);
  for (const q of c.queries.filter((q) => q.kind === "variant")) {
    n++;
    const got = normalizeError(q.text);
    if (got === base) continue;
    misses++;
    if (only && !(q.classes ?? []).includes(only)) continue;
    console.log(`--- ${c.id} [${(q.classes ?? []).join(",")}]${q.derived ? ` derived=${q.derived}` : ""}`);
    console.log(`  CASE: ${base}`);
    console.log(`  VAR:  ${got}`);
  }
}
console.log(`tune variants: ${n}, same fingerprint ${n - misses} (${((n - misses) / n).toFixed(3)}), misses ${misses}`);

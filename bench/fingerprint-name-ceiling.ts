// Diagnostic (issue 16): of the dev set's variants whose fingerprint differs from their case's, how
// many become equal once every identifier-like word (dotted, slashed, with @, _, - or digits, a
// quoted word, a <placeholder>) is masked in both normal forms, i.e. differ only by the names
// decisions §2 keeps. Aggregates per split only (no holdout query is printed): a bound on what
// folding names could ever add. Run: node_modules/.bin/bun bench/fingerprint-name-ceiling.ts
import { normalizeError } from "../src/core/fingerprint";
import { loadDevset, SPLITS } from "../test/support/devset";

const mask = (s: string) =>
  s
    .split(/\s+/)
    .map((w) => (/[./@_\d<>-]/.test(w) || /^['"`‘].*['"`’]$/.test(w) ? "<x>" : w))
    .join(" ")
    .replace(/(<x> ?)+/g, "<x> ");

const devset = loadDevset();
for (const split of SPLITS) {
  let variants = 0;
  let misses = 0;
  let onlyNames = 0;
  for (const c of devset.cases.filter((c) => c.split === split)) {
    const base = normalizeError(c.error_line);
    for (const q of c.queries.filter((q) => q.kind === "variant")) {
      variants++;
      const v = normalizeError(q.text);
      if (v === base) continue;
      misses++;
      if (mask(v) === mask(base)) onlyNames++;
    }
  }
  const same = variants - misses;
  console.log(
    `${split}: ${variants} variants, same fingerprint ${same} (${(same / variants).toFixed(3)}); of ${misses} misses ${onlyNames} differ only by identifier-like words; folding every name would give at most ${((same + onlyNames) / variants).toFixed(3)}`,
  );
}

// What reading names by one rule costs a search (session 18, mcp18): environmentOverlap, which a
// search runs once per candidate trail, now reads runtime, arch and package names through
// foldedName (NFKC, invisible characters dropped) where it trimmed and lowercased them. The same
// loops with the session 17 reading (`trim().toLowerCase()`) run beside it for comparison.
// `node_modules/.bin/bun bench/name-fold.bench.ts`
import { foldedName } from "../src/core/folded-name";
import { environmentOverlap } from "../src/core/overlap";

const packages = (prefix: string) => Array.from({ length: 100 }, (_, i) => ({ name: `${prefix}package-name-${i}`, version: "1.0.0" }));
const hundred = { os: "linux" as const, arch: "amd64", runtime: { name: "Python", version: "3.11" }, packages: packages("") };
const otherHundred = { os: "linux" as const, arch: "x86_64", runtime: { name: "python3", version: "3.12" }, packages: packages("x") };
const usual = { os: "linux" as const, arch: "x86_64", runtime: { name: "python", version: "3.11" }, packages: [{ name: "pyyaml" }] };
const wide = {
  os: "linux" as const,
  arch: "ｘ８６＿６４",
  runtime: { name: "ｐｙｔｈｏｎ", version: "3.11" },
  packages: [{ name: "ｐｙｙａｍｌ" }],
};

/** The fastest and the median of 7 rounds of `n` calls, in µs per call. */
function timed(n: number, fn: () => unknown): string {
  const times: number[] = [];
  for (let round = 0; round < 7; round++) {
    const started = performance.now();
    for (let i = 0; i < n; i++) fn();
    times.push(((performance.now() - started) * 1000) / n);
  }
  times.sort((a, b) => a - b);
  return `min ${times[0]!.toFixed(3)} µs, median ${times[3]!.toFixed(3)} µs`;
}

console.log(
  "environmentOverlap, 100 packages each side:",
  timed(3000, () => environmentOverlap(hundred, otherHundred)),
);
console.log(
  "environmentOverlap, a usual query (1 package):",
  timed(300_000, () => environmentOverlap(usual, usual)),
);
console.log(
  "environmentOverlap, fullwidth names:",
  timed(300_000, () => environmentOverlap(wide, usual)),
);
const names = ["python", " Node.js ", "x86_64", "@types/node", "PyYAML"];
console.log(
  "foldedName, 5 ASCII names:",
  timed(300_000, () => names.map(foldedName)),
);
console.log(
  "trim + lower case (session 17), the same 5:",
  timed(300_000, () => names.map((n) => n.trim().toLowerCase())),
);
const wideNames = ["ｐｙｔｈｏｎ", "𝐧𝐨𝐝𝐞", "py\u200bthon", "ＰｙＹＡＭＬ", "ｘ８６＿６４"];
console.log(
  "foldedName, 5 non-ASCII names:",
  timed(300_000, () => wideNames.map(foldedName)),
);

// What reading names by one rule costs a search (session 18, mcp18): environmentOverlap, which a
// search runs once per candidate trail (up to 60), now reads runtime and arch names through
// foldedName (NFKC, invisible characters dropped, remembered) where it trimmed and lowercased them;
// package names are read as before. The session 17 reading (`trim().toLowerCase()`) runs beside it.
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
let fresh = 0;
console.log(
  "foldedName, 5 non-ASCII names never seen before (folded, not remembered yet):",
  timed(30_000, () => wideNames.map((n) => foldedName(`${n}${fresh++}`))),
);
// A hostile search's shape: 100 names of 200 × U+FDFA (18-fold under NFKC) and runtime and arch
// of 40, against 60 candidates holding the same; every name new each round (nothing remembered).
let salt = 0;
const hostile = () => {
  const s = `${salt++}`;
  return {
    os: "linux" as const,
    arch: `${"\ufdfa".repeat(36)}${s}`,
    runtime: { name: `${"\ufdfa".repeat(36)}${s}`, version: "3" },
    packages: Array.from({ length: 100 }, (_, i) => ({ name: `${"\ufdfa".repeat(190)}${s}-${i}` })),
  };
};
const searchMs: number[] = [];
for (let round = 0; round < 7; round++) {
  const query = hostile();
  const candidates = Array.from({ length: 60 }, hostile);
  const since = process.cpuUsage();
  for (const candidate of candidates) environmentOverlap(query, candidate);
  const { user, system } = process.cpuUsage(since);
  searchMs.push((user + system) / 1000);
}
searchMs.sort((a, b) => a - b);
console.log(
  `a hostile search's 60 overlaps, every name new: min ${searchMs[0]!.toFixed(1)} ms, median ${searchMs[3]!.toFixed(1)} ms of CPU`,
);

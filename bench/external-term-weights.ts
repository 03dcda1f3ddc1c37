// Counts, for every lexical token of the external fingerprint sets (test/fixtures/
// fingerprint-real-variants*.json: real reports, none from the dev set), how often it is stable
// within one error's reports (in at least half of a group's reports), varies within one, tells an
// apart pair of look-alike errors apart (in one of the two) or is shared by one. bench/rank-replay.py
// `--family external --external FILE` weighs the second stage's coverage by them (session 18,
// RESULTS.md: measured on tune, not adopted).
// Run: node_modules/.bin/bun bench/external-term-weights.ts OUT.json
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lexicalTokens } from "../src/core/lexical";

interface TokenCounts {
  stable: number;
  varies: number;
  apart: number;
  shared: number;
}
interface ExternalSet {
  groups: { reports: { text: string }[] }[];
  apart: { a: string; b: string }[];
}

const out = process.argv[2];
if (!out) throw new Error("usage: bun bench/external-term-weights.ts OUT.json");
const dir = join(import.meta.dir, "../test/fixtures");
const counts: Record<string, TokenCounts> = {};
const of = (w: string) => {
  counts[w] ??= { stable: 0, varies: 0, apart: 0, shared: 0 };
  return counts[w];
};
for (const file of readdirSync(dir).filter((f) => f.startsWith("fingerprint-real-variants"))) {
  const set = JSON.parse(readFileSync(join(dir, file), "utf8")) as ExternalSet;
  for (const group of set.groups) {
    const reports = group.reports.map((r) => new Set(lexicalTokens(r.text)));
    for (const w of new Set(reports.flatMap((r) => [...r]))) {
      const n = reports.filter((r) => r.has(w)).length;
      if (n * 2 >= reports.length) of(w).stable++;
      else of(w).varies++;
    }
  }
  for (const pair of set.apart) {
    const a = new Set(lexicalTokens(pair.a));
    const b = new Set(lexicalTokens(pair.b));
    for (const w of new Set([...a, ...b])) {
      if (a.has(w) && b.has(w)) of(w).shared++;
      else of(w).apart++;
    }
  }
}
writeFileSync(out, JSON.stringify(counts));
console.log(`${Object.keys(counts).length} tokens written to ${out}`);

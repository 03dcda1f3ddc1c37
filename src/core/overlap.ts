// Environment overlap (decisions §3): how much of a trail's environment the searcher shares, 0..1.
// os equal 0.3; arch equal 0.1; runtime name and major version equal 0.3 (name only 0.15);
// packages 0.3 × Jaccard of package names. A field missing on either side adds nothing.
// Refinements (docs/ranking-and-strength.md): arch and runtime names compare through aliases,
// package names case-insensitively, and Java's legacy "1.8" reads as major 8. Pure.
import { foldedName } from "./folded-name.ts";
import type { QueryEnvironment } from "./trail.ts";

/**
 * Any environment: a search or outcome QueryEnvironment, a Trail's environment, or a partial one.
 * (Structural, because every field may be missing on either side.)
 */
export interface OverlapEnvironment {
  os?: string;
  arch?: string;
  runtime?: { name?: string; version?: string };
  packages?: { name: string; version?: string }[];
}
export type EnvironmentInput = QueryEnvironment | OverlapEnvironment;

export const OVERLAP_WEIGHTS = { os: 0.3, arch: 0.1, runtime: 0.3, runtimeNameOnly: 0.15, packages: 0.3 } as const;

// Maps, not object literals: a caller's name such as "constructor" or "__proto__" must not find
// Object.prototype's members (a function, an object) where a string is expected.
const ARCH_ALIASES: ReadonlyMap<string, string> = new Map([
  ["amd64", "x86_64"],
  ["x64", "x86_64"],
  ["x86-64", "x86_64"],
  ["aarch64", "arm64"],
  ["armv8", "arm64"],
]);

/** amd64/x64 → x86_64, aarch64 → arm64; anything else as foldedName reads it. */
export function canonicalArch(arch: string): string {
  const a = foldedName(arch);
  return ARCH_ALIASES.get(a) ?? a;
}

const RUNTIME_ALIASES: ReadonlyMap<string, string> = new Map([
  ["nodejs", "node"],
  ["node.js", "node"],
  ["python3", "python"],
  ["cpython", "python"],
  ["golang", "go"],
  ["java", "jvm"],
  ["openjdk", "jvm"],
]);

/**
 * A runtime name as foldedName reads it (`ｐｙｔｈｏｎ`, `Python` and `py<U+200B>thon` are python),
 * with common aliases folded (nodejs → node, golang → go, java → jvm).
 */
export function canonicalRuntime(name: string): string {
  const n = foldedName(name);
  return RUNTIME_ALIASES.get(n) ?? n;
}

/**
 * The runtime name as a merge key reads it: trimmed and lowercased only, with the aliases. The
 * merge key of a stored trail (and of a tombstone) was made so; folding more here would change
 * the keys of stored trails with other forms.
 */
export function mergeKeyRuntime(name: string): string {
  const n = name.trim().toLowerCase();
  return RUNTIME_ALIASES.get(n) ?? n;
}

/** A trail's runtime as the feed's runtime filter finds it (the store's `runtime` column). */
export const runtimeColumn = (name: string): string => foldedName(name);

/**
 * Every spelling of the runtime `name` names, as the store's runtime column holds them: the
 * canonical name first, then its aliases (node, NodeJS, node.js → node, nodejs, node.js); last, the
 * name only lowercased, as rows stored before session 18 hold a name NFKC changes (`ｐｙｔｈｏｎ`).
 */
export function runtimeSpellings(name: string): string[] {
  const canonical = canonicalRuntime(name);
  const aliases = [...RUNTIME_ALIASES].filter(([, to]) => to === canonical).map(([alias]) => alias);
  const spellings = [canonical, ...aliases];
  const asStoredBefore = name.trim().toLowerCase();
  return spellings.includes(asStoredBefore) ? spellings : [...spellings, asStoredBefore];
}

/**
 * The major version: the first number in the version string ("3.11.4" → "3", "v18.17.0" → "18",
 * "go1.22" → "1"). For the JVM, the legacy "1.8.0_292" form means major 8. Undefined when the
 * version is missing or has no number.
 */
export function runtimeMajor(version: string | undefined, runtimeName?: string): string | undefined {
  if (version === undefined) return undefined;
  const m = /(\d+)(?:\.(\d+))?/.exec(version);
  if (!m) return undefined;
  const major = String(Number(m[1]));
  if (runtimeName !== undefined && canonicalRuntime(runtimeName) === "jvm" && major === "1" && m[2] !== undefined) {
    return String(Number(m[2]));
  }
  return major;
}

function packageNames(env: EnvironmentInput): Set<string> {
  const names = new Set<string>();
  for (const p of env?.packages ?? []) {
    // Not foldedName: no registry folds widths, so `ｌｏｄａｓｈ` names another package than lodash
    // (the risk rules flag it as a look-alike); and a query's 100 names against each candidate's 100
    // would be folded per candidate, up to 60 a search.
    const name = p.name.trim().toLowerCase();
    if (name !== "") names.add(name);
  }
  return names;
}

/** Jaccard index of two sets; 0 when either is empty (missing counts as no overlap). */
function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/** Environment overlap 0..1, rounded to 4 decimals. Symmetric. */
export function environmentOverlap(a: EnvironmentInput | undefined, b: EnvironmentInput | undefined): number {
  if (a === undefined || b === undefined) return 0;
  let score = 0;
  if (a.os !== undefined && b.os !== undefined && a.os === b.os) score += OVERLAP_WEIGHTS.os;
  if (a.arch && b.arch && canonicalArch(a.arch) === canonicalArch(b.arch)) score += OVERLAP_WEIGHTS.arch;
  const ra = a.runtime?.name;
  const rb = b.runtime?.name;
  if (ra && rb && canonicalRuntime(ra) === canonicalRuntime(rb)) {
    const ma = runtimeMajor(a.runtime?.version, ra);
    const mb = runtimeMajor(b.runtime?.version, rb);
    score += ma !== undefined && ma === mb ? OVERLAP_WEIGHTS.runtime : OVERLAP_WEIGHTS.runtimeNameOnly;
  }
  score += OVERLAP_WEIGHTS.packages * jaccard(packageNames(a), packageNames(b));
  return Math.min(1, Math.max(0, Math.round(score * 10000) / 10000));
}

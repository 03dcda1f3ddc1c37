// The retrieval dev set (eval/devset.json, issue 16): real public error reports with their fix,
// queries of three kinds, negatives and distractor pairs. Cases keep every field of the shared
// eval corpus (errors-dev.json), so code written for one reads the other; `asDevCases` lifts the
// shared corpus's single variant/paraphrase/related fields into the query list. eval/README.md
// describes the fields and how the set was gathered.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { EvalCase } from "./paths.ts";

export const DEVSET_FILE = join(resolve(import.meta.dir, "../.."), "eval/devset.json");

export const QUERY_KINDS = ["variant", "paraphrase", "related"] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];
export const SPLITS = ["tune", "holdout"] as const;
export type Split = (typeof SPLITS)[number];
/**
 * How a variant relates to its case's error line, judged by reading the two texts (eval/README.md,
 * Variant relations). Only `same` is "the same error, different surroundings" as issue 16 defines it;
 * `named` differs in a name decisions §2 keeps, so its fingerprint should differ. Ordered from the
 * mildest to the worst for fingerprint equality; an annotator picks the worst that applies.
 */
export const VARIANT_RELATIONS = ["same", "named", "fragment", "wording", "other_line"] as const;
export type VariantRelation = (typeof VARIANT_RELATIONS)[number];
export const ECOSYSTEMS = ["python", "node", "rust", "go", "java", "c_cpp", "docker", "kubernetes", "database", "package_manager"] as const;

export interface DevQuery {
  kind: QueryKind;
  text: string;
  /** Where the text was seen (an issue thread), the wrapper's documentation for derived variants, null for hand-written paraphrases. */
  source: string | null;
  /** The miss classes a variant exercises (logger_prefix, runner_prefix, wrapped_cause, windows_path, ...). */
  classes?: string[];
  /** Set when the variant was made by applying a documented wrapper (a key of DevSet.wrappers) to the real error line. */
  derived?: string;
  /** Variants only: how the text relates to the case's error line (VARIANT_RELATIONS). */
  relation?: VariantRelation;
  /** Variants only, optional: why that relation, when the choice was not obvious. */
  relation_note?: string;
  note?: string;
}

export interface DevCase extends EvalCase {
  split: Split;
  queries: DevQuery[];
}

export interface DevNegative {
  id: string;
  split: Split;
  ecosystem: string;
  text: string;
  source: string;
}

export interface DistractorPair {
  id: string;
  a: string;
  b: string;
  /** What tells the two errors apart: their class, their code, or only the message. */
  differ: "class" | "code" | "message";
  source_a: string;
  source_b: string;
}

export interface DevSet {
  about: string;
  version: number;
  wrappers: Record<string, { doc: string; how: string }>;
  cases: DevCase[];
  negatives: DevNegative[];
  distractors: DistractorPair[];
}

export function loadDevset(file = DEVSET_FILE): DevSet {
  return JSON.parse(readFileSync(file, "utf8")) as DevSet;
}

/** The external sets of real reports normalizer rules were written from (bench/fingerprint-real.ts). */
export const EXTERNAL_FINGERPRINT_SETS = [1, 2, 3].map((n) =>
  join(resolve(import.meta.dir, "../.."), `test/fixtures/fingerprint-real-variants${n === 1 ? "" : `-${n}`}.json`),
);

const allStrings = (v: unknown): string[] =>
  typeof v === "string"
    ? [v]
    : Array.isArray(v)
      ? v.flatMap(allStrings)
      : v !== null && typeof v === "object"
        ? Object.values(v).flatMap(allStrings)
        : [];

/**
 * Ids of the cases that share a report with an external set (the same issue-thread link, or the
 * same text of more than 30 characters, blanks folded): rules written from those sets have seen
 * them, so a figure on data not tuned on leaves them out. The third set (session 13) was gathered
 * from the same public threads as part of the holdout split, which a helper could not check.
 */
export function casesInExternalSets(cases: DevCase[], files = EXTERNAL_FINGERPRINT_SETS): Set<string> {
  const text = (t: string) => t.replace(/\s+/g, " ").trim().toLowerCase();
  const link = (t: string) => t.split("#")[0]!.replace(/\/+$/, "");
  const isLink = (t: string) => /^https?:\/\//.test(t);
  const links = new Set<string>();
  const texts = new Set<string>();
  for (const file of files) {
    for (const t of allStrings(JSON.parse(readFileSync(file, "utf8")))) {
      if (isLink(t)) links.add(link(t));
      else if (t.length > 30) texts.add(text(t));
    }
  }
  const seen = new Set<string>();
  for (const c of cases) {
    if (allStrings(c).some((t) => (isLink(t) ? links.has(link(t)) : t.length > 30 && texts.has(text(t))))) seen.add(c.id);
  }
  return seen;
}

/** The shared eval corpus in the dev set's shape (one query per kind, all in one split). */
export function asDevCases(cases: EvalCase[], split: Split): DevCase[] {
  return cases.map((c) => ({
    ...c,
    split,
    queries: QUERY_KINDS.flatMap((kind) => (c[kind] ? [{ kind, text: c[kind]!, source: c.source }] : [])),
  }));
}

/** Ids of the first release of the dev set (d001–d089, n001–n012): their split is frozen as v1 assigned it. */
export const V1_LAST_CASE = 89;
export const V1_LAST_NEGATIVE = 12;
const idNumber = (id: string) => Number.parseInt(id.slice(1), 10);

/**
 * The split each case and negative must have (eval/README.md, The split). v1 (the first 89 cases and 12
 * negatives): within each ecosystem, ids ordered by sha256("devset-split-v1:" + id), the first 60%
 * (rounded) tune. v2 (every later id): tune when the first 8 hex digits of sha256("devset-split-v2:" + id),
 * read as a number, are below 0.6 × 2^32. v2 depends on the id alone, so adding cases never moves an
 * existing one across the split (v1 is rank-based and would).
 */
export function expectedSplits(set: DevSet, sha256Hex: (s: string) => string): Map<string, Split> {
  const out = new Map<string, Split>();
  const v1 = (items: { id: string; ecosystem: string }[]) => {
    const byEco = new Map<string, string[]>();
    for (const x of items) byEco.set(x.ecosystem, [...(byEco.get(x.ecosystem) ?? []), x.id]);
    for (const ids of byEco.values()) {
      const ranked = [...ids].sort((a, b) => (sha256Hex(`devset-split-v1:${a}`) < sha256Hex(`devset-split-v1:${b}`) ? -1 : 1));
      const tune = Math.round(0.6 * ranked.length);
      ranked.forEach((id, i) => out.set(id, i < tune ? "tune" : "holdout"));
    }
  };
  const v2 = (id: string): Split =>
    Number.parseInt(sha256Hex(`devset-split-v2:${id}`).slice(0, 8), 16) < 0.6 * 2 ** 32 ? "tune" : "holdout";
  v1(set.cases.filter((c) => idNumber(c.id) <= V1_LAST_CASE));
  v1(set.negatives.filter((n) => idNumber(n.id) <= V1_LAST_NEGATIVE));
  for (const c of set.cases) if (idNumber(c.id) > V1_LAST_CASE) out.set(c.id, v2(c.id));
  for (const n of set.negatives) if (idNumber(n.id) > V1_LAST_NEGATIVE) out.set(n.id, v2(n.id));
  return out;
}

/**
 * Collisions across cases: pairs of error lines and variants of two cases whose error_type differs
 * that share a key (a fingerprint, a normal form). `pairs` counts every such pair of texts,
 * `collided` names the colliding cases ("d001=d042").
 */
export function crossCaseCollisions(cases: DevCase[], keyOf: (text: string) => string) {
  const lines = cases.flatMap((c) =>
    [c.error_line, ...c.queries.filter((q) => q.kind === "variant").map((q) => q.text)].map((text) => ({
      id: c.id,
      type: (c.error_type ?? "").toLowerCase(),
      key: keyOf(text),
    })),
  );
  let pairs = 0;
  let collisions = 0;
  const collided = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + 1; j < lines.length; j++) {
      const a = lines[i]!;
      const b = lines[j]!;
      if (a.id === b.id || a.type === b.type) continue;
      pairs++;
      if (a.key === b.key) {
        collisions++;
        collided.add([a.id, b.id].sort().join("="));
      }
    }
  }
  return { pairs, collisions, collided };
}

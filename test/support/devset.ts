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

/** The shared eval corpus in the dev set's shape (one query per kind, all in one split). */
export function asDevCases(cases: EvalCase[], split: Split): DevCase[] {
  return cases.map((c) => ({
    ...c,
    split,
    queries: QUERY_KINDS.flatMap((kind) => (c[kind] ? [{ kind, text: c[kind]!, source: c.source }] : [])),
  }));
}

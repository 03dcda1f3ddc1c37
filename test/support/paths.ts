// Where the tests find the repository and their data. Everything the suite needs ships in the
// project (test/fixtures, eval/devset.json): a public clone runs `make test` alone. The shared
// corpus (../shared/eval, linked as ./shared by `make bench`) is only for benchmarks and for
// checks that say they are optional.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO_DIR = resolve(import.meta.dir, "../..");

/** The shared data folder when it is present (COLONY_SHARED_DIR, ./shared or ../shared), else undefined. */
export const SHARED_DIR: string | undefined = [process.env.COLONY_SHARED_DIR, join(REPO_DIR, "shared"), join(REPO_DIR, "../shared")]
  .filter((dir): dir is string => !!dir)
  .map((dir) => resolve(dir))
  .find((dir) => existsSync(join(dir, "eval")));

/** The standard BERT uncased tokenizer files (test/fixtures/bert-base-uncased-vocab/README.md). */
export const BERT_VOCAB_DIR = join(REPO_DIR, "test/fixtures/bert-base-uncased-vocab");

/** The project's own eval cases: the retrieval dev set (eval/devset.json). */
const DEVSET_FILE = join(REPO_DIR, "eval/devset.json");

export interface EvalCase {
  id: string;
  ecosystem: string;
  runtime: string;
  os: string;
  error_line: string;
  error_type: string | null;
  root_cause: string;
  steps: string[];
  commands: string[];
  patches: { file_path: string; diff: string }[];
  source: string;
  variant: string;
  paraphrase: string;
  related: string | null;
  /** Every query of a dev set case (variants, paraphrases, related lines); absent in the shared corpus. */
  queries?: { kind: string; text: string }[];
}

export interface EvalCorpus {
  cases: EvalCase[];
  /** Real error lines unrelated to every case. */
  negatives: string[];
}

/** The cases the tests use, from eval/devset.json (shipped in the project). */
export function loadEval(): EvalCorpus {
  const devset = JSON.parse(readFileSync(DEVSET_FILE, "utf8")) as { cases: EvalCase[]; negatives: { text: string }[] };
  return { cases: devset.cases, negatives: devset.negatives.map((n) => n.text) };
}

/** The shared corpus (shared/eval/errors-dev.json): benchmarks and optional checks only. */
export function loadSharedEval(): EvalCorpus {
  if (SHARED_DIR === undefined) {
    throw new Error("shared data not found: the benchmarks need ../shared beside the checkout (or COLONY_SHARED_DIR)");
  }
  return JSON.parse(readFileSync(join(SHARED_DIR, "eval/errors-dev.json"), "utf8")) as EvalCorpus;
}

/**
 * Where a browser test writes a screenshot. The PostgreSQL and replica lanes run the same browser
 * tests beside the SQLite lanes, so their files carry the lane's name (two lanes never write one
 * file at once). docs/ copies (`docsCopy`) are refreshed on request only (COLONY_UPDATE_SCREENSHOTS=1)
 * and only by the SQLite run, so a test run never changes tracked files.
 */
export function screenshotPath(name: string, docsCopy = false): string {
  const backend = process.env.COLONY_TEST_BACKEND;
  const lane = backend === "postgres" || backend === "replicas" ? backend : undefined;
  if (docsCopy && lane === undefined && process.env.COLONY_UPDATE_SCREENSHOTS === "1") return join(REPO_DIR, "docs", name);
  return join(REPO_DIR, "test/artifacts", lane === undefined ? name : `${lane}-${name}`);
}

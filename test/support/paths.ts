// Where the tests find the repository and the shared data (../shared, linked as ./shared by make).
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO_DIR = resolve(import.meta.dir, "../..");

function findShared(): string {
  const candidates = [process.env.COLONY_SHARED_DIR, join(REPO_DIR, "shared"), join(REPO_DIR, "../shared")];
  for (const dir of candidates) if (dir && existsSync(join(dir, "eval"))) return resolve(dir);
  throw new Error("shared data not found: run `make test`, or set COLONY_SHARED_DIR to the shared/ folder");
}

export const SHARED_DIR = findShared();
export const EVAL_FILE = join(SHARED_DIR, "eval/errors-dev.json");
export const BERT_VOCAB_DIR = join(SHARED_DIR, "models/bert-base-uncased-vocab");

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
}

export function loadEval(): { cases: EvalCase[]; negatives: string[] } {
  return require(EVAL_FILE);
}

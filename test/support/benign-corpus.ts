// The benign corpus (test/fixtures/benign-error-text.json): ordinary error text, fixes, commands,
// diffs and configuration that no content rule may redact, refuse or flag. One loader for the tests
// that read it whole and those that read it line by line as commands.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "./paths.ts";

export const BENIGN_CORPUS_FILE = join(REPO_DIR, "test/fixtures/benign-error-text.json");

/** The corpus by group (`errors`, `fixes`, `commands`, `diffs`, `config`, …); non-list entries are notes. */
export function loadBenignCorpus(): Record<string, string[] | string> {
  return JSON.parse(readFileSync(BENIGN_CORPUS_FILE, "utf8")) as Record<string, string[] | string>;
}

/** Every line of every text of the corpus, as a risk rule would read one command. */
export function benignCorpusLines(): string[] {
  return Object.values(loadBenignCorpus())
    .flatMap((list) => (Array.isArray(list) ? list : []))
    .flatMap((text) => text.split("\n"));
}

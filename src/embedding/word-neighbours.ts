// The model's word neighbours (issue 16's vocabulary gaps): for a word of the static model's
// vocabulary, the other words whose vectors are nearest, so that a search's coverage counts a query
// word as found when the trail says its neighbour ("postgres" / "postgresql", "pushing" / "push").
// The table ships with the model (models/default/neighbours.txt, made by tools/model/neighbours.ts
// after the export) and holds only what the coverage reads: up to WORD_NEIGHBOURS_PER_WORD
// neighbours per word at cosine >= WORD_NEIGHBOURS_MIN_SIMILARITY, of the same kind (a prose word
// of letters only, or an identifier), words and neighbours written as lexical tokens.
//
// File format (UTF-8 text): a first line `# colony-neighbours-1 ...`, then one line per word with a
// neighbour, sorted: the word and its neighbours, most similar first, separated by single spaces
// (lexical tokens hold no spaces).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { WordNeighbours } from "../core/confidence";

export type { WordNeighbours } from "../core/confidence";

export const WORD_NEIGHBOURS_FILE = "neighbours.txt";
export const WORD_NEIGHBOURS_SPEC = "colony-neighbours-1";
export const WORD_NEIGHBOURS_MIN_SIMILARITY = 0.7;
export const WORD_NEIGHBOURS_PER_WORD = 3;

/** A model word as the lexical index writes it whole (core/lexical.ts `clean`). */
export const lexicalForm = (word: string) =>
  word
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_]+/gu, "_")
    .replace(/^_+|_+$/g, "");

const PROSE = /^[a-z]+$/;
/** Same kind: both prose words (letters only) or both identifiers. */
export const sameKind = (a: string, b: string) => PROSE.test(a) === PROSE.test(b);

/** The full table keyed and valued by lexical tokens: a neighbour's best cosine when two model words share a token, itself dropped; most similar first (ties by token). */
export function neighboursByToken(full: Record<string, [string, number][]>): Map<string, [string, number][]> {
  const table = new Map<string, Map<string, number>>();
  for (const [word, list] of Object.entries(full)) {
    const key = lexicalForm(word);
    if (!key) continue;
    const row = table.get(key) ?? new Map<string, number>();
    for (const [n, sim] of list) {
      const token = lexicalForm(n);
      if (!token || token === key) continue;
      row.set(token, Math.max(row.get(token) ?? 0, sim));
    }
    table.set(key, row);
  }
  return new Map([...table].map(([k, row]) => [k, [...row].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))]));
}

/**
 * The shipped table from the full one (tools/model/neighbour-table.ts: each model word's nearest words
 * with their cosines): words and neighbours as lexical tokens, a neighbour's best cosine when two
 * model words share a token, itself dropped; then, most similar first (ties by token), those at
 * the threshold and of the same kind, at most the per-word count. Words with none are left out.
 */
export function pruneWordNeighbours(full: Record<string, [string, number][]>): Map<string, string[]> {
  const table = neighboursByToken(full);
  const pruned = new Map<string, string[]>();
  for (const key of [...table.keys()].sort()) {
    const kept = table
      .get(key)!
      .filter(([n, sim]) => sim >= WORD_NEIGHBOURS_MIN_SIMILARITY && sameKind(key, n))
      .slice(0, WORD_NEIGHBOURS_PER_WORD)
      .map(([n]) => n);
    if (kept.length > 0) pruned.set(key, kept);
  }
  return pruned;
}

/** The file's text for a pruned table (deterministic: sorted words, one line each). */
export function formatWordNeighbours(table: ReadonlyMap<string, readonly string[]>): string {
  const header =
    `# ${WORD_NEIGHBOURS_SPEC} cosine>=${WORD_NEIGHBOURS_MIN_SIMILARITY} per-word<=${WORD_NEIGHBOURS_PER_WORD} same-kind` +
    " (word, then its neighbours; tools/model/neighbours.ts)";
  const lines = [...table.keys()].sort().map((w) => [w, ...table.get(w)!].join(" "));
  return `${header}\n${lines.join("\n")}\n`;
}

export function parseWordNeighbours(text: string, file = WORD_NEIGHBOURS_FILE): Map<string, string[]> {
  const lines = text.split("\n");
  if (!lines[0]?.startsWith(`# ${WORD_NEIGHBOURS_SPEC} `)) {
    throw new Error(`${file}: not a ${WORD_NEIGHBOURS_SPEC} word-neighbour table (first line ${JSON.stringify(lines[0]?.slice(0, 60))})`);
  }
  const table = new Map<string, string[]>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const [word, ...neighbours] = line.split(" ");
    if (!word || neighbours.length === 0) throw new Error(`${file}:${i + 1}: a word and its neighbours expected`);
    table.set(word, neighbours);
  }
  return table;
}

/**
 * The table of a static model directory whose manifest lists the file (readStaticManifest checked
 * that it is there at its recorded size); null for a model without one (a model brought by the
 * user, an older export): its searches count only the query's own words.
 */
export function loadWordNeighbours(dir: string, files: Record<string, unknown>): WordNeighbours | null {
  if (!(WORD_NEIGHBOURS_FILE in files)) return null;
  const file = join(dir, WORD_NEIGHBOURS_FILE);
  return parseWordNeighbours(readFileSync(file, "utf8"), file);
}

// How sure a search result is (issue 16): `strong`, `likely` or `weak`, from what the search saw.
// A fingerprint match is strong. A semantic match is rated from its cosine similarity to the query
// and its lexical coverage (the share of the query's distinct words found in the trail's error and
// root cause, a word also found through its neighbour in the model's word table). The thresholds
// were calibrated on the retrieval dev set's tune split and checked on its holdout split
// (bench/devset.bench.ts, docs/ranking-and-strength.md "Confidence"): `strong` is meant to be the
// right trail at least 95% of the time. Pure: no I/O.
import { lexicalTokens } from "./lexical";

export const CONFIDENCE_LEVELS = ["weak", "likely", "strong"] as const;
export type Confidence = (typeof CONFIDENCE_LEVELS)[number];

/**
 * The calibrated thresholds (docs/ranking-and-strength.md "Confidence" has the figures). Chosen on
 * the tune split: strong where semantic top results were right at least 97% of the time, likely
 * where most were right while at least 80% of unrelated queries' top results stay below it.
 */
export const CONFIDENCE_THRESHOLDS = {
  /** Strong: cosine >= strongCosine with coverage >= strongCoverage, or the second pair. */
  strongCosine: 0.5,
  strongCoverage: 0.6,
  strongCosine2: 0.75,
  strongCoverage2: 0.5,
  /** Likely: cosine >= likelyCosine, or cosine >= likelyCosineWithCoverage with coverage >= likelyCoverage. */
  likelyCosine: 0.62,
  likelyCosineWithCoverage: 0.45,
  likelyCoverage: 0.3,
} as const;

export interface MatchFeatures {
  via: "fingerprint" | "semantic";
  /** Cosine similarity of the query to the trail (the reported score). */
  cosine: number;
  /** Share (0..1) of the query's distinct words present in the trail's error and root cause. */
  coverage: number;
}

/** A query word (lexical token) → the model's neighbours of it (lexical tokens), most similar first. */
export type WordNeighbours = ReadonlyMap<string, readonly string[]>;

/** The share of the query's distinct words (lexical tokens) that the trail text contains. */
export function lexicalCoverage(query: string, trailText: string, neighbours?: WordNeighbours | null): number {
  return coverageOf(queryWords(query), trailText, neighbours);
}

/** The query's distinct words, made once per search for `coverageOf` on each result. */
export function queryWords(query: string): Set<string> {
  return new Set(lexicalTokens(query));
}

/**
 * `lexicalCoverage` with the query's words already made. With the model's word neighbours
 * (embedding/word-neighbours.ts), a query word the trail lacks still counts as found when one of
 * its neighbours is in the trail: "postgres" by "postgresql", "pushing" by "push".
 */
export function coverageOf(wanted: Set<string>, trailText: string, neighbours?: WordNeighbours | null): number {
  if (wanted.size === 0) return 0;
  const found = new Set<string>();
  const tokens = lexicalTokens(trailText);
  for (const t of tokens) if (wanted.has(t)) found.add(t);
  if (neighbours && found.size < wanted.size) {
    const present = new Set(tokens);
    for (const w of wanted) if (!found.has(w) && neighbours.get(w)?.some((n) => present.has(n))) found.add(w);
  }
  return found.size / wanted.size;
}

export function confidenceOf(m: MatchFeatures, t = CONFIDENCE_THRESHOLDS): Confidence {
  if (m.via === "fingerprint") return "strong";
  if ((m.cosine >= t.strongCosine && m.coverage >= t.strongCoverage) || (m.cosine >= t.strongCosine2 && m.coverage >= t.strongCoverage2)) {
    return "strong";
  }
  if (m.cosine >= t.likelyCosine || (m.cosine >= t.likelyCosineWithCoverage && m.coverage >= t.likelyCoverage)) return "likely";
  return "weak";
}

/** Whether `level` is at least `min`. */
export function atLeast(level: Confidence, min: Confidence): boolean {
  return CONFIDENCE_LEVELS.indexOf(level) >= CONFIDENCE_LEVELS.indexOf(min);
}

/** The best level among results; `weak` when there are none. */
export function bestConfidence(levels: Confidence[]): Confidence {
  return levels.reduce<Confidence>((best, l) => (atLeast(l, best) ? l : best), "weak");
}

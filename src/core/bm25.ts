// BM25 as SQLite FTS5's bm25() computes it (ext/fts5/fts5_aux.c, fts5Bm25Function), so a store
// without FTS5 (PostgreSQL) ranks lexical matches exactly as the SQLite store does: same term
// statistics, same field weights, same formula, same order of operations.
//
//   score(D) = sum over query terms t of idf(t) * f(t,D) * (k1 + 1) / (f(t,D) + k1 * (1 - b + b * |D| / avgdl))
//   idf(t)   = ln((N - n(t) + 0.5) / (n(t) + 0.5)), floored at 1e-6
//
// f(t,D) counts t's occurrences in D, each weighted by its field; |D| is D's token count over both
// fields; avgdl the mean of |D| over the N indexed documents; n(t) the documents containing t.

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * Field weights: an occurrence in the error line counts twice one in the explanation and fix.
 * PostgreSQL keeps each document's counts weighted by these (postgres/lexical.ts, migration 5):
 * changing them there needs a migration that recounts.
 */
export const FIELD_WEIGHTS = { error: 2.0, body: 1.0 } as const;

/** Document and token totals of the index. */
export interface LexicalTotals {
  docs: number;
  tokens: number;
}

/** idf of a term found in `hits` of `docs` documents (FTS5 floors it at 1e-6, never 0 or below). */
export function bm25Idf(docs: number, hits: number): number {
  const idf = Math.log((docs - hits + 0.5) / (hits + 0.5));
  return idf <= 0.0 ? 1e-6 : idf;
}

/** What a query's scores need besides each document's own counts. */
export interface Bm25Query {
  /** The query terms, in the order their frequencies are given to bm25Score. */
  terms: string[];
  idf: number[];
  avgLength: number;
}

export function bm25Query(terms: string[], docFrequency: Map<string, number>, totals: LexicalTotals): Bm25Query {
  return {
    terms,
    idf: terms.map((t) => bm25Idf(totals.docs, docFrequency.get(t) ?? 0)),
    avgLength: totals.docs > 0 ? totals.tokens / totals.docs : 0,
  };
}

/** A document's score: `freq[i]` is the field-weighted count of `q.terms[i]`, `length` its token count. */
export function bm25Score(q: Bm25Query, freq: ArrayLike<number>, length: number): number {
  const k1 = BM25_K1;
  const b = BM25_B;
  let score = 0.0;
  for (let i = 0; i < q.idf.length; i++) {
    const f = freq[i] ?? 0;
    score += q.idf[i]! * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + (b * length) / q.avgLength)));
  }
  return score;
}

/** The best `k` of scored documents: highest score first, ties by lower id (as the SQLite query orders them). */
export function bestScored<T extends { id: number; score: number }>(hits: T[], k: number): T[] {
  return hits.sort((x, y) => y.score - x.score || x.id - y.id).slice(0, Math.max(0, k));
}

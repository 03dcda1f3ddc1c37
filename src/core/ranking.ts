// Hybrid ranking. Production uses a score blend: the max-normalized BM25 score plus the weighted
// cosine similarity, then small terms for strength and environment overlap that reorder near-ties
// without overriding relevance. Reciprocal rank fusion is kept as the baseline it was measured
// against (bench/fusion-sweep.bench.ts): with k = 60 it gives adjacent ranks nearly equal credit,
// so a weak vector vote overrides a clear BM25 winner. The score reported to clients stays the
// cosine similarity; this order is only the order.
//
// A second stage re-orders the blend's best RERANK_DEPTH candidates with one more input, the
// query's lexical coverage of the trail's error and root cause (src/core/confidence.ts; the same
// figure that rates the match): what an agent describes in its own words is usually the error and
// its cause, and a trail that explains most of those words beats one that shares a single rare
// term with them (issue 16, bench/retrieval-sweep.ts).

/** RRF's k: how quickly credit falls with rank (60 is the value of the original paper). */
export const RRF_K = 60;

/**
 * How much each retriever's vote counts. The lexical vote always counts 1; the vector vote
 * follows how much the embedding model can be trusted (see VECTOR_WEIGHT_BY_MODEL).
 */
export interface FusionWeights {
  lexical: number;
  vector: number;
}

/**
 * The cosine's weight in the blend, by kind of model. Colony's own static model is weak at
 * paraphrases (vector-only paraphrase recall@3 0.48 against lexical 1.00 on the dev set), so its
 * cosine mostly separates near-equal BM25 scores; a sentence-transformers model that a user
 * brings weighs as much as BM25 (not measured: no such model can be had here). The static
 * weight comes from a coarse sweep on the dev set (bench/fusion-sweep.bench.ts, RESULTS.md).
 */
export const VECTOR_WEIGHT_BY_MODEL = { static: 0.25, transformer: 1 } as const;

export type Fusion = "blend" | "rrf";
export const DEFAULT_WEIGHTS: FusionWeights = { lexical: 1, vector: 1 };
/** A full-strength trail gains about what moving up one or two places near the top is worth. */
export const STRENGTH_WEIGHT = 0.0005;
export const OVERLAP_WEIGHT = 0.0005;

export interface Candidate {
  id: number;
  /** BM25 score divided by the best BM25 score of the query (0..1), 0 when not found lexically. */
  lexicalScore?: number;
  /** Cosine similarity of the query to the trail. */
  similarity?: number;
  /** 0-based rank in the lexical results, if present there. */
  lexicalRank?: number;
  /** 0-based rank in the vector results, if present there. */
  vectorRank?: number;
  strength: number;
  overlap: number;
}

export function fusedScore(c: Candidate, w: FusionWeights = DEFAULT_WEIGHTS): number {
  const lexical = c.lexicalRank === undefined ? 0 : w.lexical / (RRF_K + c.lexicalRank + 1);
  const vector = c.vectorRank === undefined ? 0 : w.vector / (RRF_K + c.vectorRank + 1);
  return lexical + vector + STRENGTH_WEIGHT * c.strength + OVERLAP_WEIGHT * c.overlap;
}

/**
 * Score blend: the max-normalized BM25 score plus the weighted cosine. Unlike rank fusion, a
 * clear lexical winner keeps its lead; the cosine decides between near-equal BM25 scores and
 * ranks what only the vector index found.
 */
export function blendedScore(c: Candidate, w: FusionWeights): number {
  return w.lexical * (c.lexicalScore ?? 0) + w.vector * (c.similarity ?? 0) + STRENGTH_WEIGHT * c.strength + OVERLAP_WEIGHT * c.overlap;
}

export function rankByBlend<T extends Candidate>(candidates: T[], w: FusionWeights): T[] {
  return candidates
    .map((c) => ({ c, s: blendedScore(c, w) }))
    .sort((a, b) => b.s - a.s || a.c.id - b.c.id)
    .map(({ c }) => c);
}

/** Best first; ties broken by id for a stable order. */
export function rank<T extends Candidate>(candidates: T[], w: FusionWeights = DEFAULT_WEIGHTS): T[] {
  return candidates
    .map((c) => ({ c, s: fusedScore(c, w) }))
    .sort((a, b) => b.s - a.s || a.c.id - b.c.id)
    .map(({ c }) => c);
}

/** How many of the first stage's best candidates the second stage re-orders. */
export const RERANK_DEPTH = 10;

/** The second stage's weights (chosen on the dev set's tune split with the static model). */
export interface RerankWeights {
  lexical: number;
  vector: number;
  coverage: number;
}

/**
 * Coverage weighs as much as the cosine, and BM25 a quarter: among the first stage's few best, the
 * max-normalized BM25 mostly says which trail shares the query's rarest term, which the first stage
 * has already used. A coarse grid on the tune split (RESULTS.md, Session 4) had a plateau around
 * these values.
 */
export const RERANK_WEIGHTS: RerankWeights = { lexical: 0.25, vector: 1, coverage: 1 };

export interface Covered {
  /** Share (0..1) of the query's distinct words in the trail's error and root cause. */
  coverage: number;
}

export function rerankedScore(c: Candidate & Covered, w: RerankWeights = RERANK_WEIGHTS): number {
  return (
    w.lexical * (c.lexicalScore ?? 0) +
    w.vector * (c.similarity ?? 0) +
    w.coverage * c.coverage +
    STRENGTH_WEIGHT * c.strength +
    OVERLAP_WEIGHT * c.overlap
  );
}

/** The second stage: best first by `rerankedScore`, ties broken by id. */
export function rerank<T extends Candidate & Covered>(candidates: T[], w: RerankWeights = RERANK_WEIGHTS): T[] {
  return candidates
    .map((c) => ({ c, s: rerankedScore(c, w) }))
    .sort((a, b) => b.s - a.s || a.c.id - b.c.id)
    .map(({ c }) => c);
}

// Hybrid ranking: reciprocal rank fusion of the lexical (BM25) and vector rankings, then small
// terms for strength and environment overlap that reorder near-ties without overriding relevance.
// The score reported to clients stays the cosine similarity; this order is only the order.

/** RRF's k: how quickly credit falls with rank (60 is the value of the original paper). */
export const RRF_K = 60;
export const LEXICAL_WEIGHT = 1;
export const VECTOR_WEIGHT = 1;
/** A full-strength trail gains about what moving up one or two places near the top is worth. */
export const STRENGTH_WEIGHT = 0.0005;
export const OVERLAP_WEIGHT = 0.0005;

export interface Candidate {
  id: number;
  /** 0-based rank in the lexical results, if present there. */
  lexicalRank?: number;
  /** 0-based rank in the vector results, if present there. */
  vectorRank?: number;
  strength: number;
  overlap: number;
}

export function fusedScore(c: Candidate): number {
  const lexical = c.lexicalRank === undefined ? 0 : LEXICAL_WEIGHT / (RRF_K + c.lexicalRank + 1);
  const vector = c.vectorRank === undefined ? 0 : VECTOR_WEIGHT / (RRF_K + c.vectorRank + 1);
  return lexical + vector + STRENGTH_WEIGHT * c.strength + OVERLAP_WEIGHT * c.overlap;
}

/** Best first; ties broken by id for a stable order. */
export function rank<T extends Candidate>(candidates: T[]): T[] {
  return candidates
    .map((c) => ({ c, s: fusedScore(c) }))
    .sort((a, b) => b.s - a.s || a.c.id - b.c.id)
    .map(({ c }) => c);
}

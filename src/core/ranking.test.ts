import { expect, test } from "bun:test";
import { blendedScore, fusedScore, rank, rankByBlend, rerank, rerankedScore } from "./ranking";

const c = (id: number, lexicalRank?: number, vectorRank?: number, strength = 0.5, overlap = 0) => ({
  id,
  lexicalRank,
  vectorRank,
  strength,
  overlap,
});

test("found by both beats found by one; higher ranks beat lower", () => {
  expect(rank([c(1, 0), c(2, 1, 1), c(3, undefined, 0)]).map((x) => x.id)).toEqual([2, 1, 3]);
  expect(fusedScore(c(1, 0))).toBeGreaterThan(fusedScore(c(2, 5)));
});

test("strength and overlap reorder near-ties but not clear relevance gaps", () => {
  expect(rank([c(1, 0, 0, 0.2), c(2, 0, 0, 0.9)]).map((x) => x.id)).toEqual([2, 1]);
  expect(rank([c(1, 0, 0, 0.2, 0), c(2, 0, 0, 0.2, 1)]).map((x) => x.id)).toEqual([2, 1]);
  // top of both lists vs tenth of both lists: strength 1 vs 0 cannot flip it
  expect(rank([c(1, 0, 0, 0, 0), c(2, 9, 9, 1, 1)]).map((x) => x.id)).toEqual([1, 2]);
});

test("blend: a clear BM25 winner keeps its lead; the cosine decides near-equal BM25 scores", () => {
  const w = { lexical: 1, vector: 0.25 };
  const b = (id: number, lexicalScore: number | undefined, similarity: number) => ({
    id,
    lexicalScore,
    similarity,
    strength: 0.5,
    overlap: 0,
  });
  // clear lexical winner, lower cosine: stays first
  expect(rankByBlend([b(1, 1, 0.7), b(2, 0.6, 0.95)], w).map((x) => x.id)).toEqual([1, 2]);
  // near-equal BM25: the cosine decides
  expect(rankByBlend([b(1, 1, 0.7), b(2, 0.97, 0.95)], w).map((x) => x.id)).toEqual([2, 1]);
  // found only by the vector index: ranked by its cosine, below strong lexical matches
  expect(rankByBlend([b(3, undefined, 0.99), b(1, 0.9, 0.6)], w).map((x) => x.id)).toEqual([1, 3]);
  expect(blendedScore(b(3, undefined, 0.8), w)).toBeCloseTo(0.2 + 0.00025, 6);
});

test("rerank: a trail that explains most of the query's words beats one that only shares its rarest term", () => {
  const r = (id: number, lexicalScore: number | undefined, similarity: number, coverage: number) => ({
    id,
    lexicalScore,
    similarity,
    coverage,
    strength: 0.5,
    overlap: 0,
  });
  // best BM25 by a rare shared term, little else in common vs. near BM25, most words covered
  expect(rerank([r(1, 1, 0.45, 0.2), r(2, 0.6, 0.5, 0.6)]).map((x) => x.id)).toEqual([2, 1]);
  // same coverage: the cosine and BM25 still decide
  expect(rerank([r(1, 0.6, 0.5, 0.4), r(2, 1, 0.6, 0.4)]).map((x) => x.id)).toEqual([2, 1]);
  expect(rerankedScore(r(3, 0.8, 0.5, 0.25))).toBeCloseTo(0.25 * 0.8 + 0.5 + 0.25 + 0.00025, 6);
});

import { expect, test } from "bun:test";
import { fusedScore, rank } from "./ranking";

const c = (id: number, lexicalRank?: number, vectorRank?: number, strength = 0.5, overlap = 0) => ({ id, lexicalRank, vectorRank, strength, overlap });

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

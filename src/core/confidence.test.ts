import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { atLeast, bestConfidence, CONFIDENCE_THRESHOLDS as T, confidenceOf, lexicalCoverage, queryWords } from "./confidence";
import { loadWordNeighbours } from "../embedding/word-neighbours";
import { readStaticManifest } from "../embedding/static-model";

describe("confidence", () => {
  test("a fingerprint match is strong whatever its features", () => {
    expect(confidenceOf({ via: "fingerprint", cosine: 0, coverage: 0 })).toBe("strong");
  });

  test("semantic matches: strong needs similarity and shared words, likely less, weak below", () => {
    expect(confidenceOf({ via: "semantic", cosine: T.strongCosine, coverage: T.strongCoverage })).toBe("strong");
    expect(confidenceOf({ via: "semantic", cosine: T.strongCosine2, coverage: T.strongCoverage2 })).toBe("strong");
    // High similarity alone is likely, not strong: unrelated errors of one tool read alike.
    expect(confidenceOf({ via: "semantic", cosine: 0.95, coverage: 0 })).toBe("likely");
    expect(confidenceOf({ via: "semantic", cosine: T.likelyCosineWithCoverage, coverage: T.likelyCoverage })).toBe("likely");
    expect(confidenceOf({ via: "semantic", cosine: T.likelyCosineWithCoverage - 0.01, coverage: 1 })).toBe("weak");
    expect(confidenceOf({ via: "semantic", cosine: T.likelyCosine - 0.01, coverage: T.likelyCoverage - 0.01 })).toBe("weak");
  });

  test("coverage is the share of the query's distinct words found in the trail", () => {
    expect(lexicalCoverage("No module named numpy", "ModuleNotFoundError: No module named 'numpy'")).toBe(1);
    expect(lexicalCoverage("connection refused by redis", "ModuleNotFoundError: No module named 'numpy'")).toBe(0);
    expect(lexicalCoverage("", "x")).toBe(0);
  });

  test("a word counts as found by its neighbour in the default model's word table", () => {
    // Dev set tune case d038 and its paraphrase d038#3; claim's neighbours in the shipped table
    // (models/default/neighbours.txt) are claims (cosine 0.796) and claiming (0.708).
    const modelDir = join(import.meta.dir, "..", "..", "models", "default");
    const table = loadWordNeighbours(modelDir, readStaticManifest(modelDir).files)!;
    expect(table.get("claim")).toEqual(["claims", "claiming"]);
    const trail =
      "pod has unbound immediate PersistentVolumeClaims\nThe PVC cannot bind: no default StorageClass / dynamic provisioner in the cluster, or no PersistentVolume matches its size, access mode and class.";
    const query = "statefulset pods stuck pending because the volume claim never gets a volume";
    const words = queryWords(query).size;
    const plain = lexicalCoverage(query, trail);
    expect(lexicalCoverage(query, trail, table)).toBeCloseTo(plain + 1 / words, 10);
    // A word the trail has itself is not counted twice.
    expect(lexicalCoverage("volume claims", trail, table)).toBe(1);
  });

  test("levels order: weak < likely < strong", () => {
    expect(atLeast("strong", "likely")).toBe(true);
    expect(atLeast("weak", "likely")).toBe(false);
    expect(bestConfidence([])).toBe("weak");
    expect(bestConfidence(["weak", "likely"])).toBe("likely");
  });
});

test("below the lowest cosine any threshold names, a match is weak whatever its coverage", () => {
  const lowest = Math.min(T.strongCosine, T.strongCosine2, T.likelyCosine, T.likelyCosineWithCoverage);
  expect(lowest).toBe(0.45);
  for (let c = 0; c < lowest * 100; c++) {
    for (const coverage of [0, 0.3, 0.5, 0.6, 1]) expect(confidenceOf({ via: "semantic", cosine: c / 100, coverage })).toBe("weak");
  }
  expect(confidenceOf({ via: "semantic", cosine: lowest, coverage: 1 })).not.toBe("weak");
});

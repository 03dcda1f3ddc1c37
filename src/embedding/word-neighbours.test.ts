// The word-neighbour table that ships with the default model, read as a search reads it (the
// static embedder loads it with the model; search.ts passes it to the coverage).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lexicalCoverage, type WordNeighbours } from "../core/confidence";
import type { Embedder } from "./embedder";
import { createStaticEmbedder, readStaticManifest } from "./static-model";
import { WORD_NEIGHBOURS_FILE } from "./word-neighbours";

const MODEL_DIR = join(import.meta.dir, "..", "..", "models", "default");

describe("the default model's word neighbours", () => {
  let embedder: Embedder;
  let table: WordNeighbours;
  beforeAll(async () => {
    embedder = await createStaticEmbedder(MODEL_DIR);
    table = embedder.wordNeighbours!;
  });
  afterAll(() => embedder.close());

  test("the shipped table is the one the manifest records, and loads with the model", () => {
    const bytes = readFileSync(join(MODEL_DIR, WORD_NEIGHBOURS_FILE));
    const listed = readStaticManifest(MODEL_DIR).files[WORD_NEIGHBOURS_FILE]!;
    expect(bytes.length).toBe(listed.bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(listed.sha256);
    expect(table.size).toBeGreaterThan(40_000);
    for (const list of table.values()) expect(list.length).toBeLessThanOrEqual(3);
    // The table changes no vector: the revision (which stored vectors are current) is the model's files'.
    expect(embedder.info.revision).not.toContain(WORD_NEIGHBOURS_FILE);
  });

  test("a query word counts as found through its neighbour", () => {
    // postgresql is postgres's neighbour at cosine 0.789, push pushing's at 0.738.
    expect(lexicalCoverage("postgres", "could not connect to server: is postgresql running?", table)).toBe(1);
    expect(lexicalCoverage("postgres", "could not connect to server: is postgresql running?")).toBe(0);
    expect(lexicalCoverage("pushing", "error: failed to push some refs", table)).toBe(1);
    // A word the trail has itself is not counted twice.
    expect(lexicalCoverage("push pushing", "error: failed to push some refs", table)).toBe(1);
  });

  test("not through a neighbour below cosine 0.7 nor one of the other kind", () => {
    // denied → permission is at 0.527; accept → accepting at 0.652.
    expect(lexicalCoverage("denied", "EACCES: permission", table)).toBe(0);
    expect(lexicalCoverage("accept", "accepting connections", table)).toBe(0);
    // accept4 (0.785) and postgres95 (0.923) are identifiers: not a prose word's neighbours.
    expect(lexicalCoverage("accept", "accept4 failed", table)).toBe(0);
    expect(lexicalCoverage("postgres", "postgres95 image", table)).toBe(0);
  });
});

describe("a model directory without the table", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "colony-neighbours-"));
    for (const f of ["model.onnx", "tokenizer.json"]) copyFileSync(join(MODEL_DIR, f), join(dir, f));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const manifest = () => JSON.parse(readFileSync(join(MODEL_DIR, "manifest.json"), "utf8")) as { files: Record<string, unknown> };

  test("not listed: the model loads, with no neighbours (only the query's own words count)", async () => {
    const m = manifest();
    delete m.files[WORD_NEIGHBOURS_FILE];
    writeFileSync(join(dir, "manifest.json"), JSON.stringify(m));
    const embedder = await createStaticEmbedder(dir);
    try {
      expect(embedder.wordNeighbours).toBeNull();
      const shipped = await createStaticEmbedder(MODEL_DIR);
      expect(embedder.info.revision).toBe(shipped.info.revision);
      await shipped.close();
    } finally {
      await embedder.close();
    }
  });

  test("listed but missing: a damaged copy, named", async () => {
    writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest()));
    await expect(createStaticEmbedder(dir)).rejects.toThrow(/neighbours\.txt is missing: copy the model directory again/);
  });
});

// The neighbour table of the lexical neighbour-expansion experiment (bench/RESULTS.md, Session 19):
// for each of the shipped model's in-vocabulary words (models/default, tokenizer.json `words`), its
// nearest other words by the cosine of their vectors as the model embeds a one-word text (the table
// row, projected by P: the common component out), those at or above MIN_SIMILARITY, at most
// MAX_NEIGHBOURS each. Deterministic: similarities rounded to 3 decimals, ties by word.
// This script writes the words' vectors (float32, row-major) and runs tools/model/neighbour-table.py on
// them (numpy: 60,000 × 60,000 dot products in blocks, one thread, about a minute; the 61 MB of
// vectors are removed after). Run twice on this machine, the table's sha256 was the same.
// Run: node_modules/.bin/bun tools/model/neighbour-table.ts OUT.json [MODEL_DIR]
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readStaticTable } from "../onnx/reader";

const out = process.argv[2];
if (!out) throw new Error("usage: bun tools/model/neighbour-table.ts OUT.json [MODEL_DIR]");
const modelDir = process.argv[3] ?? join(import.meta.dir, "..", "..", "models", "default");
const { words } = JSON.parse(readFileSync(join(modelDir, "tokenizer.json"), "utf8")) as { words: string[] };
const { table, scales, projection, dim } = readStaticTable(join(modelDir, "model.onnx"));
const vectors = new Float32Array(words.length * dim);
const raw = new Float32Array(dim);
for (let w = 0; w < words.length; w++) {
  const row = w + 1; // row 0 is the empty text
  for (let d = 0; d < dim; d++) raw[d] = scales[row]! * table[row * dim + d]!;
  let norm = 0;
  const v = vectors.subarray(w * dim, (w + 1) * dim);
  for (let j = 0; j < dim; j++) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += raw[d]! * projection[d * dim + j]!;
    v[j] = s;
    norm += s * s;
  }
  norm = Math.sqrt(norm) || 1;
  for (let j = 0; j < dim; j++) v[j]! /= norm;
}
const vecFile = `${out}.vectors.f32`;
writeFileSync(vecFile, Buffer.from(vectors.buffer));
writeFileSync(`${out}.words.json`, JSON.stringify(words));
const r = spawnSync("python3", [join(import.meta.dir, "neighbour-table.py"), vecFile, `${out}.words.json`, String(dim), out], {
  stdio: "inherit",
  env: { ...process.env, OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1" },
});
rmSync(vecFile);
rmSync(`${out}.words.json`);
if (r.status !== 0) throw new Error("neighbour-table.py failed");

// Overhead of the standard-model path outside the transformer itself: WordPiece tokenization of
// the error corpus, and embed() through the tiny generated BERT graph (tokenize -> ORT -> pooling).
// Real models add their own compute on top (all-MiniLM-L6-v2 int8 is tens of ms per batch).
// Run: bun bench/transformer-path.bench.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTransformerEmbedder } from "../src/embedding/transformer";
import { WordPieceTokenizer } from "../src/embedding/wordpiece";
import { BERT_VOCAB_DIR, loadSharedEval } from "../test/support/paths";
import { writeTinyBertDir } from "../test/support/tiny-bert";

const { cases, negatives } = loadSharedEval();
const texts = [...cases.flatMap((c) => [c.error_line, c.variant, c.paraphrase, c.root_cause]), ...negatives];

let t0 = performance.now();
const tokenizer = WordPieceTokenizer.fromDirectory(BERT_VOCAB_DIR);
console.log(`tokenizer load (tokenizer.json): ${(performance.now() - t0).toFixed(1)} ms`);

for (let i = 0; i < 3; i++) for (const t of texts) tokenizer.encode(t); // warm up
const rounds = 20;
let tokens = 0;
let chars = 0;
t0 = performance.now();
for (let i = 0; i < rounds; i++) {
  for (const t of texts) {
    tokens += tokenizer.encode(t, 512).ids.length;
    chars += t.length;
  }
}
let ms = performance.now() - t0;
console.log(
  `tokenize: ${texts.length * rounds} texts, ${tokens} tokens in ${ms.toFixed(1)} ms = ` +
    `${((texts.length * rounds) / (ms / 1000)).toFixed(0)} texts/s, ${(tokens / (ms / 1000) / 1e6).toFixed(2)} M tokens/s, ` +
    `${(chars / (ms / 1000) / 1e6).toFixed(1)} M chars/s`,
);

const big = "x".repeat(50) + " " + "word, ".repeat(11_000);
t0 = performance.now();
tokenizer.encode(big);
console.log(`encode(64 KB, truncated to 256): ${(performance.now() - t0).toFixed(1)} ms`);

const dir = mkdtempSync(join(tmpdir(), "colony-bench-"));
try {
  writeTinyBertDir(dir);
  t0 = performance.now();
  const embedder = await createTransformerEmbedder(dir);
  console.log(`tiny model load (30522 x 8 table + probe run): ${(performance.now() - t0).toFixed(1)} ms`);
  await embedder.embed(texts.slice(0, 16));
  for (const batch of [1, 16]) {
    const n = 160;
    t0 = performance.now();
    for (let i = 0; i < n; i += batch) await embedder.embed(texts.slice(i % texts.length, (i % texts.length) + batch));
    ms = performance.now() - t0;
    console.log(`embed via tiny model, batch ${batch}: ${(ms / n).toFixed(3)} ms per text`);
  }
  await embedder.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

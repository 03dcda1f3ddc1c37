// Static embedding model benchmark: load time, RSS, latency of one error line, batch throughput,
// and (measurement only) a nearest-neighbour check over the eval cases.
// Run: node_modules/.bin/bun bench/embedding.bench.ts [MODEL_DIR]
import { resolve } from "node:path";
import { createStaticEmbedder } from "../src/embedding/static-model";
import { loadSharedEval } from "../test/support/paths";

const dir = resolve(process.argv[2] ?? resolve(import.meta.dir, "../models/default"));
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
const emb = await createStaticEmbedder(dir);
const loadMs = performance.now() - t0;
const rss1 = process.memoryUsage().rss;
console.log(`model: ${emb.info.name} (${emb.info.kind}, dim ${emb.info.dim}) from ${dir}`);
console.log(`load: ${loadMs.toFixed(0)} ms; RSS ${mb(rss0)} -> ${mb(rss1)} (+${mb(rss1 - rss0)})`);

const line = "ImportError: libGL.so.1: cannot open shared object file: No such file or directory";
for (let i = 0; i < 50; i++) await emb.embed([line]);
const lat: number[] = [];
for (let i = 0; i < 1000; i++) {
  const s = performance.now();
  await emb.embed([line]);
  lat.push(performance.now() - s);
}
console.log(`one error line: p50 ${pct(lat, 50).toFixed(3)} ms, p99 ${pct(lat, 99).toFixed(3)} ms (1000 runs)`);

const { cases, negatives } = loadSharedEval();
const pool = [...cases.flatMap((c) => [c.error_line, c.paraphrase, c.variant]), ...negatives];
for (const size of [16, 64]) {
  const batch = Array.from({ length: size }, (_, i) => pool[i % pool.length]!);
  await emb.embed(batch);
  const runs = size === 16 ? 200 : 60;
  const s = performance.now();
  for (let r = 0; r < runs; r++) await emb.embed(batch);
  const ms = performance.now() - s;
  console.log(`batch ${size}: ${(ms / runs).toFixed(2)} ms per batch, ${((runs * size) / (ms / 1000)).toFixed(0)} texts/s`);
}
console.log(`RSS after runs: ${mb(process.memoryUsage().rss)}`);

// Measurement only (never used to tune): rank of each case's error_line among all cases'
// error_lines when querying with its paraphrase / related / variant line.
const targets = await emb.embed(cases.map((c) => c.error_line));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
async function recall(kind: "paraphrase" | "related" | "variant") {
  const idx = cases.map((c, i) => [c[kind], i] as const).filter((x): x is readonly [string, number] => !!x[0]);
  const qs = await emb.embed(idx.map(([q]) => q));
  let r1 = 0;
  let r3 = 0;
  let mrr = 0;
  idx.forEach(([, i], k) => {
    const own = dot(qs[k]!, targets[i]!);
    const rank = 1 + targets.filter((t, j) => j !== i && dot(qs[k]!, t) > own).length;
    if (rank === 1) r1++;
    if (rank <= 3) r3++;
    mrr += 1 / rank;
  });
  const n = idx.length;
  console.log(
    `eval ${kind.padEnd(10)} (${n} queries vs ${cases.length} error lines): recall@1 ${(r1 / n).toFixed(3)}, recall@3 ${(r3 / n).toFixed(3)}, MRR ${(mrr / n).toFixed(3)}`,
  );
}
await recall("paraphrase");
await recall("related");
await recall("variant");
await emb.close();

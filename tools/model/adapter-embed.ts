// Embeds the texts of adapter-pairs.py's pairs with a static model (the shipped one by default),
// for tools/model/adapter.py: OUT.f32 (float32, one row of `dim` per distinct text) and
// OUT.json (the texts, in row order, and each pair as [source, prose row, error row]).
// Usage: bun tools/model/adapter-embed.ts PAIRS.jsonl OUT [MODEL_DIR]
import { readFileSync, writeFileSync } from "node:fs";
import { createStaticEmbedder } from "../../src/embedding/static-model.ts";

const [pairsPath, out, modelDir = "models/default"] = process.argv.slice(2);
if (!pairsPath || !out) throw new Error("usage: bun tools/model/adapter-embed.ts PAIRS.jsonl OUT [MODEL_DIR]");
const rows = new Map<string, number>();
const row = (text: string) => {
  let r = rows.get(text);
  if (r === undefined) rows.set(text, (r = rows.size));
  return r;
};
const pairs: Array<[string, number, number]> = [];
for (const line of readFileSync(pairsPath, "utf8").split("\n")) {
  if (!line) continue;
  const p = JSON.parse(line) as { source: string; prose: string; error: string };
  pairs.push([p.source, row(p.prose), row(p.error)]);
}
const texts = [...rows.keys()];
const embedder = await createStaticEmbedder(modelDir);
const dim = embedder.info.dim;
const matrix = new Float32Array(texts.length * dim);
for (let s = 0; s < texts.length; s += 1024) {
  const vs = await embedder.embed(texts.slice(s, s + 1024));
  vs.forEach((v, i) => matrix.set(v, (s + i) * dim));
}
await embedder.close();
writeFileSync(`${out}.f32`, matrix);
writeFileSync(`${out}.json`, JSON.stringify({ model: embedder.info.name, dim, texts, pairs }));
console.log(`${texts.length} texts, ${pairs.length} pairs, dim ${dim}`);

// Internal check of an exported static model on hand-written pairs (tools/model/check-pairs.json),
// never the eval set: for each query, the rank of its target among all targets.
// Usage: bun tools/model/check.ts MODEL_DIR [--no-write]   (records the figures in manifest.json)
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createStaticEmbedder } from "../../src/embedding/static-model.ts";

interface Pair {
  query: string;
  target: string;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export async function checkModel(dir: string): Promise<{ pairs: number; recall_at_1: number; recall_at_3: number; mrr: number }> {
  const { pairs } = JSON.parse(readFileSync(join(import.meta.dir, "check-pairs.json"), "utf8")) as { pairs: Pair[] };
  const emb = await createStaticEmbedder(dir);
  try {
    const qs = await emb.embed(pairs.map((p) => p.query));
    const ts = await emb.embed(pairs.map((p) => p.target));
    let r1 = 0;
    let r3 = 0;
    let mrr = 0;
    qs.forEach((q, i) => {
      const own = dot(q, ts[i]!);
      const rank = 1 + ts.filter((t, j) => j !== i && dot(q, t) > own).length;
      if (rank === 1) r1++;
      if (rank <= 3) r3++;
      mrr += 1 / rank;
    });
    const n = pairs.length;
    const round = (x: number) => Math.round(x * 1000) / 1000;
    return { pairs: n, recall_at_1: round(r1 / n), recall_at_3: round(r3 / n), mrr: round(mrr / n) };
  } finally {
    await emb.close();
  }
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (!dir) throw new Error("usage: check.ts MODEL_DIR [--no-write]");
  const result = await checkModel(dir);
  console.log(
    `internal check (${result.pairs} hand-written pairs): recall@1 ${result.recall_at_1}, recall@3 ${result.recall_at_3}, MRR ${result.mrr}`,
  );
  if (!process.argv.includes("--no-write")) {
    const path = join(dir, "manifest.json");
    const manifest = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    manifest.internal_check = { set: "tools/model/check-pairs.json", ...result };
    writeFileSync(path, JSON.stringify(manifest, null, 2) + "\n");
  }
}

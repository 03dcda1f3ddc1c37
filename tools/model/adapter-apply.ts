// Folds a linear adapter A (tools/model/adapter.py) into a static model's projection: the graph
// computes normalize(mean · P), so normalize(mean · P · A) costs nothing more at query time.
// The table and tokenizer are the base model's; the manifest records the adapter.
// EXPERIMENT (bench/RESULTS.md "Session 16: a learned linear adapter").
// Usage: bun tools/model/adapter-apply.ts BASE_DIR OUT_DIR ADAPTER.f32
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readStaticTable } from "../onnx/reader.ts";
import { encodeModel } from "../onnx/writer.ts";
import { buildGraph } from "./export.ts";

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

export function foldAdapter(projection: Float32Array, adapter: Float32Array, dim: number): Float32Array {
  const out = new Float32Array(dim * dim);
  for (let i = 0; i < dim; i++) {
    for (let k = 0; k < dim; k++) {
      const p = projection[i * dim + k]!;
      if (p === 0) continue;
      for (let j = 0; j < dim; j++) out[i * dim + j]! += p * adapter[k * dim + j]!;
    }
  }
  return out;
}

function main(): void {
  const [baseDir, outDir, adapterPath] = process.argv.slice(2).map((p) => resolve(p));
  if (!baseDir || !outDir || !adapterPath) throw new Error("usage: adapter-apply.ts BASE_DIR OUT_DIR ADAPTER.f32");
  const { table, scales, projection, rows, dim } = readStaticTable(join(baseDir, "model.onnx"));
  const adapterBytes = readFileSync(adapterPath);
  const adapter = new Float32Array(adapterBytes.buffer, adapterBytes.byteOffset, adapterBytes.length / 4);
  if (adapter.length !== dim * dim) throw new Error(`${adapterPath}: ${adapter.length} numbers, not ${dim}×${dim}`);
  const baseManifest = JSON.parse(readFileSync(join(baseDir, "manifest.json"), "utf8")) as Record<string, unknown>;
  const name = `${String(baseManifest.name)}-adapter`;
  mkdirSync(outDir, { recursive: true });
  const onnx = encodeModel(buildGraph(table, scales, foldAdapter(projection, adapter, dim), rows, dim, name));
  writeFileSync(join(outDir, "model.onnx"), onnx);
  copyFileSync(join(baseDir, "tokenizer.json"), join(outDir, "tokenizer.json"));
  const files: Record<string, { sha256: string; bytes: number }> = {};
  for (const f of ["model.onnx", "tokenizer.json"]) {
    const b = readFileSync(join(outDir, f));
    files[f] = { sha256: sha256(b), bytes: b.length };
  }
  const reportPath = adapterPath.replace(/\.f32$/, ".json");
  const manifest = {
    ...baseManifest,
    name,
    files,
    adapter: {
      sha256: sha256(adapterBytes),
      base_model_onnx_sha256: (baseManifest.files as Record<string, { sha256: string }>)["model.onnx"]!.sha256,
      training: existsSync(reportPath) ? JSON.parse(readFileSync(reportPath, "utf8")) : null,
    },
  };
  writeFileSync(join(outDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  console.error(`wrote ${outDir} (${name})`);
}

if (import.meta.main) main();

// Picks the embedding adapter for a model directory: Colony's own static model (manifest.json
// with kind "static") or a sentence-transformers ONNX export.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Embedder } from "./embedder";
import { createStaticEmbedder, isStaticModelDir } from "./static-model";
import { createTransformerEmbedder, isTransformerModelDir } from "./transformer";

export async function loadEmbedder(dir: string): Promise<Embedder> {
  // A manifest.json that does not parse is a static model's damaged copy (a sentence-transformers
  // export has none): said so, not tried as an export and refused for its tokenizer.
  if (isStaticModelDir(dir) || manifestUnreadable(dir)) return createStaticEmbedder(dir);
  if (isTransformerModelDir(dir)) return createTransformerEmbedder(dir);
  throw new Error(
    `${dir} holds no model Colony can run: expected a Colony static model (manifest.json with kind "static") ` +
      `or a sentence-transformers ONNX export (model.onnx or onnx/model.onnx, with vocab.txt or tokenizer.json)`,
  );
}

function manifestUnreadable(dir: string): boolean {
  const path = join(dir, "manifest.json");
  if (!existsSync(path)) return false;
  try {
    JSON.parse(readFileSync(path, "utf8"));
    return false;
  } catch {
    return true;
  }
}

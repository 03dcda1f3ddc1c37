// Picks the embedding adapter for a model directory: Colony's own static model (manifest.json
// with kind "static") or a sentence-transformers ONNX export.
import type { Embedder } from "./embedder";
import { createStaticEmbedder, isStaticModelDir } from "./static-model";
import { createTransformerEmbedder, isTransformerModelDir } from "./transformer";

export async function loadEmbedder(dir: string): Promise<Embedder> {
  if (isStaticModelDir(dir)) return createStaticEmbedder(dir);
  if (isTransformerModelDir(dir)) return createTransformerEmbedder(dir);
  throw new Error(
    `${dir} holds no model Colony can run: expected a Colony static model (manifest.json with kind "static") ` +
      `or a sentence-transformers ONNX export (model.onnx or onnx/model.onnx, with vocab.txt or tokenizer.json)`,
  );
}

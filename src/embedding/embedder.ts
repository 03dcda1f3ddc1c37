// The embedding service port: text in, L2-normalized vectors out. Adapters: the static model
// that ships with Colony (static-model.ts) and sentence-transformers ONNX exports (transformer.ts).
import type { WordNeighbours } from "../core/confidence";

export type ModelKind = "static" | "transformer";

export interface EmbedderInfo {
  kind: ModelKind;
  /** Human-readable model name, e.g. "colony-static-v1" or "all-MiniLM-L6-v2". */
  name: string;
  dim: number;
  /**
   * Identity of the weights and tokenizer (content hashes). Stored vectors made under another
   * revision are stale even when the name and dimension match (a retrained model keeps its name).
   */
  revision: string;
  /** Where the model was loaded from (a directory, or "embedded"). */
  source: string;
}

export interface Embedder {
  readonly info: EmbedderInfo;
  /** One L2-normalized Float32Array of length info.dim per input text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * The model's word neighbours for the search's coverage (word-neighbours.ts), when the model
   * ships a table (the default model does); none otherwise.
   */
  readonly wordNeighbours?: WordNeighbours | null;
  close(): Promise<void>;
}

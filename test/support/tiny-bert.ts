// A tiny BERT-shaped ONNX model, generated with tools/onnx/writer.ts, so the standard-model path
// (tokenizer -> ONNX -> pooling) is tested end to end without pretrained weights. It has the real
// interface (input_ids / attention_mask / token_type_ids -> last_hidden_state) over the full
// 30522-entry BERT vocabulary, and one masked-context mixing step, so a wrong attention mask or
// position scheme changes the output just as it would in a real transformer.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { encodeModel, tensor, type NodeSpec, type TensorInit, type ValueSpec } from "../../tools/onnx/writer";
import { BERT_VOCAB_DIR } from "./paths";
import { mulberry32 } from "../../tools/prng";

export interface TinyBertOptions {
  hidden?: number;
  vocabSize?: number;
  maxPositions?: number;
  seed?: number;
  /** Declare (and use) the token_type_ids input. Default true; some exports lack it. */
  tokenTypeInput?: boolean;
  /** Name of the 3-D output. Default "last_hidden_state". */
  hiddenOutputName?: string;
  /** Also output a 2-D pooled "sentence_embedding" of this size (a projection, not unit length). */
  sentenceEmbeddingDim?: number;
  /** Take positions from a position_ids input instead of computing them in the graph. */
  positionIdsInput?: boolean;
  /** Emit the hidden states as float16, as fp16 exports do. */
  float16Output?: boolean;
  /** Declare output dims symbolically only (so the embedder must find the dim by running the model). */
  symbolicHiddenDim?: boolean;
}

export interface TinyBertWeights {
  hidden: number;
  vocabSize: number;
  maxPositions: number;
  tokenTypeInput: boolean;
  word: Float32Array; // [vocab, hidden]
  position: Float32Array; // [maxPositions, hidden]
  tokenType: Float32Array; // [2, hidden]
  W: Float32Array; // [hidden, hidden]
  b: Float32Array; // [hidden]
  /** [hidden, sentenceEmbeddingDim] when a sentence_embedding output exists. */
  P?: Float32Array;
  sentenceEmbeddingDim?: number;
}

function randomArray(n: number, rand: () => number, scale: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rand() * 2 - 1) * scale;
  return out;
}

export function tinyBertWeights(opts: TinyBertOptions = {}): TinyBertWeights {
  const hidden = opts.hidden ?? 8;
  const vocabSize = opts.vocabSize ?? 30522;
  const maxPositions = opts.maxPositions ?? 512;
  const rand = mulberry32(opts.seed ?? 1234);
  const weights: TinyBertWeights = {
    hidden,
    vocabSize,
    maxPositions,
    tokenTypeInput: opts.tokenTypeInput ?? true,
    word: randomArray(vocabSize * hidden, rand, 1),
    position: randomArray(maxPositions * hidden, rand, 0.3),
    tokenType: randomArray(2 * hidden, rand, 0.3),
    W: randomArray(hidden * hidden, rand, 0.6),
    b: randomArray(hidden, rand, 0.1),
  };
  if (opts.sentenceEmbeddingDim) {
    weights.sentenceEmbeddingDim = opts.sentenceEmbeddingDim;
    weights.P = randomArray(hidden * opts.sentenceEmbeddingDim, rand, 1);
  }
  return weights;
}

/**
 * e_t = word[id_t] + position[t] (+ tokenType[type_t]); c = mean of e over unmasked t;
 * h_t = tanh((e_t + c) W + b)  -> last_hidden_state;  sentence_embedding = (masked mean of h) P.
 */
export function tinyBertModel(opts: TinyBertOptions = {}): { bytes: Uint8Array; weights: TinyBertWeights } {
  const w = tinyBertWeights(opts);
  const H = w.hidden;
  const hiddenName = opts.hiddenOutputName ?? "last_hidden_state";
  const inits: TensorInit[] = [
    tensor.float32("word_embeddings", [w.vocabSize, H], w.word),
    tensor.float32("position_embeddings", [w.maxPositions, H], w.position),
    tensor.float32("W", [H, H], w.W),
    tensor.float32("b", [H], w.b),
    tensor.int64("zero", [], [0]),
    tensor.int64("one", [], [1]),
    tensor.int64("axis_seq", [1], [1]),
    tensor.int64("axis_last", [1], [-1]),
    { name: "eps", dtype: "float32", dims: [], data: Float32Array.of(1e-9) },
  ];
  const nodes: NodeSpec[] = [
    { op: "Gather", inputs: ["word_embeddings", "input_ids"], outputs: ["words"], attrs: { axis: 0 } },
    // Position ids 0..seq-1 from the input's shape (or given as an input: [batch, seq]).
    ...(opts.positionIdsInput
      ? []
      : [
          { op: "Shape", inputs: ["input_ids"], outputs: ["ids_shape"] },
          { op: "Gather", inputs: ["ids_shape", "one"], outputs: ["seq_len"], attrs: { axis: 0 } },
          { op: "Range", inputs: ["zero", "seq_len", "one"], outputs: ["position_ids"] },
        ]),
    { op: "Gather", inputs: ["position_embeddings", "position_ids"], outputs: ["positions"], attrs: { axis: 0 } },
    { op: "Add", inputs: ["words", "positions"], outputs: ["wp"] },
  ];
  let embedded = "wp";
  if (w.tokenTypeInput) {
    inits.push(tensor.float32("token_type_embeddings", [2, H], w.tokenType));
    nodes.push(
      { op: "Gather", inputs: ["token_type_embeddings", "token_type_ids"], outputs: ["types"], attrs: { axis: 0 } },
      { op: "Add", inputs: ["wp", "types"], outputs: ["wpt"] },
    );
    embedded = "wpt";
  }
  // Masked mean over the sequence: the context every token sees, as attention would give it.
  const maskedMean = (input: string, out: string): NodeSpec[] => [
    { op: "Mul", inputs: [input, "mask3"], outputs: [`${out}_masked`] },
    { op: "ReduceSum", inputs: [`${out}_masked`, "axis_seq"], outputs: [`${out}_sum`], attrs: { keepdims: 1 } },
    { op: "Max", inputs: ["mask_count", "eps"], outputs: [`${out}_count`] },
    { op: "Div", inputs: [`${out}_sum`, `${out}_count`], outputs: [out] },
  ];
  nodes.push(
    { op: "Cast", inputs: ["attention_mask"], outputs: ["mask_f"], attrs: { to: 1 } },
    { op: "Unsqueeze", inputs: ["mask_f", "axis_last"], outputs: ["mask3"] },
    { op: "ReduceSum", inputs: ["mask3", "axis_seq"], outputs: ["mask_count"], attrs: { keepdims: 1 } },
    ...maskedMean(embedded, "context"),
    { op: "Add", inputs: [embedded, "context"], outputs: ["mixed"] },
    { op: "MatMul", inputs: ["mixed", "W"], outputs: ["projected"] },
    { op: "Add", inputs: ["projected", "b"], outputs: ["pre_act"] },
    { op: "Tanh", inputs: ["pre_act"], outputs: [opts.float16Output ? "hidden_f32" : hiddenName] },
  );
  if (opts.float16Output) nodes.push({ op: "Cast", inputs: ["hidden_f32"], outputs: [hiddenName], attrs: { to: 10 } });
  const outputs: ValueSpec[] = [
    { name: hiddenName, dtype: opts.float16Output ? "float16" : "float32", shape: ["batch", "seq", opts.symbolicHiddenDim ? "hidden" : H] },
  ];
  if (w.P && w.sentenceEmbeddingDim) {
    inits.push(tensor.float32("P", [H, w.sentenceEmbeddingDim], w.P));
    nodes.push(
      ...maskedMean(hiddenName, "pooled3"),
      { op: "Squeeze", inputs: ["pooled3", "axis_seq"], outputs: ["pooled"] },
      { op: "MatMul", inputs: ["pooled", "P"], outputs: ["sentence_embedding"] },
    );
    outputs.push({ name: "sentence_embedding", dtype: "float32", shape: ["batch", w.sentenceEmbeddingDim] });
  }
  const inputs: ValueSpec[] = [
    { name: "input_ids", dtype: "int64", shape: ["batch", "seq"] },
    { name: "attention_mask", dtype: "int64", shape: ["batch", "seq"] },
  ];
  if (w.tokenTypeInput) inputs.push({ name: "token_type_ids", dtype: "int64", shape: ["batch", "seq"] });
  if (opts.positionIdsInput) inputs.push({ name: "position_ids", dtype: "int64", shape: ["batch", "seq"] });
  const bytes = encodeModel({
    graph: { name: "tiny-bert", nodes, initializers: inits, inputs, outputs },
    opset: 17,
    producer: "colony-tiny-bert",
  });
  return { bytes, weights: w };
}

/** Hidden states of one unpadded sequence, computed in plain JS (float64) from the same weights. */
export function referenceHiddenStates(w: TinyBertWeights, ids: number[], typeIds: number[] = ids.map(() => 0)): Float64Array[] {
  const H = w.hidden;
  const e = ids.map((id, t) => {
    const v = new Float64Array(H);
    for (let j = 0; j < H; j++) {
      v[j] = w.word[id * H + j]! + w.position[t * H + j]! + (w.tokenTypeInput ? w.tokenType[typeIds[t]! * H + j]! : 0);
    }
    return v;
  });
  const context = new Float64Array(H);
  for (const v of e) for (let j = 0; j < H; j++) context[j]! += v[j]! / e.length;
  return e.map((v) => {
    const h = new Float64Array(H);
    for (let k = 0; k < H; k++) {
      let s = w.b[k]!;
      for (let j = 0; j < H; j++) s += (v[j]! + context[j]!) * w.W[j * H + k]!;
      h[k] = Math.tanh(s);
    }
    return h;
  });
}

function l2normalize(v: Float64Array): Float64Array {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return n > 0 ? v.map((x) => x / n) : v;
}

/** Pooled (mean by default), L2-normalized sentence vector, or the normalized sentence_embedding projection. */
export function referenceEmbedding(w: TinyBertWeights, ids: number[], pooling: "mean" | "cls" | "max" = "mean"): Float64Array {
  const hs = referenceHiddenStates(w, ids);
  if (pooling === "cls") return l2normalize(hs[0]!.slice());
  if (pooling === "max")
    return l2normalize(hs.reduce((m, h) => m.map((x, j) => Math.max(x, h[j]!)), new Float64Array(w.hidden).fill(-Infinity)));
  const mean = new Float64Array(w.hidden);
  for (const h of hs) for (let j = 0; j < w.hidden; j++) mean[j]! += h[j]! / hs.length;
  if (w.P && w.sentenceEmbeddingDim) {
    const D = w.sentenceEmbeddingDim;
    const proj = new Float64Array(D);
    for (let k = 0; k < D; k++) for (let j = 0; j < w.hidden; j++) proj[k]! += mean[j]! * w.P[j * D + k]!;
    return l2normalize(proj);
  }
  return l2normalize(mean);
}

/**
 * Writes a model directory like a Hugging Face export: the ONNX file at `modelPath` (relative),
 * plus the real tokenizer files and config.json copied from the shared BERT vocabulary folder.
 */
export function writeTinyBertDir(
  dir: string,
  opts: TinyBertOptions & {
    modelPath?: string;
    tokenizerFiles?: ("vocab.txt" | "tokenizer.json" | "tokenizer_config.json" | "config.json")[];
  } = {},
): TinyBertWeights {
  const { bytes, weights } = tinyBertModel(opts);
  const modelFile = join(dir, opts.modelPath ?? "model.onnx");
  mkdirSync(dirname(modelFile), { recursive: true });
  writeFileSync(modelFile, bytes);
  for (const name of opts.tokenizerFiles ?? ["vocab.txt", "tokenizer.json", "tokenizer_config.json", "config.json"]) {
    const from = join(BERT_VOCAB_DIR, name);
    if (existsSync(from)) copyFileSync(from, join(dir, name));
  }
  return weights;
}

// Embedder for standard sentence-transformers ONNX exports (all-MiniLM-L6-v2, bge-small-en-v1.5,
// gte-small, e5-small-v2): WordPiece ids -> ONNX graph -> mean pooling over the attention mask ->
// L2 normalization. A 2-D "sentence_embedding" output, when the export has one, is used as is.
import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Embedder, EmbedderInfo } from "./embedder";
import { ort, type InferenceSession, type Tensor } from "./ort";
import { WordPieceTokenizer } from "./wordpiece";
import { errorMessage } from "../core/error-message";

export interface TransformerOptions {
  /** Truncation length in tokens incl. [CLS]/[SEP] (default 256, capped by the model's 512). */
  maxLength?: number;
  /** Overrides the name from config.json. */
  name?: string;
  /** Threads for one inference (default 1: the colony runs on 2 cores and embeds off the request path). */
  intraOpThreads?: number;
  /** Texts per ONNX run (default 16). */
  batchSize?: number;
  /** Token pooling; default from 1_Pooling/config.json (sentence-transformers layout), else "mean". */
  pooling?: Pooling;
}

export type Pooling = "mean" | "cls" | "max";

/** Where exports put the graph, in order of preference. */
export const MODEL_FILE_CANDIDATES = ["model.onnx", "onnx/model.onnx", "onnx/model_quantized.onnx"] as const;
const TOKENIZER_FILES = ["tokenizer.json", "vocab.txt"] as const;

export function findModelFile(dir: string): string | undefined {
  for (const rel of MODEL_FILE_CANDIDATES) {
    const path = join(dir, rel);
    if (existsSync(path)) return path;
  }
  return undefined;
}

export function isTransformerModelDir(dir: string): boolean {
  return findModelFile(dir) !== undefined && TOKENIZER_FILES.some((f) => existsSync(join(dir, f)));
}

function modelName(dir: string): string {
  const configPath = join(dir, "config.json");
  if (existsSync(configPath)) {
    try {
      const config = JSON.parse(readFileSync(configPath, "utf8")) as { _name_or_path?: unknown };
      if (typeof config._name_or_path === "string" && config._name_or_path.trim()) {
        // "sentence-transformers/all-MiniLM-L6-v2" -> "all-MiniLM-L6-v2"
        const last = config._name_or_path
          .trim()
          .replace(/[\\/]+$/, "")
          .split(/[\\/]/)
          .pop();
        if (last) return last;
      }
    } catch {
      // A malformed config.json only costs the pretty name.
    }
  }
  return basename(resolve(dir));
}

/**
 * sentence-transformers keeps the pooling choice in 1_Pooling/config.json: bge-small-en-v1.5 uses
 * the [CLS] state, the MiniLM/gte/e5 family the mean. Without that file, mean.
 */
export function readPooling(dir: string): Pooling {
  const path = join(dir, "1_Pooling", "config.json");
  if (!existsSync(path)) return "mean";
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${path}: ${errorMessage(err)}`);
  }
  const modes = Object.entries(config)
    .filter(([k, v]) => k.startsWith("pooling_mode_") && v === true)
    .map(([k]) => k.slice("pooling_mode_".length));
  if (modes.length === 0) return "mean";
  if (modes.length === 1) {
    if (modes[0] === "mean_tokens") return "mean";
    if (modes[0] === "cls_token") return "cls";
    if (modes[0] === "max_tokens") return "max";
  }
  throw new Error(`${path}: unsupported pooling ${modes.join(" + ")} (supported: mean_tokens, cls_token, max_tokens)`);
}

type OutputPlan = { name: string; pooled: boolean | "by-rank" };

/** Chooses the output to read: a pooled sentence_embedding, else token states to mean-pool. */
function planOutput(session: InferenceSession): OutputPlan {
  const meta = new Map(session.outputMetadata.map((m) => [m.name, m]));
  const rank = (name: string): number | undefined => {
    const m = meta.get(name);
    return m && m.isTensor && m.shape.length > 0 ? m.shape.length : undefined;
  };
  const names = session.outputNames;
  if (names.includes("sentence_embedding") && (rank("sentence_embedding") ?? 2) === 2) return { name: "sentence_embedding", pooled: true };
  for (const name of ["last_hidden_state", "token_embeddings"]) if (names.includes(name)) return { name, pooled: false };
  const first = names[0];
  if (first === undefined) throw new Error("the ONNX model has no outputs");
  const r = rank(first);
  if (r === 3) return { name: first, pooled: false };
  if (r === undefined) return { name: first, pooled: "by-rank" };
  throw new Error(`the ONNX model has no last_hidden_state, token_embeddings or sentence_embedding output (outputs: ${names.join(", ")})`);
}

function outputDim(session: InferenceSession, name: string): number | undefined {
  const m = session.outputMetadata.find((o) => o.name === name);
  if (!m || !m.isTensor || m.shape.length === 0) return undefined;
  const last = m.shape[m.shape.length - 1];
  return typeof last === "number" && last > 0 ? last : undefined;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Output values as float32 whatever the export's output type. */
function floatData(t: Tensor): Float32Array {
  if (t.type === "float32") return t.data as Float32Array;
  if (t.type === "float16") {
    const raw = t.data as unknown as ArrayLike<number>;
    // ORT gives float16 as raw bits (Uint16Array) or as a Float16Array where the runtime has one.
    if (raw instanceof Uint16Array) return Float32Array.from(raw, halfToFloat);
    return Float32Array.from(raw);
  }
  if (t.type === "float64") return Float32Array.from(t.data as Float64Array);
  throw new Error(`unsupported ONNX output type ${t.type}`);
}

function l2normalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  // A zero vector has no direction; leave it zero rather than NaN.
  if (norm > 1e-12) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

class TransformerEmbedder implements Embedder {
  readonly info: EmbedderInfo;
  private closed = false;
  // ORT runs are serialized: one inference at a time keeps CPU use predictable on small hosts.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly session: InferenceSession,
    private readonly tokenizer: WordPieceTokenizer,
    private readonly plan: OutputPlan,
    private readonly batchSize: number,
    private readonly pooling: Pooling,
    info: EmbedderInfo,
  ) {
    this.info = info;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) throw new Error("embedder is closed");
    if (texts.length === 0) return [];
    const run = this.queue.then(() => this.embedAll(texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async embedAll(texts: string[]): Promise<Float32Array[]> {
    // Batch texts of similar length together so little compute goes to padding; the result
    // does not depend on the grouping because padded positions are masked out.
    const encoded = texts.map((t, i) => ({ i, ids: this.tokenizer.encode(t).ids }));
    encoded.sort((a, b) => a.ids.length - b.ids.length);
    const out = new Array<Float32Array>(texts.length);
    for (let start = 0; start < encoded.length; start += this.batchSize) {
      const batch = encoded.slice(start, start + this.batchSize);
      const vectors = await this.runBatch(batch.map((b) => b.ids));
      batch.forEach((b, k) => (out[b.i] = vectors[k]!));
    }
    return out;
  }

  /** One ONNX run over encoded sequences (used directly only for the startup probe). */
  async runBatch(batch: number[][]): Promise<Float32Array[]> {
    const rows = batch.length;
    const { inputIds, attentionMask, tokenTypeIds, seqLen } = this.tokenizer.pad(batch);
    const dims = [rows, seqLen];
    const feeds: Record<string, Tensor> = {};
    for (const name of this.session.inputNames) {
      switch (name) {
        case "input_ids":
          feeds[name] = new ort.Tensor("int64", inputIds, dims);
          break;
        case "attention_mask":
          feeds[name] = new ort.Tensor("int64", attentionMask, dims);
          break;
        case "token_type_ids":
          feeds[name] = new ort.Tensor("int64", tokenTypeIds, dims);
          break;
        case "position_ids": {
          const pos = new BigInt64Array(rows * seqLen);
          for (let r = 0; r < rows; r++) for (let i = 0; i < seqLen; i++) pos[r * seqLen + i] = BigInt(i);
          feeds[name] = new ort.Tensor("int64", pos, dims);
          break;
        }
        default:
          throw new Error(`the ONNX model wants an input this embedder cannot provide: ${name}`);
      }
    }
    const result = await this.session.run(feeds, [this.plan.name]);
    const output = result[this.plan.name];
    if (!output) throw new Error(`the ONNX model produced no ${this.plan.name} output`);
    try {
      return this.pool(output as Tensor, attentionMask, rows, seqLen);
    } finally {
      for (const t of Object.values(result)) (t as Tensor).dispose?.();
    }
  }

  private pool(output: Tensor, mask: BigInt64Array, rows: number, seqLen: number): Float32Array[] {
    const data = floatData(output);
    const dims = output.dims;
    const pooled = this.plan.pooled === "by-rank" ? dims.length === 2 : this.plan.pooled;
    if (pooled) {
      if (dims.length !== 2 || dims[0] !== rows) throw new Error(`${this.plan.name}: expected [${rows}, dim], got [${dims.join(", ")}]`);
      const dim = dims[1]!;
      return Array.from({ length: rows }, (_, r) => l2normalizeInPlace(data.slice(r * dim, (r + 1) * dim)));
    }
    if (dims.length !== 3 || dims[0] !== rows || dims[1] !== seqLen) {
      throw new Error(`${this.plan.name}: expected [${rows}, ${seqLen}, hidden], got [${dims.join(", ")}]`);
    }
    const hidden = dims[2]!;
    const vectors: Float32Array[] = [];
    for (let r = 0; r < rows; r++) {
      if (this.pooling === "cls") {
        // [CLS] is always the first token.
        vectors.push(l2normalizeInPlace(data.slice(r * seqLen * hidden, (r * seqLen + 1) * hidden)));
        continue;
      }
      // Accumulate in float64: long sequences of small float32 values lose precision otherwise.
      const acc = new Float64Array(hidden).fill(this.pooling === "max" ? -Infinity : 0);
      let count = 0;
      for (let t = 0; t < seqLen; t++) {
        if (mask[r * seqLen + t] === 0n) continue;
        count++;
        const base = (r * seqLen + t) * hidden;
        if (this.pooling === "max") for (let j = 0; j < hidden; j++) acc[j] = Math.max(acc[j]!, data[base + j]!);
        else for (let j = 0; j < hidden; j++) acc[j]! += data[base + j]!;
      }
      const v = new Float32Array(hidden);
      if (count > 0) for (let j = 0; j < hidden; j++) v[j] = this.pooling === "max" ? acc[j]! : acc[j]! / count;
      vectors.push(l2normalizeInPlace(v));
    }
    return vectors;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    await this.session.release();
  }
}

export async function createTransformerEmbedder(dir: string, opts: TransformerOptions = {}): Promise<Embedder> {
  const modelFile = findModelFile(dir);
  if (!modelFile || !isTransformerModelDir(dir)) {
    throw new Error(
      `not a transformer model directory: ${dir} (needs ${MODEL_FILE_CANDIDATES.join(" or ")}, plus tokenizer.json or vocab.txt)`,
    );
  }
  const tokenizer = WordPieceTokenizer.fromDirectory(dir, { maxLength: opts.maxLength });
  const pooling = opts.pooling ?? readPooling(dir);
  const threads = opts.intraOpThreads ?? 1;
  const batchSize = opts.batchSize ?? 16;
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`intraOpThreads must be a positive integer, got ${threads}`);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);

  let session: InferenceSession;
  let revision = "";
  try {
    // From bytes, not a path: the same code reads a file embedded in a compiled binary.
    const bytes = new Uint8Array(readFileSync(modelFile));
    revision = new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 16);
    session = await ort.InferenceSession.create(bytes, {
      graphOptimizationLevel: "all",
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: "sequential",
    });
  } catch (err) {
    throw new Error(`cannot load ONNX model ${modelFile}: ${errorMessage(err)}`);
  }

  try {
    if (!session.inputNames.includes("input_ids")) {
      throw new Error(`the ONNX model has no input_ids input (inputs: ${session.inputNames.join(", ")})`);
    }
    const plan = planOutput(session);
    const declaredDim = outputDim(session, plan.name);
    const info: EmbedderInfo = {
      kind: "transformer",
      name: opts.name ?? modelName(dir),
      dim: declaredDim ?? 0,
      revision,
      source: modelFile,
    };
    const embedder = new TransformerEmbedder(session, tokenizer, plan, batchSize, pooling, info);
    // Unknown output width: one probe run tells it (and checks the graph actually runs).
    const [probe] = await embedder.runBatch([tokenizer.encode("").ids]);
    if (!probe || probe.length === 0) throw new Error("the ONNX model produced an empty embedding");
    if (declaredDim !== undefined && probe.length !== declaredDim) {
      throw new Error(`the ONNX model declares width ${declaredDim} but produced ${probe.length}`);
    }
    info.dim = probe.length;
    return embedder;
  } catch (err) {
    await session.release();
    throw new Error(`${modelFile}: ${errorMessage(err)}`);
  }
}

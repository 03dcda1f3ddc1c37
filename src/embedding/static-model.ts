// Colony's own static embedding model (colony-static-v1): word and char n-gram vectors trained
// with fastText on technical documentation (tools/model/train.sh), pooled by an ONNX graph:
// embedding = normalize(P · Σ w_i·E[id_i] / Σ w_i), with E an int8 table with per-row scales
// and P = I − uuᵀ removing the corpus' common direction. The tokenizer (static-tokenizer.ts)
// turns text into table ids and SIF weights; out-of-vocabulary identifiers fall back to their
// char n-grams, hashed exactly as fastText hashed them during training.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../core/error-message";
import type { Embedder, EmbedderInfo } from "./embedder";
import { ort, type InferenceSession, type Tensor } from "./ort";
import { TOKENIZER_SPEC, tokenize } from "./static-tokenizer";
import { loadWordNeighbours, WORD_NEIGHBOURS_FILE, type WordNeighbours } from "./word-neighbours";

export { TOKENIZER_SPEC, tokenize } from "./static-tokenizer";

/** Contents of a static model's tokenizer.json. Ids: 0 = empty text, 1..N words, then n-grams. */
export interface StaticTokenizerData {
  spec: string;
  /** Tokens read per text (after identifier splitting). */
  maxTokens: number;
  /** Table positions per text (an out-of-vocabulary token takes one per n-gram found). */
  maxPositions: number;
  emptyId: number;
  words: string[];
  /** Weight of each word, a/(a + p(word)) from corpus frequencies (SIF). */
  wordWeights: number[];
  /** Weight of an out-of-vocabulary token, shared among its n-grams. */
  oovWeight: number;
  /** Multiplier for the parts of a split identifier (err, require, esm of ERR_REQUIRE_ESM). */
  partFactor: number;
  ngrams: {
    minn: number;
    maxn: number;
    /** fastText's hash space: bucket = fnv1a32(ngram) % buckets. */
    buckets: number;
    hash: "fasttext-fnv1a32";
    /** Buckets kept in the table, in table order (ids N+1, N+2, ...). */
    kept: number[];
  };
}

export interface EncodedBatch {
  ids: BigInt64Array;
  weights: Float32Array;
  seqLen: number;
}

/** fastText's string hash: FNV-1a over bytes, each byte sign-extended first (int8 → uint32). */
export function fastTextHash(bytes: Uint8Array, start: number, end: number): number {
  let h = 2166136261;
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    h = (h ^ (b >= 128 ? (0xffffff00 | b) >>> 0 : b)) >>> 0;
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

const utf8 = new TextEncoder();
/** The files a static model's manifest lists, and what to do when one of them is damaged. */
const MODEL_FILES = ["model.onnx", "tokenizer.json"] as const;
const COPY_AGAIN = "copy the model directory again";

/**
 * Bucket numbers of a word's char n-grams as fastText computes them (Dictionary::computeSubwords):
 * the word is wrapped in '<' '>', n counts UTF-8 characters, single-character n-grams at the
 * edges are skipped.
 */
export function ngramBuckets(word: string, minn: number, maxn: number, buckets: number): number[] {
  const b = utf8.encode(`<${word}>`);
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    if ((b[i]! & 0xc0) === 0x80) continue;
    let j = i;
    for (let n = 1; j < b.length && n <= maxn; n++) {
      j++;
      while (j < b.length && (b[j]! & 0xc0) === 0x80) j++;
      if (n >= minn && !(n === 1 && (i === 0 || j === b.length))) out.push(fastTextHash(b, i, j) % buckets);
    }
  }
  return out;
}

export class StaticTokenizer {
  private readonly wordIds = new Map<string, number>();
  private readonly bucketIds = new Map<number, number>();
  private readonly idWeights: Float32Array;

  constructor(readonly data: StaticTokenizerData) {
    if (data.spec !== TOKENIZER_SPEC) {
      throw new Error(`tokenizer spec ${data.spec} does not match this build's ${TOKENIZER_SPEC}: retrain the model`);
    }
    if (data.words.length !== data.wordWeights.length) throw new Error("tokenizer.json: words and wordWeights differ in length");
    this.idWeights = new Float32Array(data.words.length + 1);
    data.words.forEach((w, i) => {
      this.wordIds.set(w, i + 1);
      this.idWeights[i + 1] = data.wordWeights[i]!;
    });
    const base = data.words.length + 1;
    data.ngrams.kept.forEach((bucket, i) => this.bucketIds.set(bucket, base + i));
  }

  static fromDirectory(dir: string): StaticTokenizer {
    const path = join(dir, "tokenizer.json");
    let data: StaticTokenizerData;
    try {
      data = JSON.parse(readFileSync(path, "utf8")) as StaticTokenizerData;
    } catch (err) {
      throw new Error(`${path} is not valid JSON (${errorMessage(err)}): ${COPY_AGAIN}`);
    }
    return new StaticTokenizer(data);
  }

  /** Rows of the embedding table: the empty row, the words, the kept n-grams. */
  get tableRows(): number {
    return 1 + this.data.words.length + this.data.ngrams.kept.length;
  }

  /** Table ids and weights of one text; never empty (a text without tokens maps to the empty row). */
  encode(text: string): { ids: number[]; weights: number[] } {
    const d = this.data;
    const ids: number[] = [];
    const weights: number[] = [];
    for (const tok of tokenize(text, d.maxTokens)) {
      if (ids.length >= d.maxPositions) break;
      const factor = tok.part ? d.partFactor : 1;
      const wid = this.wordIds.get(tok.text);
      if (wid !== undefined) {
        ids.push(wid);
        weights.push(this.idWeights[wid]! * factor);
        continue;
      }
      // Unknown token: the mean of its known n-grams, as fastText builds an OOV word vector.
      const found: number[] = [];
      for (const bucket of ngramBuckets(tok.text, d.ngrams.minn, d.ngrams.maxn, d.ngrams.buckets)) {
        const id = this.bucketIds.get(bucket);
        if (id !== undefined) found.push(id);
      }
      const room = d.maxPositions - ids.length;
      const use = found.length > room ? found.slice(0, room) : found;
      for (const id of use) {
        ids.push(id);
        weights.push((d.oovWeight * factor) / use.length);
      }
    }
    if (ids.length === 0) {
      ids.push(d.emptyId);
      weights.push(1);
    }
    return { ids, weights };
  }

  /** Right-padded batch for the graph: padding positions have id 0 and weight 0. */
  encodeBatch(texts: string[]): EncodedBatch {
    const rows = texts.map((t) => this.encode(t));
    const seqLen = Math.max(1, ...rows.map((r) => r.ids.length));
    const ids = new BigInt64Array(texts.length * seqLen);
    const weights = new Float32Array(texts.length * seqLen);
    rows.forEach((r, b) => {
      for (let i = 0; i < r.ids.length; i++) {
        ids[b * seqLen + i] = BigInt(r.ids[i]!);
        weights[b * seqLen + i] = r.weights[i]!;
      }
    });
    return { ids, weights, seqLen };
  }
}

export interface StaticManifest {
  name: string;
  kind: "static";
  dim: number;
  files: Record<string, { sha256: string; bytes: number }>;
}

export function isStaticModelDir(dir: string): boolean {
  const p = join(dir, "manifest.json");
  if (!existsSync(p)) return false;
  try {
    return (JSON.parse(readFileSync(p, "utf8")) as { kind?: unknown }).kind === "static";
  } catch {
    return false;
  }
}

/**
 * One text per ONNX run. ONNX Runtime sums a batch of several texts, padded to the longest, in
 * another order than one text alone, so a text's vector would differ in its last bits with the
 * texts it was batched with (the enrichment worker's batches depend on timing), and a near tie in
 * search could go either way between two runs. One at a time, a trail's vector is the one a query
 * of the same text gets. The runs of a call are sent together, at most IN_FLIGHT at once, so
 * enrichment is no slower than with batches (bench/RESULTS.md, Session 11).
 */
const IN_FLIGHT = 64;

class StaticEmbedder implements Embedder {
  wordNeighbours: WordNeighbours | null = null;

  constructor(
    readonly info: EmbedderInfo,
    private readonly tokenizer: StaticTokenizer,
    private session: InferenceSession | null,
  ) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    const session = this.session;
    if (!session) throw new Error("static embedder is closed");
    const out: Float32Array[] = [];
    for (let s = 0; s < texts.length; s += IN_FLIGHT) {
      out.push(...(await Promise.all(texts.slice(s, s + IN_FLIGHT).map((text) => this.embedOne(session, text)))));
    }
    return out;
  }

  private async embedOne(session: InferenceSession, text: string): Promise<Float32Array> {
    const { ids, weights, seqLen } = this.tokenizer.encodeBatch([text]);
    const dims = [1, seqLen];
    const feeds: Record<string, Tensor> = {
      input_ids: new ort.Tensor("int64", ids, dims),
      weights: new ort.Tensor("float32", weights, dims),
    };
    const result = await session.run(feeds);
    try {
      const data = (result.embedding as Tensor).data as Float32Array;
      // A manifest whose dim is not the graph's would give vectors of the wrong length, or cut
      // them at the wrong place in a batch.
      if (data.length !== this.info.dim) {
        throw new Error(`the model gives ${data.length} numbers per text, but manifest.json says dim ${this.info.dim}`);
      }
      return data.slice();
    } finally {
      for (const t of Object.values(result)) (t as Tensor).dispose?.();
    }
  }

  async close(): Promise<void> {
    const s = this.session;
    this.session = null;
    await s?.release();
  }
}

/**
 * A static model directory's manifest, read so that a damaged copy is named as one: the file that
 * is cut short, missing or not the size the manifest records (what an interrupted copy or download
 * leaves), with what to do, rather than what the code tripped on (a JSON parse error without its
 * file, a TypeError, ONNX Runtime's protobuf error). Sizes only: hashing 28 MB would slow each start.
 */
export function readStaticManifest(dir: string): StaticManifest {
  const path = join(dir, "manifest.json");
  let manifest: StaticManifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as StaticManifest;
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${errorMessage(err)}): ${COPY_AGAIN}`);
  }
  if (manifest?.kind !== "static") throw new Error(`${path}: kind is ${String(manifest?.kind)}, not "static"`);
  if (!Number.isInteger(manifest.dim) || manifest.dim < 1) {
    throw new Error(`${path}: dim is ${JSON.stringify(manifest.dim)}, not a whole number of dimensions`);
  }
  // The word-neighbour table is checked as the model's files are when the manifest lists it.
  const listed = [...MODEL_FILES, ...(manifest.files && WORD_NEIGHBOURS_FILE in manifest.files ? [WORD_NEIGHBOURS_FILE] : [])];
  for (const name of listed) {
    const entry = manifest.files?.[name];
    if (typeof entry?.sha256 !== "string" || !Number.isInteger(entry.bytes)) {
      throw new Error(`${path} does not list ${name} with its bytes and sha256: ${COPY_AGAIN}`);
    }
    const file = join(dir, name);
    if (!existsSync(file)) throw new Error(`${file} is missing: ${COPY_AGAIN}`);
    const bytes = statSync(file).size;
    if (bytes !== entry.bytes) {
      throw new Error(
        `${file} is ${bytes} byte${bytes === 1 ? "" : "s"}, but manifest.json says ${entry.bytes}: a truncated or changed copy; ${COPY_AGAIN}`,
      );
    }
  }
  return manifest;
}

export async function createStaticEmbedder(dir: string): Promise<Embedder> {
  const manifest = readStaticManifest(dir);
  const tokenizer = StaticTokenizer.fromDirectory(dir);
  // From bytes, not a path: inside a compiled Bun binary the files live in an embedded filesystem.
  // By path: ONNX Runtime reads the file itself, so no second copy of it lives in the JS heap.
  const modelFile = join(dir, "model.onnx");
  let session: InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelFile, { intraOpNumThreads: 1, graphOptimizationLevel: "all" });
  } catch (err) {
    throw new Error(`cannot load ONNX model ${modelFile}: ${errorMessage(err)}`);
  }
  // The manifest carries the files' sha256, so the revision costs no hashing at start. The vectors'
  // files only: the word-neighbour table changes no vector, so adding it re-embeds nothing.
  const revision = MODEL_FILES.map((name) => `${name}:${manifest.files[name]!.sha256.slice(0, 16)}`).join(",");
  const embedder = new StaticEmbedder(
    { kind: "static", name: manifest.name, dim: manifest.dim, revision, source: dir },
    tokenizer,
    session,
  );
  try {
    embedder.wordNeighbours = loadWordNeighbours(dir, manifest.files);
  } catch (err) {
    await embedder.close();
    throw new Error(`${dir}: ${errorMessage(err)}`);
  }
  try {
    await embedder.embed(["ModuleNotFoundError: No module named 'colony'"]); // the graph agrees with the manifest
  } catch (err) {
    await embedder.close();
    throw new Error(`${dir}: ${errorMessage(err)}`);
  }
  return embedder;
}

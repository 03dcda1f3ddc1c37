// Exports a trained fastText skipgram model as Colony's static model directory:
//   model.onnx      int8 table (empty row, top words, most shared n-grams) + pooling graph
//   tokenizer.json  word list, SIF weights, kept n-gram buckets (src/embedding/static-model.ts)
//   manifest.json   sources, corpus hash, training arguments, file hashes
// Usage: bun tools/model/export.ts WORK_DIR OUT_DIR
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeModel, tensor, type NodeSpec, type TensorInit } from "../onnx/writer.ts";
import { ngramBuckets, StaticTokenizer, type StaticTokenizerData } from "../../src/embedding/static-model.ts";
import { TOKENIZER_SPEC } from "../../src/embedding/static-tokenizer.ts";
import { FastTextBin } from "./fasttext-bin.ts";

// Export choices (see models/README.md). Sized for the 40 MB budget: (1 + 60k + 40k) × 256 int8.
export const EXPORT = {
  words: Number(process.env.MODEL_WORDS ?? 60_000),
  ngrams: Number(process.env.MODEL_NGRAMS ?? 40_000),
  /** SIF smoothing a in a/(a + p(w)). */
  sifA: Number(process.env.MODEL_SIF_A ?? 1e-3),
  oovWeight: 1,
  partFactor: 0.5,
  maxTokens: 256,
  maxPositions: 1024,
  removeCommonComponent: (process.env.MODEL_REMOVE_PC ?? "1") === "1",
  pcSampleLines: 30_000,
};

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

function main(): void {
  const [work, out] = process.argv.slice(2);
  if (!work || !out) throw new Error("usage: export.ts WORK_DIR OUT_DIR");
  mkdirSync(out, { recursive: true });
  const ft = new FastTextBin(join(work, "ft.bin"));
  const { dim, minn, maxn, bucket } = ft.args;
  const nwords = ft.words.length;
  console.error(`fastText: ${nwords} words, ${ft.ntokens} tokens, dim ${dim}, n-grams ${minn}..${maxn} in ${bucket} buckets`);

  // Words: the most frequent (the dictionary is sorted by count), without the end-of-line token.
  const wordIdx: number[] = [];
  for (let i = 0; i < nwords && wordIdx.length < EXPORT.words; i++) if (ft.words[i]!.word !== "</s>") wordIdx.push(i);
  const words = wordIdx.map((i) => ft.words[i]!.word);
  const wordWeights = wordIdx.map((i) => {
    const p = ft.words[i]!.count / ft.ntokens;
    return Math.round((EXPORT.sifA / (EXPORT.sifA + p)) * 1e4) / 1e4;
  });

  // N-grams: those shared by the most vocabulary words generalize best to unseen identifiers.
  const typeFreq = new Int32Array(bucket);
  const subwords: number[][] = [];
  for (let i = 0; i < nwords; i++) {
    const w = ft.words[i]!.word;
    const bs = w === "</s>" ? [] : ngramBuckets(w, minn, maxn, bucket);
    subwords.push(bs);
    for (const b of new Set(bs)) typeFreq[b]!++;
  }
  const candidates: number[] = [];
  for (let b = 0; b < bucket; b++) if (typeFreq[b]! > 0) candidates.push(b);
  candidates.sort((x, y) => typeFreq[y]! - typeFreq[x]! || x - y);
  const kept = candidates.slice(0, EXPORT.ngrams);
  console.error(
    `n-grams: ${candidates.length} used buckets, keeping ${kept.length} (shared by ≥ ${typeFreq[kept[kept.length - 1]!]} words)`,
  );

  // Float table: row 0 = empty text, then word vectors (fastText's getWordVector: the mean of
  // the word's row and its n-gram rows), then the raw n-gram rows.
  const rows = 1 + words.length + kept.length;
  const table = new Float32Array(rows * dim);
  const tmp = new Float32Array(dim);
  let seed = 12345;
  for (let d = 0; d < dim; d++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    table[d] = (seed / 2 ** 32) * 2 - 1;
  }
  wordIdx.forEach((wi, k) => {
    const dst = table.subarray((1 + k) * dim, (2 + k) * dim);
    const parts = [wi, ...subwords[wi]!.map((b) => nwords + b)];
    for (const r of parts) {
      ft.row(r, tmp);
      for (let d = 0; d < dim; d++) dst[d]! += tmp[d]!;
    }
    for (let d = 0; d < dim; d++) dst[d]! /= parts.length;
  });
  kept.forEach((b, k) => ft.row(nwords + b, table.subarray((1 + words.length + k) * dim, (2 + words.length + k) * dim)));
  checkAgainstVec(join(work, "ft.vec"), words, table, dim);

  const { q, scales } = quantize(table, rows, dim);

  const tokData: StaticTokenizerData = {
    spec: TOKENIZER_SPEC,
    maxTokens: EXPORT.maxTokens,
    maxPositions: EXPORT.maxPositions,
    emptyId: 0,
    words,
    wordWeights,
    oovWeight: EXPORT.oovWeight,
    partFactor: EXPORT.partFactor,
    ngrams: { minn, maxn, buckets: bucket, hash: "fasttext-fnv1a32", kept },
  };
  const tokenizer = new StaticTokenizer(tokData);

  // Common component: the first singular vector of corpus sentence embeddings (SIF, Arora et al.).
  const projection = new Float32Array(dim * dim);
  for (let d = 0; d < dim; d++) projection[d * dim + d] = 1;
  let pcShare = 0;
  if (EXPORT.removeCommonComponent) {
    const { u, share } = commonComponent(sampleLines(join(work, "corpus.txt")), tokenizer, q, scales, dim);
    pcShare = share;
    for (let i = 0; i < dim; i++) for (let j = 0; j < dim; j++) projection[i * dim + j]! -= u[i]! * u[j]!;
    console.error(`common component explains ${(share * 100).toFixed(1)}% of sentence-vector energy`);
  }

  const onnx = encodeModel(buildGraph(q, scales, projection, rows, dim));
  writeFileSync(join(out, "model.onnx"), onnx);
  const tokJson = JSON.stringify(tokData);
  writeFileSync(join(out, "tokenizer.json"), tokJson);
  writeManifest(work, out, { dim, rows, words: words.length, ngrams: kept.length, pcShare, ft });
  console.error(`wrote ${out}: model.onnx ${(onnx.length / 1e6).toFixed(1)} MB, tokenizer.json ${(tokJson.length / 1e6).toFixed(1)} MB`);
  ft.close();
}

/** int8 with one scale per row: symmetric, max |x| maps to 127. */
export function quantize(table: Float32Array, rows: number, dim: number): { q: Int8Array; scales: Float32Array } {
  const q = new Int8Array(rows * dim);
  const scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let m = 0;
    for (let d = 0; d < dim; d++) m = Math.max(m, Math.abs(table[r * dim + d]!));
    const s = m > 0 ? m / 127 : 1;
    scales[r] = s;
    for (let d = 0; d < dim; d++) q[r * dim + d] = Math.round(table[r * dim + d]! / s);
  }
  return { q, scales };
}

/** The .vec file fastText wrote holds the same word vectors: proves the n-gram hashing matches. */
function checkAgainstVec(path: string, words: string[], table: Float32Array, dim: number): void {
  if (!existsSync(path)) return;
  const want = new Set([words[0], words[100], words[5000], words[words.length - 1]]);
  const text = readFileSync(path, "utf8");
  let checked = 0;
  for (const line of text.split("\n")) {
    const sp = line.indexOf(" ");
    const w = line.slice(0, sp);
    if (!want.has(w)) continue;
    const vals = line
      .slice(sp + 1)
      .trim()
      .split(" ")
      .map(Number);
    const k = words.indexOf(w) + 1;
    for (let d = 0; d < dim; d++) {
      if (Math.abs(vals[d]! - table[k * dim + d]!) > 1e-3) throw new Error(`word vector of "${w}" differs from ft.vec at ${d}`);
    }
    checked++;
  }
  if (checked < want.size) throw new Error(`only ${checked} of ${want.size} check words found in ft.vec`);
  console.error(`word vectors match ft.vec (${checked} words checked)`);
}

function sentenceVector(ids: number[], weights: number[], q: Int8Array, scales: Float32Array, dim: number): Float64Array {
  const v = new Float64Array(dim);
  for (let i = 0; i < ids.length; i++) {
    const r = ids[i]!;
    const w = weights[i]! * scales[r]!;
    for (let d = 0; d < dim; d++) v[d]! += w * q[r * dim + d]!;
  }
  return v;
}

/** Every k-th corpus line, about EXPORT.pcSampleLines of them. */
function sampleLines(corpusPath: string): string[] {
  const lines = readFileSync(corpusPath, "utf8").split("\n");
  const step = Math.max(1, Math.floor(lines.length / EXPORT.pcSampleLines));
  return lines.filter((_, i) => i % step === 0);
}

/**
 * The common component of the texts' SIF sentence vectors: their first singular vector, and the
 * share of the (unit) vectors' energy it carries.
 */
export function commonComponent(lines: string[], tok: StaticTokenizer, q: Int8Array, scales: Float32Array, dim: number) {
  const cov = new Float64Array(dim * dim);
  let energy = 0;
  for (const line of lines) {
    const { ids, weights } = tok.encode(line);
    const v = sentenceVector(ids, weights, q, scales, dim);
    let n = 0;
    for (let d = 0; d < dim; d++) n += v[d]! * v[d]!;
    n = Math.sqrt(n);
    if (n === 0) continue;
    for (let d = 0; d < dim; d++) v[d]! /= n;
    energy += 1;
    for (let i = 0; i < dim; i++) {
      const vi = v[i]!;
      for (let j = 0; j < dim; j++) cov[i * dim + j]! += vi * v[j]!;
    }
  }
  // Power iteration from a fixed start: deterministic.
  let u = new Float64Array(dim).fill(1 / Math.sqrt(dim));
  let lambda = 0;
  for (let it = 0; it < 200; it++) {
    const next = new Float64Array(dim);
    for (let i = 0; i < dim; i++) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += cov[i * dim + j]! * u[j]!;
      next[i] = s;
    }
    lambda = Math.hypot(...next);
    for (let i = 0; i < dim; i++) next[i]! /= lambda;
    u = next;
  }
  return { u: Float32Array.from(u), share: lambda / energy };
}

/** The pooling graph: weighted mean of dequantized rows, projection, L2 normalization. */
export function buildGraph(
  q: Int8Array,
  scales: Float32Array,
  projection: Float32Array,
  rows: number,
  dim: number,
  name = "colony-static-v1",
) {
  const initializers: TensorInit[] = [
    { name: "table", dtype: "int8", dims: [rows, dim], data: q },
    tensor.float32("row_scales", [rows], scales),
    tensor.float32("projection", [dim, dim], projection),
    tensor.int64("axis_seq", [1], [1]),
    tensor.int64("axis_last", [1], [-1]),
    tensor.float32("min_weight", [], [1e-9]),
    tensor.float32("norm_eps", [], [1e-12]),
  ];
  const nodes: NodeSpec[] = [
    { op: "Gather", inputs: ["table", "input_ids"], outputs: ["rows_q"], attrs: { axis: 0 } },
    { op: "Cast", inputs: ["rows_q"], outputs: ["rows_f"], attrs: { to: 1 } },
    { op: "Gather", inputs: ["row_scales", "input_ids"], outputs: ["rows_scale"], attrs: { axis: 0 } },
    { op: "Mul", inputs: ["rows_scale", "weights"], outputs: ["w_scaled"] },
    { op: "Unsqueeze", inputs: ["w_scaled", "axis_last"], outputs: ["w_col"] },
    { op: "Mul", inputs: ["rows_f", "w_col"], outputs: ["weighted"] },
    { op: "ReduceSum", inputs: ["weighted", "axis_seq"], outputs: ["summed"], attrs: { keepdims: 0 } },
    { op: "ReduceSum", inputs: ["weights", "axis_seq"], outputs: ["weight_sum"], attrs: { keepdims: 1 } },
    { op: "Max", inputs: ["weight_sum", "min_weight"], outputs: ["weight_sum_safe"] },
    { op: "Div", inputs: ["summed", "weight_sum_safe"], outputs: ["mean"] },
    { op: "MatMul", inputs: ["mean", "projection"], outputs: ["projected"] },
    { op: "Mul", inputs: ["projected", "projected"], outputs: ["squares"] },
    { op: "ReduceSum", inputs: ["squares", "axis_seq"], outputs: ["sq_norm"], attrs: { keepdims: 1 } },
    { op: "Add", inputs: ["sq_norm", "norm_eps"], outputs: ["sq_norm_eps"] },
    { op: "Sqrt", inputs: ["sq_norm_eps"], outputs: ["norm"] },
    { op: "Div", inputs: ["projected", "norm"], outputs: ["embedding"] },
  ];
  return {
    graph: {
      name,
      nodes,
      initializers,
      inputs: [
        { name: "input_ids", dtype: "int64" as const, shape: ["batch", "seq"] },
        { name: "weights", dtype: "float32" as const, shape: ["batch", "seq"] },
      ],
      outputs: [{ name: "embedding", dtype: "float32" as const, shape: ["batch", dim] }],
    },
    opset: 17,
    producer: "colony tools/model/export.ts",
    metadata: { name, dim: String(dim), tokenizer: TOKENIZER_SPEC },
  };
}

interface CorpusSources {
  lines: number;
  tokens: number;
  sha256: string;
  /** package-lock.json when the corpus was built (node_modules is one of the sources). */
  package_lock_sha256?: string;
  sources: Array<{ id: string; origin: string[]; files: number; lines: number; tokens: number }>;
}

function writeManifest(
  work: string,
  out: string,
  m: { dim: number; rows: number; words: number; ngrams: number; pcShare: number; ft: FastTextBin },
): void {
  const versions = new Map(
    readFileSync(join(work, "dpkg-versions.tsv"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t") as [string, string]),
  );
  const corpus = JSON.parse(readFileSync(join(work, "corpus-sources.json"), "utf8")) as CorpusSources;
  const lock = readFileSync(join(import.meta.dir, "../../package-lock.json"));
  const sitePkgs = existsSync(join(work, "python-site-packages.txt"))
    ? readFileSync(join(work, "python-site-packages.txt"), "utf8").split("\n").filter(Boolean)
    : [];
  const sources = corpus.sources.map((s) => {
    const base = { id: s.id, files: s.files, lines: s.lines, tokens: s.tokens };
    if (s.id === "node_modules")
      return { ...base, origin: "npm packages of package-lock.json", package_lock_sha256: corpus.package_lock_sha256 ?? sha256(lock) };
    if (s.id === "python-site-packages")
      return { ...base, origin: "the machine image's pyenv Python 3.11.7 site-packages", packages: sitePkgs };
    if (s.id === "python-stdlib")
      return {
        ...base,
        origin: "/usr/lib/python3.11",
        packages: [{ name: "libpython3.11-stdlib", version: versions.get("libpython3.11-stdlib") }],
      };
    if (s.id === "python-dist-packages") {
      // Which python3-* packages were installed is recorded since session 10 (python-dist-packages.txt).
      const owners = existsSync(join(work, "python-dist-packages.txt"))
        ? readFileSync(join(work, "python-dist-packages.txt"), "utf8").split("\n").filter(Boolean)
        : [];
      const origin = "/usr/lib/python3/dist-packages (Debian python3-* packages)";
      if (owners.length === 0) return { ...base, origin };
      return { ...base, origin, packages: owners.map((name) => ({ name, version: versions.get(name) ?? null })) };
    }
    if (s.id === "errno") return { ...base, origin: "Python errno.errorcode and os.strerror (glibc messages)" };
    return { ...base, packages: s.origin.map((name) => ({ name, version: versions.get(name) ?? null })) };
  });
  const ftArgs = readFileSync(join(work, "ft-args.txt"), "utf8").split("\n").filter(Boolean);
  const files: Record<string, { sha256: string; bytes: number }> = {};
  for (const f of ["model.onnx", "tokenizer.json"]) {
    const b = readFileSync(join(out, f));
    files[f] = { sha256: sha256(b), bytes: b.length };
  }
  const manifest = {
    name: process.env.MODEL_NAME ?? "colony-static-v1",
    kind: "static",
    dim: m.dim,
    description:
      "Static word + char n-gram vectors (fastText skipgram) trained on technical documentation, man pages, gettext messages, changelogs and exception messages; pooled by an ONNX graph (SIF-weighted mean, common-component removal, L2 norm).",
    files,
    tokenizer: { spec: TOKENIZER_SPEC, file: "tokenizer.json", words: m.words, ngrams: m.ngrams, table_rows: m.rows },
    sources,
    corpus: { tokens: corpus.tokens, lines: corpus.lines, sha256: corpus.sha256 },
    training: {
      tool: "fasttext",
      version: versions.get("fasttext") ?? "unknown",
      mode: "skipgram",
      args: ftArgs,
      seed: Number(ftArgs[ftArgs.indexOf("-seed") + 1]),
      threads: Number(ftArgs[ftArgs.indexOf("-thread") + 1]),
      determinism:
        "The corpus is byte-identical for identical package versions (sha256 above). fastText with more than one thread is not bit-reproducible (Hogwild updates race); -thread 1 is, at about twice the time.",
      vocabulary_words: m.ft.words.length,
      corpus_tokens_seen_by_fasttext: m.ft.ntokens,
    },
    export: {
      words: m.words,
      ngram_rows: m.ngrams,
      ngram_selection: "buckets shared by the most vocabulary words",
      weights: `SIF a/(a+p(w)) with a=${EXPORT.sifA}; out-of-vocabulary token ${EXPORT.oovWeight} shared among its known n-grams; identifier parts x${EXPORT.partFactor}`,
      quantization: "int8, symmetric, one float32 scale per row",
      common_component_removed: EXPORT.removeCommonComponent,
      common_component_energy_share: Math.round(m.pcShare * 1000) / 1000,
      selection:
        "Defaults chosen on the internal check pairs only (tools/model/compare-variants.sh): SIF a 1e-3 vs 1e-4 vs 3e-3, common-component removal on/off, part factor 0.5 vs 1, 60k vs 80k words, 50k words + 60k n-grams. shared/eval was measured after the choice (bench/embedding.bench.ts), not used to select.",
    },
    created: new Date().toISOString(),
  };
  writeFileSync(join(out, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
}

if (import.meta.main) main();

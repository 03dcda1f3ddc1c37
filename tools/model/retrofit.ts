// Retrofits an exported static model's word vectors to a semantic lexicon (Faruqui et al. 2015,
// "Retrofitting word vectors to semantic lexicons"): each word that names something (a package,
// a command, an errno code) is pulled toward the words of the text that says what it is, while
// staying near its trained vector, so that "the data validation library" comes nearer "pydantic"
// without retraining fastText. The lexicon (lexicon.ts) comes only from sources installed here.
//
// EXPERIMENT, NOT ADOPTED: measured on the dev set's tune split, no setting improved retrieval
// beyond noise and the plain Faruqui update made it worse (bench/RESULTS.md "Session 6: model
// retrofit"); `make model` runs this stage only with MODEL_RETROFIT=1. Two update rules:
//
//   faruqui:  q_i ← (α·q̂_i + Σ_j β_ij·q_j) / (α + Σ_j β_ij), iterated (q̂ = the trained vectors);
//             a name word's Σ_j β_hj = β, spread over its entries' text words by SIF weight (its
//             pull is toward the mean of its descriptions); a text word's Σ_j β_dj = β_rev, spread
//             over the names it describes, only for text words in few entries.
//   centered: q_h = q̂_h + β·(m_h − m̄), m_h the SIF mean of a name's texts and m̄ the mean of all
//             m_h: the pull adds no direction that all descriptions share (the plain update pulls
//             thousands of names toward "library, development files, module" alike).
//
// N-gram rows and the empty row are never moved (a kept n-gram row is shared by at least 11
// vocabulary words).
//
// Usage: bun tools/model/retrofit.ts BASE_DIR OUT_DIR LEXICON.jsonl
//   BASE_DIR  a static model as export.ts writes it (not yet retrofitted)
//   OUT_DIR   where the retrofitted model.onnx, tokenizer.json and manifest.json go
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { StaticTokenizer } from "../../src/embedding/static-model.ts";
import { tokenize } from "../../src/embedding/static-tokenizer.ts";
import { readStaticTable } from "../onnx/reader.ts";
import { encodeModel } from "../onnx/writer.ts";
import { buildGraph, commonComponent, quantize } from "./export.ts";
import type { LexiconEntry, LexiconSource } from "./lexicon.ts";

export const MODEL_NAME = "colony-static-v2";

// Parameters: the defaults are the best setting found on the dev set's tune split (models/README.md "Retrofit").
export const RETROFIT = {
  iterations: Number(process.env.RETROFIT_ITERATIONS ?? 10),
  /** Weight of a word's trained vector. */
  alpha: Number(process.env.RETROFIT_ALPHA ?? 1),
  /** Total pull of a name word toward its texts. */
  beta: Number(process.env.RETROFIT_BETA ?? 0.5),
  /** Total pull of a text word toward the names it describes (0: names move, texts do not). */
  betaReverse: Number(process.env.RETROFIT_BETA_REVERSE ?? 0),
  /** A name word in more entries than this is generic (python3, dev, gnome): not a name. */
  maxNameEntries: Number(process.env.RETROFIT_MAX_NAME_ENTRIES ?? 30),
  /** Name words with a SIF weight below this are common words of the corpus, whose trained vectors already say what they are. */
  minNameWeight: Number(process.env.RETROFIT_MIN_NAME_WEIGHT ?? 0.9),
  /** Text words in more entries than this get no reverse pull. */
  maxReverseEntries: Number(process.env.RETROFIT_MAX_REVERSE_ENTRIES ?? 30),
  /** Text words with a SIF weight below this are function words: left out of a text's mean. */
  minTextWeight: Number(process.env.RETROFIT_MIN_TEXT_WEIGHT ?? 0.1),
  /** Sources used (comma-separated ids of lexicon.ts). */
  sources: (process.env.RETROFIT_SOURCES ?? "debian,npm").split(",").filter(Boolean),
  /** The update rule: "faruqui" or "centered" (see the top of this file). */
  mode: (process.env.RETROFIT_MODE ?? "centered") as "faruqui" | "centered",
  /** "keep" the base model's projection, or recompute the common component from the lexicon's texts. */
  projection: (process.env.RETROFIT_PROJECTION ?? "keep") as "keep" | "lexicon",
};
export type RetrofitParams = typeof RETROFIT;

/** Packaging affixes of Debian package names: python3-pydantic → pydantic, libasound2-dev → asound. */
const NAME_PREFIXES = [
  "python3-",
  "python-",
  "pypy-",
  "node-",
  "golang-github-",
  "golang-",
  "librust-",
  "ruby-",
  "r-cran-",
  "r-bioc-",
  "php-",
  "libghc-",
  "lua-",
  "elpa-",
  "gir1.2-",
  "lib",
];
const NAME_SUFFIXES = ["-dev", "-doc", "-dbg", "-perl", "-java", "-common", "-data", "-bin", "-utils", "-tools", "-examples", "-ocaml"];

export function strippedName(name: string): string {
  let s = name.toLowerCase();
  for (const p of NAME_PREFIXES) {
    if (s.startsWith(p) && s.length > p.length + 1) {
      s = s.slice(p.length);
      break;
    }
  }
  for (let again = true; again; ) {
    again = false;
    for (const x of NAME_SUFFIXES) {
      if (s.endsWith(x) && s.length > x.length + 1) {
        s = s.slice(0, -x.length);
        again = true;
      }
    }
  }
  // Soname and version tails: asound2 → asound, gtk-3 → gtk, ssl1.1 → ssl.
  const bare = s.replace(/[-.]?\d+(\.\d+)*[a-z]?$/, "");
  return bare.length >= 2 ? bare : s;
}

/** Table ids (words only) of a name: its tokens and those of its unaffixed form, without duplicates. */
function nameWords(wordId: Map<string, number>, entry: LexiconEntry): number[] {
  const forms = entry.source === "debian" ? [entry.name, strippedName(entry.name)] : [entry.name];
  const ids = new Set<number>();
  for (const f of forms) for (const t of tokenize(f, 32)) if (wordId.has(t.text)) ids.add(wordId.get(t.text)!);
  return [...ids];
}

/** Content words of a text with their SIF weights (identifier parts at the tokenizer's part factor). */
function textWords(tok: StaticTokenizer, wordId: Map<string, number>, text: string, p: RetrofitParams): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of tokenize(text, tok.data.maxTokens)) {
    const id = wordId.get(t.text);
    if (id === undefined) continue;
    const w = tok.data.wordWeights[id - 1]! * (t.part ? tok.data.partFactor : 1);
    if (w < p.minTextWeight) continue;
    out.set(id, Math.max(out.get(id) ?? 0, w));
  }
  return out;
}

export interface Graph {
  /** For each word id with neighbours: (neighbour id, weight) lists, weights summing to the word's total pull. */
  edges: Map<number, Map<number, number>>;
  nameWordsUsed: number;
  textWordsPulled: number;
  entriesUsed: number;
}

export function lexiconGraph(tok: StaticTokenizer, entries: LexiconEntry[], p: RetrofitParams = RETROFIT): Graph {
  const wordId = new Map<string, number>(tok.data.words.map((w, i) => [w, i + 1]));
  const parsed = entries.map((e) => ({ names: nameWords(wordId, e), text: textWords(tok, wordId, e.text, p) }));
  // How many entries each word names / appears in the text of.
  const nameCount = new Map<number, number>();
  const textCount = new Map<number, number>();
  for (const e of parsed) {
    for (const h of e.names) nameCount.set(h, (nameCount.get(h) ?? 0) + 1);
    for (const d of e.text.keys()) textCount.set(d, (textCount.get(d) ?? 0) + 1);
  }
  const forward = new Map<number, Map<number, number>>();
  const reverse = new Map<number, Map<number, number>>();
  const add = (m: Map<number, Map<number, number>>, a: number, b: number, w: number) => {
    let row = m.get(a);
    if (!row) m.set(a, (row = new Map()));
    row.set(b, (row.get(b) ?? 0) + w);
  };
  let entriesUsed = 0;
  for (const e of parsed) {
    const names = e.names.filter((h) => nameCount.get(h)! <= p.maxNameEntries && tok.data.wordWeights[h - 1]! >= p.minNameWeight);
    const text = [...e.text].filter(([d]) => !names.includes(d));
    if (!names.length || !text.length) continue;
    entriesUsed++;
    const total = text.reduce((s, [, w]) => s + w, 0);
    for (const h of names) for (const [d, w] of text) add(forward, h, d, w / total);
    if (p.betaReverse > 0) {
      for (const [d] of text) {
        if (textCount.get(d)! > p.maxReverseEntries) continue;
        for (const h of names) add(reverse, d, h, 1 / names.length);
      }
    }
  }
  // Normalize each word's pull: β for name words, β_rev for text words (a word can be both).
  const edges = new Map<number, Map<number, number>>();
  const scaled = (m: Map<number, Map<number, number>>, total: number) => {
    for (const [a, row] of m) {
      const sum = [...row.values()].reduce((s, w) => s + w, 0);
      for (const [b, w] of row) add(edges, a, b, (total * w) / sum);
    }
  };
  scaled(forward, p.beta);
  scaled(reverse, p.betaReverse);
  return { edges, nameWordsUsed: forward.size, textWordsPulled: reverse.size, entriesUsed };
}

/** Faruqui's iterative update, on the rows listed in the graph (Jacobi: each pass reads the last). */
export function retrofit(base: Float32Array, dim: number, graph: Graph, p: RetrofitParams = RETROFIT): Float32Array {
  let cur = base.slice();
  for (let it = 0; it < p.iterations; it++) {
    const next = cur.slice();
    for (const [i, row] of graph.edges) {
      const acc = new Float64Array(dim);
      for (let d = 0; d < dim; d++) acc[d] = p.alpha * base[i * dim + d]!;
      let denom = p.alpha;
      for (const [j, w] of row) {
        denom += w;
        for (let d = 0; d < dim; d++) acc[d]! += w * cur[j * dim + d]!;
      }
      for (let d = 0; d < dim; d++) next[i * dim + d] = acc[d]! / denom;
    }
    cur = next;
  }
  return cur;
}

/** The centered rule: q_h = q̂_h + β·(m_h − m̄). Text words are not moved. */
export function centeredShift(base: Float32Array, dim: number, graph: Graph, p: RetrofitParams = RETROFIT): Float32Array {
  const means = new Map<number, Float64Array>();
  const avg = new Float64Array(dim);
  for (const [i, row] of graph.edges) {
    const m = new Float64Array(dim);
    let total = 0;
    for (const [j, w] of row) {
      total += w;
      for (let d = 0; d < dim; d++) m[d]! += w * base[j * dim + d]!;
    }
    for (let d = 0; d < dim; d++) {
      m[d]! /= total;
      avg[d]! += m[d]! / graph.edges.size;
    }
    means.set(i, m);
  }
  const out = base.slice();
  for (const [i, m] of means) for (let d = 0; d < dim; d++) out[i * dim + d]! += p.beta * (m[d]! - avg[d]!);
  return out;
}

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

function main(): void {
  const [baseDir, outDir, lexiconPath] = process.argv.slice(2).map((p) => resolve(p));
  if (!baseDir || !outDir || !lexiconPath) throw new Error("usage: retrofit.ts BASE_DIR OUT_DIR LEXICON.jsonl");
  const baseManifest = JSON.parse(readFileSync(join(baseDir, "manifest.json"), "utf8")) as Record<string, unknown>;
  if (baseManifest.retrofit) {
    throw new Error(
      `${baseDir} is already retrofitted (${String(baseManifest.name)}): retrofit the exported base model ` +
        "(export.ts output, or colony-static-v1 from git history), not its own output",
    );
  }
  const tok = StaticTokenizer.fromDirectory(baseDir);
  const { table: q, scales, projection: baseProjection, rows, dim } = readStaticTable(join(baseDir, "model.onnx"));
  if (rows !== tok.tableRows) throw new Error(`model.onnx has ${rows} rows, tokenizer.json ${tok.tableRows}`);
  const base = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) for (let d = 0; d < dim; d++) base[r * dim + d] = q[r * dim + d]! * scales[r]!;

  const entries = readFileSync(lexiconPath, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LexiconEntry)
    .filter((e) => RETROFIT.sources.includes(e.source));
  // The centered rule moves name words only.
  const graph = lexiconGraph(tok, entries, RETROFIT.mode === "centered" ? { ...RETROFIT, betaReverse: 0 } : RETROFIT);
  const t0 = performance.now();
  const fitted = RETROFIT.mode === "centered" ? centeredShift(base, dim, graph) : retrofit(base, dim, graph);
  // How far the changed rows moved (cosine to their trained vector).
  let cosSum = 0;
  for (const i of graph.edges.keys()) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let d = 0; d < dim; d++) {
      const a = base[i * dim + d]!;
      const b = fitted[i * dim + d]!;
      ab += a * b;
      aa += a * a;
      bb += b * b;
    }
    cosSum += ab / Math.sqrt(aa * bb);
  }
  const meanCos = graph.edges.size ? cosSum / graph.edges.size : 1;
  console.error(
    `retrofit: ${entries.length} entries (${graph.entriesUsed} used), ${graph.nameWordsUsed} name words, ${graph.textWordsPulled} text words pulled back, ` +
      `${graph.edges.size} rows changed, mean cosine to trained vector ${meanCos.toFixed(3)}, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const { q: fq, scales: fscales } = quantize(fitted, rows, dim);

  let projection = baseProjection;
  let pcShare: number | null = null;
  if (RETROFIT.projection === "lexicon") {
    const { u, share } = commonComponent(
      entries.map((e) => e.text),
      tok,
      fq,
      fscales,
      dim,
    );
    pcShare = share;
    projection = new Float32Array(dim * dim);
    for (let i = 0; i < dim; i++) for (let j = 0; j < dim; j++) projection[i * dim + j] = (i === j ? 1 : 0) - u[i]! * u[j]!;
    console.error(`common component of the lexicon texts carries ${(share * 100).toFixed(1)}% of their energy`);
  }

  mkdirSync(outDir, { recursive: true });
  const onnx = encodeModel(buildGraph(fq, fscales, projection, rows, dim, MODEL_NAME));
  writeFileSync(join(outDir, "model.onnx"), onnx);
  if (resolve(baseDir) !== resolve(outDir)) copyFileSync(join(baseDir, "tokenizer.json"), join(outDir, "tokenizer.json"));

  const sourcesPath = lexiconPath.replace(/\.jsonl$/, "") + ".sources.json";
  const sources = existsSync(sourcesPath) ? (JSON.parse(readFileSync(sourcesPath, "utf8")) as LexiconSource[]) : [];
  const files: Record<string, { sha256: string; bytes: number }> = {};
  for (const f of ["model.onnx", "tokenizer.json"]) {
    const b = readFileSync(join(outDir, f));
    files[f] = { sha256: sha256(b), bytes: b.length };
  }
  const baseFiles = baseManifest.files as Record<string, { sha256: string }>;
  const manifest = {
    ...baseManifest,
    name: MODEL_NAME,
    description:
      "Static word + char n-gram vectors (fastText skipgram) trained on technical documentation, man pages, gettext messages, changelogs and exception messages, " +
      "retrofitted to a lexicon of package, command and errno names and what they are; pooled by an ONNX graph (SIF-weighted mean, common-component removal, L2 norm).",
    files,
    retrofit: {
      method:
        RETROFIT.mode === "centered"
          ? "name words shifted by beta x (SIF mean of their lexicon texts - mean of all such means) (tools/model/retrofit.ts); n-gram rows untouched; int8 re-quantization"
          : "Faruqui et al. 2015 retrofitting of the word rows (n-gram rows untouched), then int8 re-quantization",
      base: { name: baseManifest.name, model_onnx_sha256: baseFiles["model.onnx"]!.sha256 },
      parameters: {
        mode: RETROFIT.mode,
        iterations: RETROFIT.iterations,
        alpha: RETROFIT.alpha,
        beta: RETROFIT.beta,
        beta_reverse: RETROFIT.betaReverse,
        max_name_entries: RETROFIT.maxNameEntries,
        min_name_weight: RETROFIT.minNameWeight,
        max_reverse_entries: RETROFIT.maxReverseEntries,
        min_text_weight: RETROFIT.minTextWeight,
        sources: RETROFIT.sources,
        projection:
          RETROFIT.projection === "keep" ? "the base model's (common component of its corpus lines)" : "recomputed from the lexicon texts",
      },
      lexicon: {
        entries: entries.length,
        entries_used: graph.entriesUsed,
        sha256: sha256(readFileSync(lexiconPath)),
        sources: sources.filter((s) => RETROFIT.sources.includes(s.id)),
      },
      rows_changed: graph.edges.size,
      mean_cosine_to_trained_vector: Math.round(meanCos * 1000) / 1000,
      ...(pcShare === null ? {} : { common_component_energy_share: Math.round(pcShare * 1000) / 1000 }),
      selection:
        "Parameters chosen on the tune split of the retrieval dev set (eval/devset.json, bench/devset.bench.ts); the lexicon never reads the dev set or shared/eval.",
    },
    created: new Date().toISOString(),
  };
  delete (manifest as Record<string, unknown>).internal_check;
  writeFileSync(join(outDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  console.error(`wrote ${outDir}: model.onnx ${(onnx.length / 1e6).toFixed(1)} MB`);
}

if (import.meta.main) main();

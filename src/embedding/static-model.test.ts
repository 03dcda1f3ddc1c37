// Tests of the static model runtime against the committed model in models/default.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readStaticTable } from "../../tools/onnx/reader";
import type { Embedder } from "./embedder";
import { createStaticEmbedder, fastTextHash, isStaticModelDir, ngramBuckets, StaticTokenizer } from "./static-model";
import { tokenize } from "./static-tokenizer";
import { cpuMsSince } from "../../test/support/cpu-time";

const MODEL_DIR = resolve(import.meta.dir, "../../models/default");
const manifest = JSON.parse(readFileSync(join(MODEL_DIR, "manifest.json"), "utf8")) as {
  dim: number;
  name: string;
  files: Record<string, { sha256: string }>;
};

let emb: Embedder;
beforeAll(async () => {
  emb = await createStaticEmbedder(MODEL_DIR);
});
afterAll(async () => {
  await emb.close();
});

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));

describe("tokenizer", () => {
  test("keeps identifiers whole and adds their parts", () => {
    const toks = tokenize("Error [ERR_REQUIRE_ESM]: require() of ES Module");
    expect(toks.map((t) => t.text)).toEqual(["error", "err_require_esm", "err", "require", "esm", "require", "of", "es", "module"]);
    expect(toks.filter((t) => t.part).map((t) => t.text)).toEqual(["err", "require", "esm"]);
  });

  test("splits dotted names and camelCase, drops long numbers and hex", () => {
    const texts = (s: string) => tokenize(s).map((t) => t.text);
    expect(texts("ImportError: libGL.so.1: cannot open")).toEqual([
      "importerror",
      "import",
      "error",
      "libgl.so.1",
      "libgl",
      "lib",
      "gl",
      "so",
      "cannot",
      "open",
    ]);
    expect(texts("error[E0382]: borrow at 0x7ffd1234abcd line 123456")).toEqual(["error", "e0382", "borrow", "at", "line"]);
    expect(texts("python3.11 getElementById")).toEqual(["python3.11", "python3", "python", "getelementbyid", "get", "element", "by", "id"]);
  });

  test("drops redaction placeholders and strips trailing sentence dots", () => {
    expect(tokenize("open /home/<redacted:user>/x failed. Python.h.").map((t) => t.text)).toEqual([
      "open",
      "home",
      "x",
      "failed",
      "python.h",
      "python",
    ]);
  });

  test("stays linear on adversarial input", () => {
    const big = "a.".repeat(20_000) + "<redacted".repeat(4000) + "_".repeat(20_000);
    const t0 = process.cpuUsage();
    tokenize(big, 100_000);
    expect(cpuMsSince(t0)).toBeLessThan(2000);
  });

  test("fastText hashing: FNV-1a with sign-extended bytes", () => {
    const enc = new TextEncoder();
    expect(fastTextHash(enc.encode(""), 0, 0)).toBe(2166136261);
    // FNV-1a("a") = 0xe40c292c; a byte >= 0x80 is XORed as 0xffffff__ (fastText's int8_t cast).
    expect(fastTextHash(enc.encode("a"), 0, 1)).toBe(0xe40c292c);
    const b = new Uint8Array([0xc3]);
    let h = (2166136261 ^ 0xffffffc3) >>> 0;
    h = Math.imul(h, 16777619) >>> 0;
    expect(fastTextHash(b, 0, 1)).toBe(h);
    // "<ab>" with n in 3..4: "<ab", "ab>", "<ab>"
    expect(ngramBuckets("ab", 3, 4, 1 << 30).length).toBe(3);
  });

  test("encodes unknown identifiers through their n-grams and never returns nothing", () => {
    const tok = StaticTokenizer.fromDirectory(MODEL_DIR);
    const words = tok.data.words.length;
    const known = tok.encode("permission denied");
    expect(known.ids.every((id) => id >= 1 && id <= words)).toBe(true);
    const unknown = tok.encode("zqxjvfrobnicatorwidget");
    expect(unknown.ids.length).toBeGreaterThan(1);
    expect(unknown.ids.every((id) => id > words)).toBe(true);
    expect(unknown.weights.reduce((a, b) => a + b, 0)).toBeCloseTo(tok.data.oovWeight, 5);
    expect(tok.encode("")).toEqual({ ids: [tok.data.emptyId], weights: [1] });
    const batch = tok.encodeBatch(["permission denied", ""]);
    expect(batch.seqLen).toBe(known.ids.length);
    expect(batch.weights[batch.seqLen + 1]).toBe(0); // padding
  });
});

describe("static embedder", () => {
  test("is recognized as a static model directory", () => {
    expect(isStaticModelDir(MODEL_DIR)).toBe(true);
    expect(isStaticModelDir(import.meta.dir)).toBe(false);
    expect(emb.info).toEqual({
      kind: "static",
      name: manifest.name,
      dim: manifest.dim,
      revision: expect.stringContaining(`model.onnx:${manifest.files["model.onnx"].sha256.slice(0, 16)}`),
      source: MODEL_DIR,
    });
  });

  test("gives unit vectors of the manifest's dimension", async () => {
    const out = await emb.embed(["ModuleNotFoundError: No module named 'numpy'", "x", "permission denied"]);
    expect(out.length).toBe(3);
    for (const v of out) {
      expect(v.length).toBe(manifest.dim);
      expect(norm(v)).toBeCloseTo(1, 4);
    }
  });

  test("handles empty input and empty text", async () => {
    expect(await emb.embed([])).toEqual([]);
    const [e, p] = await emb.embed(["", "   <redacted:email> "]);
    expect(norm(e!)).toBeCloseTo(1, 4);
    // No tokens at all: the same fixed vector, unrelated to real text.
    expect(dot(e!, p!)).toBeCloseTo(1, 5);
    const [real] = await emb.embed(["connection refused"]);
    expect(Math.abs(dot(e!, real!))).toBeLessThan(0.3);
  });

  test("a text gets the same vector, bit for bit, alone and in any batch", async () => {
    // Texts of very different lengths: a batch of several would be padded to the longest.
    const texts = [
      "fatal error: Python.h: No such file or directory",
      "EACCES: permission denied",
      "",
      "Segmentation fault (core dumped)",
      "Error [ERR_REQUIRE_ESM]: require() of ES Module /app/node_modules/node-fetch/src/index.js from /app/index.js not supported. " +
        "Instead change the require of index.js to a dynamic import() which is available in all CommonJS modules.",
    ];
    const batch = await emb.embed(texts);
    for (let i = 0; i < texts.length; i++) {
      const [single] = await emb.embed([texts[i]!]);
      expect(batch[i]).toEqual(single!);
    }
    expect(await emb.embed([...texts].reverse())).toEqual([...batch].reverse());
  });

  test("more than one ONNX run per call keeps order", async () => {
    const texts = Array.from({ length: 150 }, (_, i) => `error number ${i % 7} in module m${i}`);
    const all = await emb.embed(texts);
    const [last] = await emb.embed([texts[149]!]);
    expect(dot(all[149]!, last!)).toBeCloseTo(1, 5);
  });

  test("the ONNX graph computes the documented pooling (plain-JS reference)", async () => {
    const { table, scales, projection, rows, dim } = readStaticTable(join(MODEL_DIR, "model.onnx"));
    const tok = StaticTokenizer.fromDirectory(MODEL_DIR);
    expect(rows).toBe(tok.tableRows);
    const texts = [
      "npm ERR! code ERESOLVE unable to resolve dependency tree",
      "libGL.so.1 missing",
      "",
      "rustc E0382 borrow of moved value",
    ];
    const got = await emb.embed(texts);
    texts.forEach((text, k) => {
      const { ids, weights } = tok.encode(text);
      const mean = new Float64Array(dim);
      let wsum = 0;
      ids.forEach((id, i) => {
        wsum += weights[i]!;
        for (let d = 0; d < dim; d++) mean[d]! += weights[i]! * scales[id]! * table[id * dim + d]!;
      });
      const proj = new Float64Array(dim);
      for (let j = 0; j < dim; j++) {
        let s = 0;
        for (let d = 0; d < dim; d++) s += (mean[d]! / wsum) * projection[d * dim + j]!;
        proj[j] = s;
      }
      const n = Math.sqrt(proj.reduce((s, x) => s + x * x, 0));
      for (let j = 0; j < dim; j++) expect(Math.abs(got[k]![j]! - proj[j]! / n)).toBeLessThan(1e-4);
    });
  });

  test("places related error text near each other (hand-written pairs)", async () => {
    const sim = async (a: string, b: string) => {
      const [x, y] = await emb.embed([a, b]);
      return dot(x!, y!);
    };
    expect(await sim("permission denied", "EACCES access denied")).toBeGreaterThan(await sim("permission denied", "out of memory"));
    expect(await sim("no space left on device", "disk is full")).toBeGreaterThan(
      await sim("no space left on device", "connection refused"),
    );
    expect(await sim("connection refused by server", "ECONNREFUSED 127.0.0.1:5432")).toBeGreaterThan(
      await sim("connection refused by server", "undefined is not a function"),
    );
    expect(await sim("segmentation fault core dumped", "SIGSEGV invalid memory access")).toBeGreaterThan(
      await sim("segmentation fault core dumped", "merge conflict in README"),
    );
  });
});

// End to end over a generated tiny BERT-shaped graph (full 30522-word vocabulary) and the real
// BERT tokenizer files: outputs must equal a plain-JS computation from the same weights.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BERT_VOCAB_DIR, loadEval } from "../../test/support/paths";
import { referenceEmbedding, writeTinyBertDir, type TinyBertOptions } from "../../test/support/tiny-bert";
import type { Embedder } from "./embedder";
import { createTransformerEmbedder, isTransformerModelDir, readPooling } from "./transformer";
import { WordPieceTokenizer } from "./wordpiece";

const root = mkdtempSync(join(tmpdir(), "colony-transformer-"));
const opened: Embedder[] = [];
afterAll(async () => {
  for (const e of opened) await e.close();
  rmSync(root, { recursive: true, force: true });
});

let dirCount = 0;
function modelDir(opts: Parameters<typeof writeTinyBertDir>[1] = {}) {
  const dir = join(root, `m${dirCount++}`);
  mkdirSync(dir);
  return { dir, weights: writeTinyBertDir(dir, opts) };
}

async function open(dir: string, opts?: Parameters<typeof createTransformerEmbedder>[1]): Promise<Embedder> {
  const e = await createTransformerEmbedder(dir, opts);
  opened.push(e);
  return e;
}

const tokenizer = WordPieceTokenizer.fromDirectory(BERT_VOCAB_DIR);

function expectVectorClose(actual: Float32Array, expected: ArrayLike<number>, tol = 1e-5): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  expect(worst).toBeLessThanOrEqual(tol);
}

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

const { cases } = loadEval();
const texts = [
  "ModuleNotFoundError: No module named 'numpy'",
  cases[0]!.error_line,
  cases[1]!.paraphrase,
  "",
  "hello world",
  "Ünïcödé ΟΔΟΣ 中国 \u{1F600}",
];

describe("tiny BERT model directory", () => {
  const { dir, weights } = modelDir();

  test("is recognised", () => {
    expect(isTransformerModelDir(dir)).toBe(true);
  });

  test("info: kind, name from config.json, dim from the graph, source", async () => {
    const e = await open(dir);
    expect(e.info.kind).toBe("transformer");
    // config.json _name_or_path is "sentence-transformers/all-MiniLm-L6-v2"
    expect(e.info.name).toBe("all-MiniLm-L6-v2");
    expect(e.info.dim).toBe(8);
    expect(e.info.source).toBe(join(dir, "model.onnx"));
    expect((await open(dir, { name: "custom" })).info.name).toBe("custom");
  });

  test("embeddings equal the plain-JS reference (tolerance 1e-5)", async () => {
    const e = await open(dir);
    const vectors = await e.embed(texts);
    expect(vectors.length).toBe(texts.length);
    texts.forEach((text, i) => expectVectorClose(vectors[i]!, referenceEmbedding(weights, tokenizer.encode(text).ids)));
  });

  test("vectors are unit length and differ between texts", async () => {
    const e = await open(dir);
    const vectors = await e.embed(texts);
    for (const v of vectors) expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-5);
    const keys = new Set(vectors.map((v) => Array.from(v, (x) => x.toFixed(4)).join(",")));
    expect(keys.size).toBe(texts.length);
  });

  test("padding does not change a text's embedding (batch vs each alone)", async () => {
    const e = await open(dir);
    const mixed = ["a", cases[2]!.error_line + " " + cases[3]!.root_cause, "short one", cases[4]!.paraphrase];
    const together = await e.embed(mixed);
    for (let i = 0; i < mixed.length; i++) {
      const [alone] = await e.embed([mixed[i]!]);
      expectVectorClose(together[i]!, alone!, 1e-6);
    }
  });

  test("more texts than one batch come back in input order", async () => {
    const e = await open(dir, { batchSize: 3 });
    const many = cases.slice(0, 10).map((c) => c.error_line);
    const vectors = await e.embed(many);
    many.forEach((text, i) => expectVectorClose(vectors[i]!, referenceEmbedding(weights, tokenizer.encode(text).ids)));
  });

  test("empty input list and empty strings", async () => {
    const e = await open(dir);
    expect(await e.embed([])).toEqual([]);
    const [v] = await e.embed([""]);
    expectVectorClose(v!, referenceEmbedding(weights, [101, 102]));
  });

  test("maxLength truncates like the tokenizer", async () => {
    const e = await open(dir, { maxLength: 12 });
    const long = cases.map((c) => c.root_cause).join(" ");
    const [v] = await e.embed([long]);
    const ids = tokenizer.encode(long, 12).ids;
    expect(ids.length).toBe(12);
    expectVectorClose(v!, referenceEmbedding(weights, ids));
  });

  test("concurrent embed calls are all answered correctly", async () => {
    const e = await open(dir);
    const results = await Promise.all(texts.map((t) => e.embed([t])));
    results.forEach(([v], i) => expectVectorClose(v!, referenceEmbedding(weights, tokenizer.encode(texts[i]!).ids)));
  });

  test("closed embedder refuses work", async () => {
    const e = await createTransformerEmbedder(dir);
    await e.close();
    await e.close();
    await expect(e.embed(["x"])).rejects.toThrow(/closed/);
  });
});

describe("export variants", () => {
  async function checkVariant(
    opts: TinyBertOptions & {
      modelPath?: string;
      tokenizerFiles?: ("vocab.txt" | "tokenizer.json" | "tokenizer_config.json" | "config.json")[];
    },
    dim: number,
    tol = 1e-5,
  ) {
    const { dir, weights } = modelDir(opts);
    const e = await open(dir);
    expect(e.info.dim).toBe(dim);
    const vectors = await e.embed(texts);
    texts.forEach((text, i) => expectVectorClose(vectors[i]!, referenceEmbedding(weights, tokenizer.encode(text).ids), tol));
    return e;
  }

  test("no token_type_ids input", async () => {
    await checkVariant({ tokenTypeInput: false }, 8);
  });

  test("2-D sentence_embedding output is used directly (width 6, not the hidden 8)", async () => {
    await checkVariant({ sentenceEmbeddingDim: 6 }, 6);
  });

  test("position_ids as a graph input", async () => {
    await checkVariant({ positionIdsInput: true }, 8);
  });

  test("float16 hidden states (fp16 exports)", async () => {
    // Half precision keeps ~3 decimal digits; the pooled vector stays within 2e-3.
    await checkVariant({ float16Output: true }, 8, 2e-3);
  });

  test("output named token_embeddings", async () => {
    await checkVariant({ hiddenOutputName: "token_embeddings" }, 8);
  });

  test("unnamed first output, symbolic width: dim found by a probe run", async () => {
    await checkVariant({ hiddenOutputName: "output_0", symbolicHiddenDim: true }, 8);
  });

  test("onnx/model_quantized.onnx with only vocab.txt, name from the directory", async () => {
    const e = await checkVariant({ modelPath: "onnx/model_quantized.onnx", tokenizerFiles: ["vocab.txt"], hidden: 16 }, 16);
    expect(e.info.name).toMatch(/^m\d+$/);
    expect(e.info.source.endsWith("onnx/model_quantized.onnx")).toBe(true);
  });

  test("onnx/model.onnx with only tokenizer.json", async () => {
    await checkVariant({ modelPath: "onnx/model.onnx", tokenizerFiles: ["tokenizer.json"] }, 8);
  });
});

describe("pooling from 1_Pooling/config.json", () => {
  const poolingConfig = (modes: Record<string, boolean>) =>
    JSON.stringify({
      word_embedding_dimension: 8,
      pooling_mode_cls_token: false,
      pooling_mode_mean_tokens: false,
      pooling_mode_max_tokens: false,
      ...modes,
    });

  for (const [mode, pooling] of [
    ["pooling_mode_cls_token", "cls"],
    ["pooling_mode_max_tokens", "max"],
    ["pooling_mode_mean_tokens", "mean"],
  ] as const) {
    test(`${mode} -> ${pooling} pooling`, async () => {
      const { dir, weights } = modelDir();
      mkdirSync(join(dir, "1_Pooling"));
      writeFileSync(join(dir, "1_Pooling", "config.json"), poolingConfig({ [mode]: true }));
      expect(readPooling(dir)).toBe(pooling);
      const e = await open(dir);
      const vectors = await e.embed(texts);
      texts.forEach((text, i) => expectVectorClose(vectors[i]!, referenceEmbedding(weights, tokenizer.encode(text).ids, pooling)));
      // Padding still does not matter (max and mean skip padded positions; [CLS] is always first).
      const [alone] = await e.embed([texts[4]!]);
      expectVectorClose(alone!, vectors[4]!, 1e-6);
    });
  }

  test("the pooling option overrides the file; unsupported modes are refused", async () => {
    const { dir, weights } = modelDir();
    mkdirSync(join(dir, "1_Pooling"));
    writeFileSync(join(dir, "1_Pooling", "config.json"), poolingConfig({ pooling_mode_cls_token: true }));
    const [v] = await (await open(dir, { pooling: "mean" })).embed(["hello world"]);
    expectVectorClose(v!, referenceEmbedding(weights, tokenizer.encode("hello world").ids, "mean"));
    writeFileSync(join(dir, "1_Pooling", "config.json"), poolingConfig({ pooling_mode_weightedmean_tokens: true }));
    await expect(createTransformerEmbedder(dir)).rejects.toThrow(/unsupported pooling weightedmean_tokens/);
  });
});

describe("broken model directories give clear errors", () => {
  test("missing directory / no model file / no tokenizer", async () => {
    expect(isTransformerModelDir(join(root, "nope"))).toBe(false);
    await expect(createTransformerEmbedder(join(root, "nope"))).rejects.toThrow(/not a transformer model directory.*model\.onnx/);
    const noTokenizer = modelDir({ tokenizerFiles: ["config.json"] }).dir;
    expect(isTransformerModelDir(noTokenizer)).toBe(false);
    await expect(createTransformerEmbedder(noTokenizer)).rejects.toThrow(/tokenizer\.json or vocab\.txt/);
  });

  test("corrupt model.onnx", async () => {
    const { dir } = modelDir();
    writeFileSync(join(dir, "model.onnx"), new TextEncoder().encode("this is not a protobuf model"));
    expect(isTransformerModelDir(dir)).toBe(true);
    await expect(createTransformerEmbedder(dir)).rejects.toThrow(/cannot load ONNX model .*model\.onnx/);
  });

  test("a graph with an input the embedder cannot fill", async () => {
    const { dir } = modelDir();
    const { encodeModel } = await import("../../tools/onnx/writer");
    writeFileSync(
      join(dir, "model.onnx"),
      encodeModel({
        graph: {
          name: "odd",
          nodes: [{ op: "Identity", inputs: ["pixel_values"], outputs: ["last_hidden_state"] }],
          initializers: [],
          inputs: [
            { name: "input_ids", dtype: "int64", shape: ["batch", "seq"] },
            { name: "pixel_values", dtype: "float32", shape: ["batch", "seq", 4] },
          ],
          outputs: [{ name: "last_hidden_state", dtype: "float32", shape: ["batch", "seq", 4] }],
        },
      }),
    );
    await expect(createTransformerEmbedder(dir)).rejects.toThrow(/cannot provide: pixel_values/);
  });
});

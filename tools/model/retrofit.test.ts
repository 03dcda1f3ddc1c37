// The retrofit stage (an experiment, not part of the shipped model): name stripping, lexicon
// parsing, the two update rules on a small table, and that re-quantizing the committed table
// gives it back unchanged (rows the retrofit does not move stay bit-identical).
import { describe, expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { StaticTokenizer, type StaticTokenizerData } from "../../src/embedding/static-model";
import { TOKENIZER_SPEC } from "../../src/embedding/static-tokenizer";
import { readStaticTable } from "../onnx/reader";
import { quantize } from "./export";
import { debianEntries, manEntries } from "./lexicon";
import { centeredShift, lexiconGraph, RETROFIT, retrofit, strippedName } from "./retrofit";

const MODEL_DIR = resolve(import.meta.dir, "../../models/default");

test("package names lose their packaging affixes", () => {
  expect(strippedName("python3-pydantic")).toBe("pydantic");
  expect(strippedName("libasound2-dev")).toBe("asound");
  expect(strippedName("librust-serde-json-dev")).toBe("serde-json");
  expect(strippedName("cmake")).toBe("cmake");
  expect(strippedName("libssl3")).toBe("ssl");
  expect(strippedName("lib")).toBe("lib");
});

test("lexicon sources are parsed: one entry per package, topical debtags, whatis lines", () => {
  const dump = [
    "Package: cmake\nVersion: 3.25.1-1\nDescription: cross-platform, open-source make system\nTag: devel::buildtools, implemented-in::c++, role::program",
    "Package: cmake\nVersion: 3.18.4-2\nDescription: an older description",
    "Package: nodesc\nVersion: 1",
  ].join("\n\n");
  expect(debianEntries(dump)).toEqual([{ source: "debian", name: "cmake", text: "cross-platform, open-source make system. buildtools" }]);
  expect(
    manEntries("ls (1)               - list directory contents\nsqrt (3)             - square root function\nnot a whatis line\n"),
  ).toEqual([
    { source: "man", name: "ls", text: "list directory contents" },
    { source: "man", name: "sqrt", text: "square root function" },
  ]);
});

describe("update rules", () => {
  // A 7-word table in 4 dimensions: two packages described by their words, and a generic name.
  const words = ["pydantic", "data", "validation", "zod", "schema", "library", "the"];
  const data: StaticTokenizerData = {
    spec: TOKENIZER_SPEC,
    maxTokens: 256,
    maxPositions: 1024,
    emptyId: 0,
    words,
    wordWeights: [0.97, 0.35, 0.92, 0.99, 0.95, 0.65, 0.02],
    oovWeight: 1,
    partFactor: 0.5,
    ngrams: { minn: 3, maxn: 5, buckets: 2_000_000, hash: "fasttext-fnv1a32", kept: [] },
  };
  const tok = new StaticTokenizer(data);
  const dim = 4;
  const base = new Float32Array(8 * dim);
  [
    [0, 0, 0, 0],
    [1, 0, 0, 0], // pydantic
    [0, 1, 0, 1], // data
    [0, 0, 1, 1], // validation
    [0, 0, 0, 1], // zod
    [0, 1, 1, 1], // schema
    [0, 0, 0, 1], // library
    [0, 0, 0, 1], // the
  ].forEach((row, i) => base.set(row, i * dim));
  const entries = [
    { source: "debian" as const, name: "python3-pydantic", text: "Data validation for the library" },
    { source: "npm" as const, name: "zod", text: "schema validation library" },
  ];
  const params = { ...RETROFIT, beta: 1, minNameWeight: 0.9, maxNameEntries: 30, minTextWeight: 0.1, iterations: 10 };
  const row = (t: Float32Array, i: number) => Array.from(t.subarray(i * dim, (i + 1) * dim));

  test("the graph links name words to their texts' content words by SIF weight", () => {
    const g = lexiconGraph(tok, entries, params);
    expect([...g.edges.keys()].sort()).toEqual([1, 4]);
    const py = g.edges.get(1)!;
    expect([...py.keys()].sort()).toEqual([2, 3, 6]); // data, validation, library; not "the"
    expect([...py.values()].reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    expect(py.get(3)! / py.get(2)!).toBeCloseTo(0.92 / 0.35, 5);
    // A name word in more entries than the limit is generic: no edges.
    expect(lexiconGraph(tok, entries, { ...params, maxNameEntries: 0 }).edges.size).toBe(0);
  });

  test("faruqui moves a name toward its texts and leaves every other row alone", () => {
    const g = lexiconGraph(tok, entries, params);
    const out = retrofit(base, dim, g, params);
    const py = row(out, 1);
    // With α = β = 1 and unmoved neighbours: halfway between the trained vector and the text mean.
    const mean = [0, 0, 0, 0];
    for (const [j, w] of g.edges.get(1)!) for (let d = 0; d < dim; d++) mean[d]! += w * base[j * dim + d]!;
    py.forEach((x, d) => expect(x).toBeCloseTo((base[dim + d]! + mean[d]!) / 2, 5));
    for (const i of [0, 2, 3, 5, 6, 7]) expect(row(out, i)).toEqual(row(base, i));
  });

  test("centered adds only where a name's texts differ from the average text", () => {
    const g = lexiconGraph(tok, entries, params);
    const out = centeredShift(base, dim, g, params);
    const shiftPy = row(out, 1).map((x, d) => x - base[dim + d]!);
    const shiftZod = row(out, 4).map((x, d) => x - base[4 * dim + d]!);
    // The two shifts cancel: what both descriptions share is not added to either name.
    shiftPy.forEach((x, d) => expect(x + shiftZod[d]!).toBeCloseTo(0, 6));
    expect(shiftPy.some((x) => Math.abs(x) > 0.01)).toBe(true);
    for (const i of [0, 2, 3, 5, 6, 7]) expect(row(out, i)).toEqual(row(base, i));
  });
});

test("re-quantizing the committed table gives it back unchanged", () => {
  const { table, scales, rows, dim } = readStaticTable(join(MODEL_DIR, "model.onnx"));
  const floats = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) for (let d = 0; d < dim; d++) floats[r * dim + d] = table[r * dim + d]! * scales[r]!;
  const again = quantize(floats, rows, dim);
  let differing = 0;
  for (let i = 0; i < table.length; i++) if (again.q[i] !== table[i]) differing++;
  expect(differing).toBe(0);
  for (let r = 0; r < rows; r += 997) expect(again.scales[r]!).toBeCloseTo(scales[r]!, 9);
});

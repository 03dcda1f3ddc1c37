// The adapter experiment's fold (not part of the shipped model): a map A applied after the
// model's projection P equals one projection P·A, so the adapted model is the same graph.
import { expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { readStaticTable } from "../onnx/reader";
import { foldAdapter } from "./adapter-apply";

const MODEL_DIR = resolve(import.meta.dir, "../../models/default");

function rowTimes(v: Float32Array | Float64Array, m: Float32Array, dim: number): Float64Array {
  const out = new Float64Array(dim);
  for (let k = 0; k < dim; k++) for (let j = 0; j < dim; j++) out[j]! += v[k]! * m[k * dim + j]!;
  return out;
}

test("the identity adapter gives the projection back unchanged", () => {
  const { projection, dim } = readStaticTable(join(MODEL_DIR, "model.onnx"));
  const identity = new Float32Array(dim * dim);
  for (let i = 0; i < dim; i++) identity[i * dim + i] = 1;
  expect(foldAdapter(projection, identity, dim)).toEqual(projection);
});

test("mean · (P·A) equals (mean · P) · A for the shipped projection", () => {
  const { table, scales, projection, dim } = readStaticTable(join(MODEL_DIR, "model.onnx"));
  let seed = 16;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const adapter = new Float32Array(dim * dim).map((_, i) => (i % (dim + 1) === 0 ? 1 : 0) + 0.05 * next());
  const folded = foldAdapter(projection, adapter, dim);
  for (const row of [1, 500, 70_000]) {
    const mean = new Float64Array(dim).map((_, d) => table[row * dim + d]! * scales[row]!);
    const twoSteps = rowTimes(new Float32Array(rowTimes(mean, projection, dim)), adapter, dim);
    const oneStep = rowTimes(mean, folded, dim);
    for (let d = 0; d < dim; d++) expect(oneStep[d]!).toBeCloseTo(twoSteps[d]!, 4);
  }
});

// The writer is checked the only way that matters: onnxruntime loads the bytes and computes what
// plain JS computes. A tiny wire-format reader checks the fields ORT does not expose (metadata).
import { describe, expect, test } from "bun:test";
import { ort } from "../../src/embedding/ort";
import { encodeModel, float16Bits, tensor, toFloat16, type ModelSpec, type NodeSpec, type TensorInit, type ValueSpec } from "./writer";

type Feeds = Record<string, InstanceType<typeof ort.Tensor>>;

async function run(spec: ModelSpec, feeds: Feeds): Promise<Record<string, InstanceType<typeof ort.Tensor>>> {
  const session = await ort.InferenceSession.create(encodeModel(spec));
  try {
    return (await session.run(feeds)) as Record<string, InstanceType<typeof ort.Tensor>>;
  } finally {
    await session.release();
  }
}

function graph(nodes: NodeSpec[], inputs: ValueSpec[], outputs: ValueSpec[], initializers: TensorInit[] = [], opset?: number): ModelSpec {
  return { graph: { name: "test", nodes, initializers, inputs, outputs }, opset };
}

const f32 = (dims: number[], values: number[]) => new ort.Tensor("float32", Float32Array.from(values), dims);
const i64 = (dims: number[], values: number[]) => new ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), dims);

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol = 1e-6): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(Math.abs(actual[i]! - expected[i]!)).toBeLessThanOrEqual(tol);
}

// Deterministic values that are not all simple integers.
function values(n: number, seed: number): number[] {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}

describe("encodeModel runs in onnxruntime", () => {
  test("MatMul + Add with symbolic batch dim", async () => {
    const W = values(4 * 3, 1);
    const b = values(3, 2);
    const x = values(2 * 4, 3);
    const out = await run(
      graph(
        [
          { op: "MatMul", inputs: ["x", "W"], outputs: ["xw"] },
          { op: "Add", inputs: ["xw", "b"], outputs: ["y"], name: "bias" },
        ],
        [{ name: "x", dtype: "float32", shape: ["batch", 4] }],
        [{ name: "y", dtype: "float32", shape: ["batch", 3] }],
        [tensor.float32("W", [4, 3], W), tensor.float32("b", [3], b)],
      ),
      { x: f32([2, 4], x) },
    );
    const expected: number[] = [];
    for (let r = 0; r < 2; r++) {
      for (let c = 0; c < 3; c++) {
        let s = b[c]!;
        for (let k = 0; k < 4; k++) s += x[r * 4 + k]! * W[k * 3 + c]!;
        expected.push(s);
      }
    }
    expect(out.y!.dims).toEqual([2, 3]);
    expectClose(out.y!.data as Float32Array, expected, 1e-6);
  });

  test("Gather from an embedding table with int64 ids (incl. a negative index)", async () => {
    const table = values(10 * 4, 7);
    const out = await run(
      graph(
        [{ op: "Gather", inputs: ["E", "ids"], outputs: ["y"], attrs: { axis: 0 } }],
        [{ name: "ids", dtype: "int64", shape: ["batch", "seq"] }],
        [{ name: "y", dtype: "float32", shape: ["batch", "seq", 4] }],
        [tensor.float32("E", [10, 4], table)],
      ),
      { ids: i64([1, 3], [2, 9, -1]) },
    );
    expect(out.y!.dims).toEqual([1, 3, 4]);
    expectClose(out.y!.data as Float32Array, [...table.slice(8, 12), ...table.slice(36, 40), ...table.slice(36, 40)]);
  });

  test("ReduceSum (axes as input, opset 13+), Div, Sqrt: L2 normalisation", async () => {
    const x = values(2 * 5, 11);
    const out = await run(
      graph(
        [
          { op: "Mul", inputs: ["x", "x"], outputs: ["sq"] },
          { op: "ReduceSum", inputs: ["sq", "axes"], outputs: ["ss"], attrs: { keepdims: 1 } },
          { op: "Sqrt", inputs: ["ss"], outputs: ["norm"] },
          { op: "Div", inputs: ["x", "norm"], outputs: ["y"] },
        ],
        [{ name: "x", dtype: "float32", shape: ["batch", 5] }],
        [{ name: "y", dtype: "float32", shape: ["batch", 5] }],
        [tensor.int64("axes", [1], [-1])],
        17,
      ),
      { x: f32([2, 5], x) },
    );
    const expected: number[] = [];
    for (let r = 0; r < 2; r++) {
      const row = x.slice(r * 5, r * 5 + 5);
      const n = Math.sqrt(row.reduce((s, v) => s + v * v, 0));
      expected.push(...row.map((v) => v / n));
    }
    expectClose(out.y!.data as Float32Array, expected, 1e-6);
  });

  test("ReduceMean: axes attribute at opset 17, axes input at opset 18", async () => {
    const x = values(2 * 3 * 4, 5);
    const expected: number[] = [];
    for (let b = 0; b < 2; b++) {
      for (let h = 0; h < 4; h++) {
        let s = 0;
        for (let t = 0; t < 3; t++) s += x[b * 12 + t * 4 + h]!;
        expected.push(s / 3);
      }
    }
    const io = {
      inputs: [{ name: "x", dtype: "float32", shape: ["batch", "seq", 4] }] as ValueSpec[],
      outputs: [{ name: "y", dtype: "float32", shape: ["batch", 4] }] as ValueSpec[],
    };
    const v17 = await run(
      graph([{ op: "ReduceMean", inputs: ["x"], outputs: ["y"], attrs: { axes: [1], keepdims: 0 } }], io.inputs, io.outputs, [], 17),
      { x: f32([2, 3, 4], x) },
    );
    const v18 = await run(
      graph(
        [{ op: "ReduceMean", inputs: ["x", "axes"], outputs: ["y"], attrs: { keepdims: 0 } }],
        io.inputs,
        io.outputs,
        [tensor.int64("axes", [1], [1])],
        18,
      ),
      { x: f32([2, 3, 4], x) },
    );
    expectClose(v17.y!.data as Float32Array, expected, 1e-6);
    expectClose(v18.y!.data as Float32Array, expected, 1e-6);
  });

  test("Cast int64 -> float32 and initializers of every dtype", async () => {
    const int8 = Int8Array.from([-128, -1, 0, 127]);
    const uint8 = Uint8Array.from([0, 1, 200, 255]);
    const int32 = Int32Array.from([-2147483648, -5, 6, 2147483647]);
    const bool = Uint8Array.from([1, 0, 0, 1]);
    const halfValues = [0.5, -2, 65504, 1 / 3];
    const initializers: TensorInit[] = [
      { name: "i8", dtype: "int8", dims: [4], data: int8 },
      { name: "u8", dtype: "uint8", dims: [4], data: uint8 },
      { name: "i32", dtype: "int32", dims: [4], data: int32 },
      { name: "b", dtype: "bool", dims: [4], data: bool },
      { name: "h", dtype: "float16", dims: [4], data: toFloat16(halfValues) },
      tensor.int64("i64", [4], [-(2n ** 63n), -1n, 1n, 2n ** 62n]),
    ];
    const names = ["i8", "u8", "i32", "b", "h", "i64"];
    const out = await run(
      graph(
        [
          { op: "Cast", inputs: ["x"], outputs: ["x_f"], attrs: { to: 1 } },
          ...names.map((n) => ({ op: "Cast", inputs: [n], outputs: [`${n}_f`], attrs: { to: 1 } })),
          // Identity keeps the int64 initializer exact (float32 would round it).
          { op: "Identity", inputs: ["i64"], outputs: ["i64_out"] },
        ],
        [{ name: "x", dtype: "int64", shape: [3] }],
        [
          { name: "x_f", dtype: "float32", shape: [3] },
          ...names.map((n): ValueSpec => ({ name: `${n}_f`, dtype: "float32", shape: [4] })),
          { name: "i64_out", dtype: "int64", shape: [4] },
        ],
        initializers,
      ),
      { x: i64([3], [-3, 0, 1 << 20]) },
    );
    expectClose(out.x_f!.data as Float32Array, [-3, 0, 1 << 20]);
    expectClose(out.i8_f!.data as Float32Array, [...int8]);
    expectClose(out.u8_f!.data as Float32Array, [...uint8]);
    expectClose(out.i32_f!.data as Float32Array, [...int32].map(Math.fround));
    expectClose(out.b_f!.data as Float32Array, [1, 0, 0, 1]);
    expectClose(out.h_f!.data as Float32Array, [0.5, -2, 65504, 0.333251953125]);
    expect([...(out.i64_out!.data as BigInt64Array)]).toEqual([-(2n ** 63n), -1n, 1n, 2n ** 62n]);
  });

  test("attributes: float, floats, ints, string, tensor", async () => {
    const x = values(2 * 3, 9);
    const out = await run(
      graph(
        [
          { op: "LeakyRelu", inputs: ["x"], outputs: ["leaky"], attrs: { alpha: { float: 0.25 } } },
          { op: "Transpose", inputs: ["x"], outputs: ["xt"], attrs: { perm: [1, 0] } },
          { op: "Constant", inputs: [], outputs: ["fl"], attrs: { value_floats: { floats: [1.5, -2.25] } } },
          { op: "Constant", inputs: [], outputs: ["t"], attrs: { value: tensor.float32("c", [2, 2], [1, 2, 3, 4]) } },
          { op: "Constant", inputs: [], outputs: ["pads"], attrs: { value: tensor.int64("p", [4], [0, 1, 0, 1]) } },
          { op: "Pad", inputs: ["x", "pads"], outputs: ["padded"], attrs: { mode: "reflect" } },
        ],
        [{ name: "x", dtype: "float32", shape: [2, 3] }],
        [
          { name: "leaky", dtype: "float32", shape: [2, 3] },
          { name: "xt", dtype: "float32", shape: [3, 2] },
          { name: "fl", dtype: "float32", shape: [2] },
          { name: "t", dtype: "float32", shape: [2, 2] },
          { name: "padded", dtype: "float32", shape: [2, 5] },
        ],
      ),
      { x: f32([2, 3], x) },
    );
    expectClose(
      out.leaky!.data as Float32Array,
      x.map((v) => (v < 0 ? 0.25 * v : v)),
    );
    expectClose(out.xt!.data as Float32Array, [x[0]!, x[3]!, x[1]!, x[4]!, x[2]!, x[5]!]);
    expectClose(out.fl!.data as Float32Array, [1.5, -2.25]);
    expectClose(out.t!.data as Float32Array, [1, 2, 3, 4]);
    // reflect (not the default "constant" mode): the string attribute was read.
    expectClose(out.padded!.data as Float32Array, [x[1]!, x[0]!, x[1]!, x[2]!, x[1]!, x[4]!, x[3]!, x[4]!, x[5]!, x[4]!]);
  });

  test("a large initializer (30522 x 8 table) round-trips exactly", async () => {
    const rows = 30522;
    const table = Float32Array.from(values(rows * 8, 42));
    const ids = [0, 1, 101, 30521];
    const out = await run(
      graph(
        [{ op: "Gather", inputs: ["E", "ids"], outputs: ["y"], attrs: { axis: 0 } }],
        [{ name: "ids", dtype: "int64", shape: [4] }],
        [{ name: "y", dtype: "float32", shape: [4, 8] }],
        [{ name: "E", dtype: "float32", dims: [rows, 8], data: table }],
      ),
      { ids: i64([4], ids) },
    );
    expect([...(out.y!.data as Float32Array)]).toEqual(ids.flatMap((id) => [...table.subarray(id * 8, id * 8 + 8)]));
  });
});

// --- a minimal protobuf reader, only to look at fields onnxruntime does not expose ---
type Field = { field: number; wire: number; value: bigint | Uint8Array | number };

function readFields(buf: Uint8Array): Field[] {
  const fields: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 0) fields.push({ field, wire, value: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      fields.push({ field, wire, value: buf.subarray(pos, pos + len) });
      pos += len;
    } else if (wire === 5) {
      fields.push({ field, wire, value: new DataView(buf.buffer, buf.byteOffset + pos, 4).getFloat32(0, true) });
      pos += 4;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return fields;
}

const text = (v: Field["value"]) => new TextDecoder().decode(v as Uint8Array);

describe("encodeModel wire format", () => {
  const spec: ModelSpec = {
    graph: {
      name: "meta",
      nodes: [{ op: "Identity", inputs: ["x"], outputs: ["y"] }],
      initializers: [],
      inputs: [{ name: "x", dtype: "float32", shape: [1] }],
      outputs: [{ name: "y", dtype: "float32", shape: [1] }],
    },
    opset: 18,
    irVersion: 9,
    producer: "colony-test",
    metadata: { vocab: "bert-base-uncased", dim: "8" },
  };

  test("header fields, opset and metadata_props", () => {
    const top = readFields(encodeModel(spec));
    expect(top.find((f) => f.field === 1)!.value).toBe(9n);
    expect(text(top.find((f) => f.field === 2)!.value)).toBe("colony-test");
    const opset = readFields(top.find((f) => f.field === 8)!.value as Uint8Array);
    expect(opset).toEqual([{ field: 2, wire: 0, value: 18n }]);
    const meta = top.filter((f) => f.field === 14).map((f) => readFields(f.value as Uint8Array).map((g) => text(g.value)));
    expect(meta).toEqual([
      ["vocab", "bert-base-uncased"],
      ["dim", "8"],
    ]);
  });

  test("defaults: opset 17, IR version 8", () => {
    const top = readFields(encodeModel({ graph: spec.graph }));
    expect(top.find((f) => f.field === 1)!.value).toBe(8n);
    expect(readFields(top.find((f) => f.field === 8)!.value as Uint8Array)).toEqual([{ field: 2, wire: 0, value: 17n }]);
  });

  test("a node in a custom domain declares that domain's opset", () => {
    const top = readFields(
      encodeModel({ graph: { ...spec.graph, nodes: [{ op: "Gelu", domain: "com.microsoft", inputs: ["x"], outputs: ["y"] }] } }),
    );
    const opsets = top.filter((f) => f.field === 8).map((f) => readFields(f.value as Uint8Array));
    expect(opsets).toEqual([
      [{ field: 2, wire: 0, value: 17n }],
      [
        { field: 1, wire: 2, value: new TextEncoder().encode("com.microsoft") },
        { field: 2, wire: 0, value: 1n },
      ],
    ]);
  });

  test("rejects mismatched data: wrong array type, wrong length, non-integer int attribute", () => {
    const bad = (init: TensorInit) => () => encodeModel({ graph: { ...spec.graph, initializers: [init] } });
    expect(bad({ name: "w", dtype: "float32", dims: [2], data: new Float64Array(2) as unknown as Float32Array })).toThrow(/Float32Array/);
    expect(bad({ name: "w", dtype: "int64", dims: [2], data: new Int32Array(2) })).toThrow(/BigInt64Array/);
    expect(bad({ name: "w", dtype: "float32", dims: [2, 3], data: new Float32Array(5) })).toThrow(/5 values/);
    expect(() =>
      encodeModel({ graph: { ...spec.graph, nodes: [{ op: "LeakyRelu", inputs: ["x"], outputs: ["y"], attrs: { alpha: 0.5 } }] } }),
    ).toThrow(/float/);
  });
});

describe("float16Bits", () => {
  test("known bit patterns", () => {
    expect(float16Bits(0)).toBe(0x0000);
    expect(float16Bits(-0)).toBe(0x8000);
    expect(float16Bits(1)).toBe(0x3c00);
    expect(float16Bits(-2)).toBe(0xc000);
    expect(float16Bits(65504)).toBe(0x7bff);
    expect(float16Bits(65520)).toBe(0x7c00); // rounds up to infinity
    expect(float16Bits(Infinity)).toBe(0x7c00);
    expect(float16Bits(NaN) & 0x7c00).toBe(0x7c00);
    expect(float16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(float16Bits(2 ** -14)).toBe(0x0400); // smallest normal
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie rounds to even
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
  });
});

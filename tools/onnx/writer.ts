// A minimal ONNX ModelProto encoder. The protobuf wire format is written by hand so exporting a
// model needs no dependency (no protobufjs, no Python onnx). Field numbers follow onnx/onnx.proto
// (proto2: repeated scalars are written unpacked, which every parser accepts).

export type DType = "float32" | "float16" | "int64" | "int32" | "int8" | "uint8" | "bool";

export interface TensorInit {
  name: string;
  dtype: DType;
  dims: number[];
  /** float16 tensors carry their IEEE half-precision bit patterns in a Uint16Array; bool uses Uint8Array (0/1). */
  data: Float32Array | Uint16Array | BigInt64Array | Int32Array | Int8Array | Uint8Array;
}

/** Plain number = int attribute; number[] = ints; {float: x} = float; {floats: [...]} = floats. */
export type AttrValue = number | number[] | string | TensorInit | { floats: number[] } | { float: number };

export interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  domain?: string;
  attrs?: Record<string, AttrValue>;
}

/** A string dimension is symbolic ("batch", "seq"). */
export interface ValueSpec {
  name: string;
  dtype: DType;
  shape: (number | string)[];
}

export interface ModelSpec {
  graph: {
    name: string;
    nodes: NodeSpec[];
    initializers: TensorInit[];
    inputs: ValueSpec[];
    outputs: ValueSpec[];
  };
  /** Default 17. */
  opset?: number;
  /** Default 8. */
  irVersion?: number;
  producer?: string;
  metadata?: Record<string, string>;
}

/** onnx.TensorProto.DataType */
export const ONNX_DATA_TYPE: Record<DType, number> = {
  float32: 1,
  uint8: 2,
  int8: 3,
  int32: 6,
  int64: 7,
  bool: 9,
  float16: 10,
};

const BYTES_PER_ELEMENT: Record<DType, number> = {
  float32: 4,
  float16: 2,
  int64: 8,
  int32: 4,
  int8: 1,
  uint8: 1,
  bool: 1,
};

const EXPECTED_ARRAY: Record<DType, Function> = {
  float32: Float32Array,
  float16: Uint16Array,
  int64: BigInt64Array,
  int32: Int32Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

// onnx.AttributeProto.AttributeType
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_STRING = 3;
const ATTR_TENSOR = 4;
const ATTR_FLOATS = 6;
const ATTR_INTS = 7;

// Wire types
const VARINT = 0;
const FIXED32 = 5;
const LEN = 2;

/** Growable byte buffer with the few protobuf primitives the ONNX schema needs. */
class ProtoWriter {
  private buf = new Uint8Array(256);
  private len = 0;

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  private byte(b: number): void {
    this.reserve(1);
    this.buf[this.len++] = b;
  }

  private varint(value: number | bigint): void {
    // Negative int64 values take ten bytes of two's complement, so go through BigInt.
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.byte(Number(v));
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, value: number | bigint): void {
    if (typeof value === "number" && !Number.isSafeInteger(value)) {
      throw new Error(`onnx writer: field ${field} needs an integer, got ${value}`);
    }
    this.tag(field, VARINT);
    this.varint(value);
  }

  float(field: number, value: number): void {
    this.tag(field, FIXED32);
    this.reserve(4);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.len, 4).setFloat32(0, value, true);
    this.len += 4;
  }

  bytes(field: number, data: Uint8Array): void {
    this.tag(field, LEN);
    this.varint(data.length);
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
  }

  string(field: number, value: string): void {
    this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, write: (w: ProtoWriter) => void): void {
    const inner = new ProtoWriter();
    write(inner);
    this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

const LITTLE_ENDIAN_HOST = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

function elementCount(dims: number[]): number {
  return dims.reduce((n, d) => n * d, 1);
}

/** Little-endian bytes of a typed array, whatever the host byte order. */
function rawData(t: TensorInit): Uint8Array {
  const { data, dtype } = t;
  if (!(data instanceof EXPECTED_ARRAY[dtype])) {
    throw new Error(`onnx writer: tensor ${t.name} (${dtype}) needs a ${EXPECTED_ARRAY[dtype].name}, got ${data.constructor.name}`);
  }
  const count = elementCount(t.dims);
  if (data.length !== count) {
    throw new Error(`onnx writer: tensor ${t.name} has ${data.length} values for dims [${t.dims}] (${count} expected)`);
  }
  // Little-endian hosts (all that Bun runs on) can copy the bytes as they are.
  if (LITTLE_ENDIAN_HOST && dtype !== "bool") return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  const size = BYTES_PER_ELEMENT[dtype];
  const out = new Uint8Array(count * size);
  const view = new DataView(out.buffer);
  for (let i = 0; i < count; i++) {
    const o = i * size;
    switch (dtype) {
      case "float32":
        view.setFloat32(o, (data as Float32Array)[i]!, true);
        break;
      case "float16":
        view.setUint16(o, (data as Uint16Array)[i]!, true);
        break;
      case "int64":
        view.setBigInt64(o, (data as BigInt64Array)[i]!, true);
        break;
      case "int32":
        view.setInt32(o, (data as Int32Array)[i]!, true);
        break;
      case "int8":
        view.setInt8(o, (data as Int8Array)[i]!);
        break;
      case "uint8":
        view.setUint8(o, (data as Uint8Array)[i]!);
        break;
      case "bool":
        view.setUint8(o, (data as Uint8Array)[i] ? 1 : 0);
        break;
    }
  }
  return out;
}

function writeTensor(w: ProtoWriter, t: TensorInit): void {
  for (const d of t.dims) w.int(1, d); // dims
  w.int(2, ONNX_DATA_TYPE[t.dtype]); // data_type
  w.string(8, t.name); // name
  w.bytes(9, rawData(t)); // raw_data
}

function isTensorInit(v: AttrValue): v is TensorInit {
  return typeof v === "object" && !Array.isArray(v) && "dtype" in v && "data" in v;
}

function writeAttribute(w: ProtoWriter, name: string, value: AttrValue): void {
  w.string(1, name);
  if (typeof value === "number") {
    if (!Number.isInteger(value)) {
      throw new Error(`onnx writer: attribute ${name}=${value} is not an integer; write {float: ${value}} for a float`);
    }
    w.int(20, ATTR_INT);
    w.int(3, value);
  } else if (typeof value === "string") {
    w.int(20, ATTR_STRING);
    w.string(4, value);
  } else if (Array.isArray(value)) {
    w.int(20, ATTR_INTS);
    for (const v of value) w.int(8, v);
  } else if (isTensorInit(value)) {
    w.int(20, ATTR_TENSOR);
    w.message(5, (m) => writeTensor(m, value));
  } else if ("floats" in value) {
    w.int(20, ATTR_FLOATS);
    for (const v of value.floats) w.float(7, v);
  } else if ("float" in value) {
    w.int(20, ATTR_FLOAT);
    w.float(2, value.float);
  } else {
    throw new Error(`onnx writer: unsupported value for attribute ${name}`);
  }
}

function writeNode(w: ProtoWriter, n: NodeSpec): void {
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  if (n.name) w.string(3, n.name);
  w.string(4, n.op);
  for (const [name, value] of Object.entries(n.attrs ?? {})) w.message(5, (a) => writeAttribute(a, name, value));
  if (n.domain) w.string(7, n.domain);
}

function writeValueInfo(w: ProtoWriter, v: ValueSpec): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, ONNX_DATA_TYPE[v.dtype]); // elem_type
      tensor.message(2, (shape) => {
        for (const d of v.shape) {
          shape.message(1, (dim) => (typeof d === "number" ? dim.int(1, d) : dim.string(2, d)));
        }
      });
    }),
  );
}

/** Serializes a model to the bytes of a .onnx file. */
export function encodeModel(spec: ModelSpec): Uint8Array {
  const w = new ProtoWriter();
  w.int(1, spec.irVersion ?? 8); // ir_version
  w.string(2, spec.producer ?? "colony"); // producer_name
  w.message(7, (g) => {
    for (const n of spec.graph.nodes) g.message(1, (m) => writeNode(m, n));
    g.string(2, spec.graph.name);
    for (const t of spec.graph.initializers) g.message(5, (m) => writeTensor(m, t));
    for (const v of spec.graph.inputs) g.message(11, (m) => writeValueInfo(m, v));
    for (const v of spec.graph.outputs) g.message(12, (m) => writeValueInfo(m, v));
  });
  // opset_import: the default domain, plus any custom domains the nodes use (version 1).
  w.message(8, (o) => o.int(2, spec.opset ?? 17));
  const domains = new Set(spec.graph.nodes.map((n) => n.domain).filter((d): d is string => !!d && d !== "ai.onnx"));
  for (const d of domains) {
    w.message(8, (o) => {
      o.string(1, d);
      o.int(2, 1);
    });
  }
  for (const [key, value] of Object.entries(spec.metadata ?? {})) {
    w.message(14, (m) => {
      m.string(1, key);
      m.string(2, value);
    });
  }
  return w.finish();
}

/** IEEE 754 half-precision bits of a number (round to nearest even), for float16 initializers. */
export function float16Bits(value: number): number {
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // Inf / NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> Inf
  if (e <= 0) {
    if (e < -10) return sign; // underflows to zero
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++; // may carry into the exponent: still correct
  return sign | half;
}

/** Converts a Float32Array to float16 bit patterns. */
export function toFloat16(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float16Bits(values[i]!);
  return out;
}

/** Small constructors so graphs read like the math. */
export const tensor = {
  float32: (name: string, dims: number[], values: ArrayLike<number>): TensorInit => ({
    name,
    dtype: "float32",
    dims,
    data: Float32Array.from(values),
  }),
  int64: (name: string, dims: number[], values: ArrayLike<number | bigint>): TensorInit => ({
    name,
    dtype: "int64",
    dims,
    data: BigInt64Array.from(Array.from(values, (v) => BigInt(v))),
  }),
};

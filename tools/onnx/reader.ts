// Reads the initializers (raw_data tensors) of an ONNX model straight from the protobuf wire
// format: enough to get a static model's table, row scales and projection back out of model.onnx
// (tools/model/retrofit.ts) and to check the graph against plain JS (static-model.test.ts).
import { readFileSync } from "node:fs";

export interface RawTensor {
  name: string;
  dims: number[];
  /** onnx.TensorProto.DataType */
  type: number;
  raw: Uint8Array;
}

export function readInitializers(path: string): Map<string, RawTensor> {
  const buf = readFileSync(path);
  const tensors = new Map<string, RawTensor>();
  const varint = (p: { o: number }) => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[p.o++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      shift += 7n;
    }
  };
  const fields = (start: number, end: number, cb: (field: number, wire: number, p: { o: number }, len: number) => void) => {
    const p = { o: start };
    while (p.o < end) {
      const key = Number(varint(p));
      const field = key >>> 3;
      const wire = key & 7;
      if (wire === 0) cb(field, wire, p, 0);
      else if (wire === 2) {
        const len = Number(varint(p));
        const at = p.o;
        cb(field, wire, p, len);
        p.o = at + len;
      } else if (wire === 5) p.o += 4;
      else if (wire === 1) p.o += 8;
      else throw new Error(`${path}: protobuf wire type ${wire} not supported`);
    }
  };
  // ModelProto.graph = 7, GraphProto.initializer = 5; TensorProto dims 1, data_type 2, name 8, raw_data 9.
  fields(0, buf.length, (f, w, p, len) => {
    if (w === 0) return void varint(p);
    if (f !== 7) return;
    fields(p.o, p.o + len, (gf, gw, gp, glen) => {
      if (gw === 0) return void varint(gp);
      if (gf !== 5) return;
      const t: RawTensor = { dims: [], type: 0, name: "", raw: new Uint8Array() };
      fields(gp.o, gp.o + glen, (tf, tw, tp, tlen) => {
        if (tw === 0) {
          const v = Number(varint(tp));
          if (tf === 1) t.dims.push(v);
          if (tf === 2) t.type = v;
        } else if (tf === 8) t.name = buf.toString("utf8", tp.o, tp.o + tlen);
        else if (tf === 9) t.raw = new Uint8Array(buf.buffer, buf.byteOffset + tp.o, tlen).slice();
      });
      tensors.set(t.name, t);
    });
  });
  return tensors;
}

/** The table (int8), row scales and projection of a Colony static model's model.onnx. */
export function readStaticTable(path: string) {
  const tensors = readInitializers(path);
  const get = (name: string) => {
    const t = tensors.get(name);
    if (!t) throw new Error(`${path}: no initializer "${name}" (not a Colony static model?)`);
    return t;
  };
  const table = get("table");
  const f32 = (name: string) => new Float32Array(get(name).raw.buffer);
  return {
    rows: table.dims[0]!,
    dim: table.dims[1]!,
    table: new Int8Array(table.raw.buffer),
    scales: f32("row_scales"),
    projection: f32("projection"),
  };
}

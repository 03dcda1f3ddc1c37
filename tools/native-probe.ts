// A minimal app for `bun tools/build.ts --probe`: proves the native story of the binary without
// the server (sqlite-vec query through bun:sqlite, an onnxruntime session from bytes, the
// embedded model directory). Prints one JSON line and exits 0 on success.
import { Database } from "bun:sqlite";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { isCompiled, prepareNatives } from "../src/platform/native.ts";

/** Protobuf encoding of just enough ONNX to describe y = Identity(x) over float[n]. */
function identityModel(): Uint8Array {
  const bytes: number[] = [];
  const varint = (out: number[], v: number) => {
    while (v > 0x7f) {
      out.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.push(v);
  };
  const field = (no: number, body: number[] | string): number[] => {
    const data = typeof body === "string" ? [...new TextEncoder().encode(body)] : body;
    const out: number[] = [];
    varint(out, (no << 3) | 2);
    varint(out, data.length);
    return out.concat(data);
  };
  const int = (no: number, v: number): number[] => {
    const out: number[] = [];
    varint(out, no << 3);
    varint(out, v);
    return out;
  };
  const valueInfo = (name: string) => field(1, name).concat(field(2, field(1, int(1, 1).concat(field(2, field(1, field(2, "n")))))));
  const node = field(1, "x").concat(field(2, "y"), field(3, "id"), field(4, "Identity"));
  const graph = field(1, node).concat(field(2, "probe"), field(11, valueInfo("x")), field(12, valueInfo("y")));
  bytes.push(...int(1, 8), ...field(2, "colony-probe"), ...field(7, graph), ...field(8, int(2, 13)));
  return new Uint8Array(bytes);
}

const t0 = performance.now();
const paths = prepareNatives();
const tPrepared = performance.now();

const db = new Database(":memory:");
db.loadExtension(paths.sqliteVec);
const vecVersion = (db.query("select vec_version() as v").get() as { v: string }).v;
db.run("create virtual table v using vec0(embedding float[4])");
db.run("insert into v(rowid, embedding) values (1, '[1,0,0,0]'), (2, '[0,1,0,0]')");
const nearest = db.query("select rowid from v where embedding match '[0.9,0.1,0,0]' and k = 1").get() as {
  rowid: number;
};

const { ort } = await import("../src/embedding/ort.ts");
const session = await ort.InferenceSession.create(identityModel());
const input = new ort.Tensor("float32", Float32Array.from([1, 2, 3]), [3]);
const out = await session.run({ x: input });
const y = Array.from(out.y!.data as Float32Array);
await session.release();

const modelFiles = (() => {
  try {
    return readdirSync(paths.modelDir).map((f) => `${f}:${statSync(join(paths.modelDir, f)).size}`);
  } catch {
    return [];
  }
})();

console.log(
  JSON.stringify({
    compiled: isCompiled(),
    paths,
    vecVersion,
    nearest: nearest.rowid,
    ortOutput: y,
    modelFiles,
    prepareMs: Math.round(tPrepared - t0),
    totalMs: Math.round(performance.now() - t0),
  }),
);

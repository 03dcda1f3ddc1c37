// Reader for fastText 0.9.2 .bin models (FastText::saveModel): header, arguments, dictionary,
// then the dense input matrix (nwords + bucket rows), read row by row from disk.
import { closeSync, openSync, readSync } from "node:fs";

export interface FastTextArgs {
  dim: number;
  ws: number;
  epoch: number;
  minCount: number;
  neg: number;
  wordNgrams: number;
  loss: number;
  model: number;
  bucket: number;
  minn: number;
  maxn: number;
  lrUpdateRate: number;
  t: number;
}

export interface FastTextEntry {
  word: string;
  count: number;
}

const MAGIC = 793712314;

export class FastTextBin {
  readonly args: FastTextArgs;
  readonly words: FastTextEntry[] = [];
  readonly ntokens: number;
  private readonly fd: number;
  private readonly dataStart: number;
  readonly rows: number;

  constructor(path: string) {
    this.fd = openSync(path, "r");
    // The dictionary of a corpus this size fits easily in the first 256 MB.
    const head = Buffer.alloc(256 * 1024 * 1024);
    const got = readSync(this.fd, head, 0, head.length, 0);
    let o = 0;
    const i32 = () => {
      const v = head.readInt32LE(o);
      o += 4;
      return v;
    };
    const i64 = () => {
      const v = Number(head.readBigInt64LE(o));
      o += 8;
      return v;
    };
    if (i32() !== MAGIC) throw new Error(`${path}: not a fastText model`);
    const version = i32();
    if (version !== 12) throw new Error(`${path}: fastText file version ${version}, expected 12`);
    const a = [i32(), i32(), i32(), i32(), i32(), i32(), i32(), i32(), i32(), i32(), i32(), i32()];
    const t = head.readDoubleLE(o);
    o += 8;
    this.args = {
      dim: a[0]!,
      ws: a[1]!,
      epoch: a[2]!,
      minCount: a[3]!,
      neg: a[4]!,
      wordNgrams: a[5]!,
      loss: a[6]!,
      model: a[7]!,
      bucket: a[8]!,
      minn: a[9]!,
      maxn: a[10]!,
      lrUpdateRate: a[11]!,
      t,
    };
    const size = i32();
    i32(); // nwords
    i32(); // nlabels
    this.ntokens = i64();
    const pruneSize = i64();
    for (let i = 0; i < size; i++) {
      const end = head.indexOf(0, o);
      const word = head.toString("utf8", o, end);
      o = end + 1;
      const count = i64();
      o += 1; // entry type
      this.words.push({ word, count });
    }
    if (pruneSize > 0) o += pruneSize * 8;
    const quant = head[o++];
    if (quant !== 0) throw new Error(`${path}: quantized models are not supported`);
    const m = i64();
    const n = i64();
    if (n !== this.args.dim || m !== size + this.args.bucket) throw new Error(`${path}: unexpected input matrix ${m}x${n}`);
    if (o > got) throw new Error(`${path}: dictionary larger than the read window`);
    this.rows = m;
    this.dataStart = o;
  }

  /** Row r of the input matrix (word r, or n-gram bucket b at row nwords + b). */
  row(r: number, out = new Float32Array(this.args.dim)): Float32Array {
    const bytes = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    readSync(this.fd, bytes, 0, bytes.length, this.dataStart + r * this.args.dim * 4);
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

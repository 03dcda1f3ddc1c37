// The vector store on sqlite-vec: binary-quantized codes (vec_quantize_binary) kept durably in a
// vec0 bit[D] table and scanned in memory for the first pass (see ../hamming-index.ts for why not
// vec0's own KNN), and the float vectors in a plain rowid table (B-tree point lookups are much
// faster than vec0's) that re-scores the candidates and serves exact brute-force search.
//
// The in-memory codes follow each upsert and remove at once. If an enclosing transaction rolls
// back, a code may stand for a vector that is not stored (its candidate is dropped at re-scoring)
// or miss one that is (found again at the next start); neither shows a wrong result.
import type { Database } from "bun:sqlite";
import type { VectorHit, VectorStore } from "../ports";
import type { SqliteKeyValueStore } from "./kv";
import { HammingIndex } from "../hamming-index";

export const SIGNATURE_KEY = "vectors.signature";
/** Bumped when the table layout changes: a different layout rebuilds like a different model. */
const LAYOUT = 2;
/** Set when the index was rebuilt for a new model; cleared once every indexed trail is re-embedded. */
export const REINDEX_PENDING_KEY = "vectors.reindex_pending";

/** The model a stored signature names, when the vectors have this version's layout; else null. */
export function storedVectorModel(signature: string | null): { name: string; dim: number } | null {
  const m = /^v(\d+):(.+):(\d+)$/.exec(signature ?? "");
  return m && Number(m[1]) === LAYOUT ? { name: m[2]!, dim: Number(m[3]) } : null;
}

/** How many binary-pass candidates are re-scored per requested result (at least MIN_CANDIDATES). */
const OVERSAMPLE = 4;
const MIN_CANDIDATES = 40;

/** The number of binary-pass candidates re-scored for `k` results. */
export const firstPassSize = (k: number) => Math.max(k * OVERSAMPLE, MIN_CANDIDATES);

export interface VectorStoreOpen {
  store: SqliteVectorStore;
  /** True when the stored vectors came from another model (or none existed): callers re-embed. */
  rebuilt: boolean;
}

export class SqliteVectorStore implements VectorStore {
  private readonly insertFloat;
  private readonly insertBits;
  private readonly deleteFloat;
  private readonly deleteBits;
  private readonly quantize;
  private readonly knnFloat;
  private readonly countStmt;
  private readonly codes: HammingIndex;

  private constructor(
    private readonly db: Database,
    private readonly kv: SqliteKeyValueStore,
    readonly dim: number,
  ) {
    this.insertFloat = db.query("INSERT INTO vec_float (rowid, embedding) VALUES (?, ?)");
    this.insertBits = db.query("INSERT INTO vec_bits (rowid, bits) VALUES (?, vec_bit(?))");
    this.deleteFloat = db.query("DELETE FROM vec_float WHERE rowid = ?");
    this.deleteBits = db.query("DELETE FROM vec_bits WHERE rowid = ?");
    this.quantize = db.query<{ code: Uint8Array }, [Float32Array]>("SELECT vec_quantize_binary(?) AS code");
    this.knnFloat = db.query<{ rowid: number; distance: number }, [Float32Array, number]>(
      "SELECT rowid, vec_distance_cosine(embedding, ?) AS distance FROM vec_float ORDER BY distance LIMIT ?",
    );
    this.countStmt = db.query<{ n: number }, []>("SELECT count(*) AS n FROM vec_float");
    this.codes = new HammingIndex(dim);
    for (const row of db.query<{ rowid: number; bits: Uint8Array }, []>("SELECT rowid, bits FROM vec_bits").iterate()) {
      this.codes.set(row.rowid, row.bits);
    }
  }

  /**
   * Opens the vector tables for a model. A different model (name or dimension) invalidates the
   * stored vectors: the tables are rebuilt empty and `rebuilt` tells the caller to re-embed.
   */
  static open(db: Database, kv: SqliteKeyValueStore, model: { name: string; dim: number }): VectorStoreOpen {
    if (!Number.isInteger(model.dim) || model.dim <= 0 || model.dim % 8 !== 0) {
      throw new Error(`embedding dimension ${model.dim} is not a positive multiple of 8`);
    }
    const signature = `v${LAYOUT}:${model.name}:${model.dim}`;
    const changed = kv.getNow(SIGNATURE_KEY) !== signature;
    if (changed) {
      db.transaction(() => {
        db.exec("DROP TABLE IF EXISTS vec_float");
        db.exec("DROP TABLE IF EXISTS vec_bits");
        db.exec("CREATE TABLE vec_float (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL)");
        db.exec(`CREATE VIRTUAL TABLE vec_bits USING vec0(bits bit[${model.dim}])`);
        kv.setNow(SIGNATURE_KEY, signature);
        kv.setNow(REINDEX_PENDING_KEY, "1");
      })();
    }
    // Still pending after a crash mid-reindex: the caller resumes it.
    const store = new SqliteVectorStore(db, kv, model.dim);
    return { store, rebuilt: kv.getNow(REINDEX_PENDING_KEY) === "1" };
  }

  private check(vector: Float32Array): void {
    if (vector.length !== this.dim) {
      throw new Error(`vector has ${vector.length} dimensions, the store holds ${this.dim}`);
    }
  }

  async upsert(id: number, vector: Float32Array): Promise<void> {
    this.check(vector);
    // Quantized once: the same code goes to the vec0 table and to the in-memory pass.
    const code = this.code(vector);
    // vec0 has no upsert: replace inside one transaction.
    this.db.transaction(() => {
      this.deleteFloat.run(id);
      this.deleteBits.run(id);
      this.insertFloat.run(id, vector);
      this.insertBits.run(id, code);
    })();
    this.codes.set(id, code);
  }

  private code(vector: Float32Array): Uint8Array {
    return this.quantize.get(vector)!.code;
  }

  async remove(id: number): Promise<void> {
    this.db.transaction(() => {
      this.deleteFloat.run(id);
      this.deleteBits.run(id);
    })();
    this.codes.delete(id);
  }

  async search(query: Float32Array, k: number): Promise<VectorHit[]> {
    this.check(query);
    if (k <= 0) return [];
    const candidates = this.firstPass(query, k);
    const hits = [...this.similaritiesNow(query, candidates)].map(([id, similarity]) => ({ id, similarity }));
    hits.sort((a, b) => b.similarity - a.similarity || a.id - b.id);
    return hits.slice(0, k);
  }

  /** The binary-pass candidates that `search` re-scores for `k` results. */
  firstPass(query: Float32Array, k: number): number[] {
    return this.codes.nearest(this.code(query), firstPassSize(k));
  }

  async similarities(query: Float32Array, ids: number[]): Promise<Map<number, number>> {
    return this.similaritiesNow(query, ids);
  }

  private similaritiesNow(query: Float32Array, ids: number[]): Map<number, number> {
    this.check(query);
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    const rows = this.db
      .query<{ rowid: number; embedding: Uint8Array }, number[]>(
        `SELECT rowid, embedding FROM vec_float WHERE rowid IN (${ids.map(() => "?").join(",")})`,
      )
      .all(...ids);
    for (const r of rows) out.set(r.rowid, dot(query, asFloats(r.embedding)));
    return out;
  }

  async searchExact(query: Float32Array, k: number): Promise<VectorHit[]> {
    this.check(query);
    if (k <= 0) return [];
    return this.knnFloat.all(query, k).map((r) => ({ id: r.rowid, similarity: 1 - r.distance }));
  }

  async count(): Promise<number> {
    return this.countStmt.get()!.n;
  }

  async needsReindex(): Promise<boolean> {
    return this.kv.getNow(REINDEX_PENDING_KEY) === "1";
  }

  async markReindexed(): Promise<void> {
    this.kv.deleteNow(REINDEX_PENDING_KEY);
  }
}

function asFloats(blob: Uint8Array): Float32Array {
  // bun:sqlite gives each blob its own buffer, so it is read in place; one at an offset that is not
  // 4-byte aligned is copied first, since a Float32Array cannot view it there.
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength >> 2);
  return new Float32Array(blob.slice().buffer);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

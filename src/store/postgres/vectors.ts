// The vector store on PostgreSQL (no pgvector needed): float vectors and their binary codes in one
// table; the codes also in memory on every replica (../hamming-index.ts) for the first pass, since
// a Hamming scan in SQL costs ten times the in-process one. The float vectors re-score the
// candidates from the database, so a code that outlived its vector only drops out.
//
// Keeping every replica's codes current: each row carries the id of the transaction that last
// wrote it (txid), and removals leave a row in vector_removals. A catch-up reads, in one snapshot,
// the rows written by transactions at or after the replica's horizon and the snapshot's xmin (every
// transaction below it has finished, so its rows were visible to this read); the new horizon is that
// xmin. A transaction still running at a catch-up is read again by the next one, so no commit is
// missed, whatever order transactions commit in. Catch-ups run on a NOTIFY sent at commit (a trigger),
// after every LISTEN (re)connect, on a slow timer, and before every search (read-your-writes
// across replicas, one indexed query when nothing changed).
import type { SQL } from "bun";
import { HammingIndex } from "../hamming-index";
import type { KeyValueStore, VectorHit, VectorStore } from "../ports";
import { num } from "./repositories";
import { SharedPull } from "./shared-pull";

export const SIGNATURE_KEY = "vectors.signature";
/** Bumped when the layout changes: a different layout rebuilds like a different model. */
const LAYOUT = 1;
export const REINDEX_PENDING_KEY = "vectors.reindex_pending";

/** The model a stored signature names, when the vectors have this version's layout; else null. */
export function storedVectorModel(signature: string | null): { name: string; dim: number } | null {
  const m = /^pg(\d+):(.+):(\d+)$/.exec(signature ?? "");
  return m && Number(m[1]) === LAYOUT ? { name: m[2]!, dim: Number(m[3]) } : null;
}
/** Serializes model checks of replicas started together (distinct from the migration lock). */
const VECTOR_OPEN_LOCK = 0x636f6c76_6563;

const OVERSAMPLE = 4;
const MIN_CANDIDATES = 40;
export const firstPassSize = (k: number) => Math.max(k * OVERSAMPLE, MIN_CANDIDATES);

/** One bit per dimension, set when the value is positive; bit i is bit i%8 of byte i/8. */
export function binaryCode(vector: Float32Array): Uint8Array {
  const code = new Uint8Array(vector.length >> 3);
  for (let i = 0; i < vector.length; i++) if (vector[i]! > 0) code[i >> 3]! |= 1 << (i & 7);
  return code;
}

const asBytes = (v: Float32Array) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
/**
 * Copied: the row's buffer may not be 4-byte aligned. `set` copies as one block; Uint8Array.from
 * walked the bytes one by one through the iterator (3 ms of CPU for a search's 120 vectors).
 */
export function asFloats(b: Uint8Array): Float32Array {
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The codes held in memory on this replica and the catch-up that keeps them current. */
export class PgVectorIndex {
  readonly codes: HammingIndex;
  /** Transactions from this id on may have written rows this replica has not read. */
  private horizon = "0";
  private readonly pulls = new SharedPull(() => this.pull());

  constructor(
    private readonly sql: SQL,
    readonly dim: number,
  ) {
    this.codes = new HammingIndex(dim);
  }

  /**
   * Resolves once every vector change committed before the call is in memory. Concurrent callers
   * share a pull; one that arrives while a pull runs waits for the following one, since the running
   * pull's snapshot may predate the caller's write.
   */
  catchUp(): Promise<void> {
    return this.pulls.run();
  }

  private async pull(): Promise<void> {
    const rows = await this.sql`
      SELECT 0 AS kind, NULL::bigint AS id, NULL::bytea AS code, pg_snapshot_xmin(pg_current_snapshot())::text AS horizon
      UNION ALL SELECT 1, id, NULL, NULL FROM vector_removals WHERE txid >= ${this.horizon}::xid8
      UNION ALL SELECT 2, id, code, NULL FROM vectors WHERE txid >= ${this.horizon}::xid8`.values();
    let horizon = this.horizon;
    // Removals first: a vector row present in the same snapshot is the current state.
    for (const [kind, id, , h] of rows) {
      if (kind === 0) horizon = h;
      else if (kind === 1) this.codes.delete(num(id));
    }
    for (const [kind, id, code] of rows) if (kind === 2 && code.length === this.dim / 8) this.codes.set(num(id), code);
    this.horizon = horizon;
  }
}

export class PgVectorStore implements VectorStore {
  constructor(
    private readonly sql: SQL,
    private readonly kv: KeyValueStore,
    readonly index: PgVectorIndex,
  ) {}

  get dim(): number {
    return this.index.dim;
  }

  /** The same store on another query handle (a transaction), sharing the in-memory index. */
  on(sql: SQL, kv: KeyValueStore): PgVectorStore {
    return new PgVectorStore(sql, kv, this.index);
  }

  /**
   * Opens the vectors for a model. A different model (name or dimension) empties the table, under
   * a lock so replicas started together agree, and `rebuilt` tells the caller to re-embed.
   */
  static async open(
    sql: SQL,
    kv: KeyValueStore,
    model: { name: string; dim: number },
  ): Promise<{ store: PgVectorStore; rebuilt: boolean }> {
    if (!Number.isInteger(model.dim) || model.dim <= 0 || model.dim % 8 !== 0) {
      throw new Error(`embedding dimension ${model.dim} is not a positive multiple of 8`);
    }
    const signature = `pg${LAYOUT}:${model.name}:${model.dim}`;
    const rebuilt = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${VECTOR_OPEN_LOCK})`;
      const [row] = await tx`SELECT value FROM kv WHERE key = ${SIGNATURE_KEY}`;
      if (row?.value !== signature) {
        await tx`DELETE FROM vectors`;
        await tx`INSERT INTO kv (key, value) VALUES (${SIGNATURE_KEY}, ${signature}), (${REINDEX_PENDING_KEY}, '1')
          ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
      }
      const [pending] = await tx`SELECT 1 FROM kv WHERE key = ${REINDEX_PENDING_KEY} AND value = '1'`;
      return pending !== undefined;
    });
    const index = new PgVectorIndex(sql, model.dim);
    await index.catchUp();
    return { store: new PgVectorStore(sql, kv, index), rebuilt };
  }

  private check(vector: Float32Array): void {
    if (vector.length !== this.dim) throw new Error(`vector has ${vector.length} dimensions, the store holds ${this.dim}`);
  }

  async upsert(id: number, vector: Float32Array): Promise<void> {
    this.check(vector);
    const code = binaryCode(vector);
    await this.sql`INSERT INTO vectors (id, embedding, code) VALUES (${id}, ${asBytes(vector)}, ${code})
      ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding, code = excluded.code, txid = pg_current_xact_id()`;
    // At once on this replica (the others follow at commit); if the transaction rolls back, the
    // code has no vector and drops out at re-scoring.
    this.index.codes.set(id, code);
  }

  async remove(id: number): Promise<void> {
    await this.sql`
      WITH d AS (DELETE FROM vectors WHERE id = ${id} RETURNING id),
      old AS (DELETE FROM vector_removals WHERE at < now() - interval '1 day')
      INSERT INTO vector_removals (id) SELECT id FROM d`;
    this.index.codes.delete(id);
  }

  async search(query: Float32Array, k: number): Promise<VectorHit[]> {
    this.check(query);
    if (k <= 0) return [];
    await this.index.catchUp();
    const candidates = this.firstPass(query, k);
    const hits = [...(await this.similarities(query, candidates))].map(([id, similarity]) => ({ id, similarity }));
    hits.sort((a, b) => b.similarity - a.similarity || a.id - b.id);
    return hits.slice(0, k);
  }

  /** The binary-pass candidates that `search` re-scores for `k` results. */
  firstPass(query: Float32Array, k: number): number[] {
    return this.index.codes.nearest(binaryCode(query), firstPassSize(k));
  }

  async similarities(query: Float32Array, ids: number[]): Promise<Map<number, number>> {
    this.check(query);
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    const rows = await this.sql`SELECT id, embedding FROM vectors WHERE id = ANY(${ids}::bigint[])`.values();
    for (const [id, embedding] of rows) out.set(num(id), dot(query, asFloats(embedding)));
    return out;
  }

  async searchExact(query: Float32Array, k: number): Promise<VectorHit[]> {
    this.check(query);
    if (k <= 0) return [];
    const rows = await this.sql`SELECT id, embedding FROM vectors`.values();
    const hits = rows.map(([id, embedding]: [string, Uint8Array]) => ({ id: num(id), similarity: dot(query, asFloats(embedding)) }));
    hits.sort((a: VectorHit, b: VectorHit) => b.similarity - a.similarity || a.id - b.id);
    return hits.slice(0, k);
  }

  async count(): Promise<number> {
    const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM vectors`;
    return n;
  }

  async needsReindex(): Promise<boolean> {
    return (await this.kv.get(REINDEX_PENDING_KEY)) === "1";
  }

  async markReindexed(): Promise<void> {
    await this.kv.delete(REINDEX_PENDING_KEY);
  }
}

// The storage ports. Routes and domain logic depend on these interfaces only, so another engine
// can be added beside the SQLite adapter without touching them.

/** The spec's key-value store: small settings and derived values. */
export interface KeyValueStore {
  get(key: string): string | null;
  set(key: string, value: string): void;
  delete(key: string): void;
}

export interface VectorHit {
  id: number;
  /** Cosine similarity to the query, -1..1. */
  similarity: number;
}

/** Nearest-neighbour index over unit vectors, keyed by a trail's integer id. */
export interface VectorStore {
  readonly dim: number;
  upsert(id: number, vector: Float32Array): void;
  remove(id: number): void;
  /** Fast search: binary-quantized first pass, re-scored with the float vectors. */
  search(query: Float32Array, k: number): VectorHit[];
  /** Exact brute-force search over the float vectors (for measuring recall). */
  searchExact(query: Float32Array, k: number): VectorHit[];
  count(): number;
}

/** A subsystem's answer to a readiness probe. */
export interface ProbeResult {
  ok: boolean;
  latency_ms: number;
  detail?: string;
}

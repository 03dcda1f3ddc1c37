// What the service core runs on: the store, the vector index and the embedding model, as
// src/compose.ts opened them. A subsystem that failed to start is null with its reason recorded:
// the process stays up and /readyz names the failing check.
import type { Embedder } from "../embedding/embedder";
import type { Store, VectorStore } from "../store/ports";

export type CheckName = "kv" | "vector" | "embedding" | "lexical";

/** Where the colony keeps its data: the embedded SQLite file, or a PostgreSQL shared by replicas. */
export type Backend = "sqlite" | "postgres";

export interface Subsystems {
  backend: Backend;
  store: Store | null;
  vectors: VectorStore | null;
  embedder: Embedder | null;
  /** Why a subsystem did not start, by check name. */
  failures: Partial<Record<CheckName, string>>;
}

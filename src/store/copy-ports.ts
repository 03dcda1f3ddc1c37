// What `colony migrate --from-sqlite DIR` and `--to-sqlite DIR` copy between the two stores, and
// the interface each store offers the copy (src/store/copy.ts drives it; the SQLite and PostgreSQL
// adapters each implement it in their copy-side.ts). The tables carrying a colony's state have the
// same names and columns in both schemas; what differs (the lexical and vector indexes, the
// counters SQLite keeps beside its rows, identity sequences) each store handles with its own code.

/** A table copied row by row, in primary-key order. */
export interface CopiedTable {
  name: string;
  /** The primary key: rows are read in its order and written once per key. */
  key: string[];
  /** A key already in the target gets the source's value (kv): otherwise an existing row is kept. */
  overwrite?: boolean;
  /** Rows whose first key column starts with one of these are not copied (nor counted). */
  skipPrefixes?: string[];
  /** Source columns the target may not have, and why they are not copied. */
  dropped?: Record<string, string>;
}

/**
 * Every table that carries a colony's state, in an order that satisfies the foreign keys (trails
 * before the rows that name a trail's seq).
 */
export const COPIED_TABLES: readonly CopiedTable[] = [
  // The vector keys are the target's own (each store has its own layout tag; the target's vector
  // store writes them when the vectors are copied); migrate.* is the copy's own bookkeeping.
  { name: "kv", key: ["key"], overwrite: true, skipPrefixes: ["vectors.", "migrate."] },
  { name: "trails", key: ["seq"] },
  {
    name: "jobs",
    key: ["trail_seq"],
    dropped: {
      leased_until: "a lease belongs to a running PostgreSQL replica; copied jobs are waiting, claimed by nobody",
      leased_by: "as leased_until",
    },
  },
  { name: "outcomes", key: ["id"] },
  { name: "merge_credits", key: ["trail_seq", "agent", "day"] },
  { name: "tombstones", key: ["trail_id"] },
  { name: "events", key: ["id"] },
  { name: "fingerprint_aliases", key: ["old_fp", "new_fp"] },
  { name: "drafts", key: ["token_hash"] },
  { name: "series_hourly", key: ["hour", "name"] },
  { name: "search_hourly", key: ["hour", "label"] },
  { name: "search_clients", key: ["label", "client"] },
  { name: "stats_hourly", key: ["hour"] },
  { name: "agent_activity", key: ["agent"] },
];

/** The kv key of the copy's own record in the target (a copy in progress, or finished). */
export const COPY_MARKER_KEY = "migrate.copy";

/** A stored value as the copy carries it: integers and reals as numbers, booleans as 0 or 1. */
export type CopyValue = string | number | null;
export type CopyRow = CopyValue[];

/** The model that made a store's vectors (its name and dimension), as the vector store records it. */
export interface VectorModel {
  name: string;
  dim: number;
}

/** Writes into the target, inside one transaction of the target. */
export interface CopyWriter {
  /** Inserts rows (values in `columns` order); a row whose key is already there is kept (or overwritten). */
  insert(table: CopiedTable, columns: string[], rows: CopyRow[]): Promise<void>;
  /** Through the target's own vector store (its binary codes computed its own way). */
  upsertVector(id: number, vector: Float32Array): Promise<void>;
  /** Through the target's own lexical index (its term statistics kept its own way). */
  addLexical(docs: { id: number; doc: { error: string; body: string } }[]): Promise<void>;
  setKv(key: string, value: string): Promise<void>;
}

/** One side of a copy: a colony's store opened by `colony migrate` (the colony itself stopped). */
export interface CopySide {
  readonly kind: "sqlite" | "postgres";
  /** Where it is, for messages (never a password). */
  readonly description: string;
  /** The column names of a table. */
  columns(table: string): Promise<string[]>;
  /** Rows of `columns` after the key `after` (null: from the start), in key order. */
  read(table: CopiedTable, columns: string[], after: CopyValue[] | null, limit: number): Promise<CopyRow[]>;
  count(table: CopiedTable): Promise<number>;
  kvGet(key: string): Promise<string | null>;
  /** The model of the stored vectors, or null when there are none this version can read. */
  vectorModel(): Promise<VectorModel | null>;
  /** True while the vectors are being rebuilt for a new model (re-embedding not finished). */
  reindexPending(): Promise<boolean>;
  readVectors(afterId: number, limit: number): Promise<{ id: number; vector: Float32Array }[]>;
  countVectors(): Promise<number>;
  /** Ids of the trails in the lexical index, after `afterId`, ascending. */
  lexicalIds(afterId: number, limit: number): Promise<number[]>;
  countLexical(): Promise<number>;
  /** The stored content (JSON) of trails by seq. */
  trailContents(seqs: number[]): Promise<Map<number, string>>;

  // As the target:
  /** Opens the target's vector store for the source's model (emptied if it held another model's). */
  openVectors(model: VectorModel): Promise<void>;
  setReindexPending(pending: boolean): Promise<void>;
  /** Runs `fn` in one transaction of this store: all its writes commit together or not at all. */
  write(fn: (w: CopyWriter) => Promise<void>): Promise<void>;
  /** After the rows are in: id counters past the copied ids, running totals recounted. */
  finish(): Promise<void>;
  close(): Promise<void>;
}

/** Why `colony migrate` stopped; the command maps each kind to its exit code (docs/cli.md). */
export type MigrateFailure =
  /** Wrong input: a missing setting, a directory that is not a colony. */
  | "usage"
  /** The target (or the schema) is not one this copy may touch: another colony, a newer schema, replicas running. */
  | "refused"
  /** A store cannot be reached or is in use by a running colony. */
  | "unavailable"
  /** The copy ran but its verification found a difference. */
  | "failed";

export class MigrateError extends Error {
  constructor(
    readonly kind: MigrateFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

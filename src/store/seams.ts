// The seams where Colony assumes one process today. Each is an interface with an in-process version
// (./single-process.ts) that src/compose.ts injects; a colony of several replicas over one database
// replaces them with shared versions. What such a version must provide is in docs/architecture.md
// ("Single-process seams"). Methods that a networked version needs to wait on return promises; the
// ones on the hottest path may answer synchronously (a `Maybe` promise) so the in-process version
// costs nothing.

export type MaybePromise<T> = T | Promise<T>;

// ---- Rate-limit counters ---------------------------------------------------------------------

/** The state of one quota window for one key, as the RateLimit headers show it. */
export interface QuotaState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
}

export interface QuotaDecision extends QuotaState {
  allowed: boolean;
}

/** The fixed-window counters of one quota (a limit per window, counted per client address). */
export interface QuotaWindow {
  readonly limit: number;
  /** Counts one use of `key` when the quota allows it; the state after the count. */
  take(key: string): MaybePromise<QuotaDecision>;
  /** The current state of `key`, without counting a use. */
  peek(key: string): MaybePromise<QuotaDecision>;
}

/** Makes the counters of each quota (src/service/quotas.ts names them). */
export interface QuotaCounters {
  window(quota: string, limit: number, windowMs: number): QuotaWindow;
  /** Forgets windows that have ended (run by maintenance); how many were dropped. */
  purgeExpired(): Promise<number>;
}

// ---- Change feeds ----------------------------------------------------------------------------

/** A feed of facts announced after a commit, delivered to every listener of every process. */
export interface ChangeFeed<T> {
  /** Announces a change that is already durable. Resolves once it is sent (not necessarily delivered). */
  announce(change: T): Promise<void>;
  /**
   * Calls `listener` for each announced change, this process's own included, and `lost` when
   * changes may have been missed (a multi-process feed that reconnected): the listener must then
   * treat everything as changed. Returns the unsubscribe function.
   */
  subscribe(listener: (change: T) => void, lost?: () => void): () => void;
}

/**
 * Fingerprints whose lookup answer may have changed (a trail was indexed, merged into, removed, or
 * its strength moved). The fingerprint lookup cache (src/http/routes/lookup.ts) drops them.
 */
export interface FingerprintChanges extends ChangeFeed<{ fingerprints: string[] }> {
  /**
   * Where other processes change trails too (replicas): resolves once every change committed
   * anywhere before the call has reached this process's listeners, so a cache can answer as
   * fresh as the database. Absent in one process, where every change is announced in it.
   */
  catchUp?(): Promise<void>;
}

/**
 * Trails (by seq) whose vector was stored or removed. A vector index with an in-memory part (the
 * binary codes of ./hamming-index.ts) refreshes those ids from the database; the SQLite adapter's
 * in-memory codes follow its own writes, so in one process nobody needs to listen.
 */
export type VectorChanges = ChangeFeed<{ upserted: number[]; removed: number[] }>;

// ---- Enrichment job claim --------------------------------------------------------------------

export interface ClaimedJob {
  trailSeq: number;
  /** Failed analyses so far. */
  attempts: number;
}

/**
 * How an enrichment worker takes jobs. A claimed job is this worker's until it is removed (its
 * verdict applied), released, or its lease runs out (the worker died): no other worker gets it
 * meanwhile.
 */
export interface JobClaims {
  /** Up to `limit` waiting jobs, oldest first, that no other worker holds. */
  claim(limit: number): Promise<ClaimedJob[]>;
  /** Gives jobs back (a failed batch, a recorded failure), so they are claimed again later. */
  release(trailSeqs: number[]): Promise<void>;
  /**
   * Set when claims are leases that run out (several processes share the queue): extends the
   * lease of these jobs, still held by this worker. The worker calls it every `renewEveryMs` while
   * it works on a batch, so a batch slower than the lease is not taken by a second worker too.
   */
  renew?(trailSeqs: number[]): Promise<void>;
  readonly renewEveryMs?: number;
  /**
   * Set when other processes share the queue: jobs they queue, or leave behind when they die (once
   * the lease runs out), reach this worker by no notification, so an idle worker looks again this
   * often (ms). Unset: this process is told of every job.
   */
  readonly pollMs?: number;
}

// ---- Maintenance leadership ------------------------------------------------------------------

/**
 * Who runs periodic, colony-wide work (the hourly purge, re-embedding after a model change,
 * re-fingerprinting after a normalizer change): one process at a time. `run` calls `task` when this process may do `name` now and answers true;
 * false when another process holds it.
 */
export interface Leadership {
  run(name: string, task: () => Promise<void>): Promise<boolean>;
}

/** Every seam, as src/compose.ts hands them to the services. */
export interface Seams {
  quotas: QuotaCounters;
  fingerprints: FingerprintChanges;
  vectors: VectorChanges;
  /** Null when the store did not open (nothing to claim from). */
  jobClaims: JobClaims | null;
  leadership: Leadership;
}

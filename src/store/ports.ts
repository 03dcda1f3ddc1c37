import type { Risk } from "../core/risk";
import type { OutcomeCounts } from "../core/strength";
import type { Trail } from "../core/trail";

// The storage ports. Routes and domain logic depend on these interfaces only, so another engine
// can be added beside the SQLite adapter without touching them.

/** The spec's key-value store: small settings and derived values. */
export interface KeyValueStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  /**
   * Stores `value` unless the key already has one, and returns the value the key holds after:
   * of several processes racing to set a key first, all get the same answer.
   */
  setIfAbsent(key: string, value: string): Promise<string>;
  delete(key: string): Promise<void>;
}

export interface VectorHit {
  id: number;
  /** Cosine similarity to the query, -1..1. */
  similarity: number;
}

/** Nearest-neighbour index over unit vectors, keyed by a trail's integer id. */
export interface VectorStore {
  readonly dim: number;
  upsert(id: number, vector: Float32Array): Promise<void>;
  remove(id: number): Promise<void>;
  /** Fast search: binary-quantized first pass, re-scored with the float vectors. */
  search(query: Float32Array, k: number): Promise<VectorHit[]>;
  /** Cosine similarity of the query to each stored id (ids without a vector are left out). */
  similarities(query: Float32Array, ids: number[]): Promise<Map<number, number>>;
  /** Exact brute-force search over the float vectors (for measuring recall). */
  searchExact(query: Float32Array, k: number): Promise<VectorHit[]>;
  count(): Promise<number>;
  /** True after a model change until every indexed trail has been re-embedded. */
  needsReindex(): Promise<boolean>;
  markReindexed(): Promise<void>;
}

export interface LexicalHit {
  id: number;
  /** Higher is better (the negated BM25 rank). */
  score: number;
}

/** A lexical document: pre-tokenized text (core/lexical.ts lexicalDocument) per field. */
export interface LexicalDoc {
  error: string;
  body: string;
}

/** Full-text index over a trail's error line and, separately, its explanation and fix. */
export interface LexicalIndex {
  add(id: number, doc: LexicalDoc): Promise<void>;
  /** `doc` must be the document that was added, so term statistics stay exact. */
  remove(id: number, doc: LexicalDoc): Promise<void>;
  /** Best BM25 matches for any of the tokens (core/lexical.ts lexicalIndexTokens of the query). */
  search(tokens: string[], k: number): Promise<LexicalHit[]>;
  /**
   * Adds the documents whose id the index does not hold yet (a rebuild meets trails that live
   * writes added meanwhile with the current tokens) and leaves the others as they are. The worker
   * adds a batch's newly indexed trails with it too, last in its transaction (one statement).
   */
  addMissing(entries: { id: number; doc: LexicalDoc }[]): Promise<number>;
  /** Empties the index: documents, term statistics, totals (a rebuild's first step). */
  clear(): Promise<void>;
  /**
   * Holds the other writers of the index back until the calling transaction ends, so that trails
   * read next are not removed or changed before this transaction indexes them. Called first in
   * the transaction. PostgreSQL takes the index writers' lock; SQLite's writers already run one at a time.
   */
  holdWriters(): Promise<void>;
}

/** A subsystem's answer to a readiness probe. */
export interface ProbeResult {
  ok: boolean;
  latency_ms: number;
  detail?: string;
}

// ---- Trail lifecycle -------------------------------------------------------------------------
export type TrailStatus = "queued" | "indexed" | "merged" | "rejected";

export type { OutcomeCounts };
/** The risk assessment as stored with a trail: the domain's own shape. */
export type StoredRisk = Risk;

export interface TrailRecord {
  seq: number;
  id: string;
  status: TrailStatus;
  fingerprint: string;
  errorType: string | null;
  trail: Trail;
  contentHash: string;
  author: string;
  /**
   * The address pseudonym of the request that published it (POST /v1/trails, or the approval of a
   * draft); null for trails stored before it was kept. Merge credits are limited per client.
   */
  client: string | null;
  createdAt: number;
  indexedAt: number | null;
  category: string | null;
  quality: number | null;
  risk: StoredRisk | null;
  counts: OutcomeCounts;
  strength: number | null;
  mergedInto: string | null;
  reasons: string[] | null;
  mergeKey: string | null;
  reinforcedAt: number | null;
  /** The normalizer version `fingerprint` was computed with (core/error-normalizer.ts). */
  normalizerVersion: number;
  /** The content rules version the content was last redacted and screened with (core/content-rules.ts); 0 before it was kept. */
  contentRulesVersion: number;
}

export type NewTrail = Pick<
  TrailRecord,
  | "id"
  | "fingerprint"
  | "normalizerVersion"
  | "contentRulesVersion"
  | "errorType"
  | "trail"
  | "contentHash"
  | "author"
  | "client"
  | "createdAt"
>;

/**
 * A stored trail re-checked by newer content rules (service/rescreen.ts): its re-redacted content
 * and what is derived from it. Applied only while the trail still has the status and version it was
 * read with, so an operator's removal or another run in between wins.
 */
export interface Rescreen {
  /** The status and content rules version the trail was read with. */
  was: { status: TrailStatus; contentRulesVersion: number };
  trail: Trail;
  contentHash: string;
  errorType: string | null;
  contentRulesVersion: number;
  /** The risk of an indexed trail that stays indexed; the stored risk is kept when absent. */
  risk?: StoredRisk;
  /** The current rules refuse it: it becomes rejected for these reasons (its outcomes stay). */
  rejectedFor?: string[];
}

/** A stored trail's fingerprint and merge key recomputed by a newer normalizer. */
export interface Refingerprint {
  fingerprint: string;
  normalizerVersion: number;
  /** Recomputed for a trail that has one (indexed), else null. */
  mergeKey: string | null;
}

/**
 * The verdict of enrichment, applied once to a queued trail, with the content rules version its
 * analysis ran (core/content-rules.ts).
 */
export type Verdict = { contentRulesVersion: number } & (
  | {
      status: "indexed";
      trail: Trail;
      category: string;
      quality: number;
      risk: StoredRisk;
      strength: number;
      mergeKey: string;
      at: number;
    }
  | { status: "merged"; trail: Trail; mergedInto: string; at: number }
  | { status: "rejected"; trail: Trail; reasons: string[]; at: number }
);

export interface RankingFacts {
  seq: number;
  status: TrailStatus;
  strength: number | null;
  environment: Trail["environment"] | null;
}

/**
 * The furthest after its replica's own time a reinforcement is stamped to keep the feed's order
 * (TrailRepository.countOutcome): clocks of replicas further apart than this are broken, not skewed.
 */
export const REINFORCED_AHEAD_AT_MOST_MS = 10 * 60_000;

export interface TrailRepository {
  /** Stores a queued trail and its enrichment job in one transaction. */
  insertQueued(t: NewTrail): Promise<TrailRecord>;
  byId(id: string): Promise<TrailRecord | null>;
  bySeq(seq: number): Promise<TrailRecord | null>;
  bySeqs(seqs: number[]): Promise<TrailRecord[]>;
  /**
   * What search ranks candidates by, without loading whole trails (only the results need them).
   * `environment` false leaves it null: a query without an environment overlaps nothing anyway.
   */
  rankingFacts(seqs: number[], opts: { environment: boolean }): Promise<RankingFacts[]>;
  /** Indexed trails with this fingerprint, strongest first. */
  indexedByFingerprint(fingerprint: string, limit: number): Promise<TrailRecord[]>;
  /**
   * The indexed trail with this merge key, held until the calling transaction ends so that an
   * operator's removal of it waits for a merge into it, and so that a merge credit and an outcome
   * report that could count (OutcomeRepository.holdTrail) are judged one after the other
   * (PostgreSQL: a row lock against deletion, which a report's lock waits for and waits on).
   */
  indexedByMergeKey(mergeKey: string): Promise<TrailRecord | null>;
  /**
   * Holds these merge keys until the calling transaction ends; another transaction holding one of
   * them waits for it, and its `indexedByMergeKey` then finds the trail this one indexed. Called by
   * the enrichment worker before it looks for merge targets (two replicas enriching the same trail
   * at once both found none, and the unique key refused the second verdict, counted as a failed
   * enrichment), and by re-fingerprinting before it gives stored trails recomputed keys (the same
   * with a worker indexing a new trail under one of them). Called first in the transaction, so no
   * row lock is held while waiting. PostgreSQL takes advisory locks, in one order so two
   * transactions never deadlock over them; SQLite's writers already run one at a time.
   */
  holdMergeKeys(mergeKeys: string[]): Promise<void>;
  /** Indexed trails with seq greater than `afterSeq`, in seq order (for re-embedding). */
  indexedAfter(afterSeq: number, limit: number): Promise<TrailRecord[]>;
  /**
   * Those of these trails that are indexed, held against deletion until the calling transaction
   * ends: an operator's removal waits for a re-embedding that writes their vectors (PostgreSQL: a
   * row lock; before it, a removal committed between the re-embedding's check and its write left a
   * vector without a trail). SQLite's writers already run one at a time.
   */
  holdIndexed(seqs: number[]): Promise<Set<number>>;
  /** Trails of any status whose fingerprint an older normalizer than `version` computed, seq > `afterSeq`, in seq order. */
  fingerprintedBefore(version: number, afterSeq: number, limit: number): Promise<TrailRecord[]>;
  /**
   * Whether any trail's fingerprint is older than `version`: the start-time check, answered from
   * the version index (fingerprintedBefore's seq order walks every row when none is left).
   */
  anyFingerprintedBefore(version: number): Promise<boolean>;
  /** Stores a re-computed fingerprint (and merge key) with the normalizer version that computed it. */
  refingerprint(seq: number, r: Refingerprint): Promise<void>;
  /**
   * Enriched trails (indexed, merged, rejected) last checked by content rules older than `version`,
   * seq > `afterSeq`, in seq order. Queued trails are left to their enrichment, whose verdict runs
   * the current rules and records their version.
   */
  checkedBefore(version: number, afterSeq: number, limit: number): Promise<TrailRecord[]>;
  /** Whether checkedBefore has anything for `version`, from the version index (the start-time check). */
  anyCheckedBefore(version: number): Promise<boolean>;
  /** Stores a re-check by newer content rules; false when the trail changed since it was read (or is gone). */
  rescreen(seq: number, r: Rescreen): Promise<boolean>;
  /** Applies a verdict to a trail that is still queued; false when it is not (removed meanwhile). */
  applyVerdict(seq: number, v: Verdict): Promise<boolean>;
  /**
   * Adds one to an outcome count in one statement (never read-modify-write: concurrent reports
   * both count) and moves reinforced_at when given: to the later of the time given and a millisecond
   * after the feed's head (the latest reinforced_at of an indexed trail), so a reinforced trail goes to the head
   * whatever the clock of the replica that stamps it. With stamps from replicas' own clocks, one
   * running more than a second behind sorted its reinforcement below trails reinforced before it,
   * and `colony export`, which reads the head down to its time at the start, missed the trail.
   * At most REINFORCED_AHEAD_AT_MOST_MS after the time given, though: one replica's clock gone far
   * ahead (a year) would otherwise stamp every later reinforcement as far ahead, for as long.
   * Returns the counts after the increment and the quality strength is computed from, or null when
   * no such trail exists.
   */
  countOutcome(
    seq: number,
    outcome: keyof OutcomeCounts,
    reinforcedAt: number | null,
  ): Promise<{ counts: OutcomeCounts; quality: number | null } | null>;
  setStrength(seq: number, strength: number): Promise<void>;
  /**
   * Deletes the trail and everything hanging off it (job, outcomes, credits); returns the trail as
   * it was when deleted (null when there was none). A removal works from this row, not from one
   * read before: a worker may have indexed the trail, and rewritten its content, in between.
   */
  delete(seq: number): Promise<TrailRecord | null>;
  /** How many trails are in each state (for the operator: metrics and console). */
  countByStatus(): Promise<Record<TrailStatus, number>>;
  /**
   * Indexed trails, most recently reinforced first, after a keyset cursor; with `runtimes`, those
   * whose runtime name is any of them (case-insensitively: the spellings of one runtime).
   */
  feed(opts: FeedOptions): Promise<TrailRecord[]>;
}

export interface FeedOptions {
  limit: number;
  after?: FeedCursor;
  category?: string;
  runtimes?: readonly string[];
}

export interface FeedCursor {
  reinforcedAt: number;
  seq: number;
}

export interface JobQueue {
  /** Oldest waiting jobs first. */
  next(limit: number): Promise<{ trailSeq: number; attempts: number }[]>;
  recordFailure(trailSeq: number, error: string): Promise<void>;
  remove(trailSeq: number): Promise<void>;
  depth(): Promise<number>;
  /**
   * In a publish's transaction, just before its insert: the waiting jobs and, besides them, the
   * other publishes whose jobs may not be committed yet, so a publish stored only while this is
   * under COLONY_MAX_QUEUE never takes the queue past it. On SQLite, whose transactions run one at
   * a time, the depth. On PostgreSQL a transaction does not see the inserts of others in flight,
   * which therefore each counted the same queue and were all stored (docs/scale-out.md). `limit`:
   * COLONY_MAX_QUEUE, near which publishes take turns.
   */
  depthForInsert(limit: number): Promise<number>;
}

export interface OutcomeRecord {
  trailSeq: number;
  agent: string;
  /** The pseudonym of the reporting client's address (Caller.client); null on rows from before it was kept. */
  client: string | null;
  outcome: "worked" | "partially_worked" | "failed" | "not_applicable";
  counted: boolean;
  notes: string | null;
  model: string | null;
  at: number;
  /**
   * The content rules version its notes were redacted and screened with (core/content-rules.ts),
   * stored with a new report; 0 when absent (checked again at the next start).
   */
  contentRulesVersion?: number;
}

/** A stored report's notes, as re-screening reads them (service/rescreen.ts rescreenOutcomeNotes). */
export interface StoredNotes {
  /** The report's row id. */
  id: number;
  trailSeq: number;
  notes: string;
  contentRulesVersion: number;
}

export interface OutcomeRepository {
  insert(o: OutcomeRecord): Promise<void>;
  /** The latest `perTrail` reports with notes for each trail. */
  latestWithNotes(trailSeqs: number[], perTrail: number): Promise<OutcomeRecord[]>;
  /**
   * Called first in a report's transaction: holds the trail until the transaction ends and says
   * whether it is still indexed (an operator on another replica may have removed it since the
   * report read it: its report would then fail on the missing row). `judging`: the report could
   * count, so the other reports on this trail are held back too, and the counts it reads next are
   * the ones it is judged by (decisions §6: at most so many counted per client and day).
   * PostgreSQL locks the trail's row, for update when judging (concurrent transactions each read
   * the counts before any inserted: a burst of eight reports from one address all counted), else
   * only against its deletion; SQLite's writers already run one at a time.
   */
  holdTrail(trailSeq: number, judging: boolean): Promise<boolean>;
  /** Whether this agent already had a counted report on this trail at or after `since`. */
  countedSince(trailSeq: number, agent: string, since: number): Promise<boolean>;
  /** How many counted reports this client (address pseudonym) made on this trail at or after `since`, whatever their agents. */
  countedForClientSince(trailSeq: number, client: string, since: number): Promise<number>;
  /**
   * How many uncounted reports this client (address pseudonym) made on any trail at or after
   * `since`, counting no further than `atMost`. Asked in the transaction that stores the report:
   * the count stays true until its commit (below `atMost`, the client's other reports asking it
   * wait for that commit on PostgreSQL; SQLite's writers run one at a time).
   */
  uncountedForClientSince(client: string, since: number, atMost: number): Promise<number>;
  /** A trail's latest reports, newest first (for the operator console). */
  forTrail(trailSeq: number, limit: number): Promise<OutcomeRecord[]>;
  /** Reports with notes last checked by content rules older than `version`, id > `afterId`, in id order. */
  notesCheckedBefore(version: number, afterId: number, limit: number): Promise<StoredNotes[]>;
  /** Whether any report's notes were last checked by content rules older than `version` (one index probe: asked at every start). */
  hasNotesCheckedBefore(version: number): Promise<boolean>;
  /**
   * Stores a report's notes as newer content rules leave them (null: dropped) with that version;
   * applied only while the row still has the version it was read with (false otherwise, or gone).
   */
  rescreenNotes(id: number, r: { wasVersion: number; notes: string | null; contentRulesVersion: number }): Promise<boolean>;
}

export interface MergeCreditLedger {
  /**
   * Records a credit; false when this agent, or another agent of this client (address pseudonym),
   * already earned one for this trail on this day.
   */
  grant(trailSeq: number, agent: string, client: string, day: string): Promise<boolean>;
  /**
   * The credits for this trail on `day` or later: whether this agent earned one, and how many
   * this client did (a credit counts as a counted report, src/core/outcome-counting.ts).
   */
  earnedSince(trailSeq: number, agent: string, client: string, day: string): Promise<{ byAgent: boolean; byClient: number }>;
}

/**
 * Old fingerprints of re-fingerprinted trails (decisions §2): a lookup or search by an old
 * fingerprint also finds the trails now under the new one, for at least 90 days.
 */
export interface FingerprintAliasRepository {
  /** Records that `oldFp` now resolves to `newFp` (a repeat keeps the first record). */
  add(oldFp: string, newFp: string, at: number): Promise<void>;
  /** `add` for each [old, new] pair, in one statement (a trail's aliases of every older normalizer). */
  addAll(pairs: readonly (readonly [oldFp: string, newFp: string])[], at: number): Promise<void>;
  /** The current fingerprints an old one resolves to (none for a current fingerprint). */
  resolve(oldFp: string): Promise<string[]>;
  /** Deletes aliases created before `at`; returns how many. */
  purgeBefore(at: number): Promise<number>;
}

export interface TombstoneRepository {
  /**
   * `mergeKey`: the removed trail's when it was indexed, so its fix (what a merge calls the same
   * trail) stays removed too; null for a queued, merged or rejected trail, whose removal takes that
   * copy only (docs/ranking-and-strength.md, "Removal").
   */
  add(trailId: string, contentHash: string, at: number, mergeKey?: string | null): Promise<void>;
  has(trailId: string): Promise<boolean>;
  hasContent(contentHash: string): Promise<boolean>;
  /** Whether an indexed trail with this merge key was removed within the tombstones' 90 days. */
  hasMergeKey(mergeKey: string): Promise<boolean>;
  purgeBefore(at: number): Promise<number>;
  /** Tombstones held: the trails removed in the last 90 days (for the operator). */
  count(): Promise<number>;
}

export interface EventRecord {
  kind: "reinforced" | "weakened" | "search" | "laid";
  agent: string;
  trailId: string | null;
  text: string;
  at: number;
}

export interface EventLog {
  append(e: EventRecord): Promise<void>;
  recent(limit: number): Promise<EventRecord[]>;
  /** A trail's events, newest first (for the operator console). */
  forTrail(trailId: string, limit: number): Promise<EventRecord[]>;
  /**
   * Deletes `search` events older than `before`, at most `batch` of them; returns how many. Every
   * search appends one, so without this the table grows with all traffic (the other kinds follow
   * publishes and counted reports, which their quotas bound).
   */
  purgeSearchesBefore(before: number, batch: number): Promise<number>;
  /**
   * A removed trail's events go (laid, reinforced, weakened: they name its author and its
   * reporters); searches whose top result it was stay, without its id.
   */
  forgetTrail(trailId: string): Promise<void>;
  /**
   * A removed merged trail's merge credit event goes: the `reinforced` event of the trail it merged
   * into that names its author, at its verdict's time (the credit's event is written with them).
   */
  forgetMergeCredit(intoTrailId: string, agent: string, at: number): Promise<void>;
}

/** What the operator console charts, counted per hour. */
export const SERIES = ["searches", "publishes", "outcomes", "indexed", "merged", "rejected", "failed", "queue_depth"] as const;
export type SeriesName = (typeof SERIES)[number];

export interface SeriesPoint {
  /** Start of the hour, ms since the epoch. */
  hour: number;
  name: SeriesName;
  value: number;
}

/** Aggregates kept as things happen, so stats never scan whole tables. */
export interface StatsRepository {
  touchAgent(agent: string, at: number): Promise<void>;
  /** Counts one report in its hour; the hour's sums saturate at Number.MAX_SAFE_INTEGER, never overflow. */
  addOutcome(at: number, tokensSaved: number): Promise<void>;
  /** Sums since `at`, each a whole number from 0 to MAX_SAFE_INTEGER, whatever the buckets hold. */
  since(at: number): Promise<{ outcomes: number; tokensSaved: number; agents: number }>;
  trailsIndexed(): Promise<number>;
  /** Drops hourly buckets older than `before`. */
  purgeBefore(before: number): Promise<void>;
  /** Adds `by` to a series in the hour of `at`. */
  bump(name: SeriesName, at: number, by?: number): Promise<void>;
  /** Raises a series in the hour of `at` to `value` if it is higher (a gauge's hourly peak). */
  peak(name: SeriesName, at: number, value: number): Promise<void>;
  /** Every non-zero point from the hour containing `since` on, oldest first. */
  series(since: number): Promise<SeriesPoint[]>;
  /** Drops series points older than `before` (kept longer than the 24-hour buckets). */
  purgeSeriesBefore(before: number): Promise<void>;
  /**
   * Set by a store that spreads an hour's counters over several rows (PostgreSQL's slots): folds
   * the hours before `before` into one row per key, counts unchanged, so reads of finished hours
   * stay one row per key. Returns how many rows went.
   */
  foldHoursBefore?(before: number): Promise<number>;
}

export type DraftState = "pending" | "published" | "discarded";

export interface DraftRecord {
  tokenHash: string;
  state: DraftState;
  trail: Trail;
  fingerprint: string;
  redactions: Record<string, number>;
  risk: StoredRisk;
  author: string;
  createdAt: number;
  expiresAt: number;
  trailId: string | null;
}

export interface DraftRepository {
  insert(d: DraftRecord): Promise<void>;
  byHash(tokenHash: string): Promise<DraftRecord | null>;
  /**
   * pending → published; false when the draft was not pending. The payload (trail, fingerprint,
   * redactions, risk) and the author are dropped (read back empty): the trail now lives as a trail,
   * which an operator's removal must delete whole.
   */
  markPublished(tokenHash: string, trailId: string): Promise<boolean>;
  /** pending → discarded, the payload and author dropped as by markPublished; false when the draft was not pending. */
  markDiscarded(tokenHash: string): Promise<boolean>;
  /** Deletes pending drafts past their expiry and finished ones older than `finishedBefore`. */
  purge(now: number, finishedBefore: number): Promise<number>;
}

/** Which labels a `SearchCounter.top` shows: how many different clients a label needs. */
export interface HotLabelRule {
  /**
   * Clients a label needs to be shown, or as many as the most widely searched label of the window
   * has when that is fewer (a colony whose agents all search from one address still sees its
   * error types)...
   */
  minClients: number;
  /** ...unless it is one of these (the fixed set of categories): then one is enough. */
  anyClients: readonly string[];
}

/**
 * Searches and distinct searching clients per label per hour, so "hot" never scans the event log.
 * Each client of a label is counted once, in the hour of its latest search of it.
 */
export interface SearchCounter {
  /** One search under `label` by `client` (the address pseudonym, never the raw address). */
  add(label: string, client: string, at: number): Promise<void>;
  /**
   * The labels searched by the most different clients since `since` (from the start of its hour),
   * most first, then by searches, then by label; only those `rule` shows.
   */
  top(since: number, limit: number, rule: HotLabelRule): Promise<{ label: string; clients: number; searches: number }[]>;
}

/** Every repository over one database. */
export interface Ports {
  kv: KeyValueStore;
  trails: TrailRepository;
  jobs: JobQueue;
  outcomes: OutcomeRepository;
  credits: MergeCreditLedger;
  tombstones: TombstoneRepository;
  aliases: FingerprintAliasRepository;
  events: EventLog;
  lexical: LexicalIndex;
  searches: SearchCounter;
  drafts: DraftRepository;
  stats: StatsRepository;
  /** The vector index, once `Store.openVectors` has opened it for a model (null before). */
  vectors: VectorStore | null;
}

/** The ports inside one transaction, plus work for after its commit. */
export interface Transaction extends Ports {
  /**
   * Runs `fn` once the transaction has committed (in registration order), never after a rollback:
   * notifications, cache invalidation, worker wake-ups, anything that must only see durable data.
   */
  afterCommit(fn: () => void | Promise<void>): void;
}

/**
 * The ports over one database. Reads may run outside a transaction; a write outside one is a
 * transaction of its own. Use cases that write more than once do it in one `transaction`.
 */
/**
 * A write the store could not keep: the disk is full or the device failed (SQLite's SQLITE_FULL and
 * SQLITE_IOERR). Nothing of it was stored and the same write may succeed once space returns, so the
 * service answers 503 unavailable with Retry-After rather than 500. Every adapter throws it for
 * such failures of its writes and transactions.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

export interface Store extends Ports {
  /**
   * Runs `fn` in one transaction: committed when its promise resolves, rolled back when it rejects
   * (the rejection is passed on). Use only `tx` inside `fn`: the store's own ports would wait for
   * this transaction to end. Not reentrant.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * Opens the vector index for an embedding model. A different model (name or dimension) than the
   * stored vectors' rebuilds it empty; `rebuilt` then tells the caller to re-embed.
   */
  openVectors(model: { name: string; dim: number }): Promise<{ vectors: VectorStore; rebuilt: boolean }>;
  /** Bytes the store takes on disk (for the operator: metrics and console). */
  sizeBytes(): Promise<number>;
}

// The PostgreSQL adapter of the Store port, on Bun's built-in client (Bun.SQL): a connection pool,
// every repository bound either to the pool (each write one atomic statement) or to a
// transaction's connection. Several replicas may share one database: uniqueness lives in the
// database (constraints, conditional updates), and the in-memory vector codes follow the table
// by a change feed (vectors.ts).
import { PgFingerprintFeed } from "./fingerprint-feed";
import type { SQL } from "bun";
import { type AfterCommitHook, runAfterCommitHooks } from "../after-commit";
import type { Ports, Store, Transaction } from "../ports";
import { parseDatabaseUrl } from "../../core/database-url";
import { bounded, type Guard, guarded, Patience } from "./failures";
import { type DatabasePool, openPool } from "./hosts";
import { PgLexicalIndex } from "./lexical";
import { migratePostgres } from "./migrations";
import {
  PgDraftRepository,
  PgEventLog,
  PgFingerprintAliasRepository,
  PgJobQueue,
  PgKeyValueStore,
  PgMergeCreditLedger,
  PgOutcomeRepository,
  PgSearchCounter,
  PgStatsRepository,
  PgTombstoneRepository,
} from "./repositories";
import { PgTrailRepository } from "./trails";
import { PgVectorStore } from "./vectors";

/** Channel of the vector change feed (the trigger in migration 1 notifies it). */
export const VECTORS_CHANNEL = "colony_vectors";
/** A catch-up at least this often, whatever the notifications do. */
const CATCH_UP_INTERVAL_MS = 2_000;

export interface PostgresStore extends Store {
  readonly sql: SQL;
  /** Fingerprint changes across the replicas on this database (the lookup caches follow it). */
  readonly fingerprintFeed: PgFingerprintFeed;
  /** How long calls wait for the database (COLONY_DATABASE_TIMEOUT_MS); the quota checks share it. */
  readonly patience: Patience;
  /** Stops the change feed and closes the pool. */
  close(): Promise<void>;
}

export interface PostgresOptions {
  url: string;
  /** Connections in the pool. */
  poolSize: number;
  /** Seconds to wait for a connection before a query fails. */
  connectionTimeout?: number;
  /**
   * Longest wait in milliseconds for one store call (a transaction counts as one) before it fails
   * as unavailable; also the server's statement_timeout on the pool's connections. 0: no bound.
   */
  timeoutMs?: number;
}

/** The default bound of a store call (COLONY_DATABASE_TIMEOUT_MS). */
export const DEFAULT_TIMEOUT_MS = 10_000;

function portsOn(sql: SQL, vectors: PgVectorStore | null, inTransaction: boolean, guard: Guard): Ports {
  const kv = new PgKeyValueStore(sql);
  return {
    kv: guarded(kv, guard),
    trails: guarded(new PgTrailRepository(sql), guard),
    jobs: guarded(new PgJobQueue(sql), guard),
    outcomes: guarded(new PgOutcomeRepository(sql), guard),
    credits: guarded(new PgMergeCreditLedger(sql), guard),
    tombstones: guarded(new PgTombstoneRepository(sql), guard),
    aliases: guarded(new PgFingerprintAliasRepository(sql), guard),
    events: guarded(new PgEventLog(sql), guard),
    lexical: guarded(new PgLexicalIndex(sql, inTransaction), guard),
    searches: guarded(new PgSearchCounter(sql), guard),
    drafts: guarded(new PgDraftRepository(sql), guard),
    stats: guarded(new PgStatsRepository(sql), guard),
    vectors: vectors ? guarded(vectors.on(sql, kv), guard) : null,
  };
}

/**
 * Connects (with several hosts in the URL, to the first that suits: ./hosts.ts), applies the
 * migrations (once across replicas) and returns the store.
 */
export async function openPostgresStore(opts: PostgresOptions): Promise<PostgresStore> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const pool = await openPool(parseDatabaseUrl(opts.url), {
    max: opts.poolSize,
    connectionTimeout: opts.connectionTimeout ?? 5,
    idleTimeout: 60,
    // The server ends a statement running longer than the replica waits for it (0: no limit).
    connection: { application_name: "colony", statement_timeout: timeoutMs },
  });
  try {
    await migratePostgres(pool.sql);
  } catch (err) {
    await pool.close({ timeout: 0 }).catch(() => {});
    throw err;
  }
  return createPostgresStore(pool, { patience: new Patience(timeoutMs), onUnavailable: (err) => pool.suspect(err) });
}

function createPostgresStore(pool: DatabasePool, guard: Guard): PostgresStore {
  const { sql } = pool;
  let vectors: PgVectorStore | null = null;
  let feed: { unlisten(): Promise<void> } | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let closed = false;
  const fingerprintFeed = new PgFingerprintFeed(sql, guard.patience);

  async function transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const hooks: AfterCommitHook[] = [];
    const run = sql.begin(async (conn) => {
      const tx: Transaction = { ...portsOn(conn, vectors, true, guard), afterCommit: (hook) => void hooks.push(hook) };
      return (await fn(tx)) as any;
    });
    // Bounded as a whole too: waiting for a connection of a pool whose every connection hangs.
    // A transaction that loses the race may still commit later, as one whose COMMIT was cut may.
    const result = await bounded(Promise.resolve(run), guard);
    if (hooks.length > 0) await runAfterCommitHooks(hooks);
    return result as T;
  }

  const store: PostgresStore = {
    ...portsOn(sql, null, false, guard),
    sql,
    fingerprintFeed,
    patience: guard.patience ?? new Patience(0),
    transaction,
    async openVectors(model) {
      const opened = await PgVectorStore.open(sql, store.kv, model);
      vectors = opened.store;
      store.vectors = guarded(vectors, guard);
      const index = vectors.index;
      const catchUp = () => void index.catchUp().catch(() => {});
      feed?.unlisten().catch(() => {});
      // onlisten runs again after every reconnect of the LISTEN connection: catch up on what
      // was committed while it was down.
      feed = await sql.listen(VECTORS_CHANNEL, catchUp, catchUp);
      if (!timer) {
        timer = setInterval(() => vectors?.index.catchUp().catch(() => {}), CATCH_UP_INTERVAL_MS);
        timer.unref?.();
      }
      return { vectors: store.vectors, rebuilt: opened.rebuilt };
    },
    /** The database's size on the server (every table and index of the colony's database). */
    async sizeBytes() {
      const [{ n }] = await bounded(Promise.resolve(sql`SELECT pg_database_size(current_database())::float8 AS n`), guard);
      return n;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await feed?.unlisten().catch(() => {});
      await fingerprintFeed.close();
      await pool.close({ timeout: 5 });
    },
  };
  return store;
}

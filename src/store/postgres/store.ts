// The PostgreSQL adapter of the Store port, on Bun's built-in client (Bun.SQL): a connection pool,
// every repository bound either to the pool (each write one atomic statement) or to a
// transaction's connection. Several replicas may share one database: uniqueness lives in the
// database (constraints, conditional updates), and the in-memory vector codes follow the table
// by a change feed (vectors.ts).
import { PgFingerprintFeed } from "./fingerprint-feed";
import { SQL } from "bun";
import { type AfterCommitHook, runAfterCommitHooks } from "../after-commit";
import type { Ports, Store, Transaction } from "../ports";
import { guarded, unavailable } from "./failures";
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
  /** Stops the change feed and closes the pool. */
  close(): Promise<void>;
}

export interface PostgresOptions {
  url: string;
  /** Connections in the pool. */
  poolSize: number;
  /** Seconds to wait for a connection before a query fails. */
  connectionTimeout?: number;
}

function portsOn(sql: SQL, vectors: PgVectorStore | null, inTransaction: boolean): Ports {
  const kv = new PgKeyValueStore(sql);
  return {
    kv: guarded(kv),
    trails: guarded(new PgTrailRepository(sql)),
    jobs: guarded(new PgJobQueue(sql)),
    outcomes: guarded(new PgOutcomeRepository(sql)),
    credits: guarded(new PgMergeCreditLedger(sql)),
    tombstones: guarded(new PgTombstoneRepository(sql)),
    aliases: guarded(new PgFingerprintAliasRepository(sql)),
    events: guarded(new PgEventLog(sql)),
    lexical: guarded(new PgLexicalIndex(sql, inTransaction)),
    searches: guarded(new PgSearchCounter(sql)),
    drafts: guarded(new PgDraftRepository(sql)),
    stats: guarded(new PgStatsRepository(sql)),
    vectors: vectors ? guarded(vectors.on(sql, kv)) : null,
  };
}

/** Connects, applies the migrations (once across replicas) and returns the store. */
export async function openPostgresStore(opts: PostgresOptions): Promise<PostgresStore> {
  const sql = new SQL(opts.url, {
    max: opts.poolSize,
    connectionTimeout: opts.connectionTimeout ?? 5,
    idleTimeout: 60,
    connection: { application_name: "colony" },
  });
  try {
    await migratePostgres(sql);
  } catch (err) {
    await sql.close({ timeout: 0 }).catch(() => {});
    throw err;
  }
  return createPostgresStore(sql);
}

export function createPostgresStore(sql: SQL): PostgresStore {
  let vectors: PgVectorStore | null = null;
  let feed: { unlisten(): Promise<void> } | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let closed = false;
  const fingerprintFeed = new PgFingerprintFeed(sql);

  async function transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const hooks: AfterCommitHook[] = [];
    const result = await sql
      .begin(async (conn) => {
        const tx: Transaction = { ...portsOn(conn, vectors, true), afterCommit: (hook) => void hooks.push(hook) };
        return (await fn(tx)) as any;
      })
      .catch(unavailable);
    if (hooks.length > 0) await runAfterCommitHooks(hooks);
    return result as T;
  }

  const store: PostgresStore = {
    ...portsOn(sql, null, false),
    sql,
    fingerprintFeed,
    transaction,
    async openVectors(model) {
      const opened = await PgVectorStore.open(sql, store.kv, model);
      vectors = opened.store;
      store.vectors = guarded(vectors);
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
      const [{ n }] = await sql`SELECT pg_database_size(current_database())::float8 AS n`.catch(unavailable);
      return n;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await feed?.unlisten().catch(() => {});
      await fingerprintFeed.close();
      await sql.close({ timeout: 5 });
    },
  };
  return store;
}

// The SQLite adapter of the Store port: every repository over one database file.
//
// bun:sqlite is synchronous and the colony holds one connection. Transactions are serialized by an
// async mutex and their statements run synchronously inside; a write outside a transaction takes
// the same mutex (it is a transaction of its own), so no statement ever lands inside another
// transaction's BEGIN…COMMIT while that one awaits. Reads outside a transaction run directly.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { type AfterCommitHook, runAfterCommitHooks } from "../after-commit";
import { StoreUnavailableError, type Ports, type Store, type Transaction, type VectorStore } from "../ports";
import { SqliteDraftRepository } from "./drafts";
import { SqliteKeyValueStore } from "./kv";
import { SqliteLexicalIndex, SqliteSearchCounter } from "./lexical";
import { AsyncMutex } from "./mutex";
import {
  SqliteEventLog,
  SqliteFingerprintAliasRepository,
  SqliteJobQueue,
  SqliteMergeCreditLedger,
  SqliteOutcomeRepository,
  SqliteStatsRepository,
  SqliteTombstoneRepository,
} from "./records";
import { SqliteTrailRepository } from "./trails";
import { SqliteVectorStore } from "./vectors";

/** The methods of each port that write: outside a transaction they wait for the mutex. */
const WRITES = {
  kv: ["set", "delete"],
  trails: ["insertQueued", "applyVerdict", "countOutcome", "setStrength", "delete", "refingerprint", "rescreen"],
  jobs: ["recordFailure", "remove"],
  outcomes: ["insert", "rescreenNotes"],
  credits: ["grant"],
  tombstones: ["add", "purgeBefore"],
  aliases: ["add", "addAll", "purgeBefore"],
  events: ["append", "purgeSearchesBefore", "forgetTrail", "forgetMergeCredit"],
  lexical: ["add", "remove", "addMissing", "clear"],
  searches: ["add"],
  drafts: ["insert", "markPublished", "markDiscarded", "purge"],
  stats: ["touchAgent", "addOutcome", "purgeBefore", "bump", "peak", "purgeSeriesBefore"],
  vectors: ["upsert", "remove", "markReindexed"],
} as const satisfies { [P in keyof Ports]: readonly (keyof NonNullable<Ports[P]>)[] };

class SqliteTransaction implements Transaction {
  readonly hooks: AfterCommitHook[] = [];
  kv;
  trails;
  jobs;
  outcomes;
  credits;
  tombstones;
  aliases;
  events;
  lexical;
  searches;
  drafts;
  stats;
  vectors;

  constructor(ports: Ports) {
    this.kv = ports.kv;
    this.trails = ports.trails;
    this.jobs = ports.jobs;
    this.outcomes = ports.outcomes;
    this.credits = ports.credits;
    this.tombstones = ports.tombstones;
    this.aliases = ports.aliases;
    this.events = ports.events;
    this.lexical = ports.lexical;
    this.searches = ports.searches;
    this.drafts = ports.drafts;
    this.stats = ports.stats;
    this.vectors = ports.vectors;
  }

  afterCommit(fn: AfterCommitHook): void {
    this.hooks.push(fn);
  }
}

export function createSqliteStore(db: Database): Store {
  const mutex = new AsyncMutex();
  const begin = db.query("BEGIN");
  const commit = db.query("COMMIT");
  const rollback = db.query("ROLLBACK");
  const kv = new SqliteKeyValueStore(db);
  // What a transaction sees: the repositories themselves (the mutex is held).
  const inside: Ports = {
    kv,
    trails: new SqliteTrailRepository(db),
    jobs: new SqliteJobQueue(db),
    outcomes: new SqliteOutcomeRepository(db),
    credits: new SqliteMergeCreditLedger(db),
    tombstones: new SqliteTombstoneRepository(db),
    aliases: new SqliteFingerprintAliasRepository(db),
    events: new SqliteEventLog(db),
    lexical: new SqliteLexicalIndex(db),
    searches: new SqliteSearchCounter(db),
    drafts: new SqliteDraftRepository(db),
    stats: new SqliteStatsRepository(db),
    vectors: null,
  };

  /** The same repository for use outside a transaction: reads as they are, writes under the mutex. */
  function outside<T extends object>(repo: T, writes: readonly string[]): T {
    // The view inherits every read from the repository itself (no wrapper on the read path).
    const view = Object.create(repo) as Record<string, unknown>;
    for (const name of writes) {
      const method = (repo as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
      view[name] = (...args: unknown[]) => mutex.run(() => method.apply(repo, args)).catch(writeFailure);
    }
    return view as T;
  }

  async function transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const tx = new SqliteTransaction(inside);
    const result = await mutex
      .run(async () => {
        begin.run();
        try {
          const value = await fn(tx);
          commit.run();
          return value;
        } catch (err) {
          // A failed statement may already have ended the transaction (SQLITE_FULL, for one).
          if (db.inTransaction) rollback.run();
          throw err;
        }
      })
      .catch(writeFailure);
    if (tx.hooks.length > 0) await runAfterCommitHooks(tx.hooks);
    return result;
  }

  const store: Store = {
    kv: outside(inside.kv, WRITES.kv),
    trails: outside(inside.trails, WRITES.trails),
    jobs: outside(inside.jobs, WRITES.jobs),
    outcomes: outside(inside.outcomes, WRITES.outcomes),
    credits: outside(inside.credits, WRITES.credits),
    tombstones: outside(inside.tombstones, WRITES.tombstones),
    aliases: outside(inside.aliases, WRITES.aliases),
    events: outside(inside.events, WRITES.events),
    lexical: outside(inside.lexical, WRITES.lexical),
    searches: outside(inside.searches, WRITES.searches),
    drafts: outside(inside.drafts, WRITES.drafts),
    stats: outside(inside.stats, WRITES.stats),
    vectors: null,
    transaction,
    async sizeBytes() {
      const pages = db
        .query<{ n: number }, []>("SELECT (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size()) AS n")
        .get();
      let wal = 0;
      try {
        wal = statSync(`${db.filename}-wal`).size;
      } catch {} // no WAL file (yet)
      return (pages?.n ?? 0) + wal;
    },
    async openVectors(model) {
      const opened = await mutex.run(async () => SqliteVectorStore.open(db, kv, model));
      inside.vectors = opened.store;
      const vectors: VectorStore = outside(opened.store, WRITES.vectors);
      store.vectors = vectors;
      return { vectors, rebuilt: opened.rebuilt };
    },
  };
  return store;
}

/** SQLite's result codes for a write the disk could not take: full, or an I/O error of the device. */
const STORAGE_FAILURE = /^SQLITE_(FULL|IOERR)/;

/** The one place where SQLite's disk failures become the port's StoreUnavailableError. */
function writeFailure(err: unknown): never {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && STORAGE_FAILURE.test(code)) {
    throw new StoreUnavailableError(`the database cannot be written (${code}: ${(err as Error).message})`, { cause: err });
  }
  throw err;
}

// The SQLite adapter of the Store port: every repository over one database file.
import type { Database } from "bun:sqlite";
import type { Store } from "../ports";
import { SqliteDraftRepository } from "./drafts";
import { SqliteKeyValueStore } from "./kv";
import { SqliteLexicalIndex, SqliteSearchCounter } from "./lexical";
import {
  SqliteEventLog,
  SqliteJobQueue,
  SqliteMergeCreditLedger,
  SqliteOutcomeRepository,
  SqliteStatsRepository,
  SqliteTombstoneRepository,
} from "./records";
import { SqliteTrailRepository } from "./trails";

export function createSqliteStore(db: Database): Store {
  return {
    kv: new SqliteKeyValueStore(db),
    trails: new SqliteTrailRepository(db),
    jobs: new SqliteJobQueue(db),
    outcomes: new SqliteOutcomeRepository(db),
    credits: new SqliteMergeCreditLedger(db),
    tombstones: new SqliteTombstoneRepository(db),
    events: new SqliteEventLog(db),
    lexical: new SqliteLexicalIndex(db),
    searches: new SqliteSearchCounter(db),
    drafts: new SqliteDraftRepository(db),
    stats: new SqliteStatsRepository(db),
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
  };
}

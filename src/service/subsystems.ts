// Starts the store, the vector index and the embedding model. A subsystem that fails to start
// is recorded, not fatal: the process stays up and /readyz names the failing check.
import type { Database } from "bun:sqlite";
import type { Embedder } from "../embedding/embedder";
import type { Logger } from "../log";
import type { Store, VectorStore } from "../store/ports";
import { openDatabase } from "../store/sqlite/database";
import { DataDirLockedError, lockDataDir, type DataDirLock } from "../store/sqlite/lock";
import { createSqliteStore } from "../store/sqlite/store";
import type { PostgresStore } from "../store/postgres/store";
import { errorMessage } from "../core/error-message";

export type CheckName = "kv" | "vector" | "embedding";

/** Where the colony keeps its data: the embedded SQLite file, or a PostgreSQL shared by replicas. */
export type Backend = "sqlite" | "postgres";

export interface Subsystems {
  backend: Backend;
  db: Database | null;
  store: Store | null;
  vectors: VectorStore | null;
  embedder: Embedder | null;
  /** Why a subsystem did not start, by check name. */
  failures: Partial<Record<CheckName, string>>;
  close(): Promise<void>;
}

export interface SubsystemOptions {
  dataDir: string;
  sqliteVecPath: string;
  /** A postgres:// URL selects the PostgreSQL adapter; null the embedded SQLite. */
  database?: { url: string; poolSize: number } | null;
  modelDir: string;
  loadEmbedder: (dir: string) => Promise<Embedder>;
  logger: Logger;
}

export async function startSubsystems(opts: SubsystemOptions): Promise<Subsystems> {
  const failures: Subsystems["failures"] = {};
  let db: Database | null = null;
  let store: Store | null = null;
  let embedder: Embedder | null = null;
  let vectors: VectorStore | null = null;

  let lock: DataDirLock | null = null;
  let pg: PostgresStore | null = null;
  const backend: Backend = opts.database ? "postgres" : "sqlite";
  if (opts.database) {
    try {
      // Imported only here: a SQLite colony never loads the PostgreSQL adapter.
      const { openPostgresStore } = await import("../store/postgres/store");
      pg = await openPostgresStore({ url: opts.database.url, poolSize: opts.database.poolSize });
      store = pg;
    } catch (err) {
      failures.kv = `PostgreSQL did not open: ${errorMessage(err)}`;
      failures.vector = "vector store needs the store, which did not open";
      opts.logger.error("PostgreSQL store failed to start", { error: errorMessage(err) });
    }
  } else
    try {
      db = openDatabase({ dataDir: opts.dataDir, sqliteVecPath: opts.sqliteVecPath });
      lock = lockDataDir(opts.dataDir);
      store = createSqliteStore(db);
    } catch (err) {
      // Two colonies on one directory would both believe they own the queue: refuse to start.
      if (err instanceof DataDirLockedError) {
        db?.close();
        throw err;
      }
      failures.kv = `store did not open: ${errorMessage(err)}`;
      failures.vector = "vector store needs the store, which did not open";
      opts.logger.error("store failed to start", { error: errorMessage(err) });
    }

  try {
    embedder = await opts.loadEmbedder(opts.modelDir);
    opts.logger.info("embedding model loaded", { ...embedder.info });
  } catch (err) {
    failures.embedding = `model did not load: ${errorMessage(err)}`;
    opts.logger.error("embedding model failed to load", { error: errorMessage(err), dir: opts.modelDir });
  }

  if (store) {
    if (!embedder) {
      failures.vector = "vector store needs the embedding model, which did not load";
    } else {
      try {
        const { name, revision, dim } = embedder.info;
        vectors = (await store.openVectors({ name: `${name}@${revision}`, dim })).vectors;
      } catch (err) {
        failures.vector = `vector store did not open: ${errorMessage(err)}`;
        opts.logger.error("vector store failed to start", { error: errorMessage(err) });
      }
    }
  }

  return {
    backend,
    db,
    store,
    vectors,
    embedder,
    failures,
    async close() {
      await embedder?.close().catch(() => {});
      await pg?.close().catch(() => {});
      if (db) {
        // Fold the WAL into the main file so a stopped colony is one self-contained file.
        try {
          db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch {}
        db.close();
      }
      lock?.release();
    },
  };
}

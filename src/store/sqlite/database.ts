// Opens the embedded SQLite database (bun:sqlite) with the settings Colony relies on, loads
// sqlite-vec and applies the migrations.
import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { SchemaTooNewError } from "../schema-version";
import { MIGRATIONS, type Migration } from "./migrations";

export interface OpenOptions {
  dataDir: string;
  /** Path of sqlite-vec's loadable extension (vec0.so). */
  sqliteVecPath: string;
  /** For tests: a different migration list. */
  migrations?: Migration[];
}

export const DATABASE_FILE = "colony.db";

/** COLONY_DATA_DIR cannot hold the colony: not a directory, not writable, or its database does not open. */
export class DataDirUnusableError extends Error {
  constructor(
    readonly dataDir: string,
    readonly reason: string,
  ) {
    super(
      `COLONY_DATA_DIR=${dataDir} cannot hold the colony's database: ${reason}; ` +
        "set COLONY_DATA_DIR to a directory this user can create and write",
    );
  }
}

/**
 * bun:sqlite's `query()` caches only 20 prepared statements. A search alone runs more distinct
 * statements than that (and `IN (?, ?, …)` lists make one per length), so the cache thrashed and
 * most calls re-prepared their SQL (6–15 µs each). This keeps every statement the colony asks for,
 * up to a bound no real workload reaches (its SQL comes from a fixed set; IN lists add one per
 * length). A statement pushed out past the bound is not finalized, since a store may still hold it
 * (kv and lexical keep theirs); the cache keeps a weak reference to it instead. `close` finalizes
 * every statement still alive, cached or pushed out, as bun:sqlite does with its own cache, so that
 * the connection really closes (sqlite3_close_v2 waits for its statements) and checkpoints its WAL.
 */
export class StatementCachingDatabase extends Database {
  static readonly MAX_STATEMENTS = 2000;
  private readonly statements = new Map<string, Statement<any, any>>();
  /** Statements pushed out of the cache, until close; dead references are dropped as they pile up. */
  private pushedOut: WeakRef<Statement<any, any>>[] = [];
  private pruneAt = StatementCachingDatabase.MAX_STATEMENTS;

  override query<ReturnType, ParamsType extends SQLQueryBindings | SQLQueryBindings[]>(
    sql: string,
  ): Statement<ReturnType, ParamsType extends any[] ? ParamsType : [ParamsType]> {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= StatementCachingDatabase.MAX_STATEMENTS) this.pushOutOldest();
      statement = this.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as Statement<ReturnType, ParamsType extends any[] ? ParamsType : [ParamsType]>;
  }

  private pushOutOldest(): void {
    const [sql, statement] = this.statements.entries().next().value!;
    this.statements.delete(sql);
    if (this.pushedOut.length >= this.pruneAt) {
      this.pushedOut = this.pushedOut.filter((r) => r.deref());
      this.pruneAt = Math.max(StatementCachingDatabase.MAX_STATEMENTS, 2 * this.pushedOut.length); // amortized
    }
    this.pushedOut.push(new WeakRef(statement));
  }

  override close(throwOnError?: boolean): void {
    for (const statement of this.statements.values()) statement.finalize();
    for (const ref of this.pushedOut) ref.deref()?.finalize();
    this.statements.clear();
    this.pushedOut = [];
    super.close(throwOnError);
  }
}

export function openDatabase(opts: OpenOptions): Database {
  if (!existsSync(opts.dataDir)) mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(opts.dataDir, 0o700);
  const file = join(opts.dataDir, DATABASE_FILE);
  const db = new StatementCachingDatabase(file, { create: true, strict: true });
  try {
    // Owner-only, whatever the umask: SQLite gives the -wal and -shm files the mode of the
    // database file, so this must come before WAL mode creates them (older files are fixed too).
    for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
    // WAL: readers never block the writer. synchronous=NORMAL in WAL mode keeps every committed
    // transaction across a process crash (kill -9); only a power loss may drop the last commits.
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA temp_store = MEMORY");
    // SQLite's default page cache is 2 MB; a search reads FTS5 postings and trail rows spread over
    // a large file, and each miss is a pread. 32 MB holds the hot pages of a 100k-trail colony.
    db.exec("PRAGMA cache_size = -32768");
    db.loadExtension(opts.sqliteVecPath);
    migrate(db, opts.migrations ?? MIGRATIONS);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Applies every migration newer than the database's user_version, each in its own transaction. */
export function migrate(db: Database, migrations: Migration[]): number {
  const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  const newest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (current > newest) {
    throw new SchemaTooNewError(current, newest, `the database ${db.filename}`);
  }
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${m.version}`);
    })();
  }
  return newest;
}

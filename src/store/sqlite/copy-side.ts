// The SQLite side of `colony migrate`: a data directory's migrations run alone, and a stopped
// colony's data directory as the source or the target of a copy between the stores (../copy.ts).
// The directory is locked as a serving colony locks it, so a running colony is never copied from
// or into; the lexical index and the vectors are written by this adapter's own classes.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { errorMessage } from "../../core/error-message";
import {
  type CopiedTable,
  type CopyRow,
  type CopySide,
  type CopyValue,
  type CopyWriter,
  MigrateError,
  type VectorModel,
} from "../copy-ports";
import { DATABASE_FILE, openDatabase } from "./database";
import { checkDatabaseFile, DatabaseDamagedError } from "./integrity";
import { SqliteKeyValueStore } from "./kv";
import { SqliteLexicalIndex } from "./lexical";
import { DataDirLockedError, type DataDirLock, lockDataDir } from "./lock";
import { SchemaTooNewError } from "../schema-version";
import { MIGRATIONS } from "./migrations";
import { REINDEX_PENDING_KEY, SIGNATURE_KEY, SqliteVectorStore, storedVectorModel } from "./vectors";

/** The schema version of a colony database file, or a MigrateError when the file is no colony's. */
function colonySchemaVersion(dir: string, sqliteVecPath: string): number {
  const file = join(dir, DATABASE_FILE);
  try {
    checkDatabaseFile(file, sqliteVecPath);
  } catch (err) {
    if (err instanceof DatabaseDamagedError) throw new MigrateError("usage", err.message);
    throw err;
  }
  let db: Database | null = null;
  try {
    db = new Database(file, { readonly: true });
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const trails = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trails'").get();
    if (version >= 1 && trails) return version;
  } catch (err) {
    throw new MigrateError("usage", `${file} is not a colony database (${errorMessage(err)})`);
  } finally {
    db?.close();
  }
  throw new MigrateError("usage", `${file} is not a colony database (no colony schema in it)`);
}

interface OpenedDirectory {
  db: Database;
  lock: DataDirLock;
  /** The schema version before this open applied the migrations. */
  from: number;
  to: number;
}

/**
 * Locks the directory as a serving colony does, then opens (and migrates) its database. `create`:
 * an absent or empty directory becomes a new colony; otherwise it must hold one.
 */
function openDirectory(dir: string, sqliteVecPath: string, create: boolean): OpenedDirectory {
  const file = join(dir, DATABASE_FILE);
  let from = 0;
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new MigrateError("usage", `${dir} is not a directory`);
  if (existsSync(file)) from = colonySchemaVersion(dir, sqliteVecPath);
  else if (!create) {
    throw new MigrateError("usage", existsSync(dir) ? `${dir} holds no colony (no ${DATABASE_FILE} in it)` : `${dir} does not exist`);
  } else if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new MigrateError("usage", `${dir} is not empty and holds no colony: give a new or an empty directory`);
  }
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dir);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw new MigrateError("unavailable", `${err.message}: stop that colony first`);
    throw err;
  }
  try {
    const db = openDatabase({ dataDir: dir, sqliteVecPath });
    const to = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    return { db, lock, from, to };
  } catch (err) {
    lock.release();
    if (err instanceof SchemaTooNewError) {
      throw new MigrateError("refused", err.message); // it names the file
    }
    throw err;
  }
}

function closeDirectory({ db, lock }: Pick<OpenedDirectory, "db" | "lock">): void {
  try {
    // One self-contained file again, as a stopped colony leaves it.
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch {}
  db.close();
  lock.release();
}

/** `colony migrate` on the embedded store: the data directory's migrations alone (it must hold a colony). */
export function migrateSqliteDirectory(dataDir: string, sqliteVecPath: string) {
  const dir = resolve(dataDir);
  const opened = openDirectory(dir, sqliteVecPath, false);
  closeDirectory(opened);
  const applied = MIGRATIONS.filter((m) => m.version > opened.from && m.version <= opened.to).map(({ version, name }) => ({
    version,
    name,
  }));
  return { description: `SQLite colony in ${dir}`, from: opened.from, to: opened.to, applied };
}

/** Opens a stopped colony's data directory as the source, or a new or partly copied one as the target. */
export function openSqliteCopySide(dataDir: string, sqliteVecPath: string, role: "source" | "target"): CopySide {
  const dir = resolve(dataDir);
  const opened = openDirectory(dir, sqliteVecPath, role === "target");
  return new SqliteCopySide(opened, `SQLite colony in ${dir}`);
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

class SqliteCopySide implements CopySide {
  readonly kind = "sqlite" as const;
  private readonly db: Database;
  private readonly kv: SqliteKeyValueStore;
  private readonly lexical: SqliteLexicalIndex;
  private vectors: SqliteVectorStore | null = null;

  constructor(
    private readonly opened: OpenedDirectory,
    readonly description: string,
  ) {
    this.db = opened.db;
    this.kv = new SqliteKeyValueStore(this.db);
    this.lexical = new SqliteLexicalIndex(this.db);
  }

  async columns(table: string): Promise<string[]> {
    return this.db
      .query<{ name: string }, []>(`PRAGMA table_info(${ident(table)})`)
      .all()
      .map((c) => c.name);
  }

  private skip(table: CopiedTable, params: CopyValue[]): string[] {
    return (table.skipPrefixes ?? []).map((prefix) => {
      params.push(prefix);
      return `substr(${ident(table.key[0]!)}, 1, ${prefix.length}) <> ?`;
    });
  }

  async read(table: CopiedTable, columns: string[], after: CopyValue[] | null, limit: number): Promise<CopyRow[]> {
    const params: CopyValue[] = [];
    const where = this.skip(table, params);
    const key = table.key.map(ident).join(", ");
    if (after) {
      where.push(`(${key}) > (${after.map(() => "?").join(", ")})`);
      params.push(...after);
    }
    params.push(limit);
    return this.db
      .query<CopyValue[], CopyValue[]>(
        `SELECT ${columns.map(ident).join(", ")} FROM ${ident(table.name)}
         ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${key} LIMIT ?`,
      )
      .values(...params) as CopyRow[];
  }

  async count(table: CopiedTable): Promise<number> {
    const params: CopyValue[] = [];
    const where = this.skip(table, params);
    return this.db
      .query<{ n: number }, CopyValue[]>(
        `SELECT count(*) AS n FROM ${ident(table.name)} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`,
      )
      .get(...params)!.n;
  }

  async kvGet(key: string): Promise<string | null> {
    return this.kv.getNow(key);
  }

  private hasVectorTable(): boolean {
    return this.db.query("SELECT 1 FROM sqlite_master WHERE name = 'vec_float'").get() !== null;
  }

  async vectorModel(): Promise<VectorModel | null> {
    return this.hasVectorTable() ? storedVectorModel(this.kv.getNow(SIGNATURE_KEY)) : null;
  }

  async reindexPending(): Promise<boolean> {
    return this.kv.getNow(REINDEX_PENDING_KEY) === "1";
  }

  async readVectors(afterId: number, limit: number) {
    return this.db
      .query<{ id: number; embedding: Uint8Array }, [number, number]>(
        "SELECT rowid AS id, embedding FROM vec_float WHERE rowid > ? ORDER BY rowid LIMIT ?",
      )
      .all(afterId, limit)
      .map((r) => ({ id: r.id, vector: new Float32Array(r.embedding.slice().buffer) }));
  }

  async countVectors(): Promise<number> {
    if (!this.hasVectorTable()) return 0;
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM vec_float").get()!.n;
  }

  // The lexical table is contentless: its documents are known by id (lexical_docsize), and are
  // rebuilt from the trails' content.
  async lexicalIds(afterId: number, limit: number): Promise<number[]> {
    return this.db
      .query<{ id: number }, [number, number]>("SELECT id FROM lexical_docsize WHERE id > ? ORDER BY id LIMIT ?")
      .all(afterId, limit)
      .map((r) => r.id);
  }

  async countLexical(): Promise<number> {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM lexical_docsize").get()!.n;
  }

  async trailContents(seqs: number[]): Promise<Map<number, string>> {
    if (seqs.length === 0) return new Map();
    const rows = this.db
      .query<{ seq: number; content: string }, number[]>(`SELECT seq, content FROM trails WHERE seq IN (${seqs.map(() => "?").join(",")})`)
      .all(...seqs);
    return new Map(rows.map((r) => [r.seq, r.content]));
  }

  async openVectors(model: VectorModel): Promise<void> {
    this.vectors = SqliteVectorStore.open(this.db, this.kv, model).store;
  }

  async setReindexPending(pending: boolean): Promise<void> {
    if (pending) this.kv.setNow(REINDEX_PENDING_KEY, "1");
    else this.kv.deleteNow(REINDEX_PENDING_KEY);
  }

  async write(fn: (w: CopyWriter) => Promise<void>): Promise<void> {
    const db = this.db;
    const writer: CopyWriter = {
      insert: async (table, columns, rows) => {
        const others = columns.filter((c) => !table.key.includes(c));
        const onConflict =
          table.overwrite && others.length
            ? `DO UPDATE SET ${others.map((c) => `${ident(c)} = excluded.${ident(c)}`).join(", ")}`
            : "DO NOTHING";
        const insert = db.query(
          `INSERT INTO ${ident(table.name)} (${columns.map(ident).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
           ON CONFLICT (${table.key.map(ident).join(", ")}) ${onConflict}`,
        );
        for (const row of rows) insert.run(...(row as (string | number | null)[]));
      },
      upsertVector: async (id, vector) => {
        if (!this.vectors) throw new Error("the target's vectors were not opened");
        await this.vectors.upsert(id, vector);
      },
      addLexical: async (docs) => {
        for (const { id, doc } of docs) await this.lexical.add(id, doc);
      },
      setKv: async (key, value) => this.kv.setNow(key, value),
    };
    // The copy is this process's only user of the database: the transaction may span awaits.
    db.exec("BEGIN IMMEDIATE");
    try {
      await fn(writer);
      db.exec("COMMIT");
    } catch (err) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw err;
    }
  }

  async finish(): Promise<void> {
    // The running totals SQLite keeps beside the rows (PostgreSQL counts instead).
    this.db.exec(`UPDATE counters SET value = (SELECT count(*) FROM trails WHERE status = 'indexed') WHERE name = 'trails_indexed'`);
    this.db.exec(`UPDATE counters SET value = (SELECT count(*) FROM lexical_docsize) WHERE name = 'lexical_docs'`);
  }

  async close(): Promise<void> {
    closeDirectory(this.opened);
  }
}

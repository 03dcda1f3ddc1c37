// Online backup and offline restore of a colony's database.
//
// Backup: bun:sqlite has no binding for SQLite's backup API; `VACUUM INTO` gives the same
// guarantee (a consistent point-in-time copy, taken inside one read transaction while the colony
// keeps writing through WAL) and writes a compact, self-contained file.
// Restore: refused while a colony holds the data directory; the backup is verified first and
// copied beside the database, and only a whole copy replaces it (one rename); the files it
// replaces are moved aside, never deleted.
import { Database } from "bun:sqlite";
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { DATABASE_FILE, migrate, openDatabase } from "./database";
import { integrityProblems } from "./integrity";
import { lockDataDir } from "./lock";
import { MIGRATIONS } from "./migrations";

export interface BackupResult {
  file: string;
  bytes: number;
  ms: number;
}

export function backupDatabase(opts: { dataDir: string; sqliteVecPath: string; file: string }): BackupResult {
  const source = join(opts.dataDir, DATABASE_FILE);
  if (!existsSync(source)) throw new Error(`no colony database at ${source}`);
  const target = resolve(opts.file);
  if (existsSync(target)) throw new Error(`${target} exists already; backups never overwrite a file`);
  const started = performance.now();
  const db = new Database(source, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    db.loadExtension(opts.sqliteVecPath);
    // Write beside the target and rename, so a backup file either is whole or does not exist.
    const partial = join(dirname(target), `.${basename(target)}.partial`);
    rmSync(partial, { force: true });
    db.query("VACUUM INTO ?").run(partial);
    chmodSync(partial, 0o600);
    renameSync(partial, target);
  } finally {
    db.close();
  }
  return { file: target, bytes: statSync(target).size, ms: Math.round(performance.now() - started) };
}

/** Checks that a file is a sound colony database this version can run. */
export function verifyBackup(file: string, sqliteVecPath: string): { schemaVersion: number } {
  const db = new Database(resolve(file), { readonly: true });
  try {
    db.loadExtension(sqliteVecPath);
    const problems = integrityProblems(db, "integrity_check");
    if (problems.length > 0) throw new Error(`${file} failed the integrity check: ${problems.join("; ")}`);
    const schemaVersion = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const newest = Math.max(...MIGRATIONS.map((m) => m.version));
    if (schemaVersion < 1 || schemaVersion > newest) {
      throw new Error(`${file} has schema version ${schemaVersion}; this colony runs versions 1 to ${newest}`);
    }
    if (!db.query("SELECT 1 FROM sqlite_master WHERE name = 'trails'").get()) {
      throw new Error(`${file} is not a colony database`);
    }
    return { schemaVersion };
  } finally {
    db.close();
  }
}

export interface RestoreResult {
  /** Where the replaced database files were moved, or null when there were none. */
  previous: string | null;
}

export function restoreDatabase(opts: { dataDir: string; sqliteVecPath: string; file: string; now?: number }): RestoreResult {
  const file = resolve(opts.file);
  if (!existsSync(file)) throw new Error(`no backup at ${file}`);
  verifyBackup(file, opts.sqliteVecPath);
  if (!existsSync(opts.dataDir)) mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const lock = lockDataDir(opts.dataDir); // throws while a colony runs on this directory
  try {
    const current = join(opts.dataDir, DATABASE_FILE);
    // The copy is written beside the database first: until it is whole, the directory keeps its
    // own database, so a restore that fails or is killed here leaves the colony as it was.
    const incoming = `${current}.restoring`;
    try {
      rmSync(incoming, { force: true });
      const copy = new Database(file, { readonly: true });
      try {
        copy.loadExtension(opts.sqliteVecPath);
        copy.query("VACUUM INTO ?").run(incoming);
      } finally {
        copy.close();
      }
      chmodSync(incoming, 0o600);
    } catch (err) {
      try {
        rmSync(incoming, { force: true });
      } catch {}
      throw err;
    }
    let previous: string | null = null;
    const existing = [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`].filter((f) => existsSync(join(opts.dataDir, f)));
    if (existing.length > 0) {
      previous = join(opts.dataDir, `pre-restore-${new Date(opts.now ?? Date.now()).toISOString().replace(/[:.]/g, "-")}`);
      mkdirSync(previous, { mode: 0o700 });
      // The WAL moves with its database: applied to the restored file it would corrupt it. The
      // database itself is linked, then replaced in one rename, so the directory is never without one.
      for (const f of existing) {
        if (f === DATABASE_FILE) keepBeside(current, join(previous, f));
        else renameSync(join(opts.dataDir, f), join(previous, f));
      }
    }
    renameSync(incoming, current);
    // Bring an older backup's schema up to date now, so the first start has nothing to do.
    const db = openDatabase({ dataDir: opts.dataDir, sqliteVecPath: opts.sqliteVecPath });
    migrate(db, MIGRATIONS);
    db.close();
    return { previous };
  } finally {
    lock.release();
  }
}

/** A second name for the database (a copy where the filesystem has no hard links), so it can be replaced in one rename. */
function keepBeside(file: string, as: string): void {
  try {
    linkSync(file, as);
  } catch {
    copyFileSync(file, as);
  }
}

// Is a database file sound? Checked before a colony opens its database and before a backup is
// restored: a damaged file stops the process with one plain message instead of failing later,
// request by request, or with a stack trace at start.
import { errorMessage } from "../../core/error-message";
import { Database } from "bun:sqlite";
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";

const SQLITE_HEADER = "SQLite format 3\u0000";

export class DatabaseDamagedError extends Error {
  constructor(
    readonly file: string,
    /** Which check failed, in words. */
    readonly check: string,
    readonly detail: string,
  ) {
    super(
      `the database ${file} is damaged: ${check} failed (${detail}). ` +
        "Restore the latest backup with `colony restore BACKUP_FILE` (it moves the damaged file aside), " +
        "or move the file away to start an empty colony",
    );
  }
}

/** SQLite's verdict on an open database: the problems found, none when the file is sound. */
export function integrityProblems(db: Database, pragma: "quick_check" | "integrity_check", maxProblems = 5): string[] {
  const rows = db.query<Record<string, string>, []>(`PRAGMA ${pragma}(${maxProblems})`).all();
  const lines = rows.flatMap((r) => String(Object.values(r)[0] ?? "").split("\n"));
  if (lines.length === 1 && lines[0] === "ok") return [];
  return lines.filter((l) => l.trim() !== "" && !l.startsWith("*** in database"));
}

/**
 * Throws DatabaseDamagedError when the colony's database file exists but is not sound: its header
 * is not SQLite's, SQLite cannot read it, or SQLite's quick check (every page and b-tree, not the
 * index contents) finds a problem. A missing or empty file is a new colony, not damage.
 */
export function checkDatabaseFile(file: string, sqliteVecPath: string): void {
  if (!existsSync(file) || statSync(file).size === 0) return;
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(file, "r");
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString("latin1") !== SQLITE_HEADER) {
    throw new DatabaseDamagedError(file, "the file header check", "it does not start with the SQLite header");
  }
  let problems: string[];
  try {
    // Read-write, as the colony opens it: a WAL left by a crash is read along with the file.
    const db = new Database(file, { readwrite: true, create: false });
    try {
      db.loadExtension(sqliteVecPath);
      problems = integrityProblems(db, "quick_check");
    } finally {
      db.close();
    }
  } catch (err) {
    const message = errorMessage(err);
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code)) {
      throw new DatabaseDamagedError(file, "SQLite's quick check", message);
    }
    throw err;
  }
  if (problems.length > 0) {
    const more = problems.length > 1 ? " and more" : "";
    throw new DatabaseDamagedError(file, "SQLite's quick check", `${problems[0]}${more}`);
  }
}

// One colony per data directory. The lock is an exclusive transaction held open on a small
// SQLite file: an OS-level (fcntl) lock that the kernel releases when the process dies, even by
// kill -9, so a crash never leaves a stale lock behind.
import { Database } from "bun:sqlite";
import { chmodSync } from "node:fs";
import { join } from "node:path";

export const LOCK_FILE = "colony.lock";

export interface DataDirLock {
  release(): void;
}

export class DataDirLockedError extends Error {
  constructor(dataDir: string) {
    super(`another colony is using ${dataDir} (it holds ${LOCK_FILE})`);
  }
}

export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, LOCK_FILE);
  const db = new Database(file, { create: true });
  try {
    chmodSync(file, 0o600); // owner-only whatever the umask; its -journal inherits this mode
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
  } catch (err) {
    db.close();
    if (err instanceof Error && /locked|busy/i.test(err.message)) throw new DataDirLockedError(dataDir);
    throw err;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      try {
        db.exec("ROLLBACK");
      } finally {
        db.close();
      }
    },
  };
}

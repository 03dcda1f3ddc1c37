// `colony backup FILE` and `colony restore FILE`: thin wrappers over the store's backup module,
// using the same configuration (COLONY_DATA_DIR, COLONY_CACHE_DIR) as `colony serve`.
import { UsageError } from "../cli/command";
import { loadConfig } from "../config";
import { prepareNatives } from "../platform/native";
import { backupDatabase, restoreDatabase } from "../store/sqlite/backup";
import { DataDirLockedError } from "../store/sqlite/lock";
import { errorMessage } from "../core/error-message";

export async function runBackupCommand(command: "backup" | "restore", args: string[]): Promise<number> {
  const what = command === "backup" ? "the file to write the backup to" : "the backup file to restore";
  if (args.length === 0) throw new UsageError(`${command} needs FILE: ${what}`);
  if (args.length > 1) throw new UsageError(`${command} takes one FILE (${what}), got ${args.length} arguments`);
  const file = args[0]!;
  const config = loadConfig();
  if (config.databaseUrl) {
    // Both work on COLONY_DATA_DIR's SQLite file; a colony in PostgreSQL does not use it, so a
    // restore there would report success and change nothing the colony serves.
    throw new UsageError(
      `${command} works on the SQLite colony in COLONY_DATA_DIR, but COLONY_DATABASE_URL is set: the colony is in PostgreSQL. ` +
        "Back it up with PostgreSQL's tools (pg_dump), or copy it to a SQLite directory with colony migrate --to-sqlite DIR",
    );
  }
  const { sqliteVec } = prepareNatives({ cacheDir: config.cacheDir });
  try {
    if (command === "backup") {
      const r = backupDatabase({ dataDir: config.dataDir, sqliteVecPath: sqliteVec, file });
      process.stdout.write(`backed up ${config.dataDir} to ${r.file} (${r.bytes} bytes, ${r.ms} ms)\n`);
    } else {
      const r = restoreDatabase({ dataDir: config.dataDir, sqliteVecPath: sqliteVec, file });
      process.stdout.write(
        `restored ${file} into ${config.dataDir}` + (r.previous ? `; the previous database is in ${r.previous}\n` : "\n"),
      );
    }
    return 0;
  } catch (err) {
    const refused = err instanceof DataDirLockedError ? " (stop the colony first)" : "";
    process.stderr.write(`colony: ${command} failed: ${errorMessage(err)}${refused}\n`);
    return 1;
  }
}

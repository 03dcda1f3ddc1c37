// Puts a SQLite colony's schema back to an older version, for upgrade tests: undoes each later
// migration (src/store/sqlite/migrations.ts) newest first and sets user_version. One list, so a new
// migration is undone in every upgrade test by adding its line here.
import type { Database } from "bun:sqlite";

const UNDO: Record<number, string> = {
  16: "DROP INDEX tombstones_by_merge_key; ALTER TABLE tombstones DROP COLUMN merge_key",
  15: "DROP INDEX outcomes_notes_by_content_rules_version; ALTER TABLE outcomes DROP COLUMN content_rules_version",
  14: "DROP INDEX trails_by_content_rules_version; ALTER TABLE trails DROP COLUMN content_rules_version",
  13: "DROP TABLE search_clients; ALTER TABLE search_hourly DROP COLUMN clients",
  12: "DROP INDEX outcomes_uncounted_by_client",
  11: "DROP INDEX events_searches_by_time",
  10: "DROP INDEX merge_credits_by_client; ALTER TABLE merge_credits DROP COLUMN client; ALTER TABLE trails DROP COLUMN client",
  9: "DROP INDEX trails_ranking",
  8: "DROP TABLE series_hourly; DROP INDEX events_by_trail",
  7: "DROP INDEX trails_by_normalizer_version; ALTER TABLE trails DROP COLUMN normalizer_version; DROP TABLE fingerprint_aliases",
};

/** Undoes the migrations after `version` (6 at the oldest) on a database at the newest schema. */
export function rollBackSchema(db: Database, version: number): void {
  const newest = Math.max(...Object.keys(UNDO).map(Number));
  if (version < 6) throw new Error("schemas before 6 cannot be rolled back to");
  for (let v = newest; v > version; v--) db.exec(UNDO[v]!);
  db.exec(`PRAGMA user_version = ${version}`);
}

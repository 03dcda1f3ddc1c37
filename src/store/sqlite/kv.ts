import type { Database } from "bun:sqlite";
import type { KeyValueStore } from "../ports";

export class SqliteKeyValueStore implements KeyValueStore {
  private readonly getStmt;
  private readonly setStmt;
  private readonly delStmt;

  constructor(db: Database) {
    this.getStmt = db.query<{ value: string }, [string]>("SELECT value FROM kv WHERE key = ?");
    this.setStmt = db.query("INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    this.delStmt = db.query("DELETE FROM kv WHERE key = ?");
  }

  get(key: string): string | null {
    return this.getStmt.get(key)?.value ?? null;
  }

  set(key: string, value: string): void {
    this.setStmt.run(key, value);
  }

  delete(key: string): void {
    this.delStmt.run(key);
  }
}

import type { Database } from "bun:sqlite";
import type { KeyValueStore } from "../ports";

export class SqliteKeyValueStore implements KeyValueStore {
  private readonly getStmt;
  private readonly setStmt;
  private readonly delStmt;
  private readonly insertStmt;

  constructor(db: Database) {
    this.getStmt = db.query<{ value: string }, [string]>("SELECT value FROM kv WHERE key = ?");
    this.setStmt = db.query("INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    this.delStmt = db.query("DELETE FROM kv WHERE key = ?");
    this.insertStmt = db.query("INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING");
  }

  async get(key: string): Promise<string | null> {
    return this.getNow(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.setNow(key, value);
  }

  async setIfAbsent(key: string, value: string): Promise<string> {
    this.insertStmt.run(key, value);
    return this.getNow(key) ?? value;
  }

  async delete(key: string): Promise<void> {
    this.deleteNow(key);
  }

  // Synchronous forms for the adapter's own use inside a statement sequence that must not yield.
  getNow(key: string): string | null {
    return this.getStmt.get(key)?.value ?? null;
  }

  setNow(key: string, value: string): void {
    this.setStmt.run(key, value);
  }

  deleteNow(key: string): void {
    this.delStmt.run(key);
  }
}

import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { migrate, openDatabase, StatementCachingDatabase } from "./database";
import { createSqliteStore } from "./store";
import { StoreUnavailableError } from "../ports";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "colony-store-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const open = (dataDir: string) => openDatabase({ dataDir, sqliteVecPath: getLoadablePath() });

test("opens in WAL mode with owner-only permissions and the schema applied", () => {
  const dir = join(tempDir(), "data");
  const db = open(dir);
  expect((db.query("PRAGMA journal_mode").get() as any).journal_mode).toBe("wal");
  expect((db.query("PRAGMA user_version").get() as any).user_version).toBeGreaterThanOrEqual(1);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  db.close();
});

test("migrations run once, in order, and a newer schema is refused", () => {
  const db = open(tempDir());
  const extra = [
    { version: 1, name: "a", sql: "CREATE TABLE a (x INTEGER)" },
    { version: 2, name: "b", sql: "CREATE TABLE b (x INTEGER)" },
  ];
  db.exec("PRAGMA user_version = 0");
  db.exec("DROP TABLE IF EXISTS a");
  expect(migrate(db, extra)).toBe(2);
  expect(migrate(db, extra)).toBe(2); // second run is a no-op (CREATE TABLE would fail otherwise)
  expect(() => migrate(db, extra.slice(0, 1))).toThrow(/newer than this colony understands/);
  db.close();
});

test("a failed migration leaves the previous version intact", () => {
  const db = open(tempDir());
  const before = (db.query("PRAGMA user_version").get() as any).user_version;
  expect(() => migrate(db, [{ version: before + 1, name: "bad", sql: "CREATE TABLE t (x); NOT SQL" }])).toThrow();
  expect((db.query("PRAGMA user_version").get() as any).user_version).toBe(before);
  expect(db.query("SELECT name FROM sqlite_master WHERE name = 't'").get()).toBeNull();
  db.close();
});

test("query terms: rare first, common ones dropped, never fewer than three", async () => {
  const { selectQueryTerms } = await import("../../core/lexical");
  const df = new Map([
    ["error", 900],
    ["module", 400],
    ["yaml", 3],
    ["pyyaml", 1],
    ["no", 950],
    ["named", 120],
  ]);
  expect(selectQueryTerms(["error", "no", "module", "named", "yaml", "pyyaml", "unknown"], df, 1000)).toEqual(["pyyaml", "yaml", "named"]);
  expect(selectQueryTerms(["error", "no", "module"], df, 1000)).toEqual(["module", "error", "no"]);
  expect(selectQueryTerms(["zzz"], df, 1000)).toEqual([]);
});

test("a full database: writes and transactions fail with StoreUnavailableError, nothing half-written, writable again once room returns", async () => {
  // SQLite's own full condition (max_page_count lowered on the live connection gives SQLITE_FULL,
  // "database or disk is full", the error path of a full disk); test/disk-full.test.ts fills a real filesystem.
  const db = open(tempDir());
  const store = createSqliteStore(db);
  const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
  db.exec(`PRAGMA max_page_count = ${pages}`);
  const big = "x".repeat(64 * 1024); // needs overflow pages the database may not grow to hold
  await expect(store.kv.set("big", big)).rejects.toBeInstanceOf(StoreUnavailableError);
  await expect(store.kv.set("big", big)).rejects.toThrow(/SQLITE_FULL/);
  const tx = store.transaction(async (t) => {
    await t.kv.set("small", "1");
    await t.kv.set("big", big);
  });
  await expect(tx).rejects.toBeInstanceOf(StoreUnavailableError);
  expect(await store.kv.get("small")).toBeNull(); // rolled back as a whole
  // Other failures pass as they are.
  await expect(store.transaction(async () => Promise.reject(new TypeError("a defect")))).rejects.toBeInstanceOf(TypeError);
  db.exec("PRAGMA max_page_count = 1073741823");
  await store.kv.set("big", big);
  expect(await store.kv.get("big")).toBe(big);
  db.close();
});

test("the database keeps every statement it prepared, past bun:sqlite's cache of 20, and finalizes them on close", () => {
  const db = open(tempDir());
  const first = db.query("SELECT 1 AS one");
  for (let n = 1; n <= 50; n++) db.query(`SELECT ${n} AS n`).get();
  expect(db.query("SELECT 1 AS one")).toBe(first); // not prepared again
  db.close();
  expect(() => first.get()).toThrow();
});

test("a statement pushed out of the cache past its bound still works while held, and is finalized on close", () => {
  const db = open(tempDir());
  // Prepared first, so the first pushed out; a store holding it (kv, lexical) keeps using it.
  const held = db.query<{ one: number }, []>("SELECT 1 AS one");
  for (let n = 1; n <= StatementCachingDatabase.MAX_STATEMENTS + 5; n++) db.query(`SELECT ${n} AS n`);
  expect(db.query("SELECT 1 AS one")).not.toBe(held); // forgotten by the cache: prepared anew
  expect(held.get()).toEqual({ one: 1 });
  db.close();
  // Left unfinalized, the connection would stay open (sqlite3_close_v2 waits for its statements).
  expect(() => held.get()).toThrow();
});

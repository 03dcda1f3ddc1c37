import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { migrate, openDatabase } from "./database";
import { SqliteKeyValueStore } from "./kv";
import { SqliteVectorStore } from "./vectors";

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

function unit(seed: number, dim: number): Float32Array {
  const v = Float32Array.from({ length: dim }, (_, j) => (Math.sin(seed * 12.9898 + j * 78.233) * 43758.5453) % 1);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

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

test("key-value store round trip survives reopening", () => {
  const dir = tempDir();
  let db = open(dir);
  const kv = new SqliteKeyValueStore(db);
  expect(kv.get("k")).toBeNull();
  kv.set("k", "v1");
  kv.set("k", "v2");
  db.close();
  db = open(dir);
  expect(new SqliteKeyValueStore(db).get("k")).toBe("v2");
  new SqliteKeyValueStore(db).delete("k");
  expect(new SqliteKeyValueStore(db).get("k")).toBeNull();
  db.close();
});

test("vector store: quantized search agrees with exact search, upsert replaces, remove removes", () => {
  const db = open(tempDir());
  const kv = new SqliteKeyValueStore(db);
  const { store, rebuilt } = SqliteVectorStore.open(db, kv, { name: "m", dim: 64 });
  expect(rebuilt).toBe(true);
  for (let i = 1; i <= 500; i++) store.upsert(i, unit(i, 64));
  expect(store.count()).toBe(500);
  for (const q of [3, 77, 250]) {
    const approx = store.search(unit(q, 64), 5);
    const exact = store.searchExact(unit(q, 64), 5);
    expect(approx[0]!.id).toBe(q);
    expect(approx[0]!.similarity).toBeCloseTo(1, 5);
    expect(exact[0]!.id).toBe(q);
    expect(approx.map((h) => h.id)).toEqual(exact.map((h) => h.id));
  }
  // A reopened store loads the codes it kept and finds the same neighbours.
  const reopened = SqliteVectorStore.open(db, kv, { name: "m", dim: 64 }).store;
  for (const q of [3, 77, 250]) expect(reopened.search(unit(q, 64), 5)).toEqual(store.search(unit(q, 64), 5));
  store.upsert(3, unit(9999, 64));
  expect(store.count()).toBe(500);
  expect(store.search(unit(9999, 64), 1)[0]!.id).toBe(3);
  store.remove(3);
  expect(store.count()).toBe(499);
  expect(store.search(unit(9999, 64), 3).some((h) => h.id === 3)).toBe(false);
  expect(() => store.upsert(1, new Float32Array(10))).toThrow(/dimensions/);
  db.close();
});

test("vector store: a different model rebuilds the index; the same model keeps it", () => {
  const db = open(tempDir());
  const kv = new SqliteKeyValueStore(db);
  const first = SqliteVectorStore.open(db, kv, { name: "m", dim: 16 }).store;
  first.upsert(1, unit(1, 16));
  // the re-embedding is pending until marked done, also across a reopen (a crash mid-reindex)
  expect(SqliteVectorStore.open(db, kv, { name: "m", dim: 16 }).rebuilt).toBe(true);
  first.markReindexed();
  const same = SqliteVectorStore.open(db, kv, { name: "m", dim: 16 });
  expect(same.rebuilt).toBe(false);
  expect(same.store.needsReindex()).toBe(false);
  expect(same.store.count()).toBe(1);
  const other = SqliteVectorStore.open(db, kv, { name: "m2", dim: 32 });
  expect(other.rebuilt).toBe(true);
  expect(other.store.needsReindex()).toBe(true);
  expect(other.store.count()).toBe(0);
  expect(() => SqliteVectorStore.open(db, kv, { name: "x", dim: 12 })).toThrow(/multiple of 8/);
  db.close();
});

test("lexical index: ranks the error column above the body, keeps term statistics exact, survives FTS syntax", async () => {
  const { createSqliteStore } = await import("./store");
  const { lexicalDocument, lexicalTokens } = await import("../../core/lexical");
  const db = open(tempDir());
  const store = createSqliteStore(db);
  const doc = (error: string, body: string) => ({ error: lexicalDocument(error), body: lexicalDocument(body) });
  const d1 = doc("Error [ERR_REQUIRE_ESM]: require() of ES Module", "use dynamic import");
  const d2 = doc("TypeError: x is not a function", "ERR_REQUIRE_ESM happens elsewhere");
  const d3 = doc("libGL.so.1: cannot open shared object file", "apt install libgl1");
  store.lexical.add(1, d1);
  store.lexical.add(2, d2);
  store.lexical.add(3, d3);
  const find = (q: string) => store.lexical.search(lexicalTokens(q), 10).map((h) => h.id);
  expect(find("ERR_REQUIRE_ESM")).toEqual([1, 2]);
  expect(find("libgl")).toEqual([3]);
  const terms = () => db.query("SELECT term, docs FROM lexical_terms WHERE docs > 0 ORDER BY term").all();
  const before = terms();
  store.lexical.remove(1, d1);
  expect(find("ERR_REQUIRE_ESM")).toEqual([2]);
  expect((db.query("SELECT docs FROM lexical_terms WHERE term = 'err_require_esm'").get() as any).docs).toBe(1);
  store.lexical.remove(1, d1); // a second removal changes nothing
  store.lexical.add(1, d1);
  expect(terms()).toEqual(before);
  expect((db.query("SELECT value FROM counters WHERE name = 'lexical_docs'").get() as any).value).toBe(3);
  store.lexical.remove(2, d2);
  expect(find("ERR_REQUIRE_ESM")).toEqual([1]);
  expect(find(`"); DROP TABLE trails; NEAR(x y) OR *`)).toEqual([]);
  expect(find("")).toEqual([]);
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

test("search counter: hourly buckets summed over a window", async () => {
  const { createSqliteStore } = await import("./store");
  const db = open(tempDir());
  const { searches } = createSqliteStore(db);
  const h = 3600_000;
  searches.add("ModuleNotFoundError", 100 * h);
  searches.add("ModuleNotFoundError", 100 * h + 10);
  searches.add("dependency", 101 * h);
  searches.add("old", 50 * h);
  expect(searches.top(90 * h, 10)).toEqual([
    { label: "ModuleNotFoundError", searches: 2 },
    { label: "dependency", searches: 1 },
  ]);
  expect(searches.top(90 * h, 1).length).toBe(1);
  db.close();
});

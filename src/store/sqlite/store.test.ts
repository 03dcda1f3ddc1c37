import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { DATABASE_FILE, migrate, openDatabase } from "./database";
import type { Trail } from "../../core/trail";
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

test("key-value store round trip survives reopening", async () => {
  const dir = tempDir();
  let db = open(dir);
  const { kv } = createSqliteStore(db);
  expect(await kv.get("k")).toBeNull();
  await kv.set("k", "v1");
  await kv.set("k", "v2");
  db.close();
  db = open(dir);
  expect(await createSqliteStore(db).kv.get("k")).toBe("v2");
  await createSqliteStore(db).kv.delete("k");
  expect(await createSqliteStore(db).kv.get("k")).toBeNull();
  db.close();
});

test("vector store: quantized search agrees with exact search, upsert replaces, remove removes", async () => {
  const db = open(tempDir());
  const { vectors: store, rebuilt } = await createSqliteStore(db).openVectors({ name: "m", dim: 64 });
  expect(rebuilt).toBe(true);
  for (let i = 1; i <= 500; i++) await store.upsert(i, unit(i, 64));
  expect(await store.count()).toBe(500);
  for (const q of [3, 77, 250]) {
    const approx = await store.search(unit(q, 64), 5);
    const exact = await store.searchExact(unit(q, 64), 5);
    expect(approx[0]!.id).toBe(q);
    expect(approx[0]!.similarity).toBeCloseTo(1, 5);
    expect(exact[0]!.id).toBe(q);
    expect(approx.map((h) => h.id)).toEqual(exact.map((h) => h.id));
  }
  // A reopened store loads the codes it kept and finds the same neighbours.
  const reopened = (await createSqliteStore(db).openVectors({ name: "m", dim: 64 })).vectors;
  for (const q of [3, 77, 250]) expect(await reopened.search(unit(q, 64), 5)).toEqual(await store.search(unit(q, 64), 5));
  await store.upsert(3, unit(9999, 64));
  expect(await store.count()).toBe(500);
  expect((await store.search(unit(9999, 64), 1))[0]!.id).toBe(3);
  await store.remove(3);
  expect(await store.count()).toBe(499);
  expect((await store.search(unit(9999, 64), 3)).some((h) => h.id === 3)).toBe(false);
  await expect(store.upsert(1, new Float32Array(10))).rejects.toThrow(/dimensions/);
  db.close();
});

test("vector store: a different model rebuilds the index; the same model keeps it", async () => {
  const db = open(tempDir());
  const openVectors = (name: string, dim: number) => createSqliteStore(db).openVectors({ name, dim });
  const first = (await openVectors("m", 16)).vectors;
  await first.upsert(1, unit(1, 16));
  // the re-embedding is pending until marked done, also across a reopen (a crash mid-reindex)
  expect((await openVectors("m", 16)).rebuilt).toBe(true);
  await first.markReindexed();
  const same = await openVectors("m", 16);
  expect(same.rebuilt).toBe(false);
  expect(await same.vectors.needsReindex()).toBe(false);
  expect(await same.vectors.count()).toBe(1);
  const other = await openVectors("m2", 32);
  expect(other.rebuilt).toBe(true);
  expect(await other.vectors.needsReindex()).toBe(true);
  expect(await other.vectors.count()).toBe(0);
  await expect(openVectors("x", 12)).rejects.toThrow(/multiple of 8/);
  db.close();
});

test("lexical index: ranks the error column above the body, keeps term statistics exact, survives FTS syntax", async () => {
  const { lexicalDocument, lexicalTokens } = await import("../../core/lexical");
  const db = open(tempDir());
  const store = createSqliteStore(db);
  const doc = (error: string, body: string) => ({ error: lexicalDocument(error), body: lexicalDocument(body) });
  const d1 = doc("Error [ERR_REQUIRE_ESM]: require() of ES Module", "use dynamic import");
  const d2 = doc("TypeError: x is not a function", "ERR_REQUIRE_ESM happens elsewhere");
  const d3 = doc("libGL.so.1: cannot open shared object file", "apt install libgl1");
  await store.lexical.add(1, d1);
  await store.lexical.add(2, d2);
  await store.lexical.add(3, d3);
  const find = async (q: string) => (await store.lexical.search(lexicalTokens(q), 10)).map((h) => h.id);
  expect(await find("ERR_REQUIRE_ESM")).toEqual([1, 2]);
  expect(await find("libgl")).toEqual([3]);
  const terms = () => db.query("SELECT term, docs FROM lexical_terms WHERE docs > 0 ORDER BY term").all();
  const before = terms();
  await store.lexical.remove(1, d1);
  expect(await find("ERR_REQUIRE_ESM")).toEqual([2]);
  expect((db.query("SELECT docs FROM lexical_terms WHERE term = 'err_require_esm'").get() as any).docs).toBe(1);
  await store.lexical.remove(1, d1); // a second removal changes nothing
  await store.lexical.add(1, d1);
  expect(terms()).toEqual(before);
  expect((db.query("SELECT value FROM counters WHERE name = 'lexical_docs'").get() as any).value).toBe(3);
  await store.lexical.remove(2, d2);
  expect(await find("ERR_REQUIRE_ESM")).toEqual([1]);
  expect(await find(`"); DROP TABLE trails; NEAR(x y) OR *`)).toEqual([]);
  expect(await find("")).toEqual([]);
  db.close();
});

describe("transactions", () => {
  test("commit keeps every write; a rejection rolls every write back and is passed on", async () => {
    const db = open(tempDir());
    const store = createSqliteStore(db);
    await store.transaction(async (tx) => {
      await tx.kv.set("a", "1");
      await tx.kv.set("b", "2");
    });
    await expect(
      store.transaction(async (tx) => {
        await tx.kv.set("a", "changed");
        await tx.kv.delete("b");
        throw new Error("use case failed");
      }),
    ).rejects.toThrow("use case failed");
    expect([await store.kv.get("a"), await store.kv.get("b")]).toEqual(["1", "2"]);
    expect(db.inTransaction).toBe(false);
    db.close();
  });

  test("afterCommit work runs once the data is durable, in order, and never after a rollback", async () => {
    const db = open(tempDir());
    const store = createSqliteStore(db);
    const seen: string[] = [];
    const value = await store.transaction(async (tx) => {
      await tx.kv.set("k", "v");
      tx.afterCommit(() => {
        // Committed: another connection reads it.
        const other = new Database(join(dirs.at(-1)!, DATABASE_FILE), { readonly: true });
        seen.push(`first:${(other.query("SELECT value FROM kv WHERE key = 'k'").get() as any)?.value}`);
        other.close();
      });
      tx.afterCommit(async () => {
        seen.push("second");
      });
      seen.push("body");
      return 42;
    });
    expect(value).toBe(42);
    expect(seen).toEqual(["body", "first:v", "second"]);
    await store
      .transaction(async (tx) => {
        tx.afterCommit(() => {
          seen.push("after a rollback");
        });
        throw new Error("no");
      })
      .catch(() => {});
    expect(seen).toEqual(["body", "first:v", "second"]);
    db.close();
  });

  test("a write outside a transaction waits for an open one instead of landing inside it", async () => {
    const db = open(tempDir());
    const store = createSqliteStore(db);
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const order: string[] = [];
    const failing = store
      .transaction(async (tx) => {
        await tx.kv.set("inside", "1");
        await held; // the transaction awaits other work while it is open
        order.push("transaction ends");
        throw new Error("rolled back");
      })
      .catch(() => {});
    const outside = store.kv.set("outside", "1").then(() => order.push("outside write"));
    // Transactions queue the same way.
    const next = store.transaction(async (tx) => {
      order.push("next transaction");
      await tx.kv.set("next", "1");
    });
    await Bun.sleep(5);
    expect(order).toEqual([]);
    release();
    await Promise.all([failing, outside, next]);
    expect(order[0]).toBe("transaction ends");
    expect(order.slice(1).sort()).toEqual(["next transaction", "outside write"]);
    // The rollback took only its own write: the outside write was not inside it.
    expect([await store.kv.get("inside"), await store.kv.get("outside"), await store.kv.get("next")]).toEqual([null, "1", "1"]);
    db.close();
  });
});

test("outcome counts: concurrent increments both count, and strength inputs come back with them", async () => {
  const db = open(tempDir());
  const store = createSqliteStore(db);
  const trail = { environment: { os: "linux", runtime: { name: "python" } } } as unknown as Trail;
  const record = await store.trails.insertQueued({
    id: "00000000-0000-4000-8000-000000000001",
    fingerprint: "fp1_00000000000000000000000000000001",
    normalizerVersion: 2,
    errorType: null,
    trail,
    contentHash: "h",
    author: "a",
    createdAt: 1,
  });
  db.query("UPDATE trails SET status = 'indexed', quality = 0.75 WHERE seq = ?").run(record.seq);
  const report = (outcome: "worked" | "failed") => store.transaction((tx) => tx.trails.countOutcome(record.seq, outcome, 5));
  const [a, b, c] = await Promise.all([report("worked"), report("worked"), report("failed")]);
  expect([a!.counts.worked, b!.counts.worked, c!.counts]).toEqual([1, 2, { worked: 2, partially_worked: 0, failed: 1 }]);
  expect(c!.quality).toBe(0.75);
  expect((await store.trails.byId(record.id))!.counts).toEqual({ worked: 2, partially_worked: 0, failed: 1 });
  expect(await store.trails.countOutcome(999, "worked", null)).toBeNull();
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
  const db = open(tempDir());
  const { searches } = createSqliteStore(db);
  const h = 3600_000;
  await searches.add("ModuleNotFoundError", 100 * h);
  await searches.add("ModuleNotFoundError", 100 * h + 10);
  await searches.add("dependency", 101 * h);
  await searches.add("old", 50 * h);
  expect(await searches.top(90 * h, 10)).toEqual([
    { label: "ModuleNotFoundError", searches: 2 },
    { label: "dependency", searches: 1 },
  ]);
  expect((await searches.top(90 * h, 1)).length).toBe(1);
  db.close();
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

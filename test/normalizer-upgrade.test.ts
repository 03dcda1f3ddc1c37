// Normalizer versioning (decisions §2): a colony whose trails were fingerprinted by an earlier
// normalizer (version 1, schema before migration 7; or version 2, itself upgraded from version 1)
// is upgraded; at start it re-fingerprints the stored trails in the background, and lookups and
// search answer by the old and the new fingerprints (through chained aliases), each trail once.
// Re-fingerprinting resumes where a stopped run left off.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { getLoadablePath } from "sqlite-vec";
import { join } from "node:path";
import {
  fingerprint,
  NORMALIZER_VERSION,
  NORMALIZER_VERSIONS,
  olderFingerprints,
  previousNormalizerFingerprints,
} from "../src/core/fingerprint";
import { CONTENT_RULES_VERSION } from "../src/core/content-rules";
import { mergeKey } from "../src/core/merge-key";
import { refingerprintStoredTrails } from "../src/service/refingerprint";
import { DATABASE_FILE, openDatabase } from "../src/store/sqlite/database";
import { createSqliteStore } from "../src/store/sqlite/store";
import { startTestColony, tempDir } from "./support/colony";
import { rollBackSchema } from "./support/sqlite-schema";
import { expectFoundByFingerprints, lookup, search, V9_RENAMED, V9_SPLIT } from "./support/fingerprint-lookups";
import { json, sampleTrail } from "./support/trails";

// Errors whose version-1 and version-2 fingerprints differ (quotes, a logger prefix, a stack).
const ERRORS = [
  "ModuleNotFoundError: No module named 'numpy'",
  "ERROR:app.worker:ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
  "Error: listen EADDRINUSE: address already in use :::3000\n    at Server.setupListenHandle [as _listen2] (node:net:1817:16)",
];

/** Puts the database back where the previous release left it: version-1 fingerprints, schema 6. */
function rewindToVersion1(dataDir: string): void {
  const db = new Database(join(dataDir, DATABASE_FILE));
  try {
    const rows = db.query<{ seq: number; content: string }, []>("SELECT seq, content FROM trails").all();
    for (const r of rows) {
      const error = JSON.parse(r.content).problem.error as string;
      db.query(
        "UPDATE trails SET fingerprint = ?, merge_key = CASE WHEN merge_key IS NULL THEN NULL ELSE 'v1-merge-key' END WHERE seq = ?",
      ).run(fingerprint(error, 1), r.seq);
    }
    rollBackSchema(db, 6);
  } finally {
    db.close();
  }
}

// Errors whose version-1, version-2 and version-3 fingerprints all differ (a class in front of a
// message that identifies the error by itself, advice after the first sentence, a MySQL client's
// own format).
const V3_ERRORS = [
  "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
  "Error: Cannot find module 'express'. Please verify that the package.json has a valid \"main\" entry",
  "Error Code: 1055. Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'db.t.id'",
];

/** The distinct steps of an error's fingerprint chain from version 1 up to (not past) `upTo`. */
const chainSteps = (error: string, upTo: number) => {
  const steps: [string, string][] = [];
  for (let v = 1; v < upTo; v++) {
    const [from, to] = [fingerprint(error, v as 1), fingerprint(error, (v + 1) as 2)];
    if (from !== to) steps.push([from, to]);
  }
  return steps;
};

/**
 * The aliases a colony holds after an upgrade from `from`, as "old -> new": the chain the earlier
 * releases left (rewindTo), and every older version's fingerprint of each error naming its current
 * one (re-fingerprinting records them all, as enrichment does for a new trail).
 */
const aliasesAfterUpgrade = (errors: string[], from: number) => {
  const rows = new Set<string>();
  for (const error of errors) {
    for (const [old, current] of chainSteps(error, from)) rows.add(`${old} -> ${current}`);
    const current = fingerprint(error);
    for (const old of previousNormalizerFingerprints(error, current)) rows.add(`${old} -> ${current}`);
  }
  return [...rows].sort();
};

/**
 * Puts the database back where a colony of normalizer `version` (itself upgraded from every older
 * one) left it: that version's fingerprints and merge keys, and the older fingerprints as chained
 * aliases.
 */
const rewindTo =
  (version: 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11) =>
  (dataDir: string): void => {
    const db = new Database(join(dataDir, DATABASE_FILE));
    try {
      const rows = db.query<{ seq: number; content: string }, []>("SELECT seq, content FROM trails").all();
      db.exec("DELETE FROM fingerprint_aliases");
      for (const r of rows) {
        const error = JSON.parse(r.content).problem.error as string;
        db.query(
          `UPDATE trails SET fingerprint = ?, normalizer_version = ${version}, merge_key = CASE WHEN merge_key IS NULL THEN NULL ELSE 'v${version}-merge-key' END WHERE seq = ?`,
        ).run(fingerprint(error, version), r.seq);
        for (const [from, to] of chainSteps(error, version)) {
          db.query("INSERT INTO fingerprint_aliases (old_fp, new_fp, created_at) VALUES (?, ?, ?)").run(from, to, Date.now());
        }
      }
    } finally {
      db.close();
    }
  };

/** A colony that published `errors` and was then rewound to an older release's schema; its trail ids. */
async function publishedThenRewound(prefix: string, errors: string[], rewind: (dataDir: string) => void) {
  const dataDir = tempDir(prefix);
  const first = await startTestColony({ COLONY_DATA_DIR: dataDir });
  const ids: string[] = [];
  for (const error of errors) ids.push(((await (await first.fetch("/v1/trails", json(sampleTrail({ error })))).json()) as any).trail_id);
  await first.service.worker!.drain();
  await first.stop();
  rewind(dataDir);
  return { dataDir, ids };
}

/** Every stored trail is on the current normalizer, its merge key recomputed; the aliases held. */
function expectRefingerprinted(dataDir: string, aliases: string[]): void {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    const rows = db
      .query<{ fingerprint: string; normalizer_version: number; merge_key: string | null; content: string }, []>(
        "SELECT fingerprint, normalizer_version, merge_key, content FROM trails ORDER BY seq",
      )
      .all();
    for (const r of rows) {
      const trail = JSON.parse(r.content);
      expect(r.normalizer_version).toBe(NORMALIZER_VERSION);
      expect(r.fingerprint).toBe(fingerprint(trail.problem.error));
      expect(r.merge_key).toBe(mergeKey(trail)); // recomputed with the new fingerprint
    }
    const held = db.query<{ row: string }, []>("SELECT old_fp || ' -> ' || new_fp AS row FROM fingerprint_aliases").all();
    expect(held.map((r) => r.row).sort()).toEqual(aliases);
  } finally {
    db.close();
  }
}

test("an upgraded colony answers lookups and search by old and new fingerprints, each trail once", async () => {
  const { dataDir, ids } = await publishedThenRewound("colony-normalizer-upgrade-", ERRORS, rewindToVersion1);

  const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect((await upgraded.fetch("/readyz")).status).toBe(200);
    expect(await upgraded.service.refingerprinting).toBe(ERRORS.length);
    expectRefingerprinted(dataDir, aliasesAfterUpgrade(ERRORS, 1));

    for (const [i, error] of ERRORS.entries()) {
      const oldFp = fingerprint(error, 1);
      const newFp = fingerprint(error);
      expect(oldFp).not.toBe(newFp);
      for (const fp of [oldFp, newFp]) {
        const found = await lookup(upgraded, fp);
        expect(found.status).toBe(200);
        expect(found.body.results.map((r: any) => r.trail_id)).toEqual([ids[i]]);
      }
      // Search by the error text (new fingerprint) and by a cached old fingerprint: found once, first.
      for (const query of [error, oldFp]) {
        const res = await search(upgraded, query);
        expect(res.results[0].trail_id).toBe(ids[i]);
        expect(res.results[0].match.via).toBe("fingerprint");
        expect(res.results.filter((r: any) => r.trail_id === ids[i]).length).toBe(1);
      }
    }

    // The lookup cache: a 404 cached for a fingerprint is dropped when a trail comes to resolve by it.
    const store = upgraded.subsystems.store!;
    const zero = "fp1_" + "0".repeat(32);
    expect((await lookup(upgraded, zero)).status).toBe(404); // now cached
    const [record] = await store.trails.indexedByFingerprint(fingerprint(ERRORS[0]!), 1);
    await store.trails.refingerprint(record!.seq, { fingerprint: zero, normalizerVersion: 1, mergeKey: null });
    expect(await (upgraded.service as any).refingerprint()).toBe(1);
    expect((await lookup(upgraded, zero)).body.results.map((r: any) => r.trail_id)).toEqual([ids[0]]);
  } finally {
    await upgraded.stop();
  }
});

test("a version-2 colony upgraded (to version 3 and later) answers by its version-1, version-2 and version-3 fingerprints, each trail once", async () => {
  const { dataDir, ids } = await publishedThenRewound("colony-normalizer-upgrade-v3-", V3_ERRORS, rewindTo(2));

  const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect((await upgraded.fetch("/readyz")).status).toBe(200);
    expect(await upgraded.service.refingerprinting).toBe(V3_ERRORS.length);
    // The version-1 aliases stay; each version-2 fingerprint now names the current one.
    expectRefingerprinted(dataDir, aliasesAfterUpgrade(V3_ERRORS, 2));

    for (const [i, error] of V3_ERRORS.entries()) {
      const fps = [fingerprint(error, 1), fingerprint(error, 2), fingerprint(error)];
      expect(new Set(fps).size).toBe(3);
      for (const fp of fps) {
        const found = await lookup(upgraded, fp);
        expect(found.status).toBe(200);
        expect(found.body.results.map((r: any) => r.trail_id)).toEqual([ids[i]]);
      }
      // Search by the error text and by cached version-1 and version-2 fingerprints: found once, first.
      for (const query of [error, fps[0]!, fps[1]!]) {
        const res = await search(upgraded, query);
        expect(res.results[0].trail_id).toBe(ids[i]);
        expect(res.results[0].match.via).toBe("fingerprint");
        expect(res.results.filter((r: any) => r.trail_id === ids[i]).length).toBe(1);
      }
    }
  } finally {
    await upgraded.stop();
  }
});

// Errors whose fingerprints version 4 changes (a value the user chose, a database client's class, a
// Redis reply inside a client's wrapper); the first one's four versions all differ.
const V4_ERRORS = [
  "Caused by: com.mysql.cj.exceptions.InvalidConnectionAttributeException: The server time zone value 'CEST' is unrecognized or represents more than one time zone. You must configure either the server or JDBC driver (via the serverTimezone configuration property) to use a more specifc time zone value if you want to utilize time zone support.",
  "django.db.utils.OperationalError: could not connect to server: Connection refused",
  "[YzBot][10:39:58.547][ERRO] [ErrorReply: NOAUTH Authentication required.]",
];

test("a version-3 colony upgraded (to version 4 and later) answers by every older fingerprint and the new one, each trail once; searches then compute no older version", async () => {
  expect(new Set([1, 2, 3, 4].map((v) => fingerprint(V4_ERRORS[0]!, v as 1))).size).toBe(4);
  const { dataDir, ids } = await publishedThenRewound("colony-normalizer-upgrade-v4-", V4_ERRORS, rewindTo(3));

  const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect((await upgraded.fetch("/readyz")).status).toBe(200);
    expect(await upgraded.service.refingerprinting).toBe(V4_ERRORS.length);
    // The version-1 and version-2 aliases stay; each version-3 fingerprint now names the current one.
    expectRefingerprinted(dataDir, aliasesAfterUpgrade(V4_ERRORS, 3));

    for (const error of V4_ERRORS) expect(fingerprint(error, 3)).not.toBe(fingerprint(error));
    // The versions this colony stored (1 to 3) and the current one: a colony upgraded from
    // version 3 straight to a later one never held the version-4 fingerprints in between.
    await expectFoundByFingerprints(upgraded, V4_ERRORS, ids, [1, 2, 3, NORMALIZER_VERSION]);

    // Every stored trail is on the current version: a search computes no older version's fingerprint.
    const trails = upgraded.service.trails;
    expect(await trails.checkOlderVersions()).toEqual([]);
    expect(trails.olderVersionsInStore()).toEqual([]);
    expect(olderFingerprints(V4_ERRORS[0]!, trails.olderVersionsInStore())).toEqual([]);
    // A trail a replica of an older release wrote (version 3) makes searches compute version 3 and
    // the versions after it again, from the next check on, and is found by its error text.
    const store = upgraded.subsystems.store!;
    const [record] = await store.trails.indexedByFingerprint(fingerprint(V4_ERRORS[0]!), 1);
    await store.trails.refingerprint(record!.seq, { fingerprint: fingerprint(V4_ERRORS[0]!, 3), normalizerVersion: 3, mergeKey: null });
    expect(await trails.checkOlderVersions()).toEqual(NORMALIZER_VERSIONS.filter((v) => v >= 3 && v < NORMALIZER_VERSION));
    const res = await search(upgraded, V4_ERRORS[0]!);
    expect(res.results[0].trail_id).toBe(ids[0]);
    expect(res.results[0].match.via).toBe("fingerprint");
  } finally {
    await upgraded.stop();
  }
});

// Errors whose fingerprints version 5 changes (make's own error, which versions 2 to 4 reduced to an
// empty form; the user's class the JVM did not find; a version range); the first two have three
// fingerprints across the versions.
const V5_ERRORS = [
  "make: *** No rule to make target 'install'.  Stop.",
  'Exception in thread "main" java.lang.ClassNotFoundException: com.example.App',
  "npm ERR! peer dep missing: react@^16.8.0 || ^17.0.0, required by react-router-dom@6.0.0",
];

test("a version-4 colony upgraded (to version 5 and later) answers by every older fingerprint and the new one, each trail once", async () => {
  for (const error of V5_ERRORS) expect(fingerprint(error, 4)).not.toBe(fingerprint(error));
  for (const error of V5_ERRORS.slice(0, 2)) expect(new Set([1, 2, 3, 4, 5].map((v) => fingerprint(error, v as 1))).size).toBe(3);
  const { dataDir, ids } = await publishedThenRewound("colony-normalizer-upgrade-v5-", V5_ERRORS, rewindTo(4));

  const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect((await upgraded.fetch("/readyz")).status).toBe(200);
    expect(await upgraded.service.refingerprinting).toBe(V5_ERRORS.length);
    // The older aliases stay; each version-4 fingerprint now names the current one.
    expectRefingerprinted(dataDir, aliasesAfterUpgrade(V5_ERRORS, 4));

    await expectFoundByFingerprints(upgraded, V5_ERRORS, ids, [1, 2, 3, 4, NORMALIZER_VERSION]);
    expect(await upgraded.service.trails.checkOlderVersions()).toEqual([]);
  } finally {
    await upgraded.stop();
  }
});

// Errors whose fingerprints version 6 changes (a bounds error's run-time values, a documentation
// link after the message, a runner's status icon), and for each another report of it that version 6
// gives the same fingerprint and version 5 did not.
const V6_ERRORS: [string, string][] = [
  [
    'Exception in thread "main" java.lang.ArrayIndexOutOfBoundsException: Index 5 out of bounds for length 3',
    "java.lang.ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0",
  ],
  [
    "error: externally-managed-environment. For more information, see https://peps.python.org/pep-0668/",
    "error: externally-managed-environment",
  ],
  [
    "⚠️ npm WARN deprecated request@2.88.2: request has been deprecated, see https://github.com/request/request/issues/3142",
    "npm WARN deprecated request@2.88.0: request has been deprecated, see https://github.com/request/request/issues/3142",
  ],
];

/**
 * A colony of normalizer `from` (itself upgraded from every older one) holding each error of
 * `pairs` is upgraded: it answers by every older fingerprint and the new one, and the other report
 * of each error, which the newer versions join to it and version `from` did not, finds its trail by
 * lookup and first in search.
 */
async function expectUpgradeJoinsOtherReports(from: 5 | 6 | 9 | 10 | 11, pairs: [string, string][]): Promise<void> {
  const errors = pairs.map(([e]) => e);
  for (const [error, other] of pairs) {
    expect(fingerprint(error, from)).not.toBe(fingerprint(error));
    expect(fingerprint(other, from)).not.toBe(fingerprint(error, from));
    expect(fingerprint(other)).toBe(fingerprint(error));
  }
  const { dataDir, ids } = await publishedThenRewound(`colony-normalizer-upgrade-v${from + 1}-`, errors, rewindTo(from));

  const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect((await upgraded.fetch("/readyz")).status).toBe(200);
    expect(await upgraded.service.refingerprinting).toBe(errors.length);
    // The older aliases stay; each version-`from` fingerprint now names the current one.
    expectRefingerprinted(dataDir, aliasesAfterUpgrade(errors, from));
    await expectFoundByFingerprints(upgraded, errors, ids, [...NORMALIZER_VERSIONS]);
    expect(await upgraded.service.trails.checkOlderVersions()).toEqual([]);
    for (const [i, [, other]] of pairs.entries()) {
      const found = await lookup(upgraded, fingerprint(other));
      expect(found.body.results.map((r: any) => r.trail_id)).toEqual([ids[i]]);
      const res = await search(upgraded, other);
      expect(res.results[0].trail_id).toBe(ids[i]);
      expect(res.results[0].match.via).toBe("fingerprint");
    }
  } finally {
    await upgraded.stop();
  }
}

test("a version-5 colony upgraded to version 6 or later answers by every older fingerprint and the new one, and finds each trail by another report of its error", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(6);
  await expectUpgradeJoinsOtherReports(5, V6_ERRORS);
});

// Errors whose fingerprints version 7 changes (Go's bounds values, V8's older wording, the JDK's
// platform suffix after a socket error), and for each another report of it from the second external
// set (test/fixtures/fingerprint-real-variants-2.json) that version 7 gives the same fingerprint and
// version 6 did not.
const V7_ERRORS: [string, string][] = [
  [
    "panic: runtime error: index out of range [1] with length 1\n\ngoroutine 1 [running]:\nmain.main()\n\t/hidden/hidden/hidden/oniongen-go/main.go:92 +0x153\nexit status 2",
    "panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.main()\n        Server.go:870 +0x3a5a",
  ],
  ["TypeError: Cannot read property 'map' of undefined", "TypeError: Cannot read properties of undefined (reading 'map')"],
  [
    'Exception in thread "main" java.net.BindException: Address already in use: bind\n    at sun.nio.ch.Net.bind0(Native Method)',
    "D/OkHttp: <-- HTTP FAILED: java.net.BindException: bind failed: EADDRINUSE (Address already in use)",
  ],
];

test("a version-6 colony upgraded to version 7 or later answers by every older fingerprint and the new one, and finds each trail by another report of its error", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(7);
  await expectUpgradeJoinsOtherReports(6, V7_ERRORS);
});

// Version 8 splits version-7 forms on purpose: one banner over two causes becomes two errors. Two
// trails stored under one version-7 fingerprint (the Java launcher's banner over a heap size and
// over an unknown option, the second external set's apart pair) and a trail whose fingerprint
// version 8 only renames (git's banner over curl 92, github.com/fracz/git-exercises/issues/22).
const V8_SPLIT: [string, string] = [
  "Invalid maximum heap size: -Xmx4096M\nThe specified size exceeds the maximum representable size.\nError: Could not create the Java Virtual Machine.\nError: A fatal exception has occurred. Program will exit.\nPress any key to exit...",
  "Unrecognized option: --version Error: Could not create the Java Virtual Machine. Error: A fatal exception has occurred. Program will exit.",
];
const V8_RENAMED =
  "error: RPC failed; curl 92 HTTP/2 stream 0 was not closed cleanly: PROTOCOL_ERROR (err 1)\nfatal: the remote end hung up unexpectedly";

/**
 * A colony on version `from` upgraded to the current normalizer: `split` (two errors that shared
 * a version-`from` fingerprint and the current one tells apart) and `renamed` (one the current
 * version only renames). The shared fingerprint still answers with both trails, by lookup and by
 * search; each new fingerprint and each text finds its own trail only; the renamed one answers by
 * every older fingerprint too.
 */
async function expectSplitAfterUpgrade(from: Parameters<typeof rewindTo>[0], split: [string, string], renamed: string) {
  const [a, b] = split;
  expect(fingerprint(a, from)).toBe(fingerprint(b, from));
  expect(fingerprint(a)).not.toBe(fingerprint(b));
  expect(fingerprint(renamed, from)).not.toBe(fingerprint(renamed));
  const errors = [a, b, renamed];
  const { dataDir, ids } = await publishedThenRewound(`colony-normalizer-upgrade-from-v${from}-`, errors, rewindTo(from));

  const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect((await upgraded.fetch("/readyz")).status).toBe(200);
    expect(await upgraded.service.refingerprinting).toBe(errors.length);
    // The shared fingerprint now names both new ones: two aliases from one.
    expectRefingerprinted(dataDir, aliasesAfterUpgrade(errors, from));
    const sorted = (xs: string[]) => [...xs].sort();
    // A client that cached the shared fingerprint still finds both trails, by lookup and by search.
    const shared = fingerprint(a, from);
    expect(sorted((await lookup(upgraded, shared)).body.results.map((r: any) => r.trail_id))).toEqual(sorted([ids[0]!, ids[1]!]));
    const res = await search(upgraded, shared);
    const viaFingerprint = res.results.filter((r: any) => r.match.via === "fingerprint").map((r: any) => r.trail_id);
    expect(sorted(viaFingerprint)).toEqual(sorted([ids[0]!, ids[1]!]));
    // Each error's new fingerprint, and its text, find its own trail only.
    for (const [i, error] of errors.entries()) {
      expect((await lookup(upgraded, fingerprint(error))).body.results.map((r: any) => r.trail_id)).toEqual([ids[i]]);
      const byText = await search(upgraded, error);
      expect(byText.results[0].trail_id).toBe(ids[i]);
      expect(byText.results[0].match.via).toBe("fingerprint");
      expect(byText.results.filter((r: any) => r.match.via === "fingerprint").map((r: any) => r.trail_id)).toEqual([ids[i]]);
    }
    await expectFoundByFingerprints(upgraded, [renamed], [ids[2]!], [...NORMALIZER_VERSIONS]);
    expect(await upgraded.service.trails.checkOlderVersions()).toEqual([]);
  } finally {
    await upgraded.stop();
  }
}

test("a version-7 colony upgraded to version 8 or later: a version-7 fingerprint that version 8 splits still answers with both trails; each new one with its own", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(8);
  await expectSplitAfterUpgrade(7, V8_SPLIT, V8_RENAMED);
});

test("a version-8 colony upgraded to version 9 or later: a version-8 fingerprint that version 9 splits still answers with both trails; each new one with its own", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(9);
  await expectSplitAfterUpgrade(8, V9_SPLIT, V9_RENAMED);
});

// Errors whose fingerprints version 10 changes (Node's process id before a warning, GCC's include
// chain above a missing header), and for each another report of it from the fifth external set
// (test/fixtures/fingerprint-real-variants-5.json) that version 10 gives the same fingerprint and
// version 9 did not. Version 10 splits no version-9 form.
const V10_ERRORS: [string, string][] = [
  [
    "(node:4708) [DEP0005] DeprecationWarning: Buffer() is deprecated due to security and usability issues. Please use the Buffer.alloc(), Buffer.allocUnsafe(), or Buffer.from() methods instead.",
    "(node:21852) [DEP0005] DeprecationWarning: Buffer() is deprecated due to security and usability issues. Please use the Buffer.alloc(), Buffer.allocUnsafe(), or Buffer.from() methods instead.",
  ],
  [
    'In file included from src/arm9/tcommon/text.h:5,\n                 from src/arm9/boss.cpp:8:\nsrc/arm9/tcommon/fontcache.h:6:10: fatal error: ft2build.h: No such file or directory\n    6 | #include "ft2build.h"\n      |          ^~~~~~~~~~~~\ncompilation terminated.',
    "ezttf.c:68:10: fatal error: ft2build.h: No such file or directory\n   68 | #include <ft2build.h>\n      |          ^~~~~~~~~~~~",
  ],
];

test("a version-9 colony upgraded to version 10 or later answers by every older fingerprint and the new one, and finds each trail by another report of its error", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(10);
  await expectUpgradeJoinsOtherReports(9, V10_ERRORS);
});

// Version 11 splits the form version 10 gave every header a pip build missed (setuptools' closing
// line; the sixth external set's gmp.h and sasl/sasl.h), and only renames Node's warning under its
// --trace-warnings hint (test/fixtures/fingerprint-real-variants-6.json).
const V11_SPLIT: [string, string] = [
  "    In file included from src/curveMath.c:1:0:\n    src/curveMath.h:6:10: fatal error: gmp.h: No such file or directory\n     #include <gmp.h>\n              ^~~~~~~\n    compilation terminated.\n    error: command 'gcc' failed with exit status 1",
  "remote:            In file included from sasl/saslwrapper.cpp:254:0:\nremote:            sasl/saslwrapper.h:22:23: fatal error: sasl/sasl.h: No such file or directory\nremote:             #include <sasl/sasl.h>\nremote:                                   ^\nremote:            compilation terminated.\nremote:            error: command 'gcc' failed with exit status 1",
];
const V11_RENAMED =
  "(node:86796) Warning: Accessing non-existent property 'cat' of module exports inside circular dependency\n(Use `node --trace-warnings ...` to show where the warning was created)";

test("a version-10 colony upgraded to version 11 or later: the fingerprint setuptools' closing line gave two missing headers still answers with both trails; each new one with its own", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(11);
  await expectSplitAfterUpgrade(10, V11_SPLIT, V11_RENAMED);
});

// Errors whose fingerprints version 11 changes (a program's path before the loader's message,
// Node 20's wording of an experimental warning), and for each another report of it from the sixth
// external set that version 11 gives the same fingerprint and version 10 did not.
const V11_ERRORS: [string, string][] = [
  [
    "./Saadhn: error while loading shared libraries: libgconf-2.so.4: cannot open shared object file: No such file or directory",
    "webtorrent-desktop: error while loading shared libraries: libgconf-2.so.4: cannot open shared object file: No such file or directory",
  ],
  [
    "(node:112166) ExperimentalWarning: Importing JSON modules is an experimental feature and might change at any time",
    "(node:21804) ExperimentalWarning: Importing JSON modules is an experimental feature. This feature could change at any time",
  ],
];

test("a version-10 colony upgraded to version 11 or later answers by every older fingerprint and the new one, and finds each trail by another report of its error", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(11);
  await expectUpgradeJoinsOtherReports(10, V11_ERRORS);
});

// Version 12 splits the form version 11 gave every host libpq failed to resolve under a driver's
// wrapper (the C library's words alone: the seventh external set's "postgresql" and its apart pair's
// "@db"), and only renames zsh's "command not found" (test/fixtures/fingerprint-real-variants-7.json).
const V12_SPLIT: [string, string] = [
  '    conn = _connect(dsn, connection_factory=connection_factory, **kwasync)\nsqlalchemy.exc.OperationalError: (psycopg2.OperationalError) could not translate host name "postgresql" to address: Name or service not known\n\n(Background on this error at: http://sqlalche.me/e/e3q8)`',
  'sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) could not translate host name "@db" to address: Name or service not known',
];
const V12_RENAMED = "zsh: command not found: pip";

test("a version-11 colony upgraded to version 12 or later: the fingerprint the C library's words gave two unresolved hosts still answers with both trails; each new one with its own", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(12);
  await expectSplitAfterUpgrade(11, V12_SPLIT, V12_RENAMED);
});

// Errors whose fingerprints version 12 changes (bash's "command not found" under a script's line,
// Node's ABI mismatch with joined words), and for each another report of it from the seventh external
// set that version 12 gives the same fingerprint and version 11 did not.
const V12_ERRORS: [string, string][] = [
  ["./install.sh: line 11: pip: command not found", "zsh: command not found: pip"],
  [
    "Error: The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 93. This version of Node.js requires NODE_MODULE_VERSION 102. Please try re-compiling or re-installing the module (for instance, using `npm rebuild` or `npm install`).",
    "node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 57. This version of Node.js requires\nNODE_MODULE_VERSION 64. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).",
  ],
];

test("a version-11 colony upgraded to version 12 or later answers by every older fingerprint and the new one, and finds each trail by another report of its error", async () => {
  expect(NORMALIZER_VERSION).toBeGreaterThanOrEqual(12);
  await expectUpgradeJoinsOtherReports(11, V12_ERRORS);
});

test("re-fingerprinting resumes after a stop and aliases expire after 90 days", async () => {
  const db = openDatabase({ dataDir: tempDir("colony-refingerprint-"), sqliteVecPath: getLoadablePath() });
  const store = createSqliteStore(db);
  const errors = [
    "KeyError: 'user_id'",
    "TypeError: 'NoneType' object is not subscriptable",
    "ValueError: invalid literal for int() with base 10: 'x'",
  ];
  for (const [i, error] of errors.entries()) {
    await store.trails.insertQueued({
      id: `00000000-0000-4000-8000-00000000000${i}`,
      fingerprint: fingerprint(error, 1),
      normalizerVersion: 1,
      contentRulesVersion: CONTENT_RULES_VERSION,
      errorType: null,
      trail: sampleTrail({ error }) as any,
      contentHash: `h${i}`,
      author: "a",
      client: "c",
      createdAt: 1,
    });
  }
  const changed: string[] = [];
  let batches = 0;
  // Stopped after the first batch, as a crash or shutdown would leave it.
  const firstRun = await refingerprintStoredTrails({
    store,
    now: () => 1000,
    onBatch: (_n, fps) => void changed.push(...fps),
    stopped: () => batches++ > 0,
    batchSize: 1,
  });
  expect(firstRun).toBe(1);
  expect((await store.trails.fingerprintedBefore(3, 0, 10)).length).toBe(2);
  // The old fingerprint and every older version's, then the new one.
  const olderOfFirst = [...new Set([fingerprint(errors[0]!, 1), ...previousNormalizerFingerprints(errors[0]!, fingerprint(errors[0]!))])];
  expect(changed).toEqual([...olderOfFirst, fingerprint(errors[0]!)]);
  const secondRun = await refingerprintStoredTrails({ store, now: () => 2000, onBatch: () => {}, batchSize: 1 });
  expect(secondRun).toBe(2);
  expect(await store.trails.fingerprintedBefore(3, 0, 10)).toEqual([]);
  for (const error of errors) expect(await store.aliases.resolve(fingerprint(error, 1))).toEqual([fingerprint(error)]);
  // A current fingerprint is no alias; maintenance purges by creation time.
  expect(await store.aliases.resolve(fingerprint(errors[0]!))).toEqual([]);
  expect(await store.aliases.purgeBefore(1500)).toBe(olderOfFirst.length);
  expect(await store.aliases.resolve(fingerprint(errors[0]!, 1))).toEqual([]);
  expect(await store.aliases.resolve(fingerprint(errors[1]!, 1))).toEqual([fingerprint(errors[1]!)]);
  db.close();
});

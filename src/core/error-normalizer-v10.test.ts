// Normalizer version 10 (error-normalizer.ts): version 9's form, with Node's process id before a
// warning and GCC's and Clang's include chain above a compiler error dropped first. Each rule with
// real reports: pairs of reports of one error from the external sets
// (test/fixtures/fingerprint-real-variants*.json: the fourth, which the rules were written from in
// session 15, and the fifth, gathered after them in session 16) that version 9 gave two forms and
// version 10 gives one; and the different errors a rule must keep apart. Then the sets whole: no
// apart pair collides, no group version 9 joined is split; and version 10 splits no version-9 form
// among the dev set's texts or the external sets' texts.
import { describe, expect, test } from "bun:test";
import { loadDevset } from "../../test/support/devset.ts";
import { devsetTexts, formsSplitSince, loadRealVariantSets } from "../../test/support/real-variants.ts";
import { normalizeError } from "./fingerprint.ts";

const sets = loadRealVariantSets();
const groups = new Map(sets.flatMap(({ set }) => set.groups.map((g) => [g.id, g] as const)));
const report = (id: string, i: number) => {
  const r = groups.get(id)?.reports[i];
  if (!r) throw new Error(`no report ${i} in group ${id}`);
  return r.text;
};

/** [rule, group, i, j]: two reports of one error version 9 gave two forms; version 10 gives one. */
const V10_JOINS: [string, string, number, number][] = [
  // Node's process id: a new number every run, or none where the reporter copied the message alone.
  ["Node's process id before a deprecation, against the bare message", "node-dep0005-buffer-constructor", 1, 0],
  ["two process ids before the same deprecation", "node-dep0066-outgoingmessage-headers", 0, 2],
  ["a process id and Node's stack after the warning, against a process id alone", "node-dep0097-domain-makecallback", 0, 1],
  ["a process id before an experimental-feature warning, against the title's bare message", "node-fetch-api-experimental-warning", 0, 3],
  ["two process ids before the ESM loader's warning", "node-esm-module-loader-experimental", 0, 2],
  ["a process id before the MongoDB driver's own warning", "mongodb-node-sdam-engine-deprecated", 1, 0],
  ["a process id before DEP0040 (the fourth set)", "node-dep0040-punycode-deprecated", 0, 1],
  ["a process id before the ES module warning (the fourth set)", "node-warning-to-load-es-module", 3, 8],
  // GCC's and Clang's include chain: which of the user's files pulled the header in.
  ["GCC's include chain of two lines above a missing header", "gcc-ft2build-h-missing", 0, 1],
  ["GCC's include chain of one line above a missing header", "gcc-x11-xlib-h-missing", 6, 0],
  ["an old GCC's include chain and 'error:' against a newer GCC's 'fatal error:'", "gcc-ffi-h-missing", 6, 3],
  ["GCC's include chain above GL/gl.h (the fourth set)", "gcc-gl-gl-h-no-such-file", 0, 2],
];

describe("normalizer 10: reports of one error share a fingerprint", () => {
  for (const [rule, id, i, j] of V10_JOINS) {
    test(`${rule} (${id} ${i}, ${j})`, () => {
      expect(normalizeError(report(id, i))).toBe(normalizeError(report(id, j)));
      expect(normalizeError(report(id, i), 9)).not.toBe(normalizeError(report(id, j), 9));
    });
  }
});

/** [rule, a, b]: different errors that version 10's rules must keep apart. */
const V10_APART: [string, string, string][] = [
  [
    "another warning from the same process (https://github.com/telefonicaid/perseo-fe/issues/570)",
    "(node:1) [MONGODB DRIVER] Warning: Current Server Discovery and Monitoring engine is deprecated, and will be removed in a future version. To use the new Server Discover and Monitoring engine, pass option { useUnifiedTopology: true } to the MongoClient constructor.",
    "(node:1) DeprecationWarning: collection.ensureIndex is deprecated. Use createIndexes instead.",
  ],
  [
    "another header missing under the same include chain (https://github.com/realgam3/pymultitor/issues/7)",
    "  In file included from src/lxml/lxml.etree.c:320:0:\n  src/lxml/includes/etree_defs.h:14:31: fatal error: libxml/xmlversion.h: Aucun fichier ou dossier de ce type",
    "  In file included from src/lxml/lxml.etree.c:320:0:\n  /tmp/xmlXPathInit4w6Pcr.c:1:26: fatal error: libxml/xpath.h: Aucun fichier ou dossier de ce type",
  ],
];

describe("normalizer 10: different errors keep their own fingerprints", () => {
  for (const [rule, a, b] of V10_APART) {
    test(rule, () => {
      expect(normalizeError(a)).not.toBe(normalizeError(b));
    });
  }
  test("a Python traceback's 'from … import …' line is no include chain (the fifth set's _ctypes group)", () => {
    const traceback = report("python-no-module-named-ctypes", 2);
    expect(traceback).toContain("    from _ctypes import Union, Structure, Array");
    expect(normalizeError(traceback)).toBe(normalizeError(traceback, 9));
  });
  test("a report that is nothing but a process id or an include chain keeps version 9's form", () => {
    for (const text of ["(node:12345)", "In file included from kernel.h:3,\n                 from kernel.c:1:"]) {
      expect(normalizeError(text)).toBe(normalizeError(text, 9));
    }
  });
  test("a shared library's soname version stays (not adopted: libssl.so.1.1 and libssl.so.3 are different errors)", () => {
    const a = "error while loading shared libraries: libboost_system.so.1.58.0: cannot open shared object file: No such file or directory";
    const b = "error while loading shared libraries: libboost_system.so.1.62.0: cannot open shared object file: No such file or directory";
    expect(normalizeError(a)).not.toBe(normalizeError(b));
  });
});

describe("normalizer 10: the external sets of real reports", () => {
  for (const { name, set } of sets) {
    for (const p of set.apart) {
      test(`${name} set, ${p.id}: apart (${p.note})`, () => {
        expect(normalizeError(p.a)).not.toBe(normalizeError(p.b));
      });
    }
    for (const g of set.groups) {
      if (new Set(g.reports.map((r) => normalizeError(r.text, 9))).size !== 1) continue;
      test(`${name} set, ${g.id}: joined by version 9, still one normal form`, () => {
        expect(new Set(g.reports.map((r) => normalizeError(r.text))).size).toBe(1);
      });
    }
  }
  test("version 10 splits no version-9 form among the external sets' texts", () => {
    const texts = sets.flatMap(({ set }) => [
      ...set.groups.flatMap((g) => g.reports.map((r) => r.text)),
      ...set.apart.flatMap((p) => [p.a, p.b]),
    ]);
    expect(formsSplitSince(texts, 9, 10).split).toBe(0);
  });
});

describe("normalizer 10: splits no version-9 form of the dev set", () => {
  test("every text of the dev set (cases, queries, negatives, distractor pairs): one version-10 form per version-9 form", () => {
    const texts = devsetTexts(loadDevset());
    // Counted, not listed: the holdout split's texts are not printed.
    const { split } = formsSplitSince(texts, 9, 10);
    expect({ texts: texts.length, split }).toEqual({ texts: texts.length, split: 0 });
  }, 30_000);
});

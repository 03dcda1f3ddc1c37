// Normalizer version 10 (error-normalizer-v10.ts, frozen since version 11): version 9's form, with Node's process id before a
// warning and GCC's and Clang's include chain above a compiler error dropped first. Each rule with
// real reports: pairs of reports of one error from the external sets
// (test/fixtures/fingerprint-real-variants*.json: the fourth, which the rules were written from in
// session 15, and the fifth, gathered after them in session 16) that version 9 gave two forms and
// version 10 gives one; and the different errors a rule must keep apart. Then the sets whole: no
// apart pair collides, no group version 9 joined is split; and version 10 splits no version-9 form
// among the dev set's texts or the external sets' texts.
import { describe, expect, test } from "bun:test";
import { loadDevset } from "../../test/support/devset.ts";
import { canonicalLink, heldByEarlierSets, loadRealVariantSets, reportTextIn, setShapeProblems } from "../../test/support/real-variants.ts";
import { describeVersionOnRealText, joinTests, pairTests } from "../../test/support/normalizer-versions.ts";
import { normalizeError } from "./fingerprint.ts";

// The sets gathered before version 10 was released; the sixth (gathered after) measures version 10
// out of sample and is checked by error-normalizer-v11.test.ts.
const sets = loadRealVariantSets(["first", "second", "third", "fourth", "fifth"]);
const report = reportTextIn(sets);

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
  joinTests(10, V10_JOINS, report);
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
  pairTests(10, V10_APART, false);
  test("a Python traceback's 'from … import …' line is no include chain (the fifth set's _ctypes group)", () => {
    const traceback = report("python-no-module-named-ctypes", 2);
    expect(traceback).toContain("    from _ctypes import Union, Structure, Array");
    expect(normalizeError(traceback, 10)).toBe(normalizeError(traceback, 9));
  });
  test("a report that is nothing but a process id or an include chain keeps version 9's form", () => {
    for (const text of ["(node:12345)", "In file included from kernel.h:3,\n                 from kernel.c:1:"]) {
      expect(normalizeError(text, 10)).toBe(normalizeError(text, 9));
    }
  });
  test("a shared library's soname version stays (not adopted: libssl.so.1.1 and libssl.so.3 are different errors)", () => {
    const a = "error while loading shared libraries: libboost_system.so.1.58.0: cannot open shared object file: No such file or directory";
    const b = "error while loading shared libraries: libboost_system.so.1.62.0: cannot open shared object file: No such file or directory";
    expect(normalizeError(a, 10)).not.toBe(normalizeError(b, 10));
  });
});

describeVersionOnRealText(10, sets, [], "version 10 splits no version-9 form among the external sets' texts");

// The fifth external set (test/fixtures/fingerprint-real-variants-5.json): gathered in session 16,
// after version 9 and session 15's candidates, from other errors than the first four sets and the
// dev set. Its figures are version 9's and the candidates' out-of-sample figures (docs/fingerprint.md,
// Version 10).
describe("the fifth external set of real reports", () => {
  const fifth = sets.find((s) => s.name === "fifth")!.set;
  const earlier = sets.filter((s) => s.name !== "fifth").map((s) => s.set);
  test("at least 25 groups and 150 reports of 2 or more per group, 8 apart pairs, every report with its link, ids unique across the sets", () => {
    expect(
      setShapeProblems(
        fifth,
        sets.map((s) => s.set),
        /^https?:\/\//,
      ),
    ).toEqual([]);
  });
  test("no link, text or version-9 form of the first four sets", () => {
    const { links, forms } = heldByEarlierSets(earlier, 9);
    const texts = fifth.groups.flatMap((g) => g.reports.map((r) => ({ id: g.id, text: r.text, link: r.source })));
    expect(texts.filter((t) => links.has(canonicalLink(t.link))).map((t) => t.id)).toEqual([]);
    expect(texts.filter((t) => forms.has(normalizeError(t.text, 9))).map((t) => t.id)).toEqual([]);
  });
  test("no report is a dev-set case: the only reports sharing version 9's form with a case's text are those version 9 reads as setuptools' closing line", () => {
    const devset = loadDevset();
    const caseForms = new Set<string>();
    for (const c of devset.cases) for (const t of [c.error_line, ...c.queries.map((q) => q.text)]) caseForms.add(normalizeError(t, 9));
    // Group ids and this one known form only: the holdout split's texts are not printed.
    const overlapping = fifth.groups.flatMap((g) =>
      g.reports.filter((r) => caseForms.has(normalizeError(r.text, 9))).map((r) => ({ id: g.id, text: r.text })),
    );
    expect([...new Set(overlapping.map((o) => o.id))].sort()).toEqual(["gcc-ffi-h-missing", "gcc-lxml-libxml-xmlversion-h-missing"]);
    for (const o of overlapping) expect(normalizeError(o.text, 9)).toBe("command gcc failed with exit status 1");
  }, 30_000);
});

// The seventh external set of real reports (test/fixtures/fingerprint-real-variants-7.json): gathered in
// session 18 after normalizer 11, stratified across the miss classes issue 16 lists (each group's
// `stratum`), from other errors than the dev set's and with no report of sets 1 to 6. Version 11's
// figures on it are out of sample (bench/RESULTS.md "Session 18").
import { describe, expect, test } from "bun:test";
import { loadDevset } from "../../test/support/devset.ts";
import {
  canonicalLink,
  heldByEarlierSets,
  loadRealVariantSets,
  realVariantFigures,
  setShapeProblems,
} from "../../test/support/real-variants.ts";
import { normalizeError } from "./fingerprint.ts";

const sets = loadRealVariantSets();
const seventh = sets.find((s) => s.name === "seventh")!.set;
const earlier = sets.filter((s) => s.name !== "seventh").map((s) => s.set);
const seventhTexts = [
  ...seventh.groups.flatMap((g) => g.reports.map((r) => ({ text: r.text, link: r.source }))),
  ...seventh.apart.flatMap((p) => [
    { text: p.a, link: p.source_a },
    { text: p.b, link: p.source_b },
  ]),
];

describe("the seventh external set of real reports", () => {
  test("at least 20 groups and 120 reports of 2 or more per group, 8 apart pairs, every report with its link and a stratum, ids unique across the sets", () => {
    expect(setShapeProblems(seventh, [...earlier, seventh], /^https:\/\/github\.com\//, { groups: 20, reports: 120 })).toEqual([]);
    const strata = new Set(["logger", "runner", "framework", "outer-inner", "quoting", "paths", "user-files", "version"]);
    expect(seventh.groups.filter((g) => !strata.has(g.stratum ?? "")).map((g) => g.id)).toEqual([]);
    // Every class of issue 16 has at least one group.
    expect(new Set(seventh.groups.map((g) => g.stratum)).size).toBe(strata.size);
  });
  test("no link, text or version-11 form of the first six sets", () => {
    const { links, texts, forms } = heldByEarlierSets(earlier, 11);
    expect(seventhTexts.filter((t) => links.has(canonicalLink(t.link)))).toEqual([]);
    expect(seventhTexts.filter((t) => texts.has(t.text))).toEqual([]);
    expect(seventhTexts.filter((t) => forms.has(normalizeError(t.text, 11)))).toEqual([]);
  });
  test("no report shares a dev-set case's version-11 form (the errors of the tune split were dropped whole)", () => {
    const devset = loadDevset();
    const caseForms = new Set<string>();
    for (const c of devset.cases) for (const t of [c.error_line, ...c.queries.map((q) => q.text)]) caseForms.add(normalizeError(t, 11));
    // Forms only: the holdout split's texts are not printed.
    expect(seventhTexts.filter((t) => caseForms.has(normalizeError(t.text, 11))).length).toBe(0);
  }, 30_000);
  test("version 11 out of sample, as measured before version 12 was written: 220 of 543 pairs, 3 of 21 groups, no apart pair colliding", () => {
    const v11 = realVariantFigures(seventh, 11);
    expect({ joined: v11.joined, pairs: v11.pairs, whole: v11.wholeGroups, collided: v11.collided }).toEqual({
      joined: 220,
      pairs: 543,
      whole: 3,
      collided: [],
    });
  });
});

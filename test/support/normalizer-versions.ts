// The checks every normalizer version makes against the version before it on real text, written
// once: each version's test file (src/core/error-normalizer-vN.test.ts) registers them with its own
// list of the older forms it splits on purpose.
import { describe, expect, test } from "bun:test";
import type { NormalizerVersion } from "../../src/core/fingerprint.ts";
import { normalizeError } from "../../src/core/fingerprint.ts";
import { cpuMsSince } from "./cpu-time.ts";
import { loadDevset } from "./devset.ts";
import { devsetTexts, formsSplitSince, type loadRealVariantSets } from "./real-variants.ts";

/**
 * On the external sets `sets` (the version's test file chooses which): every apart pair stays apart, every group the older version joined stays
 * joined, and the older forms split among the sets' texts are exactly `intendedSplits` (titled
 * `splitsTitle`). On the dev set: no older form is split (counted, never listed: the holdout's
 * texts are not printed).
 */
export function describeVersionOnRealText(
  version: NormalizerVersion,
  sets: ReturnType<typeof loadRealVariantSets>,
  intendedSplits: string[],
  splitsTitle: string,
): void {
  const older = (version - 1) as NormalizerVersion;
  describe(`normalizer ${version}: the external sets of real reports`, () => {
    for (const { name, set } of sets) {
      for (const p of set.apart) {
        test(`${name} set, ${p.id}: apart (${p.note})`, () => {
          expect(normalizeError(p.a, version)).not.toBe(normalizeError(p.b, version));
        });
      }
      for (const g of set.groups) {
        if (new Set(g.reports.map((r) => normalizeError(r.text, older))).size !== 1) continue;
        test(`${name} set, ${g.id}: joined by version ${older}, still one normal form`, () => {
          expect(new Set(g.reports.map((r) => normalizeError(r.text, version))).size).toBe(1);
        });
      }
    }
    test(splitsTitle, () => {
      const texts = sets.flatMap(({ set }) => [
        ...set.groups.flatMap((g) => g.reports.map((r) => r.text)),
        ...set.apart.flatMap((p) => [p.a, p.b]),
      ]);
      expect(
        formsSplitSince(texts, older, version)
          .splitForms.map((f) => f.older)
          .sort(),
      ).toEqual([...intendedSplits].sort());
    });
  });

  describe(`normalizer ${version}: splits no version-${older} form of the dev set`, () => {
    test(`every text of the dev set (cases, queries, negatives, distractor pairs): one version-${version} form per version-${older} form`, () => {
      const texts = devsetTexts(loadDevset());
      const { split } = formsSplitSince(texts, older, version);
      expect({ texts: texts.length, split }).toEqual({ texts: texts.length, split: 0 });
    }, 30_000);
  });
}

/** `unit` repeated to exactly 1 MB: the hostile inputs of the versions' CPU-time tests. */
export function filledMegabyte(unit: string): string {
  const MB = 1 << 20;
  return unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
}

/**
 * One test per hostile input: normalizing it costs under 2 s of CPU (CPU time, not wall time: the
 * suite's lanes share the cores).
 */
export function linearTimeTests(hostile: [string, string][]): void {
  for (const [name, text] of hostile) {
    test(name, () => {
      const t0 = process.cpuUsage();
      normalizeError(text);
      expect(cpuMsSince(t0)).toBeLessThan(2_000);
    }, 30_000);
  }
}

/**
 * [rule, group, i, j]: two reports of one error (`report(group, i)`) that the version before gave
 * two forms and `version` gives one.
 */
export function joinTests(
  version: NormalizerVersion,
  joins: [string, string, number, number][],
  report: (id: string, i: number) => string,
): void {
  const older = (version - 1) as NormalizerVersion;
  for (const [rule, id, i, j] of joins) {
    test(`${rule} (${id} ${i}, ${j})`, () => {
      expect(normalizeError(report(id, i), version)).toBe(normalizeError(report(id, j), version));
      expect(normalizeError(report(id, i), older)).not.toBe(normalizeError(report(id, j), older));
    });
  }
}

/** [rule, a, b]: two texts `version` gives one form (`together`) or two (apart). */
export function pairTests(version: NormalizerVersion, pairs: [string, string, string][], together: boolean): void {
  for (const [rule, a, b] of pairs) {
    test(rule, () => {
      if (together) expect(normalizeError(a, version)).toBe(normalizeError(b, version));
      else expect(normalizeError(a, version)).not.toBe(normalizeError(b, version));
    });
  }
}

// Schema of the retrieval dev set (eval/devset.json): every case is publishable as a Trail, has a
// source link, a split and queries of known kinds; ids and texts are unique; a case's queries live
// in its own split only. No retrieval here: bench/devset.bench.ts measures.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { OS_VALUES, parseTrail } from "../src/core/trail";
import { trailFromCase } from "./support/case-trail";
import { ECOSYSTEMS, expectedSplits, loadDevset, QUERY_KINDS, SPLITS, VARIANT_RELATIONS } from "./support/devset";

const set = loadDevset();
const URL = /^https:\/\/[^\s]+$/;
const isUrl = (s: unknown) => typeof s === "string" && URL.test(s);

describe("eval/devset.json", () => {
  test("cases carry the shared corpus fields, a source link, a split and a publishable trail", () => {
    const problems: string[] = [];
    for (const c of set.cases) {
      const where = c.id;
      if (!/^d\d{3,}$/.test(c.id)) problems.push(`${where}: id`);
      if (!(SPLITS as readonly string[]).includes(c.split)) problems.push(`${where}: split ${c.split}`);
      if (!(ECOSYSTEMS as readonly string[]).includes(c.ecosystem)) problems.push(`${where}: ecosystem ${c.ecosystem}`);
      if (!(OS_VALUES as readonly string[]).includes(c.os)) problems.push(`${where}: os ${c.os}`);
      if (!isUrl(c.source)) problems.push(`${where}: source ${c.source}`);
      if (!c.error_line.trim() || !c.root_cause.trim() || !c.runtime) problems.push(`${where}: empty error_line/root_cause/runtime`);
      const parsed = parseTrail(trailFromCase(c));
      if (!parsed.ok) problems.push(`${where}: trail ${JSON.stringify(parsed.details)}`);
    }
    expect(problems).toEqual([]);
  });

  test("queries: known kinds, sources, real variants first, the shared fields mirror the first of each kind", () => {
    const problems: string[] = [];
    for (const c of set.cases) {
      const real = c.queries.filter((q) => !q.derived);
      for (const q of c.queries) {
        if (!(QUERY_KINDS as readonly string[]).includes(q.kind)) problems.push(`${c.id}: kind ${q.kind}`);
        if (!q.text.trim()) problems.push(`${c.id}: empty ${q.kind}`);
        if (q.text === c.error_line) problems.push(`${c.id}: a ${q.kind} repeats the error line`);
        // Only hand-written paraphrases may lack a source.
        if (q.kind !== "paraphrase" && !isUrl(q.source)) problems.push(`${c.id}: ${q.kind} without source`);
        if (q.kind === "paraphrase" && q.source !== null && !isUrl(q.source)) problems.push(`${c.id}: paraphrase source`);
        if (q.derived !== undefined && (q.kind !== "variant" || !set.wrappers[q.derived])) problems.push(`${c.id}: derived ${q.derived}`);
      }
      for (const kind of ["variant", "paraphrase"] as const) {
        if (!real.some((q) => q.kind === kind)) problems.push(`${c.id}: no real ${kind}`);
      }
      for (const kind of QUERY_KINDS) {
        const first = real.find((q) => q.kind === kind)?.text ?? null;
        if ((c[kind] ?? null) !== first) problems.push(`${c.id}: ${kind} field is not the first ${kind} query`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("every variant carries a relation to its error line; other kinds carry none (eval/README.md, Variant relations)", () => {
    const problems: string[] = [];
    for (const c of set.cases) {
      c.queries.forEach((q, i) => {
        const where = `${c.id}#${i}`;
        if (q.kind !== "variant") {
          if (q.relation !== undefined || q.relation_note !== undefined) problems.push(`${where}: ${q.kind} with a relation`);
          return;
        }
        if (!(VARIANT_RELATIONS as readonly string[]).includes(q.relation as string)) problems.push(`${where}: relation ${q.relation}`);
        // A derived variant is the real line inside a documented wrapper: surroundings only.
        if (q.derived !== undefined && q.relation !== "same") problems.push(`${where}: derived but ${q.relation}`);
        if (q.relation_note !== undefined && (typeof q.relation_note !== "string" || !q.relation_note.trim())) {
          problems.push(`${where}: empty relation_note`);
        }
      });
    }
    expect(problems).toEqual([]);
    // Every relation is used in both halves, so the bench reports each per split.
    for (const split of SPLITS) {
      const used = new Set(set.cases.filter((c) => c.split === split).flatMap((c) => c.queries.map((q) => q.relation)));
      expect([split, VARIANT_RELATIONS.filter((r) => used.has(r))]).toEqual([split, [...VARIANT_RELATIONS]]);
    }
  });

  test("ids and error lines are unique; no text is shared across the split", () => {
    const ids = [...set.cases.map((c) => c.id), ...set.negatives.map((n) => n.id), ...set.distractors.map((d) => d.id)];
    expect(new Set(ids).size).toBe(ids.length);
    const lines = set.cases.map((c) => c.error_line);
    expect(new Set(lines).size).toBe(lines.length);
    // Variants of one error never straddle the split: a text may recur only within one split.
    const splitOf = new Map<string, Set<string>>();
    const note = (text: string, split: string) => splitOf.set(text, (splitOf.get(text) ?? new Set()).add(split));
    for (const c of set.cases) {
      note(c.error_line, c.split);
      for (const q of c.queries) note(q.text, c.split);
    }
    const straddling = [...splitOf].filter(([, s]) => s.size > 1).map(([t]) => t.slice(0, 80));
    expect(straddling).toEqual([]);
  });

  test("the split is about 60/40 and every ecosystem appears in both halves", () => {
    const tune = set.cases.filter((c) => c.split === "tune").length;
    expect(tune / set.cases.length).toBeGreaterThan(0.5);
    expect(tune / set.cases.length).toBeLessThan(0.7);
    for (const eco of ECOSYSTEMS) {
      const splits = new Set(set.cases.filter((c) => c.ecosystem === eco).map((c) => c.split));
      expect([eco, [...splits].sort()]).toEqual([eco, ["holdout", "tune"]]);
    }
  });

  test("every case and negative sits in the split its id gives it (eval/README.md, The split)", () => {
    const expected = expectedSplits(set, (s) => createHash("sha256").update(s).digest("hex"));
    const wrong = [...set.cases, ...set.negatives].filter((x) => expected.get(x.id) !== x.split).map((x) => `${x.id}: ${x.split}`);
    expect(wrong).toEqual([]);
  });

  test("negatives are real lines with sources, unrelated to every case text", () => {
    const caseTexts = new Set(set.cases.flatMap((c) => [c.error_line, ...c.queries.map((q) => q.text)]));
    for (const n of set.negatives) {
      expect(n.id).toMatch(/^n\d{3,}$/);
      expect(isUrl(n.source)).toBe(true);
      expect((SPLITS as readonly string[]).includes(n.split)).toBe(true);
      expect(n.text.trim().length).toBeGreaterThan(0);
      expect(caseTexts.has(n.text)).toBe(false);
    }
  });

  test("distractor pairs are two different errors with sources", () => {
    for (const d of set.distractors) {
      expect(["class", "code", "message"]).toContain(d.differ);
      expect(d.a).not.toBe(d.b);
      expect(isUrl(d.source_a) && isUrl(d.source_b)).toBe(true);
    }
  });
});

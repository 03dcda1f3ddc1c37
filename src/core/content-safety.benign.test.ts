// Ordinary developer text must come out of the content-safety screens untouched: redaction
// changes nothing and counts nothing, injection screening finds nothing. The corpus ships with
// the tests (test/fixtures/benign-error-text.json); the shared dev set is checked too when it is
// present beside the checkout, and skipped otherwise.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { redactText } from "./redaction.ts";
import { detectInjection } from "./injection.ts";
import { injectionFindings } from "./rejection.ts";
import { readingText } from "./reading-order.ts";
import type { Trail } from "./trail.ts";
import { Prng } from "../../test/support/prng.ts";
import { loadBenignCorpus } from "../../test/support/benign-corpus.ts";
import { loadDevset } from "../../test/support/devset.ts";
import { trailFromCase } from "../../test/support/case-trail.ts";

const REPO = resolve(import.meta.dir, "../..");
const corpus = loadBenignCorpus();
const texts = Object.entries(corpus).flatMap(([group, list]) =>
  Array.isArray(list) ? list.map((text, i) => ({ where: `${group}/${i}`, text })) : [],
);

describe("benign corpus (test/fixtures/benign-error-text.json)", () => {
  test("holds error lines, fixes, commands, diffs and config snippets", () => {
    for (const group of ["errors", "fixes", "commands", "diffs", "config"]) expect((corpus[group] as string[]).length).toBeGreaterThan(10);
  });
  test("redaction changes nothing", () => {
    const changed = texts.filter((t) => redactText(t.text).text !== t.text).map((t) => `${t.where}: ${redactText(t.text).text}`);
    expect(changed).toEqual([]);
  });
  test("injection screening finds nothing", () => {
    const flagged = texts
      .filter((t) => detectInjection(t.text).length > 0)
      .map((t) => `${t.where}: ${JSON.stringify(detectInjection(t.text))}`);
    expect(flagged).toEqual([]);
  });
});

// Screening also reads adjacent fields joined, as an agent reads a trail's JSON (reading-order.ts):
// ordinary texts side by side must stay clean too, whichever order they meet in.
describe("benign texts read together (adjacent fields joined as a reader sees them)", () => {
  const orders = (list: string[]) => {
    const rng = new Prng(12);
    const shuffled = (xs: string[]) => {
      const out = [...xs];
      for (let i = out.length - 1; i > 0; i--) {
        const j = rng.int(0, i);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    };
    return [list, [...list].reverse(), shuffled(list), shuffled(list), shuffled(list)];
  };
  const flaggedPairs = (list: string[]) => {
    const flagged: string[] = [];
    for (const order of orders(list)) {
      for (let i = 0; i + 1 < order.length; i++) {
        const joined = readingText([order[i]!, order[i + 1]!].map((text) => ({ path: "/problem/x", text })));
        if (detectInjection(joined).length > 0)
          flagged.push(`${JSON.stringify(joined.slice(0, 200))}: ${JSON.stringify(detectInjection(joined))}`);
      }
    }
    return flagged;
  };
  test("every pair of benign corpus texts, in five orders, raises nothing", () => {
    expect(flaggedPairs(texts.map((t) => t.text))).toEqual([]);
  });
  // The project's dev set, tune split only (issue 16): error lines, root causes, steps, commands,
  // patches and negatives side by side; and trails whose fields come from neighbouring cases.
  const dev = loadDevset();
  const tune = dev.cases.filter((c) => c.split === "tune");
  test("every pair of tune-split dev texts, in five orders, raises nothing", () => {
    const list = [
      ...tune.flatMap((c) => [c.error_line, c.root_cause, ...c.steps, ...c.commands, ...c.patches.map((p) => p.diff)]),
      ...dev.negatives.filter((n) => n.split === "tune").map((n) => n.text),
    ].filter((t): t is string => typeof t === "string" && t.length > 0);
    expect(list.length).toBeGreaterThan(300);
    expect(flaggedPairs(list)).toEqual([]);
  });
  test("trails mixing the fields of neighbouring tune cases raise nothing", () => {
    const flagged: string[] = [];
    for (let i = 0; i < tune.length; i++) {
      const a = trailFromCase(tune[i]!);
      const b = trailFromCase(tune[(i + 1) % tune.length]!);
      const mixed: Trail = {
        ...a,
        problem: {
          ...a.problem,
          description: b.problem.root_cause,
          dead_ends: (b.solution.steps ?? []).slice(0, 3).map((attempt, k) => ({ attempt, result: b.solution.commands?.[k] })),
        },
        solution: {
          ...a.solution,
          steps: [...(a.solution.steps ?? []), ...(b.solution.steps ?? [])].slice(0, 50),
          commands: [...(b.solution.commands ?? []), ...(a.solution.commands ?? [])].slice(0, 50),
          verification: b.problem.error,
        },
      };
      const found = injectionFindings(mixed);
      if (found.length > 0) flagged.push(`${tune[i]!.id}: ${JSON.stringify(found)}`);
    }
    expect(tune.length).toBeGreaterThan(30);
    expect(flagged).toEqual([]);
  });
});

// Optional: the shared dev set (never required; a public clone does not have it).
const DEV_SET = [process.env.COLONY_SHARED_DIR, join(REPO, "shared"), join(REPO, "../shared")]
  .filter((d): d is string => !!d)
  .map((d) => join(d, "eval/errors-dev.json"))
  .find((f) => existsSync(f));

describe.skipIf(DEV_SET === undefined)("shared dev set, when present", () => {
  test("injection screening finds nothing in any error line, fix, command, patch or negative", () => {
    const dev = JSON.parse(readFileSync(DEV_SET!, "utf8")) as {
      cases: {
        id: string;
        error_line: string;
        root_cause: string;
        variant: string;
        paraphrase: string;
        related: string | null;
        steps: string[];
        commands: string[];
        patches: { diff: string }[];
      }[];
      negatives: string[];
    };
    const all: string[] = [...dev.negatives];
    for (const c of dev.cases)
      all.push(
        c.error_line,
        c.root_cause,
        c.variant,
        c.paraphrase,
        c.related ?? "",
        ...c.steps,
        ...c.commands,
        ...c.patches.map((p) => p.diff),
      );
    expect(all.filter((t) => detectInjection(t).length > 0)).toEqual([]);
  });
});

// Ordinary developer text must come out of the content-safety screens untouched: redaction
// changes nothing and counts nothing, injection screening finds nothing. The corpus ships with
// the tests (test/fixtures/benign-error-text.json); the shared dev set is checked too when it is
// present beside the checkout, and skipped otherwise.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { redactText } from "./redaction.ts";
import { detectInjection } from "./injection.ts";

const REPO = resolve(import.meta.dir, "../..");
const corpus = JSON.parse(readFileSync(join(REPO, "test/fixtures/benign-error-text.json"), "utf8")) as Record<string, string[] | string>;
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

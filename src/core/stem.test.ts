import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "../../test/support/paths";
import { porterStem } from "./stem";

test("Porter stems of real error reports' words are the reference implementation's", () => {
  // test/fixtures/porter-stems.json: Snowball's `porter` stemmer on the paper's examples and on the
  // prose words of the two external sets of real error reports.
  const { stems } = JSON.parse(readFileSync(join(REPO_DIR, "test/fixtures/porter-stems.json"), "utf8")) as {
    stems: Record<string, string>;
  };
  const words = Object.keys(stems);
  expect(words.length).toBeGreaterThan(1000);
  const wrong = words.filter((w) => porterStem(w) !== stems[w]).map((w) => `${w}: ${porterStem(w)} != ${stems[w]}`);
  expect(wrong).toEqual([]);
});

test("the forms of one word in error text share a stem", () => {
  const same = (...words: string[]) => expect(new Set(words.map(porterStem)).size).toBe(1);
  same("authenticate", "authentication", "authenticated", "authenticating");
  same("connection", "connections", "connect", "connected", "connecting");
  same("dependency", "dependencies");
  same("permission", "permissions");
  same("refused", "refuse", "refusing");
  same("failed", "fails", "failing", "fail");
  same("compile", "compiled", "compilation", "compiler");
  same("install", "installed", "installation", "installing");
  expect(porterStem("is")).toBe("is");
});

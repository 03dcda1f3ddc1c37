import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "../../test/support/paths";
import {
  LEXICAL_VERSION,
  lexicalDocument,
  lexicalIndexTokens,
  lexicalQuery,
  lexicalTokens,
  MAX_TOKEN_CHARS,
  setLexicalStems,
  wordTokens,
} from "./lexical";

test("identifiers are kept whole and split into parts", () => {
  expect(lexicalTokens("Error [ERR_REQUIRE_ESM]: require() of ES Module")).toEqual(
    expect.arrayContaining(["err_require_esm", "err", "require", "esm", "es", "module"]),
  );
  expect(lexicalTokens("libGL.so.1: cannot open shared object file")).toEqual(
    expect.arrayContaining(["libgl_so_1", "libgl", "so", "1", "shared", "object", "file"]),
  );
  expect(lexicalTokens("error[E0382]: borrow of moved value")).toContain("e0382");
  expect(lexicalTokens("getServerSideProps is not a function")).toEqual(
    expect.arrayContaining(["getserversideprops", "get", "server", "side", "props", "function"]),
  );
  expect(lexicalTokens("HTTPServerError")).toEqual(expect.arrayContaining(["httpservererror", "http", "server", "error"]));
});

test("stop words go, punctuation goes, case folds", () => {
  expect(lexicalTokens("The file is not found.")).toEqual(["file", "found"]);
});

test("FTS5 syntax in the input cannot reach the query", () => {
  const q = lexicalQuery(`x" OR 1=1; NEAR(a b) * -col:"y ^z AND NOT {a} '); DROP TABLE trails;--`)!;
  for (const token of q.split(" OR ")) expect(token).toMatch(/^"[\p{L}\p{N}_]+"$/u);
  expect(lexicalQuery("... --- !!!")).toBeNull();
  expect(lexicalQuery("")).toBeNull();
});

test("bounded on hostile input", () => {
  expect(lexicalTokens("a_".repeat(40_000)).length).toBeLessThanOrEqual(400);
  expect(lexicalTokens("x".repeat(65_536)).length).toBe(1);
});

test("no token is longer than 200 characters (PostgreSQL's B-tree entries hold 2,704 bytes)", () => {
  const cjk = Array.from({ length: 1980 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20000))).join("");
  for (const text of [`ValueError: ${cjk}`, "x".repeat(65_536), `blob ${"Qx9_".repeat(1000)} end`, "𝐀".repeat(500)]) {
    const tokens = lexicalTokens(text);
    for (const t of tokens) expect(Array.from(t).length).toBeLessThanOrEqual(MAX_TOKEN_CHARS);
    expect(tokens.length).toBeGreaterThan(0);
  }
  expect(lexicalTokens(`ValueError: ${cjk}`)).toContain(Array.from(cjk).slice(0, 200).join(""));
});

test("tokens are the ones existing lexical indexes were built with", () => {
  // Recorded before the tokenizer's fast path and memo (test/fixtures/lexical-tokens.json): an
  // index stores these tokens, so a change would leave stored trails unmatched by new queries.
  // They are LEXICAL_VERSION 1's: a release that changes them bumps the version (stored indexes
  // are then rebuilt at start, service/lexical-rebuild.ts) and records the fixture again.
  expect(LEXICAL_VERSION).toBe(1);
  const { cases } = JSON.parse(readFileSync(join(REPO_DIR, "test/fixtures/lexical-tokens.json"), "utf8")) as {
    cases: { text: string; tokens: string[] }[];
  };
  expect(cases.length).toBeGreaterThan(150);
  for (const { text, tokens } of cases) {
    expect(lexicalTokens(text)).toEqual(tokens);
    expect(lexicalTokens(text)).toEqual(tokens); // the memo, warm
    // What the stores index and are queried by, with the stemming experiment off (as shipped).
    expect(lexicalDocument(text)).toBe(tokens.join(" "));
    expect(lexicalIndexTokens(text)).toEqual(tokens);
  }
});

/** Runs `fn` with the stemming experiment on (bench/RESULTS.md, Session 12). */
function withStems<T>(fn: () => T): T {
  setLexicalStems(true);
  try {
    return fn();
  } finally {
    setLexicalStems(false);
  }
}

test("with the stemming experiment on, prose words add their stem and identifiers stay as written", () => {
  // Real wordings of one error (PostgreSQL, npm, Python reports): the word forms differ, the stems meet.
  const stemsOf = (text: string) => withStems(() => lexicalIndexTokens(text)).filter((t) => !lexicalTokens(text).includes(t));
  expect(withStems(() => lexicalIndexTokens('FATAL: password authentication failed for user "postgres"'))).toEqual([
    "fatal",
    "password",
    "authentication",
    "authent",
    "failed",
    "fail",
    "user",
    "postgres",
    "postgr",
  ]);
  const query = new Set(withStems(() => lexicalIndexTokens("psql fails to authenticate the postgres user")));
  expect(["authent", "fail", "postgres", "user"].every((t) => query.has(t))).toBe(true);
  expect(stemsOf("Error: ECONNREFUSED 127.0.0.1:5432, connections refused")).toEqual(["connect", "refus"]);
  expect(stemsOf("npm ERR! Could not resolve dependency: peer dependencies conflict")).toEqual(["resolv", "depend", "depend"]);
  // Codes, identifiers and words of three letters get no stem.
  expect(stemsOf("Error [ERR_REQUIRE_ESM] EACCES getServerSideProps libGL.so.1 HTTPServer ran npm")).toEqual([]);
  // Without the experiment the index tokens are lexicalTokens.
  expect(lexicalIndexTokens("password authentication failed")).toEqual(["password", "authentication", "failed"]);
});

test("the fast path and the memo give each word's own tokens", () => {
  // Words drawn from what identifiers are made of: cases, digits, separators, non-ASCII letters.
  const alphabet = ["a", "z", "Q", "X", "0", "7", "_", ".", "-", "é", "Ω", "ǅ", "ß", "İ", "µ"];
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20_000; i++) {
    const word = Array.from({ length: 1 + Math.floor(next() * 12) }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
    // The text is the word alone only where the word pattern takes it whole.
    const words = [...word.normalize("NFKC").matchAll(/[\p{L}\p{N}_][\p{L}\p{N}_.-]*[\p{L}\p{N}_]|[\p{L}\p{N}_]/gu)].map((m) => m[0]);
    const expected = words.flatMap((w) => wordTokens(w));
    expect(lexicalTokens(word)).toEqual(expected);
    expect(lexicalTokens(word)).toEqual(expected);
  }
});

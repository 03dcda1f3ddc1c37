import { expect, test } from "bun:test";
import { lexicalQuery, lexicalTokens } from "./lexical";

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

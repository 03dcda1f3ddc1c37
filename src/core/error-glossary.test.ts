// The error glossary (document expansion from installed documentation, an experiment that is off:
// bench/RESULTS.md, Session 14). Lines are real errors as agents paste them (public issue threads
// and forum questions of each tool), none from the dev set.
import { afterEach, expect, test } from "bun:test";
import { embeddingText, errorGlossaryText, lexicalFields } from "./enrichment";
import glossary from "./error-glossary.json" with { type: "json" };
import {
  ERROR_GLOSSARY_VERSION,
  GLOSSARY_EXPANSION_OFF,
  glossaryEntries,
  glossaryExpansion,
  MAX_GLOSSARY_ENTRIES,
  setGlossaryExpansion,
} from "./error-glossary";
import { lexicalIndexVersion, lexicalTokens } from "./lexical";
import type { Trail } from "./trail";

const ids = (text: string) => glossaryEntries(text).map((e) => e.id);

afterEach(() => setGlossaryExpansion({}));

test("errno names and errno messages are explained by the man pages' words", () => {
  expect(glossaryEntries("Error: EMFILE: too many open files, open '/app/node_modules/lodash/package.json'")).toEqual([
    {
      id: "EMFILE",
      text: expect.stringContaining("The per-process limit on the number of open file descriptors has been reached"),
    },
  ]);
  // No name, only the message (Python prints strerror): the message points to its name.
  expect(ids("OSError: [Errno 24] Too many open files: '/proc/self/fd'")).toEqual(["EMFILE", "OSError"]);
  // The longest message wins: ENFILE's contains EMFILE's.
  expect(ids("accept4: too many open files in system")).toEqual(["ENFILE"]);
  expect(ids("dial tcp 127.0.0.1:6379: connect: connection refused")).toEqual(["ECONNREFUSED"]);
  expect(glossaryEntries("Error: ENOSPC: no space left on device, write")[0]!.text).toContain("No space left on device");
});

test("Rust codes, Python and Java exceptions, signals, SQLSTATEs and PostgreSQL's files", () => {
  expect(glossaryEntries("error[E0499]: cannot borrow `v` as mutable more than once at a time")).toEqual([
    { id: "E0499", text: expect.stringContaining("borrowed as mutable more than once") },
  ]);
  expect(ids("ModuleNotFoundError: No module named 'requests'")).toEqual(["ModuleNotFoundError"]);
  expect(glossaryEntries('Exception in thread "main" java.lang.StackOverflowError')[0]!.text).toContain("stack overflow");
  expect(ids("Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)")).toEqual(["SIGSEGV"]);
  expect(glossaryEntries('SQLSTATE[42P01]: Undefined table: 7 ERROR:  relation "users" does not exist')).toEqual([
    { id: "SQLSTATE 42P01", text: "undefined table" },
  ]);
  expect(ids("ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)")).toEqual(["SQLSTATE 28000"]);
  expect(glossaryEntries('FATAL:  no pg_hba.conf entry for host "10.0.0.5", user "app", database "app", SSL off')[0]!.text).toContain(
    "host-based authentication",
  );
});

test("headers and shared libraries are explained by the description of the Debian package that ships them", () => {
  const python = glossaryEntries("src/_speedups.c:1:10: fatal error: Python.h: No such file or directory");
  expect(python.map((e) => e.id)).toEqual(["ENOENT", "Python.h"]);
  expect(python[1]!.text).toContain("extending the Python interpreter");
  expect(glossaryEntries("fatal error: openssl/ssl.h: No such file or directory")[1]).toEqual({
    id: "openssl/ssl.h",
    text: expect.stringContaining("Secure Sockets Layer toolkit - development files"),
  });
  // The linker's -lNAME and the loader's libNAME.so.N name the same library: its runtime package.
  expect(glossaryEntries("/usr/bin/ld: cannot find -lz: No such file or directory")[1]!.text).toContain("compression library - runtime");
  expect(ids("ImportError: libGL.so.1: cannot open shared object file: No such file or directory")).toEqual([
    "ENOENT",
    "ImportError",
    "libGL",
  ]);
  // A word that only looks like a linker flag: ls -la.
  expect(ids("ls -la: exit status 2")).toEqual([]);
});

test("identifiers common in their documentation are marked generic and can be left out", () => {
  const line = "OSError: [Errno 2] No such file or directory: 'config.yaml'";
  expect(ids(line)).toEqual(["ENOENT", "OSError"]);
  expect(glossaryEntries(line, true).map((e) => e.id)).toEqual(["OSError"]);
  expect(glossary.generic).toEqual(expect.arrayContaining(["EINVAL", "ENOENT", "ValueError", "TypeError"]));
  expect(glossary.generic).not.toContain("EMFILE");
});

test("what the glossary does not know, or cannot tell apart, adds nothing", () => {
  expect(ids("error: linker `cc` not found")).toEqual([]);
  // A bare five-digit number is a port, not a SQLSTATE; a class name alone is not an exception.
  expect(ids("connection to server at 10.0.0.5, port 28000 failed")).toEqual([]);
  expect(ids("Error: Cannot find module 'express'")).toEqual([]);
  // An errno message is matched as whole words: "broken pipe" is not in "broken pipeline".
  expect(ids("error: broken pipeline configuration in .gitlab-ci.yml")).toEqual([]);
  expect(ids("write /dev/stdout: broken pipe")).toEqual(["EPIPE"]);
  // Two Java classes of one simple name (java.net's and java.rmi's ConnectException) are kept by
  // neither: the glossary cannot tell which; the errno message still explains the line.
  expect(ids("java.net.ConnectException: Connection refused (Connection refused)")).toEqual(["ECONNREFUSED"]);
});

test("a text with many identifiers gets at most MAX_GLOSSARY_ENTRIES explanations", () => {
  const text = "EACCES EPERM ENOENT EEXIST EISDIR ENOTDIR ETIMEDOUT ECONNRESET";
  expect(ids(text)).toEqual(["EACCES", "EPERM", "ENOENT", "EEXIST"].slice(0, MAX_GLOSSARY_ENTRIES));
});

test("the glossary records where it was built from", () => {
  expect(glossary.version).toBe(ERROR_GLOSSARY_VERSION);
  for (const s of glossary.sources) expect(s.version).toMatch(/\d/);
  expect(glossary.sources.map((s) => s.package)).toEqual(
    expect.arrayContaining(["manpages-dev", "python3.11-doc", "rust-doc", "openjdk-17-doc", "postgresql-doc-15"]),
  );
});

const trail: Trail = {
  protocol_version: "1.0",
  problem: {
    error: "Error: EMFILE: too many open files, watch '/srv/app/src'",
    error_type: "EMFILE",
    root_cause: "The watcher opens a handle per file and hits the limit.",
  },
  solution: { summary: "Raise the limit (ulimit -n) or watch fewer files." },
  agent_info: { model: "test", framework: "test" },
  environment: { os: "linux", runtime: { name: "node" } },
};

test("off, as shipped: a trail's index text and embedding input are its own words", () => {
  expect(glossaryExpansion()).toEqual(GLOSSARY_EXPANSION_OFF);
  expect(lexicalFields(trail).body).not.toContain("descriptors");
  expect(embeddingText(trail)).not.toContain("descriptors");
  expect(lexicalIndexVersion()).not.toContain("glossary");
});

test("on, a trail's lexical body and embedding input carry its error's explanation, and the index version says so", () => {
  setGlossaryExpansion({ lexical: true });
  expect(errorGlossaryText(trail)).toContain("open file descriptors");
  const body = lexicalFields(trail).body.split(" ");
  for (const t of lexicalTokens(errorGlossaryText(trail))) expect(body).toContain(t);
  expect(lexicalFields(trail).error).not.toContain("descriptors");
  expect(embeddingText(trail)).not.toContain("descriptors");
  expect(lexicalIndexVersion()).toBe(`${lexicalIndexVersion().split("+")[0]}+glossary${ERROR_GLOSSARY_VERSION}`);

  setGlossaryExpansion({ vector: true });
  expect(embeddingText(trail)).toContain("open file descriptors");
  expect(lexicalFields(trail).body).not.toContain("descriptors");
});

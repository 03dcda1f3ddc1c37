// Normalizer version 6 (error-normalizer.ts): each rule with the tools' own messages as reports
// show them (none taken from the retrieval dev set). Every pair below is one error as two reports
// show it; version 5 kept them apart, version 6 joins them. The pairs after it are different errors
// the new rules could wrongly join: they must stay apart. Version 6 only rewrites version 5's normal
// form, so every pair version 5 joined stays joined (checked on the distractor corpus's 12,714 real
// error strings by bench/devset.bench.ts).
import { describe, expect, test } from "bun:test";
import { normalizeError } from "./fingerprint.ts";

/** [rule, a, b, where the wording comes from]: the same error in two reports. */
const V6_SAME: [string, string, string, string][] = [
  [
    "a version qualifier in parentheses after the message",
    "TypeError: Cannot read properties of undefined (reading 'map')",
    "TypeError: Cannot read properties of undefined (reading 'map') (version 3.2)",
    "V8's message; issue 16's own example of an inserted qualifier",
  ],
  [
    "the runtime and its version in brackets, Node.js written out",
    "Error: Cannot find module 'express' (node v20.11.1)",
    "Error: Cannot find module 'express' (Node.js 18.19.0)",
    "Node's resolver message as bug templates ask reporters to tag it",
  ],
  [
    "a documentation link after the message",
    "Error: listen EADDRINUSE: address already in use :::3000",
    "Error: listen EADDRINUSE: address already in use :::3000 see https://nodejs.org/api/errors.html#eaddrinuse",
    "Node's message; a wrapper that appends the errors page",
  ],
  [
    "a 'for more information' link",
    "error: externally-managed-environment",
    "error: externally-managed-environment. For more information, see https://peps.python.org/pep-0668/",
    "pip 23's message, with and without PEP 668's link",
  ],
  [
    "Maven's trailer on every failed build",
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.8.1:compile (default-compile) on project app: Fatal error compiling: invalid target release: 17 -> [Help 1]",
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.8.1:compile (default-compile) on project app: Fatal error compiling: invalid target release: 17",
    "Maven's build failure, with and without its help index",
  ],
  [
    "an environment variable bare and with its sigil",
    "ERROR: JAVA_HOME is set to an invalid directory: /usr/lib/jvm/java-11-openjdk-amd64",
    "ERROR: $JAVA_HOME is set to an invalid directory: C:\\Program Files\\Java\\jdk-11",
    "Gradle wrapper's check (gradlew), the variable as a reporter wrote it",
  ],
  [
    "PowerShell's $env: form",
    "ERROR: JAVA_HOME is not set and no 'java' command could be found in your PATH.",
    "ERROR: $env:JAVA_HOME is not set and no 'java' command could be found in your PATH.",
    "Gradle wrapper's check; the variable in PowerShell's syntax",
  ],
  [
    "Java: the index and the length are the program's values",
    "java.lang.ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0",
    'Exception in thread "main" java.lang.ArrayIndexOutOfBoundsException: Index 5 out of bounds for length 3',
    "the JDK's message (jdk.internal.util.Preconditions.outOfBounds)",
  ],
  [
    "Go: index out of range",
    "panic: runtime error: index out of range [5] with length 3",
    "panic: runtime error: index out of range [0] with length 0\n\ngoroutine 1 [running]:\nmain.main()\n\t/home/u/app/main.go:8 +0x1d",
    "the Go runtime's panic",
  ],
  [
    "Go: slice bounds",
    "panic: runtime error: slice bounds out of range [:5] with capacity 3",
    "panic: runtime error: slice bounds out of range [:12] with capacity 8",
    "the Go runtime's panic",
  ],
  [
    "Rust: index out of bounds",
    "thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 5', src/main.rs:4:5",
    "thread 'main' panicked at 'index out of bounds: the len is 0 but the index is 0', src/lib.rs:10:9",
    "the Rust standard library's panic",
  ],
  [
    "a forum title's status tag, and Go's panic label it left in front",
    "panic: sync: negative WaitGroup counter [solved]",
    "panic: sync: negative WaitGroup counter",
    "Go's sync package; a forum title marks the thread solved",
  ],
  [
    "a runner's status icon in front of the message",
    "⚠️ npm WARN deprecated request@2.88.2: request has been deprecated, see https://github.com/request/request/issues/3142",
    "npm WARN deprecated request@2.88.0: request has been deprecated, see https://github.com/request/request/issues/3142",
    "npm's deprecation warning, as a CI summary shows it with its icon",
  ],
  [
    "a return symbol left at the end of a copied terminal line",
    "listen tcp 0.0.0.0:8080: bind: address already in use ⏎",
    "listen tcp 127.0.0.1:8080: bind: address already in use",
    "Go's net package; fish prints ⏎ after output with no final newline",
  ],
];

/** [what must stay apart, a, b, why]: different errors. */
const V6_APART: [string, string, string, string][] = [
  [
    "the version a message is about stays (incompatible with, requires)",
    "Error: Node Sass version 5.0.0 is incompatible with ^4.0.0.",
    "Error: Node Sass version 5.0.0 is incompatible with",
    "the range is the message's object: version 6 keeps a version after with/than/requires/…",
  ],
  [
    "an exit status is not a bounds error's value",
    "error: command 'gcc' failed with exit status 1",
    "error: command 'gcc' failed with exit status 137",
    "137 is a kill (out of memory), 1 a compile error: numbers are folded only in bounds errors",
  ],
  [
    "a bounds error keeps its kind (index, slice)",
    "panic: runtime error: index out of range [5] with length 3",
    "panic: runtime error: slice bounds out of range [:5] with capacity 3",
    "two panics of the Go runtime",
  ],
  [
    "a bit width in a range error stays",
    "ValueError: field 2 out of range (need a 16-bit value)",
    "ValueError: field 2 out of range (need an 8-bit value)",
    "Python's struct/ipaddress words: the width names the field",
  ],
  [
    "a dollar sign that is no variable's stays: $( is a command substitution",
    "bash: $(whoami): command not found",
    "bash: whoami: command not found",
    "bash's message for a substitution and for a plain name",
  ],
  [
    "a link inside the message is not a trailing documentation link",
    "fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com",
    "fatal: unable to access 'https://github.com/x/y.git/': The requested URL returned error: 403",
    "git's two failures reaching a remote",
  ],
];

describe("normalizer 6: the same error, one fingerprint", () => {
  for (const [rule, a, b, where] of V6_SAME) {
    test(`${rule} (${where})`, () => {
      expect(normalizeError(b)).toBe(normalizeError(a));
      // Each pair is one version 6 joins, not one version 5 did already.
      expect(normalizeError(b, 5)).not.toBe(normalizeError(a, 5));
    });
  }
});

describe("normalizer 6: different errors stay apart", () => {
  for (const [what, a, b, why] of V6_APART) {
    test(`${what} (${why})`, () => {
      expect(normalizeError(b)).not.toBe(normalizeError(a));
    });
  }
});

describe("normalizer 6: only rewrites version 5's form", () => {
  test("a form none of its rules touches is version 5's", () => {
    for (const line of [
      "ModuleNotFoundError: No module named 'numpy'",
      "error[E0382]: borrow of moved value: `v`",
      "npm ERR! code ERESOLVE",
    ]) {
      expect(normalizeError(line)).toBe(normalizeError(line, 5));
    }
  });
});

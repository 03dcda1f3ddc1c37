// Normalizer version 9 (error-normalizer-v9.ts, frozen since version 10): version 8's form, with
// lines a log or a runtime adds around the message dropped first, git's banner over an SSH or repository failure read as the
// failure, Rust's stack overflow read whatever surrounds it, and a few folds of version 8's form.
// Each rule with real reports: pairs of reports of one error from the external sets
// (test/fixtures/fingerprint-real-variants*.json, most from the third, gathered after version 8) that
// version 8 gave two forms and version 9 gives one; reports from other public threads (linked) where
// the sets hold none; and the different errors a rule must keep apart. Then the sets whole: no apart
// pair collides, no group version 8 joined is split; and on every dev-set text version 9 splits no
// version-8 form (bench/fingerprint-real.ts lists the ones it splits among the external sets' texts).
import { describe, expect, test } from "bun:test";
import { loadDevset } from "../../test/support/devset.ts";
import { devsetTexts, formsSplitSince, loadRealVariantSets, reportTextIn } from "../../test/support/real-variants.ts";
import { normalizeError } from "./fingerprint.ts";

// The sets gathered before version 10 was released; the sixth (gathered after) measures version 10
// out of sample and is checked by error-normalizer-v11.test.ts.
const sets = loadRealVariantSets(["first", "second", "third", "fourth", "fifth"]);
const report = reportTextIn(sets);

/** [rule, group, i, j]: two reports of one error version 8 gave two forms; version 9 gives one. */
const V9_JOINS: [string, string, number, number][] = [
  // Lines dropped before version 8 reads the report.
  ["a client's copy of PostgreSQL's DETAIL on the message's line", "postgres-deadlock-detected", 1, 0],
  ["V8's GC trace, its stack-trace banners and native frames", "node-heap-limit-oom", 2, 0],
  ["V8's native frames alone after the message", "node-heap-limit-oom", 1, 0],
  ["V8's native frames with the node binary's path", "node-heap-limit-oom", 4, 3],
  ["Go's frames with registers (fp=, sp=, pc=)", "go-concurrent-map-read-and-write", 0, 1],
  ["PyTorch's three debugging hints after a CUDA error", "torch-cuda-device-side-assert", 0, 6],
  ["PyTorch's TORCH_USE_CUDA_DSA hint alone", "torch-cuda-device-side-assert", 4, 7],
  ["Spring Boot's log prefix (level, pid, ---, thread, logger)", "mysql-1213-deadlock-found", 5, 3],
  ["Python 2's u'' before the message in a tuple", "mysql-1205-lock-wait-timeout", 7, 6],
  [
    "Node's error-object fields (opensslErrorStack, library, reason, code) and its version trailer",
    "node-openssl-0308010c-unsupported",
    4,
    0,
  ],
  ["Node's error-object fields after the frames", "node-openssl-0308010c-unsupported", 5, 0],
  ["Apache's referer after PHP's message in the error log", "php-allowed-memory-size-exhausted", 1, 0],
  ["Python's REPL prompt and echo (>>>)", "python-importerror-libgl-so-1", 1, 0],
  ["apt's W: line beside its E: lines", "apt-lock-frontend-held-by-process", 3, 0],
  ["GitHub Actions' step header (Run …) and its exit line; the process holding apt's lock", "apt-lock-frontend-held-by-process", 2, 0],
  ["the process holding apt's lock (apt, linker64)", "apt-waiting-for-cache-lock", 1, 0],
  ["a client's path before the Docker daemon's answer (docker.exe on Windows)", "docker-container-name-in-use", 6, 4],
  ["dockerode's (HTTP code 409) unexpected - before the daemon's answer", "docker-container-name-in-use", 3, 4],
  ["an older daemon's bare container id in the name conflict", "docker-container-name-in-use", 5, 4],
  // Causes read anywhere in the report.
  ["git's banner over a rejected host key, the cause in a log's escaped strings", "git-ssh-host-key-verification-failed", 5, 0],
  ["Rust's stack overflow with a shell's abort after it", "rust-thread-overflowed-its-stack", 2, 0],
  ["Rust's stack overflow with ', aborting' (Rust 1.84 and later)", "rust-thread-overflowed-its-stack", 3, 0],
  ["Rust's stack overflow, a reporter's sentence before it", "rust-thread-overflowed-its-stack", 1, 0],
  ["Rust's stack overflow, a log's lines in reverse order", "rust-thread-overflowed-its-stack", 5, 0],
  ["Rust's stack overflow in another thread of the program", "rust-thread-overflowed-its-stack", 6, 2],
  // Folds of version 8's form.
  ["HTML's <br/> after the message", "pg-too-many-clients", 1, 0],
  ["Markdown bold around the message", "pg-too-many-clients", 2, 0],
  ["Markdown bold and italic around the message", "torch-tensors-on-two-devices", 4, 5],
  ["a terminal UI's box-drawing frame", "pg-password-auth-failed-postgres", 5, 1],
  ["the file an out-of-space error names", "python-errno-28-no-space-left", 1, 0],
  ["the file an out-of-quota error names (absolute)", "python-errno-122-disk-quota-exceeded", 3, 1],
  ["the file an out-of-quota error names (relative)", "python-errno-122-disk-quota-exceeded", 4, 1],
  ["a closing '!'", "go-all-goroutines-asleep-deadlock", 2, 0],
  ["an OSError's repr (ConnectionResetError(104, '…'))", "python-errno-104-connection-reset", 6, 0],
  ["requests' ('Connection aborted.', …) around the system error", "python-errno-104-connection-reset", 3, 0],
  ["Python 2's socket.error before the errno", "python-errno-104-connection-reset", 5, 0],
  ["a browser console's (at file:line:col) after the message", "node-import-statement-outside-module", 4, 0],
  ["log4j's [app - thread (time)] LEVEL logger(line) | prefix", "mysql-1213-deadlock-found", 0, 3],
  ["the socket path URL-encoded in Docker's request URL", "docker-socket-permission-denied", 0, 1],
  ["the user's package and script in npm's 'Failed at the … script'", "npm6-elifecycle-errno1", 0, 1],
];

describe("normalizer 9: reports of one error share a fingerprint", () => {
  for (const [rule, id, i, j] of V9_JOINS) {
    if (i === j) continue;
    test(`${rule} (${id} ${i}, ${j})`, () => {
      expect(normalizeError(report(id, i), 9)).toBe(normalizeError(report(id, j), 9));
      expect(normalizeError(report(id, i), 8)).not.toBe(normalizeError(report(id, j), 8));
    });
  }
  test("a log's [time] [error] file:line prefix (two lines of one thread's log: https://github.com/gitbitex/gitbitex-spot/issues/10)", () => {
    const a = "[2019-10-22 14:04:56]  Error 1213: Deadlock found when trying to get lock; try restarting transaction";
    const b =
      "[2019/10/22 14:04:56] [error] tick_maker.go:125 Error 1213: Deadlock found when trying to get lock; try restarting transaction";
    expect(normalizeError(b, 9)).toBe(normalizeError(a, 9));
    expect(normalizeError(b, 8)).not.toBe(normalizeError(a, 8));
  });
  test("git's banner over an SSH connection that timed out, in Linux's and macOS's words, to any host and port (other threads)", () => {
    const forms = new Set(
      [
        // https://github.com/githubteacher/fluffy-octo-guacamole/issues/21
        "h:\\>git clone git@github.com:githubteacher/fluffy-octo-guacamole.git\nCloning into 'fluffy-octo-guacamole'...\nssh: connect to host github.com port 22: Connection timed out\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.",
        // https://github.com/searchkit/searchkit-starter-app/pull/12
        "Cloning into 'searchkit-starter-app'...\nssh: connect to host github.com port 22: Connection timed out\nfatal: Could not read from remote repository.",
        // https://github.com/docmirror/dev-sidecar/issues/164
        "就是这两天的问题，之前都是OK的，完整信息如下：\nssh: connect to host github.com port 22: Operation timed out\nfatal: Could not read from remote repository.",
        // https://github.com/microsoft/vscode/issues/105252
        "ssh: connect to host bitbucket.mycomp.com port 7999: Connection timed out\nfatal: Could not read from remote repository.\nPlease make sure you have the correct access rights\nand the repository exists.",
      ].map((t) => normalizeError(t, 9)),
    );
    expect([...forms]).toEqual(["could not read from remote repository ssh connect to host connection timed out"]);
  });
});

/** [rule, a, b]: different errors that version 9 must give two forms. */
const V9_APART: [string, string, string][] = [
  [
    // https://github.com/githubteacher/fluffy-octo-guacamole/issues/21 and https://github.com/microsoft/terminal/issues/8359
    "git's banner over an SSH connection that timed out and over a network that is unreachable",
    "Cloning into 'fluffy-octo-guacamole'...\nssh: connect to host github.com port 22: Connection timed out\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.",
    "ssh: connect to host github.com port 22: Network is unreachable\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.",
  ],
  [
    // https://github.com/rust-lang/rust/issues/74931 and https://github.com/Keruspe/cargo-duplicates/issues/10
    "Rust's stack overflow in the compiler's own thread and in the user's program",
    "Checking typos-dict v0.2.1 (/Users/edpage/src/personal/typos/crates/typos-dict)\n\nthread 'rustc' has overflowed its stack\nfatal runtime error: stack overflow\nerror: could not compile `typos-dict`.",
    "addr2line 0.24.2:\n\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow\nAborted (core dumped)",
  ],
  [
    // https://github.com/ReneSmeekes/storj_earnings/issues/20 and the second set's python-permissionerror-errno13 kind:
    // the file of "No such file or directory" is the error's subject, not folded
    "the file of a missing-file error is kept (only an out-of-space or quota error's file goes)",
    "FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'",
    "FileNotFoundError: [Errno 2] No such file or directory: 'model.pt'",
  ],
  [
    // the first set's mysql error numbers (src/core/fingerprint.test.ts): a MySQL number stays
    "a MySQL error number stays in front of the same words",
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost'",
    "ERROR 1698 (28000): Access denied for user 'root'@'localhost'",
  ],
];

describe("normalizer 9: different errors keep their own fingerprints", () => {
  for (const [rule, a, b] of V9_APART) {
    test(rule, () => {
      expect(normalizeError(a, 9)).not.toBe(normalizeError(b, 9));
    });
  }
  test("git's banner alone keeps version 8's form (https://github.com/codenvy/docs/issues/146's title)", () => {
    const banner = "fatal: could not read from remote repository";
    expect(normalizeError(banner, 9)).toBe(normalizeError(banner, 8));
  });
});

describe("normalizer 9: the external sets of real reports", () => {
  for (const { name, set } of sets) {
    for (const p of set.apart) {
      test(`${name} set, ${p.id}: apart (${p.note})`, () => {
        expect(normalizeError(p.a, 9)).not.toBe(normalizeError(p.b, 9));
      });
    }
    for (const g of set.groups) {
      if (new Set(g.reports.map((r) => normalizeError(r.text, 8))).size !== 1) continue;
      test(`${name} set, ${g.id}: joined by version 8, still one normal form`, () => {
        expect(new Set(g.reports.map((r) => normalizeError(r.text, 9))).size).toBe(1);
      });
    }
  }
});

describe("normalizer 9: splits no version-8 form of the dev set", () => {
  test("every text of the dev set (cases, queries, negatives, distractor pairs): one version-9 form per version-8 form", () => {
    const texts = devsetTexts(loadDevset());
    // Counted, not listed: the holdout split's texts are not printed.
    const { split } = formsSplitSince(texts, 8, 9);
    expect({ texts: texts.length, split }).toEqual({ texts: texts.length, split: 0 });
  }, 30_000);
});

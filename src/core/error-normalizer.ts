// The current normalizer (version 9): turns an error report — one line or a pasted block — into
// the form that is hashed into its fingerprint. It removes what differs between two machines,
// tools and wrappers hitting the same error and keeps the words that identify it. Pure: no I/O.
// Secrets are redacted by the caller (fingerprint.ts) before this runs.
//
// Version 9 = version 8 (error-normalizer-v8.ts, frozen; it builds on versions 7 to 1), with the
// rules below written from the misses of the three external sets of real reports
// (test/fixtures/fingerprint-real-variants*.json; the third was gathered after version 8 and
// measured it out of sample first). Lines a pasted log or a runtime adds around the message go
// before version 8 reads the report (a PostgreSQL server's DETAIL and HINT lines, V8's and Go's
// native stack frames, PyTorch's debugging hints, Spring Boot's log prefix, Python 2's u'' before a
// quoted message); git's banner over the SSH or repository failure gives the failure, as version 8
// reads git's "RPC failed" line; and a few rules fold what is left in version 8's form (Markdown and
// HTML markup, box-drawing characters, the file an out-of-space or quota error names, a message's
// closing "!"). error-normalizer-v9.test.ts checks each rule with real reports, and that on every
// dev-set text version 9 splits no version-8 form except the ones bench/fingerprint-real.ts lists.
// docs/fingerprint.md lists every rule with its miss class.
//
// Any change here that alters the output for some input changes fingerprints: raise
// NORMALIZER_VERSION, freeze this version as error-normalizer-v9.ts (as versions 1 to 8 are) and
// let the colony re-fingerprint stored trails at start (docs/fingerprint.md, Versioning).
//
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { normalizeErrorTextV1 } from "./error-normalizer-v1.ts";
import { normalizeErrorTextV2 } from "./error-normalizer-v2.ts";
import { normalizeErrorTextV3 } from "./error-normalizer-v3.ts";
import { normalizeErrorTextV4 } from "./error-normalizer-v4.ts";
import { applyGated, type GatedRule } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV5 } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV6 } from "./error-normalizer-v6.ts";
import { normalizeErrorTextV7 } from "./error-normalizer-v7.ts";
import { normalizeErrorTextV8 } from "./error-normalizer-v8.ts";

/** The version of the rules below. Stored beside every fingerprint (decisions §2). */
export const NORMALIZER_VERSION = 9;
/** Every version this build can compute, oldest first. */
export const NORMALIZER_VERSIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9] as const;
export type NormalizerVersion = (typeof NORMALIZER_VERSIONS)[number];

/**
 * git over SSH: "fatal: Could not read from remote repository.\n\nPlease make sure you have the
 * correct access rights\nand the repository exists." follows whatever stopped the connection; the
 * line before it says what: the server refused every key the client offered ("Permission denied
 * (publickey)."), the client refused the server's host key ("Host key verification failed."), the
 * server has no such repository or hides it ("ERROR: Repository not found."), the remote is no
 * repository at all ("fatal: '../x.git' does not appear to be a git repository"), the SSH connection
 * never opened ("ssh: connect to host github.com port 22: Connection timed out", macOS's "Operation
 * timed out", "Network is unreachable"; the host and port are the user's). Errors with their own
 * fixes (an SSH key to add, known_hosts to fix, a URL or an access right, a remote to set, SSH over
 * port 443 or a proxy), as
 * version 8 reads git's "RPC failed" line under "The remote end hung up unexpectedly". The cause is
 * read anywhere in the report (a log may hold it as an escaped string); a banner with no cause keeps
 * version 8's form.
 */
const GIT_REMOTE_BANNER = /could not read from remote repository/i;
const GIT_REMOTE_CAUSES: [RegExp, string][] = [
  [/\bPermission denied \(publickey[^)\n]{0,80}\)/i, "permission denied (publickey)"],
  [/\bHost key verification failed\b/i, "host key verification failed"],
  [/\bRepository not found\b/i, "repository not found"],
  [/\bdoes not appear to be a git repository\b/i, "does not appear to be a git repository"],
  [/\bssh: connect to host \S{1,253} port \d{1,5}: (?:Connection|Operation) timed out\b/i, "ssh connect to host connection timed out"],
  [/\bssh: connect to host \S{1,253} port \d{1,5}: Network is unreachable\b/i, "ssh connect to host network is unreachable"],
  [/\bssh: connect to host \S{1,253} port \d{1,5}: Connection refused\b/i, "ssh connect to host connection refused"],
];

function gitRemoteCause(text: string): string | undefined {
  if (!GIT_REMOTE_BANNER.test(text)) return undefined;
  for (const [pattern, cause] of GIT_REMOTE_CAUSES) if (pattern.test(text)) return `could not read from remote repository ${cause}`;
  return undefined;
}

/**
 * Rust's runtime on a stack overflow: "thread 'main' has overflowed its stack" then "fatal runtime
 * error: stack overflow" (", aborting" since Rust 1.84), whatever printed around them (a shell's
 * "zsh: abort", a supervisor's "[services.d] stopping …", a log's timestamps in reverse order): the
 * thread is the program's own ('main', 'actix-rt:worker:1', '<unknown>'), except the compiler's own
 * thread, which version 8 keeps for a panic (another fix: another toolchain).
 */
const RUST_STACK_OVERFLOW = /\bthread '([^'\n]{1,100})'(?: \(\d{1,12}\))? has overflowed its stack\b/;

function rustStackOverflow(text: string): string | undefined {
  const m = RUST_STACK_OVERFLOW.exec(text);
  if (!m) return undefined;
  return `thread ${m[1] === "rustc" ? "rustc" : "<name>"} has overflowed its stack fatal runtime error stack overflow`;
}

/**
 * Lines a log or a runtime prints around the message, dropped before version 8 reads the report
 * (only when something else is left):
 * - a PostgreSQL server's DETAIL, HINT, CONTEXT and STATEMENT lines and their indented continuation
 *   under an ERROR or FATAL line, with the log's own prefix ("2020-02-14 17:26:38.505 UTC [62]
 *   DETAIL:  Password does not match for user \"postgres\".\n        Connection matched pg_hba.conf
 *   line 95: …"), and a client's copy of DETAIL on the message's line ("(psycopg2.errors.
 *   DeadlockDetected) deadlock detected DETAIL: Process 974074 waits for ShareLock …"): the detail
 *   of one occurrence (which user, which process), as version 6 drops them when they stand alone;
 * - V8's fatal-error report around its message ("<--- Last few GCs --->", the GC trace lines
 *   "[74824:0000029387BF5000]  6436885 ms: Mark-Compact …", "<--- JS stacktrace --->", "----- Native
 *   stack trace -----", the native frames " 1: 0xb8d11b node::OOMErrorHandler(…) [node]"), and Go's
 *   frames with registers ("C:/Go/src/runtime/panic.go:1116 +0x79 fp=0xc00086de90 sp=… pc=…"): stack
 *   frames, as versions 2 to 6 drop a traceback's;
 * - PyTorch's hints after a CUDA error ("CUDA kernel errors might be asynchronously reported at some
 *   other API call, so the stacktrace below might be incorrect.", "For debugging consider passing
 *   CUDA_LAUNCH_BLOCKING=1.", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
 *   which releases since 2.0 add): advice, not the error, as version 3 drops Cython's second sentence;
 * - Spring Boot's default log prefix ("2016-05-25 12:29:40.274 ERROR 1 --- [nio-8082-exec-9]
 *   o.h.engine.jdbc.spi.SqlExceptionHelper   : Deadlock found …"): level, process id, thread and
 *   logger, as version 2 drops other loggers' prefixes;
 * - Python 2's u'' before a quoted message in a tuple or an exception's repr ("(1213, u'Deadlock found
 *   when trying to get lock; …')"): Python 3 prints the same tuple without it.
 */
const V9_LINE_RULES: GatedRule[] = [
  [/(?<=[a-z.)'"])[ \t]{1,4}DETAIL:[ \t][^\n]*/g, "", /[a-z.)'"][ \t]{1,4}DETAIL:[ \t]/],
  [/^[ \t]*<--- (?:Last few GCs|JS stacktrace) --->[ \t]*$/gm, "", "<--- "],
  [/^[ \t]*-{3,8} Native stack trace -{3,8}[ \t]*$/gm, "", "Native stack trace"],
  [/^[ \t]{0,8}\d{1,3}: (?:0x)?[0-9A-Fa-f]{6,16} [^\n]*$/gm, "", /^[ \t]{0,8}\d{1,3}: (?:0x)?[0-9A-Fa-f]{6,16} /m],
  [/^\[\d{1,10}:(?:0x)?[0-9A-Fa-f]{6,16}\][ \t]{1,8}\d{1,12} ms: [^\n]*$/gm, "", " ms: "],
  [/^[^\n]{0,300}?\bfp=0x[0-9a-f]{1,16} sp=0x[0-9a-f]{1,16} pc=0x[0-9a-f]{1,16}[ \t]*$/gm, "", " sp=0x"],
  [
    /(?<![^\n])[^\n]{0,4}?(?:CUDA kernel errors might be asynchronously reported at some other API call,? ?so the stacktrace below might be incorrect\.?|For debugging consider passing CUDA_LAUNCH_BLOCKING=1\.?|Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions\.?)[^\n]{0,4}$/gm,
    "",
    /CUDA_LAUNCH_BLOCKING|TORCH_USE_CUDA_DSA|asynchronously reported at some other API call/,
  ],
  [
    /^(?:\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?[ \t]{1,4})?(?:ERROR|WARN|INFO|DEBUG|TRACE|FATAL)[ \t]{1,4}\d{1,8} --- \[[^\]\n]{1,60}\] [\w.$[\]/-]{1,200}[ \t]{0,60}: /gm,
    "",
    " --- [",
  ],
  [/(?<=[([,=:][ \t]{0,2})u'(?=[^'\n]{1,2000}')/g, "'", "u'"],
  [
    /^(?:\[[^\]\n]{1,100}\][ \t]{0,4}){1,4}\[ ?(?:ERROR|WARN|WARNING|FATAL|CRITICAL|error|warn|warning|fatal|critical) ?\][ \t]{1,4}(?:[\w./-]{1,200}:\d{1,7}[ \t]{1,4})?(?=\S)/gm,
    "",
    /\[ ?(?:ERROR|WARN|WARNING|FATAL|CRITICAL|error|warn|warning|fatal|critical) ?\]/,
  ],
  [/^(?:> ?)?\[[^\]\n]{1,100}\] (?:ERROR|WARN|FATAL) [\w.$]{1,200}(?:\(\d{1,6}\))? \| (?=\S)/gm, "", "| "],
  [/^[ \t]{2,8}opensslErrorStack: \[[^\]]{0,2000}\],?[ \t]*$/gm, "", "opensslErrorStack: ["],
  [/^[ \t]{2,8}(?:opensslErrorStack|library|reason|code|errno|syscall|function): [^\n]*$/gm, "", /^[ \t]{2,8}(?:library|reason|code): '/m],
  [/^Node\.js v\d{1,3}\.\d{1,3}\.\d{1,3}[ \t]*$/gm, "", "Node.js v"],
  [/,? referer: \S{1,2000}$/gm, "", " referer: "],
  [/^>>>(?: [^\n]*)?$/gm, "", ">>>"],
  [/^W: [^\n]*$/gm, "", /^E: /m],
  [/^Run (?=\S)[^\n]*$/m, "", /^Error: Process completed with exit code /m],
  [/^Error: Process completed with exit code \d{1,3}\.?[ \t]*$/gm, "", "Process completed with exit code"],
];

function dropLogLines(input: string): string {
  const s = applyGated(input, V9_LINE_RULES);
  return s === input || s.trim() === "" ? input : s;
}

/**
 * Applied in order to version 8's normal form (lowercase, placeholders already in place); a rule
 * here only joins forms, as it sees nothing but the form:
 * - Markdown and HTML markup a reporter or a web page left around the message (bold "**…**", its
 *   italic "_**…**_", PHP's html_errors "<b>…</b>" and "<br />"), and box-drawing characters of a
 *   terminal UI's frame (k9s, rich: "│ 2023-10-15 … FATAL:  password authentication failed … │");
 * - the file an out-of-space or out-of-quota error names ("[Errno 28] No space left on device:
 *   '/tmp/waydroidimage/…'", "[Errno 122] Disk quota exceeded: 'out/intermediate.ntw'"): any file
 *   written at that moment gets the error, unlike "No such file or directory: 'x'" whose file is
 *   the subject;
 * - a closing "!" (Go's "all goroutines are asleep - deadlock!" as quoted without it).
 */
const V9_FORM_RULES: GatedRule[] = [
  [/(?<![\w*])_?\*\*(?=\S)([^\n*]{1,500}?)(?<=\S)\*\*_?(?![\w*])/g, "$1", "**"],
  [/(?<=\S)\*\*_?$/, "", "**"],
  [/^_?\*\*(?=\S)/, "", "**"],
  [/<\/?(?:b|strong|i|em|code|pre|tt|kbd)>|<br ?\/?>/g, " ", /<\/?(?:b|strong|i|em|code|pre|tt|kbd)>|<br/],
  [/[\u2500-\u257f]+/g, " ", /[\u2500-\u257f]/],
  [/(\[errno \d{1,4}\] (?:no space left on device|disk quota exceeded))\b[^\n]*$/, "$1", /no space left on device|disk quota exceeded/],
  [/(?<=\w)!+$/, "", "!"],
  [/\b(held by process <pid>) \([\w.-]{1,40}\)/g, "$1", "held by process <pid> ("],
  [/\b[a-z]{0,30}error\((\d{1,5}) ([a-z][^()\n]{2,100}?)(?:\)|$)/g, "[errno $1] $2", "error("],
  [/(?<=\S) \(at <src>(?::<line>)?\)$/, "", "(at <src>"],
  [/\bsocket\.error (?=\[errno )/g, "", "socket.error "],
  [/\(connection aborted (\[errno \d{1,5}\] [^()\n]{2,100}|[a-z][\w.]{0,60}\([^()\n]{0,200}\))\)/g, "$1", "(connection aborted "],
  [/(?<![\w%])%2f[\w.%-]{1,200}/g, "<path>", "%2f"],
  [/\b(failed at the) [^\s@]{1,214}@<ver> [\w:.-]{1,100} script\b/, "$1 <name>@<ver> <name> script", "failed at the "],
];

/**
 * The version-9 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorText(errorText: string): string {
  const cause = gitRemoteCause(errorText) ?? rustStackOverflow(errorText);
  if (cause !== undefined) return cause;
  const v8 = normalizeErrorTextV8(dropLogLines(errorText));
  return applyGated(v8, V9_FORM_RULES).replace(/ {2,}/g, " ").trim();
}

const BY_VERSION: Record<NormalizerVersion, (errorText: string) => string> = {
  1: normalizeErrorTextV1,
  2: normalizeErrorTextV2,
  3: normalizeErrorTextV3,
  4: normalizeErrorTextV4,
  5: normalizeErrorTextV5,
  6: normalizeErrorTextV6,
  7: normalizeErrorTextV7,
  8: normalizeErrorTextV8,
  9: normalizeErrorText,
};

/** The normal form under a given normalizer version (older versions stay computable for aliases). */
export function normalizeErrorTextAt(errorText: string, version: NormalizerVersion): string {
  return BY_VERSION[version](errorText);
}

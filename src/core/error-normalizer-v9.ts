// Normalizer version 9, frozen: stored fingerprints computed with it must stay reproducible (aliases
// of stored trails, decisions §2). Do not change its output; the current version is
// error-normalizer.ts. Pure: no I/O. Secrets are redacted by the caller (fingerprint.ts) first.
//
// Version 9 = version 8 (error-normalizer-v8.ts, frozen; it builds on versions 7 to 1), with the
// rules below written from the misses of the first three external sets of real reports
// (test/fixtures/fingerprint-real-variants*.json; the third was gathered after version 8 and
// measured it out of sample first). git's banner over an SSH or repository failure gives the
// failure, as version 8 reads git's "RPC failed" line, and Rust's stack overflow is read whatever
// surrounds it; lines a log, a runtime or a runner adds around the message go before version 8
// reads the report (V9_LINE_RULES); a few rules fold what is left in version 8's form
// (V9_FORM_RULES: they only join). error-normalizer-v9.test.ts checks each rule with real reports,
// and that on every dev-set text version 9 splits no version-8 form. docs/fingerprint.md lists
// every rule with its miss class.
//
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { applyGated, type GatedRule } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV8 } from "./error-normalizer-v8.ts";

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
 * error: stack overflow" (", aborting" in newer releases), whatever printed around them (a shell's
 * "zsh: abort", a supervisor's "[services.d] stopping …", a log's lines in reverse order): the thread
 * is the program's own ('main', 'actix-rt:worker:1', '<unknown>'), except the compiler's own thread
 * ('rustc': an internal compiler error, another fix), which version 8 keeps for a panic too.
 */
const RUST_STACK_OVERFLOW = /\bthread '([^'\n]{1,100})'(?: \(\d{1,12}\))? has overflowed its stack\b/;

function rustStackOverflow(text: string): string | undefined {
  const m = RUST_STACK_OVERFLOW.exec(text);
  if (!m) return undefined;
  return `thread ${m[1] === "rustc" ? "rustc" : "<name>"} has overflowed its stack fatal runtime error stack overflow`;
}

/**
 * Lines a log, a runtime or a runner prints around the message, dropped before version 8 reads the
 * report (only when something else is left). Each is the surroundings issue 16 names: a logger's
 * prefix, a runtime's report around the message, a runner's step lines.
 */
const V9_LINE_RULES: GatedRule[] = [
  // A client's copy of PostgreSQL's DETAIL on the message's line ("(psycopg2.errors.DeadlockDetected)
  // deadlock detected DETAIL: Process 974074 waits for ShareLock …"): one occurrence's detail (which
  // process), as version 6 drops the server's DETAIL line. Only after a message's last word, so a
  // server log's own DETAIL line (after its prefix) is left to version 8.
  [/(?<=[a-z.)'"])[ \t]{1,4}DETAIL:[ \t][^\n]*/g, "", /[a-z.)'"][ \t]{1,4}DETAIL:[ \t]/],
  // V8's fatal-error report around its message: "<--- Last few GCs --->", its GC trace lines
  // ("[74824:0000029387BF5000]  6436885 ms: Mark-Compact …"), "<--- JS stacktrace --->", "----- Native
  // stack trace -----" and the native frames (" 1: 0xb8d11b node::OOMErrorHandler(…) [node]"); Go's
  // frames with registers ("C:/Go/src/runtime/panic.go:1116 +0x79 fp=0xc00086de90 sp=… pc=…"):
  // stack frames, as versions 2 to 6 drop a traceback's.
  [/^[ \t]*<--- (?:Last few GCs|JS stacktrace) --->[ \t]*$/gm, "", "<--- "],
  [/^[ \t]*-{3,8} Native stack trace -{3,8}[ \t]*$/gm, "", "Native stack trace"],
  [/^[ \t]{0,8}\d{1,3}: (?:0x)?[0-9A-Fa-f]{6,16} [^\n]*$/gm, "", /^[ \t]{0,8}\d{1,3}: (?:0x)?[0-9A-Fa-f]{6,16} /m],
  [/^\[\d{1,10}:(?:0x)?[0-9A-Fa-f]{6,16}\][ \t]{1,8}\d{1,12} ms: [^\n]*$/gm, "", " ms: "],
  [/^[^\n]{0,300}?\bfp=0x[0-9a-f]{1,16} sp=0x[0-9a-f]{1,16} pc=0x[0-9a-f]{1,16}[ \t]*$/gm, "", " sp=0x"],
  // PyTorch's hints after a CUDA error ("CUDA kernel errors might be asynchronously reported …",
  // "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.", "Compile with `TORCH_USE_CUDA_DSA` to
  // enable device-side assertions."), which newer releases add: advice, not the error, as version 3
  // drops Cython's second sentence.
  [
    /(?<![^\n])[^\n]{0,4}?(?:CUDA kernel errors might be asynchronously reported at some other API call,? ?so the stacktrace below might be incorrect\.?|For debugging consider passing CUDA_LAUNCH_BLOCKING=1\.?|Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions\.?)[^\n]{0,4}$/gm,
    "",
    /CUDA_LAUNCH_BLOCKING|TORCH_USE_CUDA_DSA|asynchronously reported at some other API call/,
  ],
  // Loggers' prefixes version 2 does not know: Spring Boot's default pattern ("2016-05-25
  // 12:29:40.274 ERROR 1 --- [nio-8082-exec-9] o.h.engine.jdbc.spi.SqlExceptionHelper   : …"), a
  // level in brackets after a time in brackets, with the source line after it ("[2019/10/22
  // 14:04:56] [error] tick_maker.go:125 Error 1213: …"; only after another bracket, so Maven's own
  // "[ERROR]" lines stay for version 7), log4j's "[app - thread (time)] ERROR logger(234) | …".
  [
    /^(?:\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?[ \t]{1,4})?(?:ERROR|WARN|INFO|DEBUG|TRACE|FATAL)[ \t]{1,4}\d{1,8} --- \[[^\]\n]{1,60}\] [\w.$[\]/-]{1,200}[ \t]{0,60}: /gm,
    "",
    " --- [",
  ],
  // Whatever stands before the Docker daemon's answer on its line (a client's path "C:\Program
  // Files\Docker Toolbox\docker.exe:", a fence, dockerode's "(HTTP code 409) unexpected - "): the
  // daemon's answer is the error, as version 7 reads it in the form; read here, before version 3
  // takes a short first sentence ("Conflict.") for the whole message when a label precedes it.
  [/^[^\n]{1,300}?(?=Error response from daemon: )/gm, "", /.Error response from daemon: /],
  [/(?<![^\n])[ \t{]{0,4}(?:Error: )?\(HTTP code \d{3}\) [a-z ]{1,40} - (?=\S)/gm, "Error response from daemon: ", "(HTTP code "],
  // Python 2's u'' before a quoted message in a tuple or a repr ("(1213, u'Deadlock found …')"):
  // Python 3 prints the same tuple without it.
  [/(?<=[([,=:][ \t]{0,2})u'(?=[^'\n]{1,2000}')/g, "'", "u'"],
  [
    /^(?:\[[^\]\n]{1,100}\][ \t]{0,4}){1,4}\[ ?(?:ERROR|WARN|WARNING|FATAL|CRITICAL|error|warn|warning|fatal|critical) ?\][ \t]{1,4}(?:[\w./-]{1,200}:\d{1,7}[ \t]{1,4})?(?=\S)/gm,
    "",
    /\[ ?(?:ERROR|WARN|WARNING|FATAL|CRITICAL|error|warn|warning|fatal|critical) ?\]/,
  ],
  [/^(?:> ?)?\[[^\]\n]{1,100}\] (?:ERROR|WARN|FATAL) [\w.$]{1,200}(?:\(\d{1,6}\))? \| (?=\S)/gm, "", "| "],
  // Node's error object after the stack (opensslErrorStack, library, reason, code …) and the
  // "Node.js v23.1.0" line Node 18 and later print after an uncaught error: fields of one
  // occurrence and a version qualifier.
  [/^[ \t]{2,8}opensslErrorStack: \[[^\]]{0,2000}\],?[ \t]*$/gm, "", "opensslErrorStack: ["],
  [/^[ \t]{2,8}(?:opensslErrorStack|library|reason|code|errno|syscall|function): [^\n]*$/gm, "", /^[ \t]{2,8}(?:library|reason|code): '/m],
  [/^Node\.js v\d{1,3}\.\d{1,3}\.\d{1,3}[ \t]*$/gm, "", "Node.js v"],
  // Apache's error log after PHP's message (", referer: http://…"): the page that was asked for.
  [/,? referer: \S{1,2000}$/gm, "", " referer: "],
  // Python's REPL prompt and the line typed at it (">>> import pymol"), as version 6 drops a shell's.
  [/^>>>(?: [^\n]*)?$/gm, "", ">>>"],
  // apt's warnings beside its errors ("W: Be aware that removing the lock file is not a solution …").
  [/^W: [^\n]*$/gm, "", /^E: /m],
  // GitHub Actions' step header ("Run sudo apt-get install -y lld") and its closing line ("Error:
  // Process completed with exit code 100."): the runner's, around the tool's error.
  [/^Run (?=\S)[^\n]*$/m, "", /^Error: Process completed with exit code /m],
  [/^Error: Process completed with exit code \d{1,3}\.?[ \t]*$/gm, "", "Process completed with exit code"],
];

function dropLogLines(input: string): string {
  const s = applyGated(input, V9_LINE_RULES);
  return s === input || s.trim() === "" ? input : s;
}

/**
 * Applied in order to version 8's normal form (lowercase, placeholders already in place); a rule
 * here sees nothing but the form, so it only joins forms.
 */
const V9_FORM_RULES: GatedRule[] = [
  // Markdown and HTML markup a reporter or a web page left around the message (bold "**…**", its
  // italic "_**…**_", "<br/>", PHP's html_errors "<b>…</b>"), and box-drawing characters of a
  // terminal UI's frame (k9s, rich: "│ 2023-10-15 … FATAL:  password authentication failed … │").
  [/(?<![\w*])_?\*\*(?=\S)([^\n*]{1,500}?)(?<=\S)\*\*_?(?![\w*])/g, "$1", "**"],
  [/(?<=\S)\*\*_?$/, "", "**"],
  [/^_?\*\*(?=\S)/, "", "**"],
  [/<\/?(?:b|strong|i|em|code|pre|tt|kbd)>|<br ?\/?>/g, " ", /<\/?(?:b|strong|i|em|code|pre|tt|kbd)>|<br/],
  [/[\u2500-\u257f]+/g, " ", /[\u2500-\u257f]/],
  // The file an out-of-space or out-of-quota error names ("[Errno 28] No space left on device:
  // '/tmp/waydroidimage/…'", "[Errno 122] Disk quota exceeded: 'out/intermediate.ntw'"): any file
  // written then gets the error, unlike "No such file or directory: 'x'" whose file is its subject.
  [/(\[errno \d{1,4}\] (?:no space left on device|disk quota exceeded))\b[^\n]*$/, "$1", /no space left on device|disk quota exceeded/],
  // A closing "!" (Go's "all goroutines are asleep - deadlock!", quoted without it).
  [/(?<=\w)!+$/, "", "!"],
  // The process holding apt's lock ("It is held by process 4407 (unattended-upgr)", "(apt-get)"):
  // the machine's, as its id is.
  [/\b(held by process <pid>) \([\w.-]{1,40}\)/g, "$1", "held by process <pid> ("],
  // Python's system errors in their repr ("ConnectionResetError(104, 'Connection reset by peer')")
  // read as printed ("[Errno 104] Connection reset by peer"); Python 2's "socket.error" before the
  // errno; requests' "('Connection aborted.', …)" around the system's error (the inner cause).
  [/\b[a-z]{0,30}error\((\d{1,5}) ([a-z][^()\n]{2,100}?)(?:\)|$)/g, "[errno $1] $2", "error("],
  // The container id in Docker's name conflict, quoted by newer daemons ("… already in use by
  // container \"79aae4ff…\"", read <name>) and bare by older ones (read <hash>): one value.
  [/\b(already in use by container) <hash>/g, "$1 <name>", "in use by container <hash>"],
  // A browser console's location after the message ("… outside a module (at Swup.modern.js:1:1)").
  [/(?<=\S) \(at <src>(?::<line>)?\)$/, "", "(at <src>"],
  [/\bsocket\.error (?=\[errno )/g, "", "socket.error "],
  [/\(connection aborted (\[errno \d{1,5}\] [^()\n]{2,100}|[a-z][\w.]{0,60}\([^()\n]{0,200}\))\)/g, "$1", "(connection aborted "],
  // A socket path URL-encoded in a request's URL (Docker's "http://%2Fvar%2Frun%2Fdocker.sock/v1.24/
  // …"): a path, as version 1 writes the ones it sees.
  [/(?<![\w%])%2f[\w.%-]{1,200}/g, "<path>", "%2f"],
  // The user's own package and script in npm 6's "Failed at the my-app@1.0.0 start script.".
  [/\b(failed at the) [^\s@]{1,214}@<ver> [\w:.-]{1,100} script\b/, "$1 <name>@<ver> <name> script", "failed at the "],
];

/**
 * The version-9 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV9(errorText: string): string {
  const cause = gitRemoteCause(errorText) ?? rustStackOverflow(errorText);
  if (cause !== undefined) return cause;
  const v8 = normalizeErrorTextV8(dropLogLines(errorText));
  return applyGated(v8, V9_FORM_RULES).replace(/ {2,}/g, " ").trim();
}

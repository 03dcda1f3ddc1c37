// Normalizer version 2 (frozen): the rules fingerprints were computed with until version 3
// (error-normalizer.ts). It stays so that fingerprints stored by an older colony can be recognised
// and kept as aliases (docs/fingerprint.md, Versioning). Do not edit: any change here changes the
// aliases of stored trails. Version 3 reuses the pieces exported below.
//
// Version 2 = version 1's value rules (error-normalizer-v1.ts, frozen) plus structure: every line
// loses its logger/runner prefix, stack frames and trailers are dropped, the identifying part is
// picked (the innermost cause, the text from the exception class on), quoting, environment
// variable syntax, the user's own source file names and module paths are folded. Pure: no I/O.
// Secrets are redacted by the caller (fingerprint.ts) before this runs.
//
// Every regex is anchored at the start of a line or starts with a lookbehind/word boundary, and has
// no nested ambiguous quantifiers, so the whole pass stays linear on adversarial input.
import {
  applyRules,
  cleanText,
  EARLY_RULES,
  GIT_REF_LINE,
  MESSAGE_PREFIXES,
  NOISE_PREFIXES,
  normalizePath,
  PATH_RE,
  PROGRAM_PREFIX,
  type Rule,
  stripSuffixes,
  VALUE_RULES,
} from "./error-normalizer-v1.ts";

export const LEVELS = "CRITICAL|ERROR|ERRO|WARNING|WARN|INFO|DEBUG|DEBU|FATAL|FATA|TRACE|SEVERE|NOTICE";

// ---------------------------------------------------------------------------------------------
// 1. Per-line prefixes added by loggers, runners and orchestrators (on top of version 1's).

export const LINE_PREFIXES: RegExp[] = [
  // kubectl logs --prefix "[pod/api-7c9d/api] ", concurrently's "[1] ", "[worker 3] ", "[web] ".
  /^\[(?:pod|deployment|job|statefulset|daemonset)\/[^\]\n]{1,300}\][ \t]*/i,
  /^\[(?:\d{1,3}|worker[ \t_-]?\d{1,4}|thread[ \t_-]?\d{1,4}|[a-z][\w/.-]{0,40})\][ \t]+/i,
  // journald short format after its timestamp: "node-3 app[1434]: ", "host kernel: ".
  /^[\w.-]{1,64}[ \t]+[\w.@/-]{1,64}\[\d{1,10}\]:[ \t]*/,
  // Python logging: "%(levelname)s:%(name)s:" (basicConfig default), "- name - LEVEL - " (asctime
  // formats, the timestamp already gone), "LEVEL - ", "LEVEL logger: ", "LEVEL [thread] logger - ".
  new RegExp(`^(?:${LEVELS}):[\\w.-]{1,100}:[ \\t]*`),
  new RegExp(`^[ \\t]*-?[ \\t]*(?:[\\w.-]{1,100}[ \\t]+-[ \\t]+)?(?:${LEVELS})[ \\t]+-[ \\t]+`, "i"),
  // log4j/logback/spring: "ERROR main o.m.i.w.MoquiContextListener ", "[  main] o.s.b.d.Reporter : ".
  new RegExp(
    `^(?:${LEVELS})[ \\t]+(?:\\[[^\\]\\n]{1,60}\\]|[\\w-]{1,40})[ \\t]+(?:[a-z]\\.){1,8}[\\w$]{1,100}[ \\t]*(?::[ \\t]+|-[ \\t]+|(?=[A-Z]))`,
  ),
  /^(?:\[[^\]\n]{1,60}\][ \t]*)?(?:[a-z]\.){1,8}[\w$]{1,100}[ \t]*:[ \t]+/,
  // "[ERROR rust_analyzer::main_loop] ", "[E 240101 12:00:00 web:2246] " (tornado).
  new RegExp(`^\\[(?:${LEVELS}|[EWIDC])[ \\t][^\\]\\n]{1,100}\\][ \\t]*`, "i"),
  // Postgres server log "UTC [76] ", "LOG:  ".
  /^(?:UTC|GMT|CET|CEST|PST|PDT|EST|EDT)[ \t]+\[\d+\][ \t]*/,
  // npm's own log file "15694 error ", "verbose stack ".
  /^\d{1,7}[ \t]+(?:error|verbose|silly|warn|info|http|timing)[ \t]+(?:stack[ \t]+)?/,
  // Test runners: "not ok 3 - ", "  1) ", "FAILED tests/x.py::test_y - ", "✕ ", "● ".
  /^not[ \t]+ok[ \t]+\d+[ \t]+-?[ \t]*/i,
  /^\d{1,4}\)[ \t]+/,
  /^FAILED[ \t]+\S{1,300}::\S{1,300}[ \t]+-[ \t]+/,
  /^[✕✖×●▶►•][ \t]+/,
  // Markdown emphasis a reporter put around the line.
  /^\*\*(?=\S)/,
  // Go's log package "2009/11/10 23:00:00 ", a bare clock "12:00:00.123 ", logback's
  // "[main] ERROR c.e.App - ", Airflow's "[2024-01-01, 12:00:00 UTC] {x.py:12} INFO - ".
  /^\d{4}\/\d{2}\/\d{2}[ \t]+\d{2}:\d{2}:\d{2}(?:[.,]\d+)?[ \t]+/,
  /^\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?[ \t]+/,
  new RegExp(`^(?:\\[[^\\]\\n]{1,60}\\][ \\t]+)?(?:${LEVELS})[ \\t]+[\\w.$]{1,200}[ \\t]+-[ \\t]+`),
  new RegExp(`^\\[[^\\]\\n]{1,60}\\][ \\t]+\\{[^}\\n]{1,200}\\}[ \\t]+(?:${LEVELS})[ \\t]+-[ \\t]+`),
  // redis-cli's "(error) ", mysql's "Enter password: ", a shell prompt "[root@host ~]# ".
  /^\((?:error|err)\)[ \t]+/i,
  /^enter password:[ \t]*/i,
  /^\[[\w.-]{1,64}@[\w.-]{1,64}[^\]\n]{0,200}\][#$][ \t]+/,
];

export function stripLinePrefixes(line: string): string {
  let s = line;
  for (let guard = 0; guard < 16; guard++) {
    const before = s;
    s = s.replace(/^[ \t]+/, "");
    for (const re of NOISE_PREFIXES) s = s.replace(re, "");
    for (const re of LINE_PREFIXES) s = s.replace(re, "");
    if (s === before) break;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// 2. Lines that are not the error: stack frames, source echoes, trailers that every failing
//    build prints. Dropping them picks the identifying line(s) of a pasted block.

export const FRAME_LINES: RegExp[] = [
  /^traceback \(most recent call last\):?$/i,
  /^file "[^"\n]{0,500}", line \d+/i,
  /^(?:during handling of the above exception|the above exception was the direct cause)/i,
  // Stack frames: node and Java "at ...", with Java's jar suffix "~[x.jar:1.2]" or node's " {".
  /^at[ \t]+(?:async[ \t]+)?\S.{0,400}(?::\d+(?::\d+)?\)?|\((?:native|<anonymous>|unknown source|native method)\))(?:[ \t]+~?\[[^\]\n]{0,200}\])?(?:[ \t]*\{)?$/i,
  /^at[ \t]+[\w$.<>[\]/]{1,300}\([^()\n]{1,300}\)(?:[ \t]+~?\[[^\]\n]{0,200}\])?$/i,
  /^\.\.\.[ \t]+\d+[ \t]+(?:common[ \t]+)?frames?[ \t]+omitted$/i,
  // node's crash header ("node:events:502", "throw er; // Unhandled 'error' event", "^"), the
  // "Emitted 'error' event" line and the error's own properties printed below the stack.
  /^(?:node:)?[\w/.-]{1,300}\.?(?:js|mjs|cjs)?:\d+$/,
  /^throw[ \t]+[\w.]{1,60};/,
  /^[\^~]+$/,
  /^emitted 'error' event\b/i,
  /^(?:code|errno|syscall|address|port|path|dest|requirestack|signal|cmd|status|killed|info):[ \t].{0,300}$/i,
  /^[{}[\]]{1,3},?$/,
  /^'[^'\n]{0,500}',?$/,
  // gcc's context lines ("x.c: In function 'f':", "At top level:").
  /^(?:[^\s:]{1,300}:[ \t]+)?(?:in (?:function|member function|constructor|destructor|instantiation of)\b.{0,300}|at top level):$/i,
  /^\.\.\.[ \t]+\d+[ \t]+more$/i,
  /^goroutine[ \t]+\d+[ \t]+\[[^\]\n]{1,60}\]:?$/i,
  /^(?:created by[ \t]+)?[\w./*()-]{1,300}\((?:[^()\n]{0,300}|\.\.\.)\)$/,
  /^\/?[^\s:]{1,500}\.go:\d+(?:[ \t]+\+0x[0-9a-f]+)?$/i,
  /^-->[ \t]+\S{1,500}:\d+(?::\d+)?$/,
  /^\d*[ \t]*\|(?![ \t]*=[ \t]*(?:note|help):)/,
  /^[\^~ \t-]{3,}$/,
  /^(?:note|help):[ \t]+run with `?rust_backtrace/i,
  /^for more information about this error, try/i,
  /^error:[ \t]+could not compile[ \t]/i,
  /^(?:error:[ \t]+)?process completed with exit code \d+/i,
  /^collect2(?:\.exe)?:[ \t]+(?:fatal[ \t]+)?error:[ \t]+ld returned \d+ exit status$/i,
  /^(?:g?make(?:\[\d+\])?:[ \t]+\*\*\*|\*\*\*[ \t]+\[)/i,
  /^(?:npm|pnpm)[ \t]+(?:err!|error)[ \t]+(?:a complete log of this run|\s*$)/i,
  /^(?:npm|pnpm)[ \t]+(?:err!|error)$/i,
  /^node\.js v\d+\S*$/i,
  /^exit status \d+$/i,
  /^#[ \t]+[\w.-]+(?:\/[\w.~-]+)*$/, // go build's "# github.com/x/y" package header
];

export const isFrameLine = (line: string) => FRAME_LINES.some((re) => re.test(line));

/**
 * Lines a runner, shell or package manager prints around the error: the command prompt and the
 * command that was run, build progress, image pulls, apt's progress, debug and info chatter, a
 * heading the reporter typed. Dropped when other lines remain.
 */
export const NOISE_LINES: RegExp[] = [
  /^(?:PS[ \t]+)?[A-Za-z]:\\[^>\n]{0,300}>[ \t]*\S/, // Windows cmd/PowerShell prompt "C:\x> cargo build"
  /^[\w.-]{1,64}@[\w.-]{1,64}:[^\n$#]{0,300}[$#][ \t]+\S/, // "root@host:~# kubectl version"
  /^(?:~|[\w./-]{0,200})?[$%][ \t]+\S/, // "~$ pyfdax", "$ npm ci"
  /^(?:compiling|checking|downloaded|downloading|updating|building|finished|running|fresh|installing|locking|adding|fetching)[ \t]+\S+[ \t]+v?\d+(?:\.\d+)+/i, // cargo, pip progress
  /^(?:status:[ \t]+(?:downloaded newer image|image is up to date)|digest:[ \t]+sha256:|unable to find image\b|[0-9a-f]{12}:[ \t]+(?:pull complete|already exists|waiting|downloading|extracting|verifying checksum|download complete))/i,
  /^(?:reading package lists|building dependency tree|reading state information)\b/i,
  /^(?:\S+:\d+:[ \t]+)?\[debug\]/i,
  /^info[ \t]+\S/, // yarn's info lines
  /^#{1,6}[ \t]+\S/, // a markdown heading the reporter typed
  /^client version:/i,
  // npm's "code ERESOLVE" header and its "While resolving:"/"Found:" detail lines.
  /^code[ \t]+[A-Z][A-Z0-9_]{2,40}$/,
  /^(?:while resolving|found):[ \t]/i,
];

export const isNoiseLine = (line: string) => NOISE_LINES.some((re) => re.test(line));

/** Python echoes the source line under each frame: drop the line after a `File "...", line N`. */
export const PY_FRAME = /^file "[^"\n]{0,500}", line \d+/i;

/** A pasted log longer than this keeps its first and last lines: the error is at one end. */
export const MAX_LINES = 400;

export function pickLines(text: string): string {
  let lines = text.split("\n");
  if (lines.length > MAX_LINES) lines = [...lines.slice(0, MAX_LINES / 2), ...lines.slice(-MAX_LINES / 2)];
  // Blocks of message lines between frames; a frame is checked before and after the line's prefix
  // is stripped (a compose column "web-1 | " and gcc's source echo "138 | x" look alike).
  const blocks: string[][] = [[]];
  let previousWasPyFrame = false;
  for (const raw of lines) {
    const trimmed = raw.trim();
    const line = stripLinePrefixes(raw).trim();
    if (line === "") continue;
    const echoedSource = previousWasPyFrame && !/^\w[\w.]*(?:error|exception|warning)\b/i.test(line);
    previousWasPyFrame = PY_FRAME.test(line);
    if (isFrameLine(trimmed) || isFrameLine(line) || echoedSource) {
      if (blocks[blocks.length - 1]!.length > 0) blocks.push([]);
      continue;
    }
    // rustc's "= note:" lines belong to the error above their gutter; its "= help:" is advice.
    if (/^=[ \t]*help:/i.test(line)) continue;
    if (/^=[ \t]*note:/i.test(line)) {
      const owner = [...blocks].reverse().find((b) => b.length > 0);
      if (owner) {
        owner.push(line.replace(/^=[ \t]*/, ""));
        continue;
      }
    }
    const current = blocks[blocks.length - 1]!;
    if (current[current.length - 1] === line) continue; // a line the log repeated
    current.push(line);
  }
  const nonEmpty = blocks
    .map((b) => {
      const quiet = b.filter((l) => !isNoiseLine(l));
      return quiet.length > 0 ? quiet : b;
    })
    .filter((b) => b.length > 0);
  // Only frames and trailers (a lone "error: could not compile x"): they are the message then.
  if (nonEmpty.length === 0)
    return lines
      .map((l) => stripLinePrefixes(l).trim())
      .filter((l) => l !== "")
      .join("\n");
  if (nonEmpty.length === 1) return nonEmpty[0]!.join("\n");
  // Python and Java ("Caused by:") print the root cause last; node and Go print the message first
  // and only frames or trailers after it: the last block that reads as an error.
  for (let i = nonEmpty.length - 1; i >= 0; i--) {
    if (ERROR_WORDS.test(nonEmpty[i]!.join(" "))) return nonEmpty[i]!.join("\n");
  }
  return nonEmpty[0]!.join("\n");
}

export const ERROR_WORDS =
  /error|exception|panic|fatal|failed|failure|cannot|can't|couldn't|unable|not found|denied|refused|invalid|missing|unknown|no such|timed? ?out/i;

/** A stack pasted onto one line: cut at the first frame. */
export const INLINE_FRAMES: RegExp[] = [
  /(?<![ \t])[ \t]+at[ \t]+(?:new[ \t]+|async[ \t]+)?[\w$.<>[\] ]{1,200}?[ \t]*\((?:[^()\n]{0,500}:\d+:\d+|native|<anonymous>)\).*$/,
  /(?<![ \t])[ \t]+at[ \t]+(?:file:\/\/)?\/?[^\s()]{1,500}:\d+:\d+\)?.*$/,
  /(?<![ \t])[ \t]+at[ \t]+[\w$.]{1,300}\([\w$.-]{1,200}\.(?:java|kt|scala):\d+\).*$/,
  /(?<![ \t])[ \t]+goroutine[ \t]+\d+[ \t]+\[[^\]\n]{1,60}\]:.*$/,
  /(?<![ \t])[ \t]+-->[ \t]+\S{1,500}:\d+(?::\d+)?(?:[ \t].*)?$/,
];

// ---------------------------------------------------------------------------------------------
// 3. Embedded messages: a JSON body or a logfmt record that carries the error as a string.

export function unescapeJson(s: string): string {
  return s.replace(/\\(["\\/nrt])/g, (_m, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c === "r" ? "" : c));
}

export function extractEmbedded(s: string): string {
  // logfmt (dockerd, containerd, logrus): level=error msg="..."
  const logfmt = /\blevel=\w+[ \t]+msg="((?:[^"\\\n]|\\.){1,4000})"/.exec(s);
  if (logfmt) return unescapeJson(logfmt[1]!);
  // A JSON object or a JSON-ish "message": "..." pair whose value is the error.
  if (/^[{[]|^"?(?:message|error|msg|errormessage)"?[ \t]*:|\{[ \t]*"(?:message|error|msg)"[ \t]*:[ \t]*"/i.test(s)) {
    const field = /"?(?:message|error|msg|errorMessage|detail)"?[ \t]*:[ \t]*"((?:[^"\\\n]|\\.){1,4000})"?/i.exec(s);
    if (field) return unescapeJson(field[1]!);
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// 4. The identifying part: the innermost cause, the text from the exception class or error code on.

/** An exception class with its message: "ModuleNotFoundError:", "java.lang.X:", "TypeError [ERR_X]:". */
export const CLASS_HEAD =
  /(?<![\w.$])(?:[A-Za-z_][\w$]*\.){0,8}[A-Z][A-Za-z0-9_$]*(?:Error|Exception|Fault|Failure|Panic)(?:[ \t]*\[[A-Z][A-Z0-9_]{1,60}\])?:(?=[ \t]|$)/;
/** A POSIX errno or a Node/MySQL error code used as a head: "ENOSPC:", "ER_NOT_SUPPORTED_AUTH_MODE:". */
export const CODE_HEAD = /(?<![\w.$-])(?:E[A-Z]{3,15}|ER_[A-Z_]{3,60}|ERR_[A-Z_]{3,60}):(?=[ \t])/;

/**
 * Exception classes of database and cache clients that wrap the server's own message: the server
 * message identifies the error, the client library only says which driver relayed it.
 */
export const DRIVER_CLASS =
  /^(?:psycopg2?|psycopg|pymysql|mysqldb|asyncpg|pyodbc|sqlalchemy|sqlite3|redis|aioredis|pymongo|org\.postgresql|com\.mysql|java\.sql|stackexchange\.redis|npgsql|microsoft\.data\.sqlclient|system\.data\.sqlclient|io\.lettuce|redis\.clients)\.[\w.$]*:[ \t]*/i;

/** Context that a program adds in front of the cause: "while handling x: ", "during startup: ". */
export const CONTEXT_PREFIX = /^(?:while|during|when|in function|in)\b[^:\n]{0,200}?:[ \t]+/i;

/** A Go-style context segment ("upgrade failed", "error starting pods") in front of ": cause". */
export const CONTEXT_SEGMENT = /^([^:\n]{3,160}?):[ \t]+(?=\S)/;
/** An error code inside a segment makes it the error, not context ("error TS2307", "Error [ERR_X]"). */
export const CODE_WORD = /\b[A-Z]{1,6}\d{2,6}\b|\[[^\]\n]{1,60}\]|\b[A-Z]+_[A-Z_]+\b|\bE[A-Z]{3,}\b|\b\d{3,5}\b/;
export const CONTEXT_WORDS = /\b(?:failed|failure|error|errors|unable|could not|couldn't|cannot|can't|while|during|when)\b/i;

/** System error texts: too generic to stand for an error without the context in front of them. */
export const STRERROR =
  /^(?:no such file or directory|permission denied|connection refused|operation not permitted|is a directory|not a directory|file exists|broken pipe|connection reset by peer|i\/o timeout|network is unreachable|no space left on device|address already in use|too many open files|exec format error|resource temporarily unavailable|input\/output error|device or resource busy|read-only file system|cannot allocate memory|no route to host|connection timed out|operation timed out|context deadline exceeded|eof|exit status \d+)\b/i;

export function wordCount(s: string): number {
  return s.split(/\s+/).filter((w) => w !== "").length;
}

/** Rust's panic wrapper: the thread name and the unwrap call differ; the panic message identifies. */
export const RUST_PANIC =
  /^thread[ \t]+'[^'\n]{0,100}'[ \t]+panicked at[ \t]+(?:[^\s:]{1,300}:\d+:\d+:[ \t]*)?'?(?:called `(?:result|option)::(?:unwrap|expect)\(\)` on an `(?:err|none)` value:[ \t]*)?/i;

/** A Python repr of nested exceptions, "SSLError(SSLCertVerificationError(1, '[SSL: ...] ...'))". */
export const PY_REPR =
  /(?<![\w(])(?:\w{1,100}\()+((?:[A-Za-z_]\w*\.){0,8}[A-Z]\w*(?:Error|Exception))\((?:-?\d{1,6},[ \t]*)?(['"])([^\n]{1,2000}?)\2\)+/;

export function pickCause(input: string): string {
  let s = input;
  s = s.replace(RUST_PANIC, "");
  s = s.replace(PY_REPR, (_m, cls: string, _q: string, msg: string) => `${cls}: ${msg}`);
  // Java and cargo cause chains: the last cause is the root.
  const causes = s.split(/(?:^|[ \t\n])caused[ \t]+by:[ \t]*/i);
  if (causes.length > 1 && causes[causes.length - 1]!.trim() !== "") s = causes[causes.length - 1]!;
  // "anything: (psycopg2.OperationalError) message" (SQLAlchemy): the parenthesised class is the cause.
  s = s.replace(/^[^\n]{0,300}?:[ \t]*\(((?:[A-Za-z_][\w]*\.){0,8}[A-Z]\w*(?:Error|Exception))\)[ \t]+(?=\S)/, "$1: ");
  // A tool's own "name: error: " inside the line ("checking... xcrun: error: x"): the message starts there.
  const toolError = /(?:^|[\s.])[a-z][\w.+-]{0,40}:[ \t]+(?:fatal[ \t]+)?error:[ \t]+(?=\S)/.exec(s);
  if (toolError && toolError.index > 0) s = s.slice(toolError.index + toolError[0].length);
  // Context in front of an exception class or an error code: drop it.
  for (const head of [CLASS_HEAD, CODE_HEAD]) {
    const m = head.exec(s);
    if (m && m.index > 0) {
      s = s.slice(m.index);
      break;
    }
  }
  // An outer class wrapping an inner one ("Outer: Inner: msg") or a driver class: the inner wins.
  for (let guard = 0; guard < 8; guard++) {
    const before = s;
    const outer = CLASS_HEAD.exec(s);
    if (outer && outer.index === 0) {
      const rest = s.slice(outer[0].length).trimStart();
      const inner = CLASS_HEAD.exec(rest) ?? CODE_HEAD.exec(rest);
      // A class around another class, an error code or a tool's own "error:" line: the inner wins.
      if ((inner && inner.index === 0) || /^(?:error|fatal|err)[ \t]*:/i.test(rest)) s = rest;
    }
    s = s.replace(DRIVER_CLASS, "");
    s = stripMessagePrefixes(s);
    s = s.replace(PROGRAM_PREFIX, "");
    s = s.replace(CONTEXT_PREFIX, "");
    const seg = CONTEXT_SEGMENT.exec(s);
    if (seg && seg[1]!.includes(" ") && CONTEXT_WORDS.test(seg[1]!) && !CODE_WORD.test(seg[1]!) && !CLASS_HEAD.test(`${seg[1]}:`)) {
      const rest = s.slice(seg[0].length);
      if (wordCount(rest) >= 4 && !STRERROR.test(rest)) s = rest;
    }
    if (s === before) break;
  }
  return s;
}

export function stripMessagePrefixes(input: string): string {
  let s = input;
  for (let guard = 0; guard < 16; guard++) {
    const before = s;
    s = s.replace(/^\*\*(?=\S)/, "");
    for (const re of MESSAGE_PREFIXES) s = s.replace(re, "").trimStart();
    if (s === before) break;
  }
  return s;
}

export function stripPrefixes(input: string): string {
  let s = stripLinePrefixes(input);
  s = s.replace(PROGRAM_PREFIX, "");
  return stripMessagePrefixes(s);
}

// ---------------------------------------------------------------------------------------------
// 5. Trailers glued to the message.

export function stripTrailers(input: string): string {
  let s = input;
  for (const re of INLINE_FRAMES) s = s.replace(re, "");
  return (
    s
      .replace(/(?<![ \t])[ \t]*\(repeated \d+ times?\)/gi, "")
      // Hints and pointers a tool or version adds after the message.
      .replace(/(?<![ \t])[ \t]*\(background on this error at:[^)\n]{0,300}\)/gi, "")
      .replace(/(?<![ \t])[ \t]+is the server running\b[^?\n]{0,300}\?/gi, "")
      .replace(/(?<![ \t])[ \t]+(?:at character|position:?)[ \t]+\d+[ \t]*$/i, "")
      .replace(/'?,[ \t]+(?:[\w.-]{1,100}\/){0,12}[\w.-]{1,100}\.rs:\d+(?::\d+)?[ \t]*$/i, "") // rust panic location
      .replace(/(?<!\*)\*{3,}[ \t]*[A-Za-z ]{3,60}?[ \t]*\*{3,}[ \t]*(?:description:[ \t]*)?/g, "") // Spring Boot's failure banner
      .replace(/(?<![ \t])[ \t]*\bcollect2(?:\.exe)?:[ \t]+(?:fatal[ \t]+)?error:[ \t]+ld returned \d+ exit status\b/gi, "")
      .replace(/(?<![ \t])[ \t]*\b(?:error:[ \t]+)?process completed with exit code \d+\.?/gi, "")
      .replace(/(?<![ \t])[ \t]*\bg?make(?:\[\d+\])?:[ \t]+\*\*\*[^\n]*$/i, "")
      .replace(/(?<![ \t])[ \t]*\*\*$/, "")
  );
}

// ---------------------------------------------------------------------------------------------
// 6. Values added in version 2.

/** Environment variables written for another shell: $VAR, ${VAR}, %VAR%, $env:VAR all become $var. */
export const ENV_RULES: Rule[] = [
  [/\$\{([A-Za-z_]\w{0,100})\}/g, "$$$1"],
  [/%([A-Za-z_]\w{0,100})%/g, "$$$1"],
  [/\$env:([A-Za-z_]\w{0,100})/gi, "$$$1"],
];

/** File extensions of source code: the user's own files, named in compiler and interpreter errors. */
export const SOURCE_EXT =
  "py|pyx|js|mjs|cjs|jsx|ts|mts|cts|tsx|rs|go|java|kt|kts|scala|groovy|c|cc|cpp|cxx|c\\+\\+|m|mm|o|obj|rb|php|cs|fs|vb|swift|dart|lua|pl|sh|bash|zsh|ps1|bat|cmd";

/** Version qualifiers: "(version 3.2)", "version 3.2", "node v20" (before version 1's number rules). */
export const VERSION_RULES: Rule[] = [
  // Dotted only: a bare integer after "version" often identifies ("class file major version 65").
  [/\bversion[ \t]+v?\d+(?:\.\d+)+(?:[-+][0-9a-z.]+)?\b/gi, "version <ver>"],
  [/\b(node(?:\.js)?|python|java|go|ruby|php)[ \t]+v?\d+(?:\.\d+)?\b(?!\.\d)/gi, "$1 <ver>"],
];

/** Placeholders a reporter typed into a path ("/<project-path>/x.ts", "C:\\Users\\...\\app"): a segment. */
export const PATH_PLACEHOLDERS: Rule[] = [
  [/(?<=[\\/])(?:<[\w .-]{1,40}>|\.{3}|\u2026)(?=[\\/])/g, "x"],
  [/(?<![\w<>./\\])(?:<[\w .-]{1,40}>|\.{3}|\u2026)(?=\/[\w.-])/g, "/x"],
  [/\\(?=['"])/g, ""], // escaped quotes from a repr or a JSON string
];

export const V2_VALUE_RULES: Rule[] = [
  // Kubernetes pod names: "<deployment>-<replicaset hash>-<5 chars>".
  [/\b([a-z][a-z0-9-]{0,60}?)-[a-z0-9]{8,10}-[a-z0-9]{5}\b/g, (m, name: string) => (/\d/.test(m.slice(name.length)) ? `${name}-<pod>` : m)],
  // Go module and package paths (host with a dot, then segments): the user's own project.
  [
    /(?=[a-z0-9-])(?<=\b(?:package|module|imported by|providing package|requires?|go get|#)[ \t(]+)(?:[a-z0-9-]{1,63}\.)+[a-z]{2,10}(?:\/[\w.~-]{1,100}){1,12}/gi,
    "<module>",
  ],
  // The user's source files and object files, bare or in a relative path, with or without a line.
  [
    new RegExp(`(?<![\\w.<>/@-])(?:[\\w.@+-]{1,100}/){0,12}[\\w.+-]{1,200}\\.(?:${SOURCE_EXT})(?![\\w+-])`, "gi"),
    (m) => (/(?:^|\/)(?:node_modules|site-packages|dist-packages)\//i.test(m) ? m : "<src>"),
  ],
  [new RegExp(`<path>/[\\w.+-]{1,200}\\.(?:${SOURCE_EXT})(?![\\w+-])`, "gi"), "<path>/<src>"],
  // A linker's "in function `main':" and the section offset "(.text+0x1c)".
  [/\bin function [`'"][^`'"\n]{1,200}[`'"]:[ \t]*/gi, ""],
  [/:?\(\.text[\w.]*\+<hex>\):?[ \t]*/gi, " "],
  // JVM internal class names ("org/springframework/boot/loader/JarLauncher has been compiled").
  [/(?<![\w/.<>-])[a-z][\w$]{0,60}(?:\/[\w$]{1,100}){2,20}(?=[ \t]+has been compiled)/g, "<class>"],
  // A host named by address: "localhost" (127.0.0.1) and 127.0.0.1 are the same place.
  [/(?:\blocalhost|"[\w.-]{1,100}")[ \t]*\(<ip>\)/gi, "<ip>"],
  [/\blocalhost\b/gi, "<ip>"],
  // Kubernetes object names the user chose: namespace "default", pod "web-1".
  [
    /\b(namespace|pod|deployment|service|secret|configmap|serviceaccount|persistentvolumeclaim|node)([ \t]+)"[^"\n]{1,253}"/gi,
    '$1$2"<name>"',
  ],
  [/\b(in the namespace)[ \t]+"?[a-z0-9][a-z0-9-]{0,62}"?/gi, "$1 <name>"],
  // apt's "Err:9 http://archive... focal InRelease" in front of its message.
  [/^(?:\d{1,4}[ \t]+)?<url>[ \t]+[\w/.-]{1,60}(?:[ \t]+[\w/.-]{1,60})?[ \t]+(?:in)?release:?[ \t]+/i, ""],
  // The user's source file or binary as a location in front of the message (linkers, loaders).
  [/^(?:<path>\/?)?(?:<src>)?(?::<line>)?(?:\(<line>\))?:[ \t]+/, ""],
  [/^(?:<path>\/)?<src>(?::<line>)?[ \t]+/, ""],
  // Module qualifiers of an exception class: ssl.SSLCertVerificationError, java.lang.X.
  [/(?<![\w.$])(?:[A-Za-z_][\w$]*\.){1,8}([A-Z][\w$]*(?:Error|Exception))\b/g, "$1"],
];

/**
 * rustc names the user's own bindings in backticks in its borrow-checker and name-resolution
 * errors; there the code identifies the error. Other codes name crates and targets that matter.
 */
export const RUST_USER_NAME_CODES = /\berror\[e0(?:382|384|425|499|502|505|506|507|596|597|716)\]/i;

export function foldRustNames(s: string): string {
  if (!RUST_USER_NAME_CODES.test(s)) return s;
  return s.replace(/`[^`\n]{1,200}`/g, "`<name>`");
}

/** A closing bracket at the end whose opener was cut off with a wrapper ("[Error: x]" → "x]"). */
export function unbalancedClose(s: string, tail: string): boolean {
  const count = (re: RegExp) => (s.match(re) ?? []).length;
  return tail.includes("]") ? count(/\[/g) < count(/\]/g) : tail.includes(")") ? count(/\(/g) < count(/\)/g) : count(/\{/g) < count(/\}/g);
}

/** Quote characters differ between tools, locales and versions (`x', 'x', "x", `x`): drop them. */
export function dropQuotes(s: string): string {
  return s.replace(/[`'"\u2018\u2019\u201c\u201d]/g, "");
}

/**
 * The version-2 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV2(errorText: string): string {
  let s = cleanText(errorText)
    .replace(/\\u001b\[[0-9;?]*[A-Za-z]/gi, "")
    .replace(/(?<![\w\]])\[(?:\d{1,3}(?:;\d{1,3}){0,4})?m/g, "") // ANSI codes whose ESC was lost
    // HTML entities from a web page or an HTML log viewer.
    .replace(/&(?:quot|#34|#x22);?/gi, '"')
    .replace(/&(?:apos|#39|#x27);?/gi, "'")
    .replace(/&lt;/gi, "<")
    .replace(/&gt;/gi, ">")
    .replace(/&amp;/gi, "&")
    // "OutOfMemoryError:java heap space": the space after an exception class's colon.
    .replace(/\b(\w{1,100}(?:Error|Exception)):(?=[^\s:/\\])/g, "$1: ");
  s = extractEmbedded(s);
  s = pickLines(s);
  // Rust >= 1.73 puts the panic's location, then the message on the next line.
  s = s.replace(/^thread[ \t]+'[^'\n]{0,100}'[ \t]+panicked at[ \t]+[^\s'][^\s]{0,500}:\d+:\d+:[ \t]*\n?/i, "");
  s = s.replace(/\n+/g, " ");
  s = stripTrailers(s);
  s = stripPrefixes(s);
  s = extractEmbedded(s);
  s = pickCause(s);
  s = stripTrailers(s);
  s = stripSuffixes(s);
  s = applyRules(s, EARLY_RULES);
  s = applyRules(s, ENV_RULES);
  s = applyRules(s, PATH_PLACEHOLDERS);
  s = applyRules(s, VERSION_RULES);
  s = s.replace(PATH_RE, (m) => normalizePath(m));
  s = applyRules(s, VALUE_RULES);
  s = applyRules(s, V2_VALUE_RULES);
  s = foldRustNames(s);
  s = s.replace(GIT_REF_LINE, "$1<ref> -> <ref>");
  s = dropQuotes(s);
  return s
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "")
    .replace(/(?<![ \t])[ \t]*[\])}]+$/, (m) => (unbalancedClose(s, m) ? "" : m))
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "")
    .trim();
}

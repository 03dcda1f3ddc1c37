// Normalizer version 4 (frozen): the rules fingerprints were computed with until version 5
// (error-normalizer.ts). It stays so that fingerprints stored by an older colony can be recognised
// and kept as aliases (docs/fingerprint.md, Versioning). Do not edit: any change here changes the
// aliases of stored trails. Version 5 reuses the pieces exported below.
//
// Version 4 = version 3 (error-normalizer-v3.ts, frozen; it builds on versions 2 and 1) plus:
// more runner lines dropped (docker push progress, cargo's index updates, webpack's "ERROR in"
// location, gcc's "compilation terminated", hint lines), the inner cause of a few well-known
// wrapped errors (registry denials, Go's failed dial after the host it was reaching, the x509 and
// Kubernetes mapping errors, Redis replies), and more of the user's own values folded: names in a
// compiler diagnostic that carries its warning flag, a quoted value, a target triple, the file an
// out-of-space or out-of-files error happened to touch, a database client's exception class.
//
// Every regex is anchored at the start of a line or starts with a lookbehind/word boundary, and has
// no nested ambiguous quantifiers, so the whole pass stays linear on adversarial input.
import {
  applyRules,
  cleanText,
  EARLY_RULES,
  GIT_REF_LINE,
  normalizePath,
  PATH_RE,
  stripSuffixes,
  VALUE_RULES,
} from "./error-normalizer-v1.ts";
import {
  dropQuotes,
  ENV_RULES,
  extractEmbedded,
  foldRustNames,
  PATH_PLACEHOLDERS,
  pickCause,
  pickLines,
  stripLinePrefixes,
  stripPrefixes,
  stripTrailers,
  unbalancedClose,
  V2_VALUE_RULES,
  VERSION_RULES,
} from "./error-normalizer-v2.ts";
import {
  afterLastSeverity,
  dropChatterBeforeError,
  firstSentence,
  LEADING_CLASS,
  STRERROR_END,
  stripV3LinePrefixes,
  TRAILER_LINES,
  unwrapCause,
  unwrapWholeReport,
  V3_VALUE_RULES,
  wordsOf,
} from "./error-normalizer-v3.ts";

// ---------------------------------------------------------------------------------------------
// 1. Lines a runner prints around the error (on top of version 3's), dropped wherever they stand.

export const V4_TRAILER_LINES: RegExp[] = [
  ...TRAILER_LINES,
  // gcc's last line after a fatal error.
  /^compilation terminated\.?$/i,
  // docker push and pull progress per layer ("47f5e43a4809: Preparing", "…: Skipped foreign layer").
  /^[0-9a-f]{12}:[ \t]+(?:preparing|waiting|pushing|pushed|layer already exists|skipped foreign layer|mounted from[ \t]+\S{1,300}|retrying in \d+ seconds?)\b/i,
  // cargo's index and download progress ("Updating crates.io index"), a themed shell prompt ("» cargo run").
  /^(?:updating|downloading|downloaded|locking|fetching)[ \t]+(?:crates\.io index|git repository|\d+ (?:crates?|packages?))\b/i,
  /^[»❯➜][ \t]+\S/,
  // Hints a tool prints under its message ("For more information …", "See 'docker run --help'.").
  /^for more (?:information|details)\b.{0,300}$/i,
  /^see[ \t]+'[\w .-]{1,80}--help'\.?$/i,
  /^ensure CRDs are installed first$/i,
  // Jenkins' line after a failed step.
  /^script returned exit code \d+$/i,
  // CMake's location header over its message ("CMake Error at CMakeLists.txt:2 (project):") and
  // its progress column ("[  6%] Building NVCC (Device) object …").
  /^cmake (?:error|warning)(?:[ \t]+\(dev\))?[ \t]+(?:at|in)[ \t]+[^\n]{1,300}:$/i,
  /^\[[ \t]*\d{1,3}%\][ \t]+\S/,
];

export function dropV4TrailerLines(text: string): string {
  const lines = text.split("\n");
  const kept = lines.filter((l) => !V4_TRAILER_LINES.some((re) => re.test(l.trim())));
  return kept.length > 0 ? kept.join("\n") : text;
}

/** webpack's "ERROR in ./src/App.js 40:39-45" location line and its "ERROR in " before a message. */
export const WEBPACK_LOCATION = /^ERROR in[ \t]+(?:\.{0,2}\/\S{1,500}(?:[ \t]+\d+:\d+(?:-\d+)?)?[ \t]*$)?/;
export const WEBPACK_AT = /(?<![\w-])ERROR in[ \t]+/;
/** Rust's env_logger with a timestamp: "[2025-04-19T14:00:17Z ERROR app] ". */
export const ENV_LOGGER = /^[ \t]*\[\d{4}-\d{2}-\d{2}T[^\s\]]{1,40}[ \t]+(?:ERROR|WARN|INFO|DEBUG|TRACE)[ \t]+[\w:-]{1,200}\][ \t]*/;

export function stripV4LinePrefixes(line: string): string {
  const s = stripV3LinePrefixes(line.replace(ENV_LOGGER, ""));
  // webpack's column may stand behind another runner's prefix (a compose column): only when all
  // that precedes it is a prefix version 2 strips.
  const at = WEBPACK_AT.exec(s);
  if (at && stripLinePrefixes(`${s.slice(0, at.index)}x`).trim() === "x") return s.slice(at.index).replace(WEBPACK_LOCATION, "");
  return s;
}

// ---------------------------------------------------------------------------------------------
// 2. Inner causes: a library's own error that callers wrap in their context. The last (innermost)
//    occurrence of the first kind found starts the message; what was wrapped around it goes.

export const INNER_CAUSES: (RegExp | "go-dial")[] = [
  // A registry's refusal to pull (before its "denied: …" detail, which a push error shares).
  /\bpull access denied for\b/gi,
  /\brequested access to the resource is denied\b/gi,
  // Go's failed dial, after the host it was reaching (dialCause; a listener's bind error is version 3's).
  "go-dial",
  // Go's certificate checks ("tls: failed to verify certificate: x509: …", "Get …: x509: …").
  /(?<![\w-])x509:[ \t]+(?=\S)/g,
  // Go's "x imports y: package y is not in GOROOT (…)".
  /\bpackage[ \t]+\S{1,300}[ \t]+is not in (?:GOROOT|std)\b/g,
  // Kubernetes' REST mapper under kubectl and helm ("unable to recognize \"x.yaml\": ", "resource mapping not found …: ").
  /\bno matches for kind\b/gi,
  // apt's "Failed to fetch <url>  Temporary failure resolving 'deb.debian.org'".
  /\btemporary failure resolving\b/gi,
  // A Kubernetes object a pod needs ("MountVolume.SetUp failed for volume …: configmap \"x\" not found").
  /\b(?:configmaps?|secrets?)[ \t]+"[^"\n]{1,253}"[ \t]+not found\b/gi,
  // A Redis error reply ("NOAUTH Authentication required.", "[ErrorReply: MISCONF …]").
  /(?<![\w-])(?:NOAUTH|MISCONF|WRONGTYPE|READONLY|NOPERM|WRONGPASS|CROSSSLOT|CLUSTERDOWN|EXECABORT|NOSCRIPT|BUSYKEY)[ \t]+(?=[A-Z])/g,
];

/** Go's failed dial ("dial tcp 10.0.0.1:443: connect: connection refused"), its last occurrence. */
export const GO_DIAL = /(?<![\w-])dial[ \t]+(?:tcp[46]?|udp[46]?|unix)[ \t]+(?=\S)/g;
/** The host of a Go HTTP client's request in front of its failed dial ("Get \"https://host:443/x\": "). */
export const REQUEST_HOST =
  /\b(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)[ \t]+"?[a-z][a-z0-9+.-]{0,20}:\/\/(?:[^@\s/"]{1,200}@)?(\[[^\]\s]{1,100}\]|[^\s/:"?#]{1,300})[^\s"]{0,2000}"?:[ \t]+$/i;
/** A host name alone in front of a failed dial ("proxy.golang.org: dial tcp …"). */
export const BARE_HOST =
  /(?:^|[ \t])((?:localhost|[a-z0-9](?:[a-z0-9-]{0,62}\.){1,10}[a-z]{2,63}|<redacted:[a-z_]{1,40}>|redacted_[a-z_]{1,40}|\d{1,3}(?:\.\d{1,3}){3})):[ \t]+$/i;

/**
 * A failed dial says only that something was unreachable (refused, timed out, reset): what was
 * being reached identifies the error, so the host a request or a wrapper named stays in front of it
 * (`Get "http://localhost:8080/version": dial tcp …` gives "<ip>: dial tcp <ip>:<port>: …" once
 * addresses are folded, a cluster's webhook service "redacted_host: …", the module proxy
 * "proxy.golang.org: …"). A dial no host is named for keeps its context, as in version 3: with
 * nothing in front, a proxy's upstream, a database driver's server and a Kubernetes webhook would
 * all read "dial tcp <ip>:<port>: connect: connection refused".
 */
export function dialCause(s: string): string | null {
  let last = -1;
  for (const m of s.matchAll(GO_DIAL)) last = m.index;
  if (last < 0) return null;
  const before = s.slice(0, last);
  const host = REQUEST_HOST.exec(before)?.[1] ?? BARE_HOST.exec(before)?.[1];
  return host ? `${host}: ${s.slice(last)}` : null;
}

export function innerCause(input: string): string {
  // Monolog's context record repeats the message inside its exception's text.
  const s = input.replace(/(?<![ \t])[ \t]+\{"?exception"?:[^\n]*$/i, "");
  for (const re of INNER_CAUSES) {
    if (re === "go-dial") {
      const dial = dialCause(s);
      if (dial !== null) return dial;
      continue;
    }
    let last = -1;
    for (const m of s.matchAll(re)) last = m.index;
    if (last > 0) return s.slice(last);
    if (last === 0) return s;
  }
  return s;
}

// Windows words the socket errors of the same calls differently: the POSIX text stands for both.
export const WINDOWS_SOCKET_ERRORS: [RegExp, string][] = [
  [/\bconnectex:[ \t]+no connection could be made because the target machine actively refused it\.?/gi, "connect: connection refused"],
  [
    /\bbind:[ \t]+only one usage of each socket address \(protocol\/network address\/port\) is normally permitted\.?/gi,
    "bind: address already in use",
  ],
  [
    /\[WinError 10061\][ \t]+no connection could be made because the target machine actively refused it\.?/gi,
    "[Errno 111] Connection refused",
  ],
  [
    /\[WinError 10048\][ \t]+only one usage of each socket address \(protocol\/network address\/port\) is normally permitted\.?/gi,
    "[Errno 98] Address already in use",
  ],
  [/\bwsarecv:[ \t]+an existing connection was forcibly closed by the remote host\.?/gi, "read: connection reset by peer"],
];

// Rust panics printed without "thread 'x'" (a logger's "[PANIC] panicked at src/x.rs:1:2:"), or
// in the old one-line form quoted by a reporter ("panic at 'msg',").
export const PANIC_LOCATION =
  /^(?:\[[A-Za-z]{1,10}\][ \t]*){0,3}(?:thread[ \t]+'[^'\n]{0,100}'[ \t]+)?panicked at[ \t]+[^\s'][^\s]{0,500}:\d+:\d+:[ \t]*\n?/i;
export const PANIC_QUOTED = /^panic(?:ked)?[ \t]+at[ \t]+'([^\n]{1,4000}?)',?(?:[ \t]+\S{1,500}:\d+:\d+)?$/i;

// ---------------------------------------------------------------------------------------------
// 3. Values the user chose, and the wording of a few messages that tools print in several forms.

/** node's errno texts, for its older format without them ("listen EADDRINUSE :::3000"). */
export const NODE_NET_STRERROR: Record<string, string> = {
  EADDRINUSE: "address already in use",
  EACCES: "permission denied",
  ECONNREFUSED: "connection refused",
  EADDRNOTAVAIL: "address not available",
};

/** Host triples of compilers and toolchains ("x86_64-unknown-linux-gnu", "aarch64-apple-darwin"). */
export const TRIPLE =
  "(?:x86_64|i[3-6]86|aarch64|arm(?:v\\d{1,2}\\w{0,4})?|riscv64\\w{0,10}|powerpc64(?:le)?|s390x|wasm32)-(?:(?:unknown|pc|apple|w64|none|linux|gnu|musl|msvc|darwin|windows|android|eabi|eabihf|gnueabihf|wasi|elf|ios|freebsd)(?:-|\\b)){1,3}";

export const V4_VALUE_RULES: [RegExp, string | ((m: string, ...g: string[]) => string)][] = [
  // gcc echoes the source line under a diagnostic; clang names a promoted warning "[-Werror,-Wx]".
  [/(\[-W[\w=+-]{1,100}\])[ \t][^\n]*$/, "$1"],
  [/\[-werror,(-W[\w+-]{1,100})\]/gi, "[$1]"],
  // A cross compiler's name ("x86_64-linux-gnu-gcc") is the compiler's; another host triple is the machine's.
  [new RegExp(`(?<![\\w.-])${TRIPLE}(?=(?:gcc|g\\+\\+|cc|c\\+\\+|ld|ar)\\b)`, "g"), ""],
  [new RegExp(`(?<![\\w.])${TRIPLE}(?<=\\w)(?![\\w.-])`, "g"), "<target>"],
  // A character named by its 8-digit escape ("\U0001f609").
  [/\\U[0-9a-f]{8}/gi, "<char>"],
  // A value the user gave ("time zone value 'CEST'"), a Rust feature they used.
  [/\b(value)[ \t]+(['"])[^'"\n]{0,100}\2/gi, "$1 <value>"],
  [/\b(use of unstable (?:library )?feature)[ \t]+(['`"])[\w]{1,100}\2(?::[^\n]*)?/gi, "$1 <feature>"],
  // An ordinal ("Expression #2 of SELECT list").
  [/(?<=\w[ \t])#\d{1,6}\b/g, "#<n>"],
  // The file an error about the device or the process's limits happened to touch: out of space,
  // a read-only file system, out of file handles or watchers ("write <path>/x.so: no space left
  // on device", "EMFILE: too many open files, watch '/x/y'").
  [
    /(?:<path>|node_modules|site-packages|dist-packages)\/[^\s:]{1,300}(?=:[ \t]+(?:no space left on device|read-only file system|disk quota exceeded)\b)/gi,
    "<path>",
  ],
  [/^(E(?:MFILE|NFILE|NOSPC)):([^,\n]{1,200}),[ \t]+(\w{1,20})\b[^\n]*$/, "$1:$2, $3"],
  // The path a message calls a path ("the path /x/y is not shared") is the user's.
  [/\b(the[ \t]+paths?)[ \t]+<path>\/[^\s:,]{1,300}/gi, "$1 <path>"],
  // node's older errno format, without the text ("listen EADDRINUSE :::3000").
  [
    /^(?:listen|connect|bind)[ \t]+(EADDRINUSE|EACCES|ECONNREFUSED|EADDRNOTAVAIL)[ \t]+(?=<ip>)/,
    (_m: string, code: string) => `${code}: ${NODE_NET_STRERROR[code]} `,
  ],
  // A PHP framework's location after the message ("(in /site/modules/x.module line 249)").
  [/(?<![ \t])[ \t]*\(in[ \t]+<path>(?:\/[^\s)]{1,300})?[ \t]+line[ \t]+<line>\)$/i, ""],
  // webpack's list of what a module does export, after "export 'x' was not found".
  [/(?<![ \t])[ \t]*\(possible exports:[^\n]*$/i, ""],
  // Android's manifest merger names the user's component ("<activity#com.x.MainActivity>").
  [/(?:element[ \t]+)?<(activity|service|receiver|provider)#[\w.$]{1,300}>/g, "<$1>"],
  // A registry's "the repository does not exist", and what follows "may require 'docker login'".
  [/(\bpull access denied for[ \t]+<name>,)[ \t]+the[ \t]+(?=repository does not exist)/gi, "$1 "],
  [/(\bmay require[ \t]+['"]?docker login['"]?)[^\n]*$/i, "$1"],
  // A MySQL account ('root'@'%', 'root'@'******'): the user and the host are the user's.
  [/(?:(['"])[\w.$-]{0,100}\1|<user>)@(['"])(?:%|\*{2,20}|<ip>|[\w.%-]{1,200})\2/g, "<user>@<ip>"],
  // The user's file that a docker build did not find in its context; the beans of a Spring cycle.
  [/(file not found in build context or excluded by \.dockerignore:[ \t]+stat)[ \t]+\S{1,300}:/gi, "$1 <name>:"],
  [/\b(the dependencies of some of the beans in the application context form a cycle)\b[^\n]*$/i, "$1"],
  // Spring's translation of a JDBC error repeats it after the message.
  [/(?<![ \t])[ \t]*;[ \t]*uncategorized SQLException\b[^\n]*$/i, ""],
  // CMake's location in front of its message, when it stayed on the message's line.
  [/^(?:cmake[ \t]+)?error[ \t]+(?:at|in)[ \t]+[\w./-]{1,300}(?::<line>)?(?:[ \t]+\([\w]{1,100}\))?:[ \t]+/i, ""],
];

export const LIMIT_IN_BYTES = /\b(max(?:imum)?[ \t]+(?:[a-z]{1,20}[ \t]+){0,3}is[ \t]+)(\d{1,7})[ \t]+bytes\b/gi;

/** A database client's exception class (PEP 249 names, JDBC's): the server's message identifies. */
export const DB_API_CLASS =
  /^(?:[A-Za-z_][\w$]*\.){0,8}(?:OperationalError|ProgrammingError|IntegrityError|DataError|DatabaseError|InternalError|InterfaceError|NotSupportedError|SQLException|SQLSyntaxErrorException):[ \t]+(?=\S)/;
/** A class name written without its colon or its suffix ("SSLHandshake No appropriate protocol …"). */
export const BARE_CLASS = /^[A-Z][a-z0-9]{0,30}[A-Z][A-Za-z0-9]{0,60}[ \t]+(?=[A-Z][a-z])/;
/** MySQL's error number in front of a message long enough to identify the error without it. */
export const MYSQL_NUMBER = /^(?:(?:sql[ \t]+)?error[ \t]+)?\d{4}:?[ \t]+(?=[A-Za-z<])/i;
/** PDO's "SQLSTATE[42000]: Syntax error or access violation: 1055 " wherever a wrapper left it. */
export const PDO_STATE = /^sqlstate\[[0-9A-Z]{5}\]:[ \t]*[^:\n]{1,80}:[ \t]*(?=\d{4}[ \t])/i;

export function gccNames(s: string): string {
  // In a diagnostic that carries its warning flag, the flag identifies the error; the quoted names
  // are the user's (their function, variable, keyword in context).
  if (!/\[-W[\w=+-]{1,100}\]$/.test(s)) return s;
  return s.replace(/(['‘`])[\w:~<>*&[\] ]{1,100}(['’])/g, "'<name>'");
}

export function templateV4(input: string): string {
  let s = afterLastSeverity(input);
  for (const [re, to] of V3_VALUE_RULES) s = s.replace(re, to);
  for (const [re, to] of V4_VALUE_RULES) s = s.replace(re, to as string);
  s = gccNames(s);
  s = firstSentence(s);
  const db = DB_API_CLASS.exec(s);
  if (db) s = s.slice(db[0].length);
  s = s.replace(PDO_STATE, "");
  // 1045 and 1698 share "Access denied for user …" (seven words): a short message keeps its number.
  const mysql = MYSQL_NUMBER.exec(s);
  if (mysql && wordsOf(s.slice(mysql[0].length)) >= 9) s = s.slice(mysql[0].length);
  // The class in front of a message that identifies the error by itself: loggers, wrappers and
  // other releases print the message without it.
  const cls = LEADING_CLASS.exec(s) ?? BARE_CLASS.exec(s);
  if (cls && !/\[[A-Z]/.test(cls[0])) {
    const rest = s.slice(cls[0].length);
    if (wordsOf(rest) >= 4 && !STRERROR_END.test(rest)) s = rest;
  }
  return s;
}

/**
 * The version-4 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV4(errorText: string): string {
  let s = cleanText(errorText)
    .replace(/\\u001b\[[0-9;?]*[A-Za-z]/gi, "")
    // ANSI codes whose ESC was lost; a bare "[m" only when no word follows (not "[main]").
    .replace(/(?<![\w\]])\[(?:\d{1,3}(?:;\d{1,3}){0,4}m|m(?![a-z]))/g, "")
    // HTML entities from a web page or an HTML log viewer.
    .replace(/&(?:quot|#34|#x22);?/gi, '"')
    .replace(/&(?:apos|#39|#x27);?/gi, "'")
    .replace(/&lt;/gi, "<")
    .replace(/&gt;/gi, ">")
    .replace(/&amp;/gi, "&")
    // "OutOfMemoryError:java heap space": the space after an exception class's colon.
    .replace(/\b(\w{1,100}(?:Error|Exception)):(?=[^\s:/\\])/g, "$1: ");
  s = unwrapWholeReport(s);
  s = extractEmbedded(s);
  s = dropV4TrailerLines(s.split("\n").map(stripV4LinePrefixes).join("\n"));
  s = dropChatterBeforeError(pickLines(s));
  // Rust >= 1.73 puts the panic's location, then the message on the next line.
  s = s.replace(PANIC_LOCATION, "");
  s = s.replace(/\n+/g, " ");
  s = s.replace(PANIC_QUOTED, "$1");
  s = stripTrailers(s);
  s = stripPrefixes(s);
  s = extractEmbedded(s);
  s = unwrapCause(s);
  s = unwrapCause(pickCause(s));
  s = innerCause(s);
  for (const [re, to] of WINDOWS_SOCKET_ERRORS) s = s.replace(re, to);
  s = stripTrailers(s);
  s = stripSuffixes(s);
  s = applyRules(s, EARLY_RULES);
  s = applyRules(s, ENV_RULES);
  s = applyRules(s, PATH_PLACEHOLDERS);
  s = applyRules(s, VERSION_RULES);
  s = s.replace(PATH_RE, (m) => normalizePath(m));
  // A limit the message states is no size that differs between machines: MySQL's "max key length
  // is 767 bytes" (InnoDB) and "is 1000 bytes" (MyISAM) need different fixes.
  s = s.replace(LIMIT_IN_BYTES, "$1$2-bytes");
  s = applyRules(s, VALUE_RULES);
  s = applyRules(s, V2_VALUE_RULES);
  s = foldRustNames(s);
  s = s.replace(GIT_REF_LINE, "$1<ref> -> <ref>");
  s = templateV4(s);
  s = dropQuotes(s);
  return s
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "")
    .replace(/(?<![ \t])[ \t]*[\])}]+$/, (m) => (unbalancedClose(s, m) ? "" : m))
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "")
    .trim();
}

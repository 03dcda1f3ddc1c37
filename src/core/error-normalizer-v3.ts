// Normalizer version 3 (frozen): the rules fingerprints were computed with until version 4
// (error-normalizer.ts). It stays so that fingerprints stored by an older colony can be recognised
// and kept as aliases (docs/fingerprint.md, Versioning). Do not edit: any change here changes the
// aliases of stored trails. Version 4 reuses the pieces exported below.
//
// Version 3 = version 2 (error-normalizer-v2.ts, frozen; it builds on version 1's value rules)
// plus: more logger, runner and orchestrator prefixes per line, chatter lines in front of the
// error line dropped, database client wrappers around a server message unwrapped, and the
// message reduced to its template: the names the user chose (quoted names, packages, modules,
// classes, libraries, features) become placeholders, and only the first sentence of a long
// message is kept (later sentences are advice that tools reword between releases).
//
// Every regex is anchored at the start of a line or starts with a lookbehind/word boundary, and has
// no nested ambiguous quantifiers, so the whole pass stays linear on adversarial input.
import {
  applyRules,
  cleanText,
  EARLY_RULES,
  GIT_REF_LINE,
  NOISE_PREFIXES,
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
  stripPrefixes,
  stripTrailers,
  unbalancedClose,
  V2_VALUE_RULES,
  VERSION_RULES,
} from "./error-normalizer-v2.ts";

// ---------------------------------------------------------------------------------------------
// 1. Per-line prefixes (on top of version 2's), removed before the lines are picked.

export const V3_LINE_PREFIXES: RegExp[] = [
  // Heroku's router and dyno column "app[web.1]: ", a bare syslog tag "sshd[1434]: " (not rustc's
  // "error[E0382]: ").
  /^[ \t]*(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?[ \t]+)?(?!(?:error|warning|warn|note|help)\[)[a-z][\w-]{0,30}\[(?:[a-z]{1,20}\.\d{1,4}|\d{1,10})\]:[ \t]*/i,
  // Dropwizard's "! " in front of every line of a stack, grunt's ">> ".
  /^[ \t]*!(?:[ \t]+(?!\[)|$)/, // not git's "! [rejected]"
  /^[ \t]*>>[ \t]+/,
  // Terraform's box "│ ", a reporter's quote "> " in front of every line.
  /^[ \t]*[│┃][ \t]*/,
  // Kubernetes' klog header "E0418 04:56:17.489683       1 reflector.go:201] ".
  /^[ \t]*[IWEF]\d{4}[ \t]+\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?[ \t]+\d{1,10}[ \t]+[\w.-]{1,200}:\d{1,6}\][ \t]*/,
  // A kubectl event row: "Warning  FailedScheduling  112s (x3 over 5m33s)  default-scheduler  ".
  /^[ \t]*(?:Warning|Normal)[ \t]+[A-Z]\w{1,60}[ \t]+\S{1,20}(?:[ \t]+\(x\d{1,6} over \S{1,20}\))?[ \t]+[\w-]{1,60}[ \t]{2,}/,
  // Monolog (Laravel, Symfony): "local.ERROR: " after its timestamp.
  /^[ \t]*[a-z][\w-]{0,30}\.(?:DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY):[ \t]+/,
  // The Open Build Service's elapsed time "[   47s] ", a list bullet "* ".
  /^[ \t]*\[[ \t]*\d{1,6}s\][ \t]*/,
  /^[ \t]*\*[ \t]+(?=\S)/,
];

/**
 * Lines a build, runner or orchestrator prints after the error: make's and ninja's failure lines,
 * compose's exit line, a shell trace, node's "Require stack:" list, cmake's call stack, a Java
 * frame printed without "at". They never identify the error.
 */
export const TRAILER_LINES: RegExp[] = [
  /^(?:[\w./-]{1,300}:\d+:[ \t]+)?recipe for target[ \t].{0,300}failed$/i,
  /^ninja:[ \t]+build stopped\b/i,
  /^[\w.-]{1,100}[ \t]+exited with code[ \t]+\d+$/i,
  /^\+[ \t]+\S/,
  /^require stack:$/i,
  /^-[ \t]+(?:<path>|[A-Za-z]:\\|\/|\.{0,2}\/|node_modules)\S{0,500}$/,
  /^call stack \(most recent call first\):$/i,
  // A header over a list of errors: "1 error occurred:", "[preflight] Some fatal errors occurred:".
  /^.{0,100}?\b(?:some (?:fatal )?errors occurred|\d+ errors? occurred):?$/i,
  // Terraform's context under a diagnostic: "with module.x.y[0],", "on main.tf line 12, in resource …:".
  /^with[ \t]+[\w.[\]"-]{1,300},?$/,
  /^on[ \t]+\S{1,300}[ \t]+line[ \t]+\d+(?:,[ \t]+in[ \t].{0,300})?:?$/,
  /^[\w$.<>]{1,300}[ \t]+\([\w$.-]{1,200}\.(?:java|kt|scala):\d+\)$/,
];

export function dropTrailerLines(text: string): string {
  const lines = text.split("\n");
  const kept = lines.filter((l) => !TRAILER_LINES.some((re) => re.test(l.trim())));
  return kept.length > 0 ? kept.join("\n") : text;
}

/** A whole report a reporter wrapped in backticks or quotes (markdown, a sentence). */
export function unwrapWholeReport(s: string): string {
  const m = /^([`"'“‘])([\s\S]*)([`"'”’])\.?$/.exec(s);
  if (!m || m[2]!.length < 8) return s;
  const [open, inner, close] = [m[1]!, m[2]!, m[3]!];
  const pairs: Record<string, string> = { "`": "`", '"': '"', "'": "'", "“": "”", "‘": "’" };
  if (pairs[open] !== close || (inner.includes(open) && open !== "`")) return s;
  return inner.trim();
}

/** Timestamps (version 1's first three noise prefixes) that may stand before the prefixes above. */
export const LEADING_TIMESTAMPS = NOISE_PREFIXES.slice(0, 3);

export function stripV3LinePrefixes(line: string): string {
  let s = line;
  for (let guard = 0; guard < 4; guard++) {
    const before = s;
    const indent = /^[ \t]*/.exec(s)![0];
    let rest = s.slice(indent.length);
    for (const re of LEADING_TIMESTAMPS) rest = rest.replace(re, "");
    // Only a timestamp in front of one of the prefixes goes here; a bare one is left to version 2.
    let stripped = rest;
    for (const re of V3_LINE_PREFIXES) stripped = stripped.replace(re, "");
    if (stripped !== rest) s = indent + stripped;
    if (s === before) break;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// 2. Chatter a program printed just before its error line ("Building program", "cpu at 12.6 on
//    host"): when a later line starts the way errors start and nothing before it reads as an
//    error, the error line starts the message.

export const ERROR_START =
  /^(?:panic|fatal error|fatal|error|uncaught|exception in thread|traceback)\b[^\n]{0,40}?:|^(?:[A-Za-z_][\w$]*\.){0,8}[A-Z][\w$]*(?:Error|Exception)\b:?/;
export const ERROR_WORDS_V3 =
  /error|exception|panic|fatal|failed|failure|cannot|can't|couldn't|unable|not found|denied|refused|invalid|missing|unknown|no such|timed? ?out/i;

export function dropChatterBeforeError(block: string): string {
  const lines = block.split("\n");
  if (lines.length < 2) return block;
  const at = lines.findIndex((l) => ERROR_START.test(l));
  if (at <= 0) return block;
  if (lines.slice(0, at).some((l) => ERROR_WORDS_V3.test(l))) return block;
  return lines.slice(at).join("\n");
}

// ---------------------------------------------------------------------------------------------
// 3. Wrappers around a cause that version 2 did not unwrap.

export const CAUSE_WRAPPERS: [RegExp, string][] = [
  // A Python exception's repr: "RecursionError('maximum recursion depth exceeded')".
  [/^((?:[A-Za-z_]\w*\.){0,8}[A-Z]\w*(?:Error|Exception|Warning))\((['"])([^\n]{1,4000})\2\)$/, "$1: $3"],
  // MySQL clients print the error number in their own format: "ERROR 1698 (28000): ", "Error Code:
  // 1055. ", PyMySQL's "(1698, \"...\")", PHP's "(HY000/1698): ", PDO's "SQLSTATE[42000]: Syntax
  // error or access violation: 1055 ". The number stays (1045 and 1698 share their text).
  [/^\((\d{4}),[ \t]*(['"])([^\n]{1,4000})\2\)$/, "$1: $3"],
  [/^(?:error[ \t]+)?(\d{4})[ \t]+\([0-9A-Z]{5}\)(?:[ \t]+at line \d+)?:[ \t]*/i, "$1: "],
  [/^(?:error[ \t]+code:[ \t]+)?(\d{4})\.[ \t]+(?=[A-Z])/i, "$1: "],
  [/^(?:[\w$]+\(\):[ \t]*)?\((?:HY000|[0-9A-Z]{5})\/(\d{4})\):[ \t]*/i, "$1: "],
  [/^sqlstate\[[0-9A-Z]{5}\]:[ \t]*[^:\n]{1,80}:[ \t]*(\d{4})[ \t]+/i, "$1: "],
  // Spring's "…; nested exception is X: msg": the innermost exception identifies the error.
  [/^[^\n]{0,4000}?;[ \t]*nested exception is[ \t]+(?=\S)/i, ""],
  // Ruby's namespaced classes in front of the message ("ActiveRecord::StatementInvalid: Mysql2::Error: ").
  [/^(?:[A-Z]\w{0,60}(?:::[A-Z]\w{0,60})+:[ \t]+)+(?=\S)/, ""],
  // PHP 5's "exception 'Exception' with message '...' in /x.php:82".
  [/^exception[ \t]+'[\w\\]{1,200}'[ \t]+with message[ \t]+'([^\n]{1,4000})'[ \t]+in[ \t]+\S{1,500}$/i, "$1"],
];

export function unwrapCause(input: string): string {
  let s = input;
  for (const [re, to] of CAUSE_WRAPPERS) s = s.replace(re, to);
  return s;
}

// ---------------------------------------------------------------------------------------------
// 4. The message's template.

/** A sentence end inside the message: later sentences are advice, hints and details. */
export const SENTENCE_END = /(?<=[A-Za-z0-9>)\]'"`])[.!][ \t]+(?=[A-Za-z<'"`])/g;
/** Abbreviations whose dot ends no sentence. */
export const ABBREVIATION = /\b(?:e\.g|i\.e|etc|vs|approx|incl|no|ca)$/i;

export function firstSentence(s: string): string {
  for (const m of s.matchAll(SENTENCE_END)) {
    const head = s.slice(0, m.index);
    if (ABBREVIATION.test(head.slice(-8))) continue;
    // A head too short to identify the error on its own keeps the next sentence (a leading
    // exception class is no word of the message).
    if (wordsOf(head.replace(LEADING_CLASS, "")) < 4) continue;
    return head;
  }
  return s;
}

export const wordsOf = (s: string) => s.split(/\s+/).filter((w) => w !== "").length;

/** A leading exception class ("AttributeError: ", "java.lang.NoSuchFieldError: "). */
export const LEADING_CLASS =
  /^(?:[A-Za-z_][\w$]*\.){0,8}[A-Za-z_][\w$]*(?:Error|Exception)(?:[ \t]*\[[A-Z][A-Z0-9_]{1,60}\])?:[ \t]+(?=\S)/;
/** System error texts: a message ending in one needs its class to stand for an error. */
export const STRERROR_END =
  /(?:no such file or directory|permission denied|connection refused|operation not permitted|is a directory|not a directory|file exists|broken pipe|connection reset by peer|timed out|no space left on device|address already in use|too many open files|exec format error|input\/output error|read-only file system|cannot allocate memory|no route to host)\W*$/i;

export const V3_VALUE_RULES: [RegExp, string][] = [
  // The user's own source file inside a path names nothing the path did not.
  [/<path>\/<src>/g, "<path>"],
  // A linker's archive member and the symbol's section in front of the message.
  [/^(?:<path>\/)?[\w.+-]{1,200}\.(?:a|lib)\(<src>\)(?::<src>)?(?::?\(\.[\w.]{1,60}\+<hex>\))?:?[ \t]*/i, ""],
  // A location at the end: PHP's "in /x.php:82", rustc's ", src/x.rs:160:55", MSBuild's "[x.vcxproj]".
  [/(?<![ \t])[ \t]+in[ \t]+<path>(?::<line>)?$/i, ""],
  [/,?(?<![ \t])[ \t]+<src>:<line>$/i, ""],
  [/(?<![ \t])[ \t]*\[(?:<path>\/)?[\w.-]{1,200}\.(?:vcxproj|csproj|vbproj|fsproj|sln|proj)\]$/i, ""],
  // gcc names a warning promoted to an error "[-Werror=x]", a plain one "[-Wx]".
  [/\[-werror=([\w+-]{1,100})\]/gi, "[-W$1]"],
  // stdcall decoration of a symbol ("WinMain@16") and a requested version ("(requested version 5.9)").
  [/(?<=\w)@\d{1,3}\b(?![.\w])/g, ""],
  [/(?<![ \t])[ \t]*\(requested[ \t]+version[ \t]+<ver>\)/gi, ""],
  // Space before a colon ("nvcc fatal   : ", "bad auth : "), a character named by its escape.
  [/(?<![ \t])[ \t]+:(?=[ \t]|$)/g, ":"],
  [/\\u[0-9a-f]{4}\b/gi, "<char>"],
  // A Go module at a version names the project's dependency, not the error.
  [/(?<![\w/.@-])(?:[a-z0-9-]{1,63}\.)+[a-z]{2,10}(?:\/[\w.~-]{1,100}){1,12}@<ver>/gi, "<module>@<ver>"],
  // SQL objects are the user's own: their database, schema, table, column names.
  [
    /\b(database|schema|table|relation|column|index|constraint|sequence|view|trigger)[ \t]+(?:(['"`])[\w.$-]{1,200}\2|[a-z]{0,100}[_.$\d][\w.$-]{0,200})(?=[\s,;:)]|$)/gi,
    "$1 <name>",
  ],
  // The user's image or repository that a registry refused.
  [/\b(pull access denied for|no such image:?)[ \t]+[\w./:@-]{1,300}/gi, "$1 <name>"],
  // A listening address with and without its host: the same bind; Go's net error for a listener
  // says all there is, what the program wrapped around it ("run: open server: listen: ") is context.
  [/(?<![\w>]):<port>/g, "<ip>:<port>"],
  [/^[^\n]{1,300}?(?=\blisten[ \t]+(?:tcp|tcp4|tcp6|udp|udp4|udp6|unix)[ \t]+\S{1,300}:[ \t]+bind:)/i, ""],
  // Spring beans and the types they need are the user's own classes.
  [/\b(bean with name|bean of type)[ \t]+['"]?[\w.$-]{1,300}['"]?/gi, "$1 <name>"],
  // "exec x failed: no such file or directory" and "exec x: no such file or directory".
  [/(?<![ \t])[ \t]+failed:(?=[ \t]+(?:no such file or directory|permission denied|connection refused)\b)/gi, ":"],
  // Go's HTTP client errors: what the program said it was doing before the request is context.
  [/^[^:\n]{1,60}:[ \t]+(?=<request>:)/, ""],
  // Monolog's context record after the message ("{"exception":"[object] (…)").
  [/(?<![ \t])[ \t]+\{"?exception"?:[^\n]*$/i, ""],
  // pydantic's error type after the message.
  [/(?<![ \t])[ \t]*\(type=[\w.]{1,100}\)$/, ""],
  // The exclamation a tool ends its message with.
  [/!$/, ""],
];

/** A severity word inside the line: what a tool or wrapper printed before it is context. */
export const INNER_SEVERITY = /(?:^|[\s:;,(])(?:error|fatal error|fatal|err):[ \t]+(?=\S)/gi;

export function afterLastSeverity(s: string): string {
  let last = -1;
  for (const m of s.matchAll(INNER_SEVERITY)) if (m.index > 0) last = m.index + m[0].length;
  if (last < 0) return s;
  const rest = s.slice(last);
  return wordsOf(rest) >= 3 && !STRERROR_END.test(rest) ? rest : s;
}

export function template(input: string): string {
  let s = afterLastSeverity(input);
  for (const [re, to] of V3_VALUE_RULES) s = s.replace(re, to);
  s = firstSentence(s);
  // The class in front of a message that identifies the error by itself: loggers, wrappers and
  // other releases print the message without it.
  const cls = LEADING_CLASS.exec(s);
  if (cls && !/\[[A-Z]/.test(cls[0])) {
    const rest = s.slice(cls[0].length);
    if (wordsOf(rest) >= 4 && !STRERROR_END.test(rest)) s = rest;
  }
  return s;
}

/**
 * The version-3 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV3(errorText: string): string {
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
  s = dropTrailerLines(s.split("\n").map(stripV3LinePrefixes).join("\n"));
  s = dropChatterBeforeError(pickLines(s));
  // Rust >= 1.73 puts the panic's location, then the message on the next line.
  s = s.replace(/^thread[ \t]+'[^'\n]{0,100}'[ \t]+panicked at[ \t]+[^\s'][^\s]{0,500}:\d+:\d+:[ \t]*\n?/i, "");
  s = s.replace(/\n+/g, " ");
  s = stripTrailers(s);
  s = stripPrefixes(s);
  s = extractEmbedded(s);
  s = unwrapCause(s);
  s = unwrapCause(pickCause(s));
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
  s = template(s);
  s = dropQuotes(s);
  return s
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "")
    .replace(/(?<![ \t])[ \t]*[\])}]+$/, (m) => (unbalancedClose(s, m) ? "" : m))
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "")
    .trim();
}

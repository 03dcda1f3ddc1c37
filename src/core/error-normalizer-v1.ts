// Normalizer version 1 (frozen): the rules fingerprints were computed with until version 2
// (error-normalizer.ts). It stays so that fingerprints stored by an older colony can be recognised
// and kept as aliases (docs/fingerprint.md, Versioning). Do not edit: any change here changes the
// aliases of stored trails. Version 2 reuses the pieces exported below.
//
// The v1 normalizer: turns an error line into the form that is hashed into its fingerprint, by
// removing what differs between two machines hitting the same error and keeping the words that
// identify it. Pure: no I/O. Secrets are redacted by the caller (fingerprint.ts) before this runs.
//
// Every regex is either anchored at the start of the string or starts with a lookbehind/word
// boundary that stops it from being retried inside a run it already scanned, and has no nested
// ambiguous quantifiers, so the whole pass stays linear on adversarial input.

const MONTHS = "(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*";

// ---------------------------------------------------------------------------------------------
// 1. Text clean-up that precedes everything: line endings, terminal escapes, typographic quotes.

export function cleanText(input: string): string {
  let s = input.replace(/\r\n/g, "\n");
  // A progress display rewrites its line with \r: what a person sees is the line's last segment.
  if (s.includes("\r")) {
    s = s
      .split("\n")
      .map((line) => {
        const parts = line.split("\r").filter((p) => p.trim() !== "");
        return parts.length > 0 ? parts[parts.length - 1]! : "";
      })
      .join("\n");
  }
  return s
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "") // ANSI colours and cursor moves from CI logs
    .replace(/[\u200b-\u200d\ufeff]/g, "")
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\u00a0/g, " ")
    .trim();
}

// ---------------------------------------------------------------------------------------------
// 2. Leading prefixes that tools and log collectors add in front of the message.

/** Noise in front of a line: timestamps, CI and compose decorations, log levels, progress bars. */
export const NOISE_PREFIXES: RegExp[] = [
  // ISO timestamp (CI runners, journald, most loggers), optionally bracketed.
  /^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?\]?[ \t]*/i,
  // Syslog-style timestamp, optionally with AM/PM ("May 19 11:35:19 AM  ").
  new RegExp(`^${MONTHS}[ \\t]+\\d{1,2}[ \\t]+\\d{1,2}:\\d{2}(?::\\d{2})?(?:\\.\\d+)?(?:[ \\t]*[ap]m\\b)?[ \\t]*`, "i"),
  // Bracketed clock time "[12:00:01]" or "[12:00:01.123]".
  /^\[\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\][ \t]*/,
  // GitHub Actions annotations "##[error]" and workflow commands "::error file=x::".
  /^##\[[a-z]+\][ \t]*/i,
  /^::(?:error|warning|notice)(?:[ \t][^:\n]{0,500})?::[ \t]*/i,
  // BuildKit step and elapsed seconds: "#8 3.026 ".
  /^#\d+[ \t]+/,
  /^\d+\.\d+[ \t]+/,
  // docker compose service column: "web-1  | ", "db_1 | ".
  /^[\w.-]{1,64}[ \t]+\|(?:[ \t]|$)/,
  // tqdm-style progress bar directly in front of the message ("  2%|██▋  | 1/46 [00:01<01:10, ...]").
  /^[^\n|]{0,200}?\d{1,3}%\|[^|\n]{0,400}\|[^\]\n]{0,400}\][ \t]*/,
  // Log level in brackets "[ERROR]", and any bracketed tag followed by a colon "[rank0]: ".
  /^\[[ \t]*(?:error|err|fatal|warn|warning|info|debug|trace|critical|crit|notice|severe|emerg|alert)[ \t]*\]:?[ \t]*/i,
  /^\[[\w.:/ -]{1,40}\]:[ \t]+/,
  // Level words without a colon: "ERROR root: ...", logrus "WARN[0000] ". Uppercase only, so a
  // sentence that starts with the word "Error" is not touched.
  /^(?:ERROR|ERRO|WARNING|WARN|INFO|DEBUG|DEBU|FATAL|FATA|CRITICAL|TRACE)(?:\[\d+\])?[ \t]+(?=\S)/,
  // Package managers that prefix every line of a child's output.
  /^(?:npm|pnpm|yarn)[ \t]+(?:ERR!|error|err|WARN|warn)(?:[ \t]+|$)/i,
  // pytest's assertion-introspection column ("E   ") and the failing-source marker ("> ").
  /^E[ \t]{2,}/,
  /^>[ \t]+/,
];

/**
 * A program name in front of the message ("wthrr: ", "./router: ", "docker: ", "psql: "): argv[0]
 * differs between machines and wrappers. Only lowercase command-like names qualify, so exception
 * classes (CamelCase, dotted) and file names (with an extension) are kept; and only when the rest
 * has its own "subject: detail" structure, so "undefined: foo" and "npm: command not found" keep
 * their head. The login-shell form "-bash: " counts too.
 */
export const PROGRAM_PREFIX = /^-?(?:\.{0,2}\/|\/)?(?:[\w.+-]+\/)*[a-z][a-z0-9_+-]{0,40}:[ \t]+(?=[^\n]*?\S:[ \t])/;

/** What the language or tool wraps around the message, and source locations in front of it. */
export const MESSAGE_PREFIXES: RegExp[] = [
  // Severity words: "error: ", "ERROR:", "Error: ", "fatal: ", "warning: ", apt's "E: "/"W: ".
  /^(?:fatal[ \t]+error|error|err|fatal|warning|warn|critical|crit|panic|severe|e|w)[ \t]*:[ \t]*/i,
  // Java cause chains and uncaught-exception headers; JavaScript "Uncaught (in promise)".
  /^caused[ \t]+by:[ \t]*/i,
  /^exception[ \t]+in[ \t]+thread[ \t]+"[^"\n]{0,200}"[ \t]+/i,
  /^uncaught(?:[ \t]+\(in[ \t]+promise\))?[ \t]+/i,
  // Source location "file:line:col: " (gcc, clang, rustc short format, go, tsc --pretty false).
  /^(?:[A-Za-z]:)?[^\s:()"'`]{1,500}:\d+(?::\d+)?:[ \t]*/,
  // MSBuild/tsc location "file(line,col): ".
  /^[^\s()"'`]{1,500}\(\d+(?:,\d+)?\):[ \t]*/,
];

export function stripPrefixes(input: string): string {
  let s = input;
  // Bounded loops: every rule removes at least one character, and a line has few prefixes.
  for (let guard = 0; guard < 16; guard++) {
    const before = s;
    for (const re of NOISE_PREFIXES) s = s.replace(re, "");
    if (s === before) break;
  }
  s = s.replace(PROGRAM_PREFIX, "");
  for (let guard = 0; guard < 16; guard++) {
    const before = s;
    for (const re of MESSAGE_PREFIXES) s = s.replace(re, "").trimStart();
    if (s === before) break;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// 3. Trailing decorations: interpreter hints that depend on its version, final punctuation.

export function stripSuffixes(s: string): string {
  return s
    .replace(/(?<![ \t])[ \t]*\bdid you mean\b[^?\n]{0,300}\?[ \t]*$/i, "") // Python ≥3.10, node, rustc hints
    .replace(/(?<![ \t.])[ \t.]+$/, "");
}

// ---------------------------------------------------------------------------------------------
// 4. Paths. Absolute paths are volatile (home directories, checkouts, caches, temp dirs); a
//    package root inside them (node_modules, site-packages) starts the stable part, which names
//    the package; otherwise the file name is kept when it has an extension (libstdc++.so.6,
//    config.yaml) and dropped when it is a bare directory-like name (a checkout, a temp dir).

const PACKAGE_ROOTS = new Set(["node_modules", "site-packages", "dist-packages"]);

const SEG = "[^\\s\\\\/'\"`()<>\\[\\]{},;:|*?]"; // one character of a path segment
const POSIX_ABS = `(?<![\\w.~/\\\\<>:@-])(?:~|\\.{1,2})?/${SEG}+(?:/${SEG}*)*`;
// Windows: drive paths may contain single spaces inside segments ("C:\\Program Files\\Go").
const WSEG = "[^\\s\\\\/'\"`()<>|*?:]";
const WIN_ABS = `(?<![\\w])[A-Za-z]:[\\\\/]+(?:${WSEG}+(?: ${WSEG}+)*[\\\\/]+)*${WSEG}*`;
const UNC = `(?<![\\w\\\\])\\\\\\\\${WSEG}+(?:\\\\${WSEG}+)+`;
// Backslash paths without a drive: "\\node_modules\\axios\\lib", "node_modules\\is-online\\index.js".
const BSEG = "[\\w.@-]";
const BACKSLASH = `(?<![\\w.@\\\\-])\\\\{0,2}(?:${BSEG}+\\\\{1,2})+${BSEG}*`;
export const PATH_RE = new RegExp(`${UNC}|${WIN_ABS}|${POSIX_ABS}|${BACKSLASH}`, "g");

function hasExtension(name: string): boolean {
  return /^\.?[^.]+\.[^.]/.test(name) || /^\.[^.]/.test(name);
}

export function normalizePath(raw: string): string {
  const absolute = /^(?:[A-Za-z]:|[\\/~]|\.{1,2}\/)/.test(raw);
  const segments = raw.split(/[\\/]+/).filter((p) => p !== "" && p !== "~" && !/^[A-Za-z]:$/.test(p));
  let root = -1;
  for (let i = 0; i < segments.length; i++) if (PACKAGE_ROOTS.has(segments[i]!.toLowerCase())) root = i;
  if (root >= 0) return segments.slice(root).join("/");
  if (!absolute) return segments.join("/");
  const base = segments[segments.length - 1];
  return base !== undefined && hasExtension(base) ? `<path>/${base}` : "<path>";
}

// ---------------------------------------------------------------------------------------------
// 5. Value rules, specific before generic. Each is [pattern, replacement].

export type Rule = [RegExp, string | ((m: string, ...groups: string[]) => string)];

const HTTP_METHODS = "get|head|post|put|patch|delete|options";

const hasDigit = (s: string) => /\d/.test(s);

export const EARLY_RULES: Rule[] = [
  // URLs (the host and path belong to one project or one mirror).
  [
    /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s"'`<>()[\]{}]*/gi,
    (m) => {
      const trail = /[.,:;!?]+$/.exec(m)?.[0] ?? "";
      return `<url>${trail}`;
    },
  ],
  // The request that failed ("Get \"<url>\"") depends on the command that was run, not the error.
  [new RegExp(`\\b(?:${HTTP_METHODS})[ \\t]+"?<url>"?`, "gi"), "<request>"],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>"],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w])/gi, "<time>"],
  [/\b\d{4}[-/]\d{2}[-/]\d{2}\b/g, "<date>"],
  [/(?<![\w:])\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?![\w:])/g, "<time>"],
];

export const VALUE_RULES: Rule[] = [
  [/(?<![\w.+-])[\w.+-]{1,64}@[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})*\.[a-z]{2,24}\b/gi, "<email>"],
  // IPv4, then IPv6 (only forms with "::" or 8 groups, and only when they contain a digit, so
  // C++/Rust paths like parse::Graph are left alone).
  [/(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d)/g, "<ip>"],
  [/\[[0-9a-f:.]{2,45}\]/gi, (m) => (m.includes(":") && hasDigit(m) ? "<ip>" : m)],
  [
    /(?<![\w:])(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?(?![\w])/gi,
    (m) => (hasDigit(m) ? "<ip>" : m),
  ],
  [/(?<![\w:])(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\w:])/gi, "<ip>"],
  // Dotted versions before line numbers, so "group:artifact:1.8.10" is a version, not a line.
  [/(?<![\w.])v?\d+(?:\.\d+){2,}(?:[-+][0-9a-z]+(?:\.[0-9a-z]+)*)?(?![\w]|\.\d)/gi, "<ver>"],
  // Ports: after an address, after "localhost", "port N", a bare ":8080" after a space.
  [/(?<![\w:]):::\d{1,5}\b/g, "<ip>:<port>"], // node's "address already in use :::3000"
  [/(<ip>|\blocalhost):\d{1,5}\b/gi, "$1:<port>"],
  [/\bport[ \t]+\d{1,5}\b/gi, "port <port>"],
  [/(?<=[ \t(]|^):\d{2,5}\b/g, ":<port>"],
  // Line and column numbers: "file.ext:12:5", "file.ts(12,5)", "line 12", "column 5".
  [/(\.[a-z0-9_]{1,10}):\d+(?::\d+)?\b/gi, "$1:<line>"],
  [/(\.[a-z0-9_]{1,10})\(\d+(?:,\d+)?\)/gi, "$1(<line>)"],
  [/\b(line|lines|column|col)[ \t]+\d+(?:[ \t]*[,:-][ \t]*\d+)?\b/gi, "$1 <line>"],
  [/\b(position|offset|index|byte)[ \t]+\d+\b/gi, "$1 <num>"],
  [/\b0x[0-9a-f]+\b/gi, "<hex>"],
  // Hex hashes (git SHAs, digests) and long random ids (request ids, tokens already redacted).
  // Short ones (7-11) only in lowercase, as git prints them, so codes like OpenSSL's
  // "error:0308010C" stay.
  [/\b[0-9a-f]{7,}\b/gi, (m) => (hasDigit(m) && /[a-f]/i.test(m) && (m.length >= 12 || !/[A-F]/.test(m)) ? "<hash>" : m)],
  [
    /\b[a-z0-9]{16,}\b/gi,
    (m) => {
      const digitRuns = m.match(/\d+/g)?.length ?? 0;
      const letters = m.replace(/\d/g, "").length;
      return digitRuns >= 3 && letters >= 3 ? "<id>" : m;
    },
  ],
  [/\bpid[ \t]*[:=]?[ \t]*\d+\b/gi, "pid <pid>"],
  [/\bprocess[ \t]+\d+\b/gi, "process <pid>"],
  // Temp names (Python tempfile, pytest) and user names where the message names them.
  [/\btmp[a-z0-9_]{6,}\b/gi, "<tmp>"],
  [/\bpytest-of-[\w.-]+/gi, "pytest-of-<user>"],
  [/\bpytest-\d+\b/gi, "pytest-<n>"],
  [/\b(user|role|username|login|owner)([ \t]*[:=]?[ \t]*)(['"])[^'"\n]{1,64}\3/gi, "$1$2$3<user>$3"],
  // Quantities: sizes and durations (how much memory, how long it waited).
  [/\b\d+(?:\.\d+)?[ \t]?(?:[kmgtp]i?b|bytes?)\b/gi, "<size>"],
  [/\b\d+(?:\.\d+)?(?:ms|us|µs|ns|s|sec|secs|min|mins|h)\b/gi, "<dur>"],
  [/\b\d+(?:\.\d+)?[ \t]?(?:milliseconds?|seconds?|minutes?|hours?)\b/gi, "<dur>"],
  // Counts of things: "0/3 nodes", "3 node(s)", "2 of 5".
  [/\b\d+\/\d+\b/g, "<n>/<n>"],
  [/\b\d+([ \t]+[a-z]+\(s\))/gi, "<n>$1"],
  [/\b\d+[ \t]+of[ \t]+\d+\b/gi, "<n> of <n>"],
  // Device and worker indices ("GPU 0", "cuda:1", "rank3", "worker 2").
  [/\b(gpu|cuda|rank|worker|cpu)([ \t]*:?[ \t]*)\d+\b(?!\.\d)/gi, "$1$2<idx>"],
  // Versions: ABI tags, dotted versions, names glued to a version (python3.11 keeps "python").
  [/\b(cpython|pypy)-?\d{2,3}\b/gi, "$1-<ver>"],
  [/(?<![\w.])v\d+\.\d+(?![\w]|\.\d)/gi, "<ver>"],
  [/\b([a-z]{2,}?)\d+(?:\.\d+)+(?![\w]|\.\d)/gi, "$1"],
  // Remaining decimals (sizes without unit, ratios, scores) and long integers (ids, byte counts).
  [/(?<![\w.])\d+\.\d+(?![\w]|\.\d)/g, "<num>"],
  [/(?<!\d)\d{6,}(?![\da-z])/gi, "<num>"], // a digit run ending a word (blob872957069), not a code (0308010C)
  // A value that is only a number inside quotes.
  [/(['"])-?\d+(?:\.\d+)?\1/g, "$1<num>$1"],
];

// git ref-update lines ("! [rejected]  main -> main (fetch first)"): the ref names are the repo's.
export const GIT_REF_LINE = /^([!+*=t-]?[ \t]*\[[a-z ]{2,30}\][ \t]+)\S{1,255}[ \t]+->[ \t]+\S{1,255}/i;

export function applyRules(s: string, rules: Rule[]): string {
  let out = s;
  for (const [re, rep] of rules) out = out.replace(re, rep as never);
  return out;
}

/**
 * The version-1 normal form of an error line (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV1(errorLine: string): string {
  let s = cleanText(errorLine);
  s = stripPrefixes(s);
  s = stripSuffixes(s);
  s = applyRules(s, EARLY_RULES);
  s = s.replace(PATH_RE, (m) => normalizePath(m));
  s = applyRules(s, VALUE_RULES);
  s = s.replace(GIT_REF_LINE, "$1<ref> -> <ref>");
  return s.toLowerCase().replace(/\s+/g, " ").trim();
}

// Normalizer version 5 (frozen): the rules fingerprints were computed with until version 6
// (error-normalizer.ts). It stays so that fingerprints stored by an older colony can be recognised
// and kept as aliases (docs/fingerprint.md, Versioning). Do not edit: any change here changes the
// aliases of stored trails. Version 6 runs this whole pass first.
//
// Version 5 = version 4 (error-normalizer-v4.ts, frozen; it builds on versions 3, 2 and 1) plus
// rules written from the principle of each miss class rather than from one tool's message.
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
  type Rule,
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
import { dropChatterBeforeError, unwrapCause, unwrapWholeReport, wordsOf } from "./error-normalizer-v3.ts";
import {
  dropV4TrailerLines,
  innerCause,
  LIMIT_IN_BYTES,
  PANIC_LOCATION,
  PANIC_QUOTED,
  stripV4LinePrefixes,
  templateV4,
  WINDOWS_SOCKET_ERRORS,
} from "./error-normalizer-v4.ts";

// ---------------------------------------------------------------------------------------------
// 1. Lines: make's own error (not its trailer), and text in another script around the error.

/**
 * make prints its own errors on a "make: *** " line ("No rule to make target 'x'.  Stop."), the
 * same prefix as its trailer after a failed recipe ("make: *** [Makefile:3: all] Error 1"). Only
 * the trailer starts with "[": the error keeps its words (versions 2 to 4 dropped them, leaving
 * an empty normal form for every make error printed alone).
 */
const MAKE_OWN_ERROR = /^([ \t]*g?make(?:\[\d{1,4}\])?:)[ \t]+\*\*\*[ \t]+(?=[^\s[])/i;

/** Letters of scripts other than Latin, with the full-width punctuation that goes with them. */
const OTHER_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Thai}\p{Script=Devanagari}\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]+/gu;

/**
 * A reporter writes around the error in their own language ("启动错误, 循环引用？ The dependencies
 * of …", "解决 github 报错 Failed to connect to … _…的博客", "… session라는 오류가 납니다"): the tool's
 * message in Latin script identifies the error. When the report starts in another script, the
 * longest stretch of Latin text (three words or more) is the message; when it starts with the
 * message, a tail written mostly in another script goes (a value in quotes, such as a time zone
 * name in Cyrillic, stays). A message wholly in another script stays as it is.
 */
export function dropOtherScript(input: string): string {
  const runs = [...input.matchAll(OTHER_SCRIPT)];
  if (runs.length === 0) return input;
  if (input.slice(0, runs[0]!.index).trim() === "") {
    let best = "";
    let from = 0;
    for (const run of [...runs, null]) {
      const segment = input.slice(from, run ? run.index : input.length);
      if (wordsOf(segment) > wordsOf(best)) best = segment;
      if (run) from = run.index + run[0].length;
    }
    const message = best.replace(/^[\s.,;:!?_-]+/, "").replace(/[\s,;:_(-]+$/, "");
    return wordsOf(message) >= 3 && /[A-Za-z]{2}/.test(message) ? message : input;
  }
  const first = runs[0]!;
  if (wordsOf(input.slice(0, first.index)) < 3) return input;
  const tail = input.slice(first.index);
  const other = runs.reduce((n, m) => n + m[0].length, 0);
  if (other < (tail.match(/[A-Za-z]/g)?.length ?? 0)) return input;
  return input.slice(0, first.index).replace(/[\s,;:_(-]+$/, "");
}

// ---------------------------------------------------------------------------------------------
// 2. What a reporter or a wrapper writes in front of the error.

/**
 * A reporter's lead-in ("I keep getting an error stating …", "i was getting an error like …",
 * "error about …"): the error follows it. Anchored; the lazy run is bounded.
 */
const REPORTER_LEAD =
  /^(?:(?:i|we|i'm|im|i've|ive|when i|after i|now i)\b[^\n:]{0,120}?\b(?:errors?|exceptions?|messages?)[ \t]+(?:stating|saying|says|that says|which says|like|reading|message|about|of)\b|(?:an?[ \t]+)?error[ \t]+(?:about|like|stating|saying|that says))[ \t]*:?[ \t]+(?=\S)/i;

/**
 * A field name or label a wrapper writes in front of the message (a JSON error object's
 * "sqlMessage:", "errmsg:", a CI step's "output:", "stderr:", a report's "stuck on:").
 */
const LABEL_PREFIX =
  /^(?:output|stderr|stdout|message|msg|errmsg|err_msg|sqlmessage|error[ _]message|errormessage|error_description|reason|details?|description|stuck on|see this|result|response|console)[ \t]*[:=][ \t]*(?=\S)/i;

/**
 * An error object printed without its quotes ("{ok: 0, errmsg: bad auth : authentication failed.,
 * code: 8000}"): its message field is the error (version 2 reads only quoted JSON).
 */
const BARE_OBJECT_MESSAGE =
  /\{[^{}\n]{0,300}?\b(?:errmsg|message|msg|sqlmessage|error_?message|detail|reason)['"]?[ \t]*[:=][ \t]*['"]?([^{}\n]{3,2000}?)['"]?[ \t]*(?:,[ \t]*['"]?[A-Za-z_]{1,30}['"]?[ \t]*:|\})/i;

function bareObjectMessage(s: string): string {
  const open = s.indexOf("{");
  if (open < 0) return s;
  const m = BARE_OBJECT_MESSAGE.exec(s.slice(open));
  if (!m || wordsOf(m[1]!) < 2) return s;
  // What precedes the object, when it says the same ("bad auth : Authentication failed., full error: {…}").
  return m[1]!.replace(/[.,;]+$/, "");
}

function dropLeadIns(input: string): string {
  let s = input;
  for (let i = 0; i < 3; i++) {
    const m = REPORTER_LEAD.exec(s) ?? LABEL_PREFIX.exec(s);
    if (!m) break;
    const rest = s.slice(m[0].length);
    if (wordsOf(rest) < 3) break;
    s = rest;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// 3. Values: the user's own files, classes and directories; versions, ranges and hashes.

/** Source and script extensions beyond version 2's list (web pages and templates, notebooks, more languages). */
// Only extensions that are no common last segment of a dotted name ("org.gradle", "spark.ml").
const MORE_SOURCE_EXT = "html?|vue|svelte|astro|ipynb|exs|clj[sc]?|pyw|ejs|hbs|jsp|aspx|cshtml|razor|twig|erb|vbs|psm1";

/** Java namespaces of the platform and of published libraries: a class there names the library. */
const LIBRARY_CLASS_ROOTS =
  "(?:java|javax|jakarta|sun|com\\.sun|jdk|org|android|androidx|kotlin|kotlinx|scala|groovy|lombok|ch\\.qos|com\\.google|com\\.mysql|com\\.microsoft|com\\.fasterxml|com\\.amazonaws|com\\.oracle|oracle|com\\.intellij|com\\.android|io\\.netty|io\\.grpc|io\\.micrometer|io\\.swagger|io\\.jsonwebtoken|net\\.bytebuddy|reactor)";

const C_STD_ALIASES: Record<string, string> = { "0x": "11", "1y": "14", "1z": "17", "2a": "20", "2b": "23", "2c": "26" };

/**
 * A rule with an optional cheap test: the regex runs only on text the test finds (a substring or a
 * simple pattern), which keeps the cost per search query low (most rules concern few messages).
 */
export type GatedRule = [RegExp, Rule[1], (string | RegExp)?];

export function applyGated(input: string, rules: GatedRule[]): string {
  let s = input;
  for (const [re, to, gate] of rules) {
    if (gate !== undefined && !(typeof gate === "string" ? s.includes(gate) : gate.test(s))) continue;
    s = s.replace(re, to as never);
  }
  return s;
}

/** Before version 1's value rules, which would cut a base64 digest into ids and words. */
/** Files with one of MORE_SOURCE_EXT's extensions are rare: the file rules run only where one is. */
const MORE_SOURCE_FILE = new RegExp(`\\.(?:${MORE_SOURCE_EXT})(?![\\w+-])`, "i");

const V5_EARLY_RULES: GatedRule[] = [
  // Integrity hashes (npm's "sha512-…==", go.sum's "h1:…="): base64 after the algorithm.
  [/(?<![\w-])(?:sha(?:1|224|256|384|512)-|h1:)[A-Za-z0-9+/]{8,200}={0,2}/gi, "<hash>", /sha\d|h1:/i],
];

const V5_VALUE_RULES: GatedRule[] = [
  // An IPv6 address's zone ("fe80::1%lo0", "<ip>%eth0") is the machine's interface.
  [/<ip>%[\w.-]{1,30}/g, "<ip>", "<ip>%"],
  // Go's import cycle lists the user's packages.
  [/\b(import cycle not allowed)\b[^\n]*$/i, "$1", /import cycle/i],
  // A list of digests is one digest ("but got sha512-… sha1-…").
  [/<hash>(?:[ \t]{1,3}<hash>){1,20}/g, "<hash>", "<hash>"],
  // More source files of the user's ("index.html:12", "App.vue", "analysis.ipynb"), as version 2's.
  [
    new RegExp(`(?<![\\w.<>/@-])(?:[\\w.@+-]{1,100}/){0,12}[\\w.+-]{1,200}\\.(?:${MORE_SOURCE_EXT})(?![\\w+-])`, "gi"),
    (m) => (/(?:^|\/)(?:node_modules|site-packages|dist-packages)\//i.test(m) ? m : "<src>"),
    MORE_SOURCE_FILE,
  ],
  [new RegExp(`<path>/[\\w.+-]{1,200}\\.(?:${MORE_SOURCE_EXT})(?![\\w+-])`, "gi"), "<path>", MORE_SOURCE_FILE],
  // Where in the user's code, at the end of the message: "at index.html:12", "(App.js:12:5)",
  // PHP's "in /x/db.php on line 12". The message says what; the location says where.
  [/(?<![ \t])[ \t]+(?:at|in)[ \t]+(?:<path>\/?)?<src>(?::<line>){1,2}\)?$/i, "", "<src>"],
  [/(?<![ \t])[ \t]*\((?:<path>\/?)?<src>(?::<line>){1,2}\)$/i, "", "<src>"],
  [/(?<![ \t])[ \t]+in[ \t]+(?:<path>\/?)?(?:<src>)?[ \t]+on[ \t]+line[ \t]+<line>$/i, "", "<line>"],
  // A checkout or module-cache directory as the last segment of a path ("<path>/kube-lock-1.2.0",
  // "<path>/x@v1.2.3", "<path>/repo.git"): a directory, which version 1 drops when it has no extension.
  [/<path>\/[\w.+-]{1,200}?[-@]<ver>(?![\w/.-])/g, "<path>", "<path>"],
  [/<path>\/[\w.+-]{1,200}\.git(?![\w/.-])/g, "<path>", "<path>"],
  // A list of paths is one path ("not writable by your user: /a /b /c").
  [/<path>(?:\/[^\s,;:)]{1,300})?(?:(?:[ \t]*,)?[ \t]{1,4}<path>(?:\/[^\s,;:)]{1,300})?){1,200}/g, "<path>", "<path>"],
  // The user's class that the JVM could not find or load; a library's class names the library.
  // The class ends the message or a clause ("NoClassDefFoundError: Could not initialize class x"
  // names no class after the colon).
  [
    new RegExp(
      `\\b(ClassNotFoundException:?|NoClassDefFoundError:?|could not find or load main class)([ \\t]+)(?!${LIBRARY_CLASS_ROOTS}[./])[A-Za-z_$][\\w$]{0,100}(?:[./][A-Za-z_$][\\w$]{0,100}){0,30}(?=[ \\t]*(?:$|[,;(\\n]|caused by\\b))`,
      "gi",
    ),
    "$1$2<class>",
    /ClassNotFoundException|NoClassDefFoundError|main class/i,
  ],
  // Infrastructure objects the user named (a Docker network or volume, a cloud bucket, a CI job):
  // a quoted name after the kind of object, or an unquoted one made of parts ("dm-ticket_network").
  // Kinds that name software (module, package, crate, plugin, extension) are not among them.
  [
    /\b(volume|network|container|bucket|queue|topic|cluster|stack|job|workflow|workspace|project|app|application|function|lambda|instance|vm|machine|droplet|branch|tag|remote|profile|keyspace|keyring|index)([ \t]+)(?:(["'`‘“])[^"'`’”\n]{1,253}["'`’”]|(?=[A-Za-z0-9]{0,100}[-_.][A-Za-z0-9])[A-Za-z0-9]{1,100}(?:[-_.][A-Za-z0-9]{1,100}){1,12}(?![\w./-]))/gi,
    "$1$2<name>",
  ],
  [
    /\b(volume|network|container|bucket|queue|topic|cluster|stack|job|workflow|workspace|project|app|application|function|instance|branch|tag|remote|profile|keyspace|index)[ \t]+(?:<(?:hash|id|uuid)>|[\w.-]{1,100})(?=[ \t]+(?:not found|does not exist|already exists|is already in use|is in use|has active endpoints|is not connected|not connected)\b)/gi,
    "$1 <name>",
  ],
  // A data error's value and the user's index ("Duplicate entry 'a@b.c' for key 'users.email'").
  [/\b(duplicate entry)[ \t]+(['"])[^'"\n]{0,300}\2/gi, "$1 <value>", /duplicate entry/i],
  [/\b(for key)[ \t]+(['"])[^'"\n]{1,200}\2/gi, "$1 <name>", /for key/i],
  // Python's circular import names two modules of the user's own.
  [
    /\b(cannot import name)[ \t]+(['"]?)[\w.]{1,200}\2[ \t]+from partially initialized module[ \t]+(['"]?)[\w.]{1,200}\3/gi,
    "$1 <name> from partially initialized module <name>",
    /partially initialized/i,
  ],
  // A version with a suffix made of placeholders (a Go pseudo-version "v0.0.0-2021…-abcdef123456",
  // "1.2.3-<hash>") is a version.
  [/<ver>(?:[-+.]<(?:ver|hash|hex|num|date|time|id)>){1,6}/g, "<ver>", "<ver>"],
  // A version range is one version: "^1.2 || ^2.0", ">=3.8 <4", "~1.2.3", "1.2 - 2.0". A list
  // of versions without operators stays (cargo's candidates "3.2.25, 3.2.24, …" is no range).
  [
    /(?:(?<![\w>])(?:[\^~=]|[<>]=?)[ \t]?)?<(?:ver|num)>(?:[ \t]{0,3}(?:\|\||,)?[ \t]{0,3}(?:[\^~=]|[<>]=?)[ \t]?<(?:ver|num)>|[ \t]{0,3}(?:\|\||[ \t]-)[ \t]{1,3}<(?:ver|num)>){0,50}/g,
    (m) => (/[\^~=<>|]|[ \t]-/.test(m.replace(/<(?:ver|num)>/g, "v")) ? "<ver>" : m),
    /<(?:ver|num)>/,
  ],
  // C++ standard names: a draft's name and the standard's are the same ("c++1z" is "c++17").
  [/\b((?:c|gnu)\+\+)(0x|1y|1z|2a|2b|2c)\b/gi, (_m, lang: string, draft: string) => `${lang}${C_STD_ALIASES[draft.toLowerCase()]}`, "++"],
];

/** After version 4's template (whose rules read "<hex>"). */
const V5_LATE_RULES: GatedRule[] = [
  // An Oracle error number names its message, which clients print in the server's language or
  // not at all: the first number is the error ("ORA-12154: TNS:could not resolve …").
  [/^[^\n]*?\b(ORA-\d{5})\b[^\n]*$/i, "$1", /ora-\d/i],
  // The SQLSTATE a client adds after PostgreSQL's message (pgx: "… does not exist (SQLSTATE 42P01)").
  [/(?<![ \t])[ \t]*\(SQLSTATE[ \t]+[0-9A-Z]{5}\)$/i, "", /sqlstate/i],
  // A decimal is a version or a measure with fewer parts: which of the two a message carries depends
  // on how many parts the tool printed ("/Library/Ruby/Gems/1.8" and "…/Gems/2.0.0").
  [/<num>/g, "<ver>", "<num>"],
  // Opaque hex: "0x7f3a…" and "7f3a…" are the same kind of value.
  [/<hex>/g, "<hash>", "<hex>"],
  // A Java logger's category after the message ("(com.amazonaws.http.AmazonHttpClient)").
  [/(?<![ \t])[ \t]*\((?:[a-z][\w$]{0,60}\.){2,20}[A-Za-z][\w$]{0,100}\)$/, "", ")"],
];

/** Negations written as one word once quotes are gone ("couldn't" → "couldnt"): the long form. */
const CONTRACTIONS: Record<string, string> = {
  cant: "cannot",
  couldnt: "could not",
  doesnt: "does not",
  dont: "do not",
  didnt: "did not",
  isnt: "is not",
  wasnt: "was not",
  arent: "are not",
  werent: "were not",
  wont: "will not",
  wouldnt: "would not",
  shouldnt: "should not",
  hasnt: "has not",
  havent: "have not",
  hadnt: "had not",
};

/**
 * On the lowercase form: the same words written another way. A tool's releases and the people who
 * quote it write "could not" and "couldn't", put a colon or a comma between two parts or not
 * ("bad auth: authentication failed", "bad auth authentication failed"); a system error's subject
 * (node's "EACCES: permission denied 0.0.0.0:80") is printed by some callers and not by others.
 */
export const V5_WORDING_RULES: GatedRule[] = [
  [
    /\b(?:cant|couldnt|doesnt|dont|didnt|isnt|wasnt|arent|werent|wont|wouldnt|shouldnt|hasnt|havent|hadnt)\b/g,
    (m) => CONTRACTIONS[m] ?? m,
    /nt\b/,
  ],
  [/\bcan not\b/g, "cannot", "can not"],
  // Punctuation between words (not inside a token such as "<ip>:<port>", "std::x", "h1:").
  [/(?<=[^\s,;:])[,;:]+(?= )/g, ""],
  [/(?<=[a-z>)\]])[.!?]+(?= )/g, ""],
  [/^[,;:.!?]+ /, ""],
  [
    /\b(permission denied|address already in use|connection refused|connection reset by peer|address not available|operation not permitted)(?: <ip>(?::<port>)?| :<port>)$/,
    "$1",
    "<",
  ],
];

/**
 * The version-5 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV5(errorText: string): string {
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
  s = dropV4TrailerLines(
    s
      .split("\n")
      .map((l) => stripV4LinePrefixes(l).replace(MAKE_OWN_ERROR, "$1 "))
      .join("\n"),
  );
  s = dropChatterBeforeError(pickLines(s));
  // Rust >= 1.73 puts the panic's location, then the message on the next line.
  s = s.replace(PANIC_LOCATION, "");
  s = s.replace(/\n+/g, " ");
  s = dropOtherScript(s);
  s = s.replace(PANIC_QUOTED, "$1");
  s = stripTrailers(s);
  const unprefixed = stripPrefixes(s);
  // A second pass: a prefix under another one ("[warning] " under a program name) goes too. It can
  // change nothing when the first pass and the lead-ins changed nothing.
  const lead = dropLeadIns(bareObjectMessage(unprefixed));
  s = lead === unprefixed && unprefixed === s ? s : stripPrefixes(lead);
  s = extractEmbedded(s);
  s = unwrapCause(s);
  s = unwrapCause(pickCause(s));
  s = innerCause(s);
  for (const [re, to] of WINDOWS_SOCKET_ERRORS) s = s.replace(re, to);
  s = bareObjectMessage(s);
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
  s = applyGated(s, V5_EARLY_RULES);
  s = applyRules(s, VALUE_RULES);
  s = applyRules(s, V2_VALUE_RULES);
  s = foldRustNames(s);
  s = s.replace(GIT_REF_LINE, "$1<ref> -> <ref>");
  s = applyGated(s, V5_VALUE_RULES);
  s = templateV4(s);
  s = applyGated(s, V5_LATE_RULES);
  s = dropQuotes(s);
  const lower = s
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "")
    .replace(/(?<![ \t])[ \t]*[\])}]+$/, (m) => (unbalancedClose(s, m) ? "" : m))
    .replace(/(?<![ \t.:;,])[ \t.:;,]+$/, "");
  return applyGated(lower, V5_WORDING_RULES).trim();
}

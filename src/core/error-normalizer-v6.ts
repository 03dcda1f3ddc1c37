// Normalizer version 6, frozen: stored fingerprints computed with it must stay reproducible (aliases
// of stored trails, decisions §2). Do not change its output; the current version is
// error-normalizer.ts. Pure: no I/O. Secrets are redacted by the caller (fingerprint.ts) first.
//
// Version 6 = version 5 (error-normalizer-v5.ts, frozen; it builds on versions 4 to 1), then the
// rules below on its normal form. Each one only removes or folds what issue 16 lists as
// surroundings (a version qualifier, a documentation link, an environment variable's sigil, a
// runtime value, a reporter's words around the message, a database's echo of the user's
// statement, the user's own names), so two reports version 5 gave one form still share it. A few
// line rules come before version 5 (decorations, a paste's fence, prompt and hint lines, a padded
// level label, glibc's abort line); error-normalizer-v6.test.ts checks on every dev-set text that
// they split no pair version 5 joined. docs/fingerprint.md lists every rule with its miss class.
//
// Every regex starts with a lookbehind, a word boundary or a literal, and has no nested ambiguous
// quantifiers, so the pass stays linear on adversarial input.
import { applyGated, type GatedRule, normalizeErrorTextV5, V5_WORDING_RULES } from "./error-normalizer-v5.ts";

/** Runtimes and tools whose version a wrapper or reporter puts beside a message. */
const RUNTIME =
  "version|ver|v|release|build|rev|revision|node|nodejs|<src>|deno|bun|python|python3|py|java|jdk|openjdk|jre|go|golang|ruby|php|rustc|cargo|gcc|g\\+\\+|clang|msvc|npm|yarn|pnpm|pip|dotnet|\\.net|kotlin|gradle|maven|mvn|docker|kubectl|kubernetes|k8s|postgresql|postgres|mysql|redis|mongodb";

/**
 * Status icons and decorations a runner or terminal puts around a line ("❌ ", "✖ ", "⚠️ ", a box
 * drawing arrow, a trailing "⏎" from a copied terminal line). They go before version 5 runs, so
 * its prefix rules see the line as the tool printed it ("⚠️ npm WARN …" is "npm WARN …").
 */
const LINE_DECORATION =
  /^[ \t]*(?:[\p{So}\u2190-\u21ff\u2500-\u257f][\ufe0f\u200d]?[ \t]?)+(?=\S)|(?<=\S)(?:[ \t]?[\p{So}\u2190-\u21ff\u2500-\u257f][\ufe0f\u200d]?)+[ \t]*$/gmu;
const ANY_DECORATION = /[\p{So}\u2190-\u21ff\u2500-\u257f]/u;

/**
 * Lines a reporter's paste carries around the error, which version 5 reads as part of it: a
 * Markdown code fence (a line of three backticks, with or without a language), and a shell prompt
 * with the command typed at it ("$ ./server", "user@host:~/app$ cmake ..", "/src/build# make",
 * ":/home/container$ ./omp-server", a prompt left empty at the end). They go before version 5 runs,
 * as the decorations do: its line rules then see the tool's output alone.
 */
const PASTE_LINES: GatedRule[] = [
  [/^[ \t]{0,8}```[\w+-]{0,20}[ \t]*$/gm, "", "```"],
  // A tool's hint lines around a subprocess's failure (pip: "│ exit code: 1", "╰─> See above for
  // output.", "[15 lines of output]", "note: This error originates from a subprocess, and is likely
  // not a problem with pip."): they say where to look, not what failed; how many of them a report
  // keeps varies.
  [/^[ \t]{0,8}(?:>[ \t]?)?(?:[A-Za-z][\w .-]{0,40}: )?exit (?:code|status):? \d{1,3}\.?[ \t]*$/gim, "", /exit (?:code|status)/i],
  [
    /^[ \t]{0,8}(?:>[ \t]?)?(?:see (?:above|the (?:log|output) above) for (?:output|details|more)|\[\d{1,6} lines? of output\])\.?[ \t]*$/gim,
    "",
    /above for|lines? of output/i,
  ],
  [/^[ \t]{0,8}note: [^\n]{0,200}\bis (?:likely|probably) not a problem with [\w-]{1,40}\.?[ \t]*$/gim, "", /not a problem with/i],
  // PostgreSQL's details under its message (DETAIL, HINT, CONTEXT lines, and the deadlock
  // detector's one line per process): the message line says what failed; the details name the
  // user's processes, transactions, rows and relations, and clients print them or not.
  [/^[ \t]{0,8}(?:DETAIL|HINT|CONTEXT):[^\n]*$/gm, "", /^[ \t]{0,8}(?:DETAIL|HINT|CONTEXT):/m],
  [/^[ \t]{0,8}Process \d{1,10} (?:waits for|blocked by|: )[^\n]*$/gm, "", /^[ \t]{0,8}Process \d/m],
  // A shell's job-control report after a background command ("[1]  + 13333 exit 1     kubectl …").
  [
    /^\[\d{1,4}\][ \t]{1,8}[+-]?[ \t]{0,8}(?:\d{1,8}[ \t]{1,8})?(?:exit \d{1,3}|done|terminated|killed|suspended|running)\b[^\n]*$/gm,
    "",
    /^\[\d{1,4}\][ \t]/m,
  ],
  [
    /^(?:\$|(?:\([\w.-]{1,60}\) )?[\w.-]{1,64}@[\w.-]{1,64}(?::[^\s$#]{0,300})?[$#]|\[[\w.-]{1,64}@[\w.-]{1,64} [^\]\n]{1,300}\][$#]|:?[~/][^\s$#]{0,300} ?[$#])(?: [^\n]*)?$/gm,
    "",
    /^(?:\$ |\[?[\w.-]{1,64}@[\w.-]{1,64}[:$# ]|:?[~/][^\s$#]{0,300} ?[$#](?: |$))/m,
  ],
];

/** The paste's lines go only when something else is left: a report that is only a prompt or only an exit status stays as it is. */
function dropPasteLines(input: string): string {
  const s = applyGated(input, PASTE_LINES);
  return s === input || s.trim() === "" ? input : s;
}

/**
 * glibc's abort line ("*** stack smashing detected ***: terminated", older releases "***: ./prog
 * terminated" or "<unknown> terminated") is the error wherever it stands in a paste: the program's
 * output before it and the shell's report after it ("Aborted (core dumped)", a batch system's
 * "srun: error: node: task 0: Aborted") are surroundings, and so is the program's name. Version 5
 * does not read the line as an error line and keeps its neighbours.
 */
const GLIBC_ABORT = /^[ \t]{0,8}\*{1,3}(?:\\\*)?[ \t]?([a-z][^*\n]{2,100}?)[ \t]?\*{3}[ \t]?:?[ \t]?(?:\S{1,200}[ \t])?terminated\b/m;

function glibcAbortLine(input: string): string {
  if (!input.includes("***")) return input;
  const m = GLIBC_ABORT.exec(input);
  return m ? `*** ${m[1]} ***: terminated` : input;
}

/**
 * A logger's level label padded with spaces instead of a colon ("Error  Cannot find module 'x'",
 * as the Nest CLI prints it): version 5 reads "ERROR  " as a label but "Error  " as a word of the
 * message. Written with a colon, it is the label version 5 drops. Only "Error": Kubernetes prints
 * its events in padded columns ("Warning  FailedScheduling  2m …"), where "Warning" is a column.
 */
const PADDED_LABEL: GatedRule = [/^([ \t]{0,8}Error)[ \t]{2,}(?=[A-Z])/gm, "$1: ", /Error[ \t]{2}/];

/** Java namespaces of the platform and of published libraries (version 5's list, lowercase). */
const LIBRARY_CLASS_ROOTS =
  "(?:java|javax|jakarta|sun|com\\.sun|jdk|org|android|androidx|kotlin|kotlinx|scala|groovy|lombok|ch\\.qos|com\\.google|com\\.mysql|com\\.microsoft|com\\.fasterxml|com\\.amazonaws|com\\.oracle|oracle|com\\.intellij|com\\.android|io\\.netty|io\\.grpc|io\\.micrometer|io\\.swagger|io\\.jsonwebtoken|net\\.bytebuddy|reactor)";

/** Applied in order to version 5's normal form (lowercase, placeholders already in place). */
const V6_RULES: GatedRule[] = [
  // A decoration version 5 left at the start once it removed what was in front of it ("> ❌ …"),
  // or inside a line (pip's "╰─> To install" after a runner's prefix).
  [/^(?:[\p{So}\u2190-\u21ff\u2500-\u257f][\ufe0f\u200d]? ?)+(?=\S)/u, "", ANY_DECORATION],
  [/(?<= )(?:[\p{So}\u2190-\u21ff\u2500-\u257f][\ufe0f\u200d]?)+>? (?=\S)/gu, "", ANY_DECORATION],
  // A forum title's status tag: "[SOLVED] …", "… (fixed)".
  [/^[[(](?:solved|fixed|resolved|closed|help|question)[\])] ?(?=\S)/, "", /^[[(]/],
  [/(?<=\S) ?[[(](?:solved|fixed|resolved|closed)[\])]$/, "", /[\])]$/],
  // Go's label in front of a panic's message ("panic: sync: negative WaitGroup counter"), as
  // "error:" is in front of others; versions 1 to 5 drop it only before "runtime error".
  [/^panic (?=[a-z])/, "", "panic"],
  // A version qualifier a wrapper or reporter puts in brackets: "(version 3.2)", "[v1.2.0]",
  // "(node v20.11.1)", "(Node.js 18.19.0)" (version 2 reads "Node.js" as a source file, <src>).
  // A bare "(1.2.3)" goes only at the end: inside a message it may be what the message is about.
  [new RegExp(`(?<=\\S) ?[(\\[](?:(?:${RUNTIME})\\.? ?<ver>[)\\]]|<ver>[)\\]]$)`, "g"), "", "<ver>"],
  // A documentation link after the message: "… see <url>", "… for more information, see <url>".
  [
    /(?<=\S)(?: (?:for more (?:information|info|details)|more (?:information|info|details)|for details|read more|learn more)(?: (?:see also|see|visit|refer to|check))?| (?:see also|see|visit|refer to|check|docs|documentation|help))(?: (?:at|on|in|here))? <url>(?: for (?:more )?(?:information|info|details))?$/,
    "",
    "<url>",
  ],
  // Maven's trailer on every build failure ("… -> [Help 1]").
  [/(?<=\S) -> \[help \d{1,3}\]$/, "", "[help"],
  // An environment variable written with its sigil: "$JAVA_HOME", "${JAVA_HOME}", "%JAVA_HOME%"
  // (version 2 writes all three "$java_home"), PowerShell's "$env:JAVA_HOME", or bare: one name.
  [/(?<![\w$\\])\$(?:env:)?(?=[a-z_][a-z0-9_]{1,100}(?![\w(]))/g, "", "$"],
  // Index and bounds errors: the index, length and capacity are the program's values at run time
  // (Java "Index 5 out of bounds for length 3", Go "index out of range [5] with length 3", Rust
  // "the len is 3 but the index is 5"), not the error's identity.
  [/(?<![\w<>.-])(?:\[?:?\d{1,19}:?\d{0,19}\]?|<ver>|<ip>|<n>|<num>)(?![\w<>.-])/g, "<n>", /\bout of (?:range|bounds)\b/],
  // A reporter's lead-in version 5 does not know ("getting error …", "facing this issue: …").
  [
    /^(?:getting|seeing|facing|receiving|hitting|having)(?: (?:an?|the|this|following|same|below))* (?:errors?|exceptions?|issues?|problems?)(?: message)?(?: like| saying| stating| below| that says)?:? (?=\S+ \S)/,
    "",
    /^(?:getting|seeing|facing|receiving|hitting|having) /,
  ],
  // A reporter's question around the message ("what is wrong with this 'Error 111 connecting …'",
  // "how to fix: …").
  [
    /^(?:what(?: is|s) wrong with|how (?:to|do i|can i) (?:fix|solve|resolve)|why (?:do i|am i|does it|is it) (?:get|getting|keep getting|throw|throwing))(?: (?:this|the|my|an?|following))*(?: (?:errors?|exceptions?|issues?|problems?))?:? (?=\S+ \S)/,
    "",
    /^(?:what|how|why) /,
  ],
  // A reporter's own words after the message: a question ("… how can I solve this problem?", "…
  // any ideas?") or a sentence about what they did ("… I am using the train and yaml file from
  // the repo"). A tool's own question ("is the docker daemon running?") names no "I" or "someone".
  [
    /(?<=\S) (?:how (?:(?:can|do|should|could|would) (?:i|we|one)|to (?:fix|solve|resolve) (?:this|it|the|that))|what (?:should|do|can|could) (?:i|we)|any (?:ideas?|help|solutions?|suggestions?|advice)|(?:can|could) (?:someone|anyone|somebody|you) (?:help|tell|explain|please)|does anyone|anyone (?:know|else)|please help|help me)\b[^\n]{0,300}$/,
    "",
    /\b(?:how|what|any|can|could|does|anyone|please|help) /,
  ],
  [
    /(?<=\S) (?:i|we) (?:am|was|have|had|get|got|tried|keep|also|just|still|then|guess|think|believe|suppose|wonder)\b[^\n]{0,400}$/,
    "",
    /\b(?:i|we) [a-z]/,
  ],
  // A parser's character offset beside the line and column versions 1 to 5 already fold
  // ("Expecting property name enclosed in double quotes: line 8 column 1 (char 132)").
  [/(?<=\bcolumn <line> )\(char \d{1,12}\)/g, "(char <n>)", "column <line> (char "],
  // SQL objects are the user's own (versions 3 to 5 write "table <name>" and "relation <name>"):
  // also after SQLite's and MySQL's "no such table:", "unknown column", whose colon kept them.
  [
    /\b(no such (?:table|column)|unknown (?:table|column)) (?!<)[\w.$-]{1,200}(?= |$)/g,
    "$1 <name>",
    /\b(?:no such|unknown) (?:table|column) /,
  ],
  // A database's echo of the user's statement after the message: PostgreSQL's "LINE 1: …) FROM
  // x…", Laravel's "(SQL: select …)" and "(Connection: mysql, SQL: …)", SQLAlchemy's "[SQL: SELECT
  // …] [parameters: …]".
  [
    /(?<=\S) line <line> (?:\.\.\.|(?:select|insert|update|delete|from|create|alter|drop|with|values|where|join|returning)\b)[^\n]*$/,
    "",
    " line <line> ",
  ],
  [
    /(?<=\S) (?:\((?:connection [\w-]{1,60} )?sql|\[sql) (?:select|insert|update|delete|create|alter|drop|with|show|set|truncate)\b[^\n]*[)\]]$/,
    "",
    "sql ",
  ],
  // The driver's exception class in parentheses in front of its message, as SQLAlchemy wraps it
  // ("(sqlite3.OperationalError) no such column: x", "(psycopg2.errors.DeadlockDetected) deadlock
  // detected"; version 5 keeps "(operationalerror)").
  [/^\((?:(?:[\w]{1,100}\.){0,10}\w{0,100}(?:error|exception|warning)|(?:[a-z_][\w]{0,100}\.){1,10}[a-z_]\w{0,100})\) (?=\S)/, "", /^\(/],
  // An exception class in a namespace written with backslashes (PHP's
  // "Illuminate\Database\QueryException : SQLSTATE[HY000] …"), which version 5 reads as a path;
  // the driver's message after it identifies the error, as after a dotted class.
  [/^(?:[a-z_][\w]{0,100}\/){1,12}[\w]{0,100}(?:exception|error) (?=\S)/, "", /^[a-z_]\w*\//],
  // An OS error's number names it; the Python class around it differs by release and by the call
  // that raised it ("OSError: [Errno 98] …", "socket.error: [Errno 98] …"; version 5 already drops
  // "PermissionError" before "[Errno 13]" but keeps "OSError").
  [/^(?:[a-z_][\w]{0,100}\.){0,10}[a-z_]\w{0,100}(?:error|exception) (?=\[(?:errno|winerror) )/, "", "["],
  // A Rust backtrace after the panic's message ("stack backtrace: 0: 0x7ff7… - <unknown> …"), as
  // a traceback is before a Python exception's.
  [/(?<=\S) stack backtrace(?: [^\n]*)?$/, "", "stack backtrace"],
  // Where the program stopped, left bare at the end ("… on a `None` value', src/main.rs:177:37"):
  // the user's source location, not the error.
  [/(?<=[^\s,:]) (?:<path>\/?)?(?:<src>)?(?::<line>){1,2}$/, "", ":<line>"],
  // The user's own class, named in full after "class" (JPA's "Not a managed type: class
  // com.acme.model.License", "class com.acme.Foo cannot be cast to class com.acme.Bar"); a class of
  // the platform or of a published library names the library and stays (as in version 5's rule for
  // ClassNotFoundException), and so does a class whose own initializer failed ("Could not
  // initialize class x": its code is what failed).
  [
    new RegExp(
      `(?<!\\binitialize )\\b(class) (?!${LIBRARY_CLASS_ROOTS}\\.)[a-z_$][\\w$]{0,100}(?:\\.[\\w$]{1,100}){1,30}(?=$|[ ,;)])`,
      "g",
    ),
    "$1 <class>",
    "class ",
  ],
  // The source line a C or C++ compiler quotes under a missing header ("fatal error: vector: No
  // such file or directory  #include <vector>  ^~~~~~~~"): the user's line, not the error.
  [/(?<=\bno such file or directory) #\s?include ?[<"][^>"\n]{1,200}[>"]$/, "", "include"],
  // The user's container, volume or network Docker cannot find ("No such container: relay"), as
  // version 3 does for "No such image:".
  [/\b(no such (?:container|volume|network)) (?!<)[\w.:@-]{1,200}(?=$| )/g, "$1 <name>", /no such (?:container|volume|network) /],
  // The paths of a rename that failed (npm's "ENOTEMPTY: directory not empty, rename
  // '…/node_modules/chai' -> '…/node_modules/.chai-ioYsTChA'"): the user's directory and a
  // temporary name; versions 1 to 5 leave the part under node_modules.
  [/\b(rename) [^\s>]{1,400} -> [^\s]{1,400}/g, "$1 <path> -> <path>", "rename "],
  // The user's class in the JVM's internal form before a class-version error
  // ("io/minecloud/controller/Controller : Unsupported major.minor version 52.0"); a class of the
  // platform or a published library stays.
  [
    new RegExp(
      `^(?!${LIBRARY_CLASS_ROOTS.replace(/\\\./g, "/")}/)(?:[a-z_$][\\w$]{0,100}/){1,30}[\\w$]{1,100} (?=unsupported major\\.minor version)`,
    ),
    "<class> ",
    "unsupported major.minor",
  ],
  // The user's volumes that kubelet lists ("unmounted volumes=[dags], unattached volumes=[config
  // dags kube-api-access-t8b2v logs]"), as version 5 does for "volume <name>".
  [/\b((?:unmounted|unattached) volumes)=\[[^\]\n]{0,500}\]/g, "$1=[<name>]", "volumes=["],
  // A host name Go's resolver could not resolve is the user's, and so is the resolver it asked
  // ("dial tcp: lookup ec2-….amazonaws.com on 208.67.222.123:53: no such host"); a chat or forum
  // turns the name into a Markdown link ("[api.x.com](http://api.x.com/)").
  [
    /\b(lookup) (?!<host>)[^\s]{1,300}?(?: on <ip>:<port>)?(?= (?:no such host|server misbehaving|i\/o timeout)\b)/g,
    "$1 <host>",
    "lookup ",
  ],
  // A Go HTTP request that failed on the network, and what the program said it was doing before
  // it ("FIND LOCATIONS RESULT … Get "https://…": dial tcp: …", Docker's "Pulling x… Get
  // https://registry-1.docker.io/v2/…: net/http: TLS handshake timeout"): the user's URL (versions 2
  // to 5 already fold it) and words; the network error after them is the error.
  [/^(?:[^\n]{1,300}? )?<request> (?=(?:dial|read|write) (?:tcp|udp)\b|net\/http )/, "", "<request> "],
  // The same details when a client prints them on the message's line ("(psycopg2.errors.
  // DeadlockDetected) deadlock detected DETAIL: Process 974074 waits for …").
  [/(?<=\S) detail (?:process|key|failing row|token|the)\b[^\n]*$/, "", " detail "],
  // Node's error object printed around the message with its errno code ("{ [Error: socket hang
  // up] code: 'ECONNRESET' }", "… socket hang up code: 'ECONNRESET'"): the code restates the
  // message; callers print the object or only its message.
  [/(?<=\S)\]? code e[a-z_]{2,30}$/, "", " code e"],
  // A dump of the user's configuration object after the message (Spring's "Failed to load
  // ApplicationContext for [WebMergedContextConfiguration@6b2efcae testClass = …]").
  [/(?<=\S) (?:for|in|of) \[[\w.$]{1,200}@<hash>(?![\w<>])[^\n]*\]$/, "", "@<hash>"],
];

/**
 * The version-6 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV6(errorText: string): string {
  const undecorated = ANY_DECORATION.test(errorText) ? errorText.replace(LINE_DECORATION, "") : errorText;
  const v5 = normalizeErrorTextV5(glibcAbortLine(applyGated(dropPasteLines(undecorated), [PADDED_LABEL])));
  const s = applyGated(v5, V6_RULES).replace(/ {2,}/g, " ").trim();
  // Version 5's last rules look at the end of the message: run them again where it moved.
  return s === v5 ? s : applyGated(s, V5_WORDING_RULES).trim();
}

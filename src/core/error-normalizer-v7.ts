// Normalizer version 7, frozen: stored fingerprints computed with it must stay reproducible (aliases
// of stored trails, decisions §2). Do not change its output; the current version is
// error-normalizer.ts. Pure: no I/O. Secrets are redacted by the caller (fingerprint.ts) first.
//
// Version 7 = version 6 (error-normalizer-v6.ts, frozen; it builds on versions 5 to 1), then the
// rules below on its normal form, written from the misses of both external sets of real reports
// (test/fixtures/fingerprint-real-variants*.json). Each one removes or folds what issue 16 counts
// as surroundings (a release's older wording of the same message, a client's wrapper around the
// server's answer, the user's own names and values, a shell or notebook's echo, text in another
// script around the message), so two reports version 6 gave one form still share it. A few line
// rules come before version 6 (database shell prompts, a notebook's source lines, Maven's progress
// lines, Rust's two-line panic, make's own error in a reporter's sentence, a log's escaped
// newlines); error-normalizer-v7.test.ts checks on every dev-set text that they split no pair
// version 6 joined. docs/fingerprint.md lists every rule with its miss class.
//
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { applyGated, type GatedRule, V5_WORDING_RULES } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV6 } from "./error-normalizer-v6.ts";

/**
 * Lines of a paste that version 6 reads as part of the error, dropped before it runs (only when
 * something else is left): a database shell's prompt with the statement typed at it ("mysql> ALTER
 * TABLE …", its "    -> ;" continuation, sqlplus's "SQL> …"), as version 6 drops a system shell's;
 * a notebook's numbered source lines around the failing call ("----> 51     x = pickle.load(f)",
 * "     52     except …"), as a traceback's "File …" lines are; Maven's progress lines when it
 * printed an [ERROR] line ("[INFO] BUILD FAILURE", "[INFO] Reactor Summary:", "[INFO] 1 error")
 * and its own hint lines ("[ERROR] -> [Help 1]", "[ERROR] Re-run Maven using the -X switch …");
 * node-gyp's report lines other than the failure it reports ("gyp ERR! System Darwin 18.7.0",
 * "gyp ERR! cwd …", "gyp ERR! node -v v12.16.1", "gyp ERR! not ok", its stack frames).
 */
const PASTE_LINES: GatedRule[] = [
  [/^(?:mysql|mariadb|MariaDB \[[^\]\n]{0,80}\]|SQL)> [^\n]*$/gm, "", /^(?:mysql|mariadb|MariaDB|SQL)> /m],
  [/^ {0,8}-> [^\n]*$/gm, "", /^ {0,8}-> /m],
  [/^(?:-{1,10}> {0,4}| {0,16})\d{1,6} {1,16}[^\n]*$/gm, "", /^-{1,10}> {0,4}\d/m],
  [/^\[INFO\][^\n]*$/gm, "", /^\[ERROR\] /m],
  [
    /^\[ERROR\](?: (?:COMPILATION ERROR :?|-> \[Help \d{1,3}\]|To see the full stack trace[^\n]*|Re-run Maven[^\n]*|For more information about the errors[^\n]*|\[Help \d{1,3}\][^\n]*|After correcting the problems[^\n]*| {2}mvn <[^\n]*))?[ \t]*$/gm,
    "",
    "[ERROR]",
  ],
  [/^gyp (?:ERR!|info) (?!stack Error: )[^\n]*$/gm, "", "gyp "],
  [/^npm ERR! (?:weird error|not ok)[^\n]*$/gm, "", "npm ERR! "],
  // npm's debug log ("584 verbose exit -39", "24 error Unexpected end of JSON input …"): the
  // numbered progress lines go, the numbered error lines read as npm prints them.
  [/^\d{1,6} (?:verbose|silly|timing|http|info|warn|notice) [^\n]*$/gm, "", /^\d{1,6} (?:verbose|silly|timing|http|info|warn|notice) /m],
  [/^\d{1,6} error /gm, "npm ERR! ", /^\d{1,6} error /m],
  // The shell's report of the signal after the program's message ("Aborted (core dumped)", a
  // localized "已放弃 (核心已转储)", zsh's "[1]    3950410 abort (core dumped)  ./prog"), glog's
  // "*** Aborted at 1722869898 (unix time) …", roslaunch's "[node-2] process has died [pid …]" and
  // "log file: …", Windows' "Press any key to continue . . .", and prompts version 6 does not know
  // (a conda environment's "(base) user@host:~/ws$", "[nix-shell:~/x]$", PowerShell's "PS C:\x>").
  [/^[ \t]*(?:Aborted|Abort|已放弃)(?: \((?:core dumped|core dump|核心已转储)\))?\.?[ \t]*$/gm, "", /^[ \t]*(?:Abort|已放弃)/m],
  [/^\[\d{1,4}\][ \t]{1,8}[+-]?[ \t]{0,8}\d{1,8}[ \t]{1,8}(?:abort|segmentation fault)\b[^\n]*$/gm, "", /^\[\d{1,4}\][ \t]/m],
  [/^\*\*\* Aborted at \d{1,12} \(unix time\)[^\n]*$/gm, "", "*** Aborted at "],
  [/^(?:\[[\w./-]{1,100}\] process has died \[[^\n]*|log file: [^\n]*)$/gm, "", /process has died|^log file: /m],
  [/^Press any key to (?:continue|exit)[ .]*$/gm, "", "Press any key to "],
  [/^\([\w.-]{1,60}\) [\w.-]{1,64}@[\w.-]{1,64}:[^\n]{0,300}[$#][ \t]*$/gm, "", /^\([\w.-]{1,60}\) [\w.-]{1,64}@/m],
  [/^\[nix-shell:[^\]\n]{1,300}\][$#][^\n]*$/gm, "", "[nix-shell:"],
  [/^PS [A-Za-z]:\\[^\n>]{0,300}>[^\n]*$/gm, "", /^PS [A-Za-z]:/m],
  // A Python traceback's echo of the raising line ("    raise BadZipFile(\"File is not a zip
  // file\")" above "zipfile.BadZipFile: File is not a zip file"): the source, not the error.
  [/^[ \t]*raise [A-Za-z_][\w.]{0,100}(?:\([^\n]*\)|,[^\n]*)?[ \t]*$/gm, "", "raise "],
  // A PostgreSQL tool's detail and hint lines ("pg_dump: detail: server version: 17.0; pg_dump
  // version: 16.4"), as version 6 drops the server's DETAIL and HINT lines.
  [/^[\w-]{1,30}: (?:detail|hint): [^\n]*$/gm, "", /: (?:detail|hint): /],
];

function dropPasteLines(input: string): string {
  const s = applyGated(input, PASTE_LINES);
  return s === input || s.trim() === "" ? input : s;
}

/**
 * Rust 1.73 and later print a panic's message on its own line after the location ("thread 'main'
 * panicked at src/main.rs:28:39:\ncalled `Result::unwrap()` on an `Err` value: …"; on Windows with
 * the thread's id, "thread 'main' (35756) panicked at …"); earlier releases printed it on one line
 * ("thread 'main' panicked at 'called `Result::unwrap()` …', src/main.rs:28:39"), the form versions
 * 4 to 6 read. The newer form is written in the older one.
 */
const RUST_TWO_LINE_PANIC: GatedRule = [
  /\bthread '([^'\n]{1,100})'(?: \(\d{1,12}\))? panicked at ([^'\s][^\n]{0,300}?):[ \t]*\n[ \t]*([^\n]{1,2000})/g,
  "thread '$1' panicked at '$3', $2",
  "panicked at ",
];

/**
 * A log line's JSON string with its newlines escaped ("\"Error: spawn git ENOENT\\n    at …\"",
 * "{\"error\": \"…pg_dump: error: …\\npg_dump: error: aborting …\\n\"}"): the escapes are the
 * report's line breaks. Only an escape followed by a blank, a quote, a backslash, the end or a
 * tool's "name: " label, so a Windows path ("C:\node_modules") keeps its backslash.
 */
const ESCAPED_NEWLINES: GatedRule = [/\\n(?=[ \t"\\]|$|[a-z_]{2,20}: )/g, "\n", "\\n"];

/**
 * make's own error wherever a reporter put it ("when run make, it said \"make: *** No targets
 * specified and no makefile found.  Stop\"", "+ make -j4 make: *** …", Markdown's escaped
 * "make: **\\* …"): version 5 reads make's line when it stands alone and a recipe's trailer
 * ("make: *** [all] Error 1") when it does not; here the message is make's, so it is the error
 * when no other line of the report names one.
 */
const MAKE_ERROR = /\bmake(?:\[\d{1,3}\])?: \*{0,3}(?:\\\*)?\*? ?(?!\[)([A-Z][^\n*]{5,200}?)\.?(?: {1,3}|[ \t]*\.[ \t]*)Stop\b/;

function makeErrorLine(input: string): string {
  if (!input.includes("Stop")) return input;
  const m = MAKE_ERROR.exec(input);
  if (!m) return input;
  const others = input.split("\n").filter((l) => !l.includes(m[0]) && /\b(?:error|fatal|failed)\b/i.test(l));
  return others.length === 0 ? `make: *** ${m[1]}.  Stop.` : input;
}

/**
 * libstdc++'s report of an uncaught exception ("terminate called after throwing an instance of
 * 'std::bad_alloc'\n  what():  std::bad_alloc") is the error wherever it stands, as version 6 reads
 * glibc's abort line: the program's output before it ("Reading in tax DB...", "19:31:16 mapper
 * indexing done"), a reporter's label and the shell's report after it are surroundings.
 */
const CXX_TERMINATE =
  /terminate called after throwing an instance of '([^'\n]{1,200})'(?:[ \t*`]{0,8}\n?[ \t*`]{0,8}what\(\):[ \t]{0,8}([^\n*`]{0,300}?))?[ \t.*`]*(?=\n|$| Aborted\b| Abort\b)/;

function cxxTerminateLine(input: string): string {
  if (!input.includes("terminate called after")) return input;
  const m = CXX_TERMINATE.exec(input);
  if (!m) return input;
  return m[2] === undefined
    ? `terminate called after throwing an instance of '${m[1]}'`
    : `terminate called after throwing an instance of '${m[1]}'\n  what():  ${m[2]}`;
}

/**
 * glibc's heap checks ("double free or corruption (out)", "free(): invalid pointer", "malloc():
 * corrupted top size", older releases' "*** Error in `./prog': double free or corruption (!prev):
 * 0x… ***") are the error wherever they stand, as version 6 reads glibc's abort line: the program's
 * output before them and a reporter's words or the shell's report after them are surroundings.
 * The check named in parentheses stays: "(out)" and "(!prev)" are different corruptions.
 */
const GLIBC_HEAP_CHECK =
  /\b(double free or corruption \((?:out|!prev|fasttop|top)\)|free\(\): invalid (?:pointer|size|next size \((?:fast|normal)\))|malloc\(\): (?:corrupted top size|memory corruption(?: \(fast\))?|unaligned tcache chunk detected|invalid size \(unsorted\))|munmap_chunk\(\): invalid pointer|corrupted size vs\. prev_size)/;

function glibcHeapCheck(input: string): string {
  if (!input.includes("(")) return input;
  const m = GLIBC_HEAP_CHECK.exec(input);
  return m ? m[1]! : input;
}

/** Han, Kana, Hangul and CJK punctuation (full-width forms included). */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]+/u;
const CJK_RUNS = new RegExp(CJK_RUN.source, "gu");
/** Words after which a value follows: text in another script after them may be that value. */
const TAKES_VALUE = /\b(?:named|module|package|file|table|column|key|user|role|database|for|to|of|in|at|from|by|with|value|key)$/;

/**
 * A reporter's words in another script glued to the message ("unindent does not match any outer
 * indentation level错误", "bnilog2sql报错：(2013, 'Lost connection …')", "RedisHelper - Redis命令
 * <ListRightPush>b__c8失败：OOM command not allowed …", "double free or corruption (!prev) 已放弃
 * (核心已转储) what is the cause …"): the first stretch of Latin text of three words or more between
 * them is the message (version 5 does this only when the report starts in the other script). A
 * stretch ending in a word that takes a value ("no module named" before a name in Han) keeps the
 * report as it is.
 */
function otherScriptAround(form: string): string {
  if (!CJK_RUN.test(form)) return form;
  for (const piece of form.split(CJK_RUNS)) {
    const t = piece.replace(/^[\s\-–:;,.!?|]+|[\s\-–:;,|]+$/g, "");
    if ((t.match(/[a-z]{2,}/g) ?? []).length < 3) continue;
    return TAKES_VALUE.test(t) ? form : t;
  }
  return form;
}

/** Applied in order to version 6's normal form (lowercase, placeholders already in place). */
const V7_RULES: GatedRule[] = [
  // A release's older wording of the same message (version wording): V8 before 9.3 wrote
  // "Cannot read property 'map' of undefined", later releases "Cannot read properties of undefined
  // (reading 'map')"; the JDK before 11 "unable to create new native thread", later "unable to
  // create native thread: possibly out of memory or process/resource limits reached"; Windows words
  // ENOENT "The system cannot find the file specified." (as version 4 reads Windows' socket errors
  // in their POSIX words).
  [/\bcannot (read|set) property (\S{1,200}) of (undefined|null)\b/g, "cannot $1 properties of $3 ($1ing $2)", "property "],
  [/\(seting /g, "(setting ", "(seting "],
  [
    /\bunable to create (?:new )?native thread(?: possibly out of memory or process\/resource limits reached)?/g,
    "unable to create native thread",
    "native thread",
  ],
  [/\bthe system cannot find the file specified\.?/g, "no such file or directory", "cannot find the file specified"],
  // An exception's repr with Python 2's trailing comma ("RuntimeError('Set changed size during
  // iteration',)"): the message, as version 3 reads "RecursionError('…')".
  [/(?<![\w.])[a-z_][\w.]{0,100}(?:error|exception)\(([^()\n]{3,300}?),?\)(?= |$)/, "$1", /(?:error|exception)\(/],
  // A whole form wrapped in parentheses once the words around it went ("(2013, 'Lost connection to
  // MySQL server during query')" after a reporter's words in another script).
  [/^\(([^()\n]{3,500})\)$/, "$1", /^\(/],
  // MySQL's SQLSTATE after the error number where a client left it inside a line ("mysql> … ERROR
  // 2013 (HY000): …" once the prompt went): the number names the error; version 3 drops the state
  // when the line starts with it.
  [/\b(\d{4}) \((?:hy|\d{2})[0-9a-z]{3}\)(?= )/g, "$1", " ("],
  // The user's schema in a foreign-key error ("a foreign key constraint fails (`shop`.`orders`,
  // CONSTRAINT `fk_1` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE CASCADE)", and
  // what a client appends after it: " at /usr/bin/x line 7624", "[for Statement …]", "MySQL Version:
  // 5.1"): the database, table, constraint and column names are the user's (versions 3 to 6 already
  // write "table <name>").
  [/\b(a foreign key constraint fails) \([^\n]*$/, "$1", "foreign key constraint fails ("],
  // PostgreSQL's echo of the statement in its log ("… ERROR:  current transaction is aborted …
  // STATEMENT:  SELECT …"), as version 6 drops DETAIL and HINT; and a client's SQLSTATE after the
  // message (pgAdmin's "SQL state: 25P02"), as version 5 drops pgx's "(SQLSTATE 42703)".
  [/(?<=\S) statement (?:select|insert|update|delete|with|create|alter|drop|begin|commit|set|show|copy)\b[^\n]*$/, "", " statement "],
  [/(?<=\S) sql ?state [0-9a-z]{5}$/, "", "state "],
  // A Docker client's wrapper around the daemon's answer: dockerode's "(HTTP code 409) conflict - "
  // and VS Code's "Action: vscode-docker.images.remove Error type: 409 Error Message: " before it;
  // and the command, progress or program text before "Error response from daemon:" (version 5
  // drops the label when it starts the report): the daemon's answer is the error.
  [/^(?:action [\w.-]{1,80} error type \d{3} error message )?\(http code \d{3}\) [a-z ]{1,40} - /, "", "(http code "],
  [/^[^\n]{1,300}? error response from daemon (?=\S)/, "", " error response from daemon "],
  // kubectl's "Unable to connect to the server:" in front of Go's network error, with a reporter's
  // words before it ("kubectl error :Unable to connect …", "`kubectl version` returns `Unable to
  // connect …`"): version 5 drops the label when it starts the report.
  [/^[^\n]{1,200}?[ :]unable to connect to the server (?=dial |net\/http )/, "", "unable to connect to the server "],
  // The JDK's platform suffix after a socket error ("Address already in use: bind", ": NET_Bind",
  // ": JVM_Bind", " (Bind failed)", "Cannot assign requested address: no further information") and
  // Android's errno wording ("bind failed: EADDRINUSE (Address already in use)"): the same error on
  // another platform or release.
  [
    /\b(address already in use|cannot assign requested address) (?:net_bind|jvm_bind|bind|\(bind failed\)|no further information|cannot bind)$/,
    "$1",
    /in use |requested address /,
  ],
  [/\b[a-z_]{1,40} failed e[a-z]{3,15} \(([a-z][^()\n]{2,80})\)/g, "$1", " failed e"],
  // A bounds error's run-time values, which Go 1.12 and later print and earlier releases do not
  // ("index out of range [5] with length 3" and "index out of range"), and libstdc++'s
  // ("vector::_M_range_check: __n (which is 17) >= this->size() (which is 8)"): version 6 writes
  // them <n>; here they go, so both releases' wordings are one.
  [/\b(index|slice bounds) out of range(?: <n>)?(?: with (?:length|capacity) <n>)?/g, "$1 out of range", " out of range"],
  [
    /\b(_m_range_check) __n \(which is [^()\n]{1,40}\) >= this->size\(\) \(which is [^()\n]{1,40}\)/g,
    "$1 __n >= this->size()",
    "_m_range_check",
  ],
  // The user's own crate in rustc's E0601 ("`main` function not found in crate `lapa_site`") and the
  // note after it ("consider adding a `main` function to `src/main.rs`").
  [/\b(main function not found in crate) [\w-]{1,100}/, "$1 <name>", "not found in crate "],
  [/(?<=\S) note consider adding a main function\b[^\n]*$/, "", " note consider adding"],
  // Maven's goal in front of the compiler's own error ("Failed to execute goal
  // org.apache.maven.plugins:maven-compiler-plugin:3.8.0:compile (default-compile) on project base:
  // Compilation failure: No compiler is provided …"), as version 5 keeps a wrapped cause.
  [/^failed to execute goal \S{1,300} \([\w-]{1,100}\) on project [\w.-]{1,200} compilation failure (?=\S)/, "", "compilation failure "],
  // Node's error object printed without its fields ("{ [Error: spawn git ENOENT]" once version 6
  // dropped "code: 'ENOENT', …"): the message.
  [/^\{ \[(?:error )?([^\]\n]{3,300})\](?: \})?$/, "$1", /^\{ \[/],
  // What a runtime prints after the exception: Python's "Exception ignored in: <function …>", a
  // crash reporter's "(6 additional frame(s) were not displayed)".
  [/(?<=\S) exception ignored in <function [^\n]*$/, "", "exception ignored in "],
  [/(?<=\S) \(\d{1,4} additional frame\(s\) were not displayed\)[^\n]*$/, "", "additional frame"],
  // kubectl get events' columns after the message (first seen, count, the event's name).
  [/(?<=\S) <dur> \d{1,6} [\w.<>-]{1,253}\.<hash>$/, "", ".<hash>"],
  // A message printed twice, by a logger and by the exception after it ("FAILED SelectChannelConnector
  // …: java.net.BindException: Address already in use\njava.net.BindException: Address already in use").
  [/^(.{12,400}?) \1$/, "$1", /^.{25}/],
  // The JDK's socket exception in front of the system's error text, left without its package
  // ("bindexception address already in use", "sslhandshakeexception received fatal alert …"):
  // version 5 drops "java.net.BindException:" when it is qualified; the text after it (the OS's
  // errno message, the TLS alert) names the error, as version 6 reads "OSError: [Errno 98]". Only
  // these classes: another class with the same message is another error (decisions §2).
  [/^(?:bind|connect|socket|sockettimeout|noroutetohost|sslhandshake|ssl)exception (?=\S+ \S+ \S)/, "", /^[a-z]{3,20}exception /],
  // A parser's excerpt of the input it stopped in ("Unexpected end of JSON input while parsing near
  // '...:\"^6.18.0\",\"babel-tem'"): the user's data, as version 6 drops a parser's character offset.
  [/\b(unexpected end of json input while parsing near)\b[^\n]*$/, "$1", "while parsing near"],
  // npm's label after a reporter's words ("[BUG] inflate-shrinkwrap.js:87:20 npm ERR! Cannot read …").
  [/^(?:[^\n]{1,200}? )?npm err (?=\S)/, "", "npm err "],
  // Perl DBI's wrapper around the driver's message ("DBD::mysql::st execute failed: Cannot delete or
  // update a parent row …", "DBIx::Class::Storage::DBI::_dbh_execute(): DBI Exception: DBD::mysql::st
  // execute failed: …"), as version 4 drops a PEP 249 client's exception class: the server's message.
  [/^(?:[^\n]{0,300}? )?dbd::\w{1,30}::(?:db|st) (?:do|execute|prepare|connect) failed (?=\S)/, "", "dbd::"],
  // An address a reporter masked by hand ("xxx.xxx.xxx.xxx:49350", "10.x.x.x:53786",
  // "XXXXXXXXXX:50097", "IP:443"): an address, as the ones redaction and version 1 replace.
  [/\b(?:(?:x{1,3}|\d{1,3})\.(?:x{1,3}\.){2}x{1,3}|x{4,20}|ip):(?:<line>|<port>|\d{2,5})(?!\w)/g, "<ip>:<port>", /x\.|xxxx|\bip:/],
  // A Markdown bold label a reporter put in front ("**What happened**: …") once version 5 took the
  // first stars.
  [/^[a-z ]{2,40}\*\* (?=\S)/, "", "** "],
  // cgitb's dump of the exception's attributes after it ("__cause__ = None __class__ = …").
  [/(?<=\S) __cause__ = [^\n]*$/, "", "__cause__ = "],
  // MySQL clients: SQLyog's "Error Code: 2006 - MySQL server has gone away." and the mysql client's
  // "No connection. Trying to reconnect..." after it.
  [/^(\d{4}) - (?=\S)/, "$1 ", /^\d{4} - /],
  [/(?<=\S) no connection(?: trying to reconnect)?\b[^\n]*$/, "", " no connection"],
  // A kubelet event's object in front ("Pod pulsar-cluster-bookies-0: Back-off restarting failed
  // container") and the container and pod newer releases name after it ("Back-off restarting failed
  // container kube-scan in pod …"): the user's names.
  [/^pod [a-z0-9]{1,63}(?:-[a-z0-9]{1,63}){1,10} (?=[a-z])/, "", /^pod /],
  [/\b(back-off restarting failed container)(?: \S{1,253})? in pod\b\S{0,300}(?: \S{1,300})?/, "$1", " in pod"],
  [/^- (?=\S)/, "", /^- /],
  // pip's summary after the failure it follows from ("Failed building wheel for pyyaml").
  [/(?<=\S)(?: \.\.\.)?(?: failed building wheel for [\w.-]{1,100})+$/, "", "failed building wheel for "],
  // runc's error under the daemon's wrappers ("cannot stop container: 77e6…: Cannot kill container
  // 77e6…: unknown error after kill: runc did not terminate sucessfully: … : unknown"), under its
  // older name (docker-runc) and with the spelling a later release fixed: the inner cause.
  [/^(?:cannot stop container <hash> )?(?:cannot kill container <hash> )?unknown error after kill (?=\S)/, "", "unknown error after kill "],
  [/\b(?:docker-)?runc did not terminate suc+es+ful+y\b/g, "runc did not terminate successfully", "did not terminate "],
  [/(\bcaused [^\n]{1,200}?)\*{0,2} unknown$/, "$1", " unknown"],
  // The shell's report of the signal left on the message's line ("double free or corruption (!prev)
  // Abort (core dump)").
  [/(?<=\S) abort(?:ed)? \(core dump(?:ed)?\)$/, "", "(core dump"],
  // A reporter's question after the message version 6 does not know ("… whats meaning?", "… how to
  // fix?", "… how to fix this error").
  [
    /(?<=\S) (?:what(?:s| is)(?: the)? meaning|how (?:to|do i|can i) (?:fix|solve)(?: (?:this|it))?(?: (?:error|problem|issue))?)\?*$/,
    "",
    /\b(?:meaning|fix|solve)\b/,
  ],
];

/**
 * The version-7 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV7(errorText: string): string {
  const lines = errorText.includes("\n") ? errorText : applyGated(errorText, [ESCAPED_NEWLINES]);
  const pre = glibcHeapCheck(cxxTerminateLine(makeErrorLine(applyGated(dropPasteLines(lines), [RUST_TWO_LINE_PANIC]))));
  const v6 = normalizeErrorTextV6(pre);
  const s = applyGated(otherScriptAround(v6), V7_RULES).replace(/ {2,}/g, " ").trim();
  // Version 5's last rules look at the end of the message: run them again where it moved.
  return s === v6 ? s : applyGated(s, V5_WORDING_RULES).trim();
}

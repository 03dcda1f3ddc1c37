// The current normalizer (version 12): turns an error report — one line or a pasted block — into
// the form that is hashed into its fingerprint. It removes what differs between two machines,
// tools and wrappers hitting the same error and keeps the words that identify it. Pure: no I/O.
// Secrets are redacted by the caller (fingerprint.ts) before this runs.
//
// Version 12 = version 11 (error-normalizer-v11.ts, frozen; it builds on versions 10 to 1), with the
// rules below written from the misses of a seventh external set of real reports
// (test/fixtures/fingerprint-real-variants-7.json), gathered in session 18 after version 11,
// stratified over issue 16's miss classes and measured first (bench/RESULTS.md "Session 18"): a
// shell's "command not found" in any shell's wording, Node's native-addon ABI mismatch, a cargo
// build script's failure, Maven's goal wrapper and libpq's unresolved host are read as the report
// whatever surrounds them; git's advice lines, Homebrew's Rosetta hint and older wordings, colcon's
// package lines and psql's prompt lines go before version 11 reads the report.
// error-normalizer-v12.test.ts checks each rule with real reports; docs/fingerprint.md lists every
// rule.
//
// Any change here that alters the output for some input changes fingerprints: raise
// NORMALIZER_VERSION, freeze this version as error-normalizer-v12.ts (as versions 1 to 11 are) and
// let the colony re-fingerprint stored trails at start (docs/fingerprint.md, Versioning).
//
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { NOISE_PREFIXES, normalizeErrorTextV1 } from "./error-normalizer-v1.ts";
import { normalizeErrorTextV2 } from "./error-normalizer-v2.ts";
import { normalizeErrorTextV3 } from "./error-normalizer-v3.ts";
import { normalizeErrorTextV4 } from "./error-normalizer-v4.ts";
import { applyGated, type GatedRule } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV5 } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV6 } from "./error-normalizer-v6.ts";
import { normalizeErrorTextV7 } from "./error-normalizer-v7.ts";
import { normalizeErrorTextV8 } from "./error-normalizer-v8.ts";
import { normalizeErrorTextV9 } from "./error-normalizer-v9.ts";
import { normalizeErrorTextV10 } from "./error-normalizer-v10.ts";
import { normalizeErrorTextV11, withoutQuoteMarksAtTheEnd } from "./error-normalizer-v11.ts";

/** The version of the rules below. Stored beside every fingerprint (decisions §2). */
export const NORMALIZER_VERSION = 12;
/** Every version this build can compute, oldest first. */
export const NORMALIZER_VERSIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] as const;
export type NormalizerVersion = (typeof NORMALIZER_VERSIONS)[number];

/** Blanks between two words of a tool's message (a console may wrap or widen them). */
const GAP = String.raw`\s{1,8}`;
const spaced = (phrase: string) => phrase.split(" ").join(GAP);
/** What a reporter puts before a pasted line: blanks, Markdown quotes, bold or italics, quote marks. */
const LEAD = String.raw`^[ \t*_>"'\x60]{0,8}`;

/**
 * A shell that found no such command, in each shell's wording: bash's and sh's "bash: pip: command
 * not found" (a script's "./install.sh: line 11: pip: …", a login shell's "-bash: …", the user's
 * locale: Portuguese, German, French, Spanish), dash's "sh: 1: react-scripts: not found", zsh's
 * "zsh: command not found: pip", cmd.exe's "'python' is not recognized as an internal or external
 * command". The command is the error; the shell, the script's line and npm's lines around it are
 * the user's. Each pattern is anchored at a line's start.
 */
const NOT_FOUND_WORDS = [
  "command not found",
  "comando não encontrado",
  "Befehl nicht gefunden",
  "commande introuvable",
  "orden no encontrada",
]
  .map(spaced)
  .join("|");
const COMMAND = String.raw`([^\s:'"\x60]{1,200})`;
const COMMAND_NOT_FOUND: RegExp[] = [
  new RegExp(`${LEAD}zsh:${GAP}${spaced("command not found")}:${GAP}${COMMAND}`, "im"),
  new RegExp(
    String.raw`${LEAD}[^\s:]{1,200}:${GAP}(?:(?:line|linha|Zeile|ligne|línea)${GAP}\d{1,7}:${GAP})?${COMMAND}:${GAP}(?:${NOT_FOUND_WORDS})`,
    "im",
  ),
  // dash in a script names the script twice: "./build.sh: 5: ./build.sh: git: not found".
  new RegExp(String.raw`${LEAD}[^\s:]{1,200}:${GAP}\d{1,7}:${GAP}(?:[^\s:]{1,200}:${GAP})?${COMMAND}:${GAP}not${GAP}found\b`, "im"),
  // cmd.exe in English and in Chinese ("'python' 不是内部或外部命令，也不是可运行的程序"), the name in
  // straight or typographic quotes.
  new RegExp(
    String.raw`${LEAD}['\u2018\u2019]?([^\s'"\u2018\u2019]{1,200})['\u2018\u2019]${GAP}(?:${spaced("is not recognized as an internal or external command")}|不是内部或外部命令)`,
    "im",
  ),
  // PowerShell: "pip : The term 'pip' is not recognized as the name of a cmdlet, function, script
  // file, or operable program." (PowerShell 7: "as a name of a cmdlet, …").
  new RegExp(
    String.raw`${LEAD}(?:[^\s:]{1,200}${GAP}:${GAP})?The${GAP}term${GAP}'([^\s']{1,200})'${GAP}is${GAP}not${GAP}recognized${GAP}as${GAP}(?:the|a)${GAP}name${GAP}of${GAP}a${GAP}cmdlet`,
    "im",
  ),
];
const COMMAND_NOT_FOUND_GATE =
  /not\s{1,8}(?:found|recognized)|não\s{1,8}encontrado|nicht\s{1,8}gefunden|introuvable|no\s{1,8}encontrada|不是内部或外部命令/i;

/** The first command a shell did not find, if the report holds one (the earliest line wins). */
function commandNotFound(text: string): string | undefined {
  let first: { at: number; command: string } | undefined;
  for (const re of COMMAND_NOT_FOUND) {
    const m = re.exec(text);
    if (m && (first === undefined || m.index < first.at)) first = { at: m.index, command: m[1]! };
  }
  // A command given as a path is named by its last part: the directories are the machine's, and
  // versions 1 to 11 read a path without an extension as nothing ("'C:\\Program' is not recognized"
  // and "/usr/local/cuda/bin/nvcc: not found" were one form, "command not found").
  return first && (first.command.split(/[\\/]/).pop() || first.command);
}

/**
 * Node's native addon built for another ABI: "The module '…/better_sqlite3.node' was compiled
 * against a different Node.js version using NODE_MODULE_VERSION 93. This version of Node.js
 * requires NODE_MODULE_VERSION 83." The addon's file is the error; its directory, the two ABI
 * numbers (which Node built it and which runs it), Windows' \\?\ prefix and a console's wrap or
 * joined words are the machine's. Found by its literal words, then the addon's name read backwards.
 */
const ABI_MISMATCH = new RegExp(
  String.raw`'${GAP.replace("1,", "0,")}${["was", "compiled", "against", "a"].join(GAP.replace("1,", "0,"))}${GAP}different${GAP}Node\.js${GAP}version`,
  "i",
);
const ADDON_NAME = /([^\s'"\\/]{1,200}\.node)$/;
/**
 * The package that holds the addon, read from its path: many addons share a file name
 * ("build/Release/binding.node" is ref's, xpc-connection's, …), the package under the last
 * node_modules names which one was built for another Node. Kept only when the file does not name
 * its package itself (better_sqlite3.node, usb_bindings.node do): a report cut inside the path
 * ("usb_bindings.node'" at its start) then still has the form of the whole one.
 */
const ADDON_PACKAGE = /node_modules[\\/]{1,2}((?:@[^\s'"\\/]{1,100}[\\/]{1,2})?[^\s'"\\/]{1,200})[\\/][^\s'"]{0,300}$/;
const squashed = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, "");

/** The addon as version 11 reads it: its file name, after its package when the name does not say it. */
function addonName(before: string): string | undefined {
  const name = ADDON_NAME.exec(before)?.[1];
  if (name === undefined) return undefined;
  const at = before.lastIndexOf("node_modules");
  const pkg = at === -1 ? undefined : ADDON_PACKAGE.exec(before.slice(at))?.[1]?.replace(/[\\/]{1,2}/, "/");
  const owner = pkg === undefined ? "" : squashed(pkg.slice(pkg.lastIndexOf("/") + 1));
  return pkg === undefined || squashed(name.slice(0, -".node".length)).includes(owner) ? name : `node_modules/${pkg}/${name}`;
}

/**
 * cargo's build-script failure names the crate that failed ("error: failed to run custom build
 * command for `openssl-sys v0.9.58`"); version 11 read the report as the "Caused by:" line under
 * it ("process didn't exit successfully: `…/build-script-main` (exit code: 101)"), one form for
 * every crate's build script. The crate is the error; its version and the build path are not.
 */
const CARGO_BUILD_SCRIPT = new RegExp(
  String.raw`\b${spaced("failed to run custom build command for")}${GAP}[\x60'"]?([A-Za-z0-9_-]{1,100})(?:${GAP}v\d[^\s\x60'"]{0,50})?[\x60'"]?`,
  "i",
);

/**
 * Maven's wrapper around a plugin's message: "[ERROR] Failed to execute goal
 * org.apache.maven.plugins:maven-compiler-plugin:3.8.1:compile (default-compile) on project
 * reservation-service: Fatal error compiling: invalid flag: --release -> [Help 1]". The message is
 * the error; the plugin's version, the execution, the user's project and Maven's help index are
 * not. A banner whose cause follows on the next "[ERROR]" lines ("… on project base: Compilation
 * failure" / "[ERROR] No compiler is provided …") keeps version 11's reading, which gives the cause
 * (the second set's maven-no-compiler-jre-not-jdk group).
 */
const MAVEN_GOAL = new RegExp(
  String.raw`\b${spaced("Failed to execute goal")}${GAP}\S{1,300}${GAP}\([^)\s]{1,100}\)${GAP}on${GAP}project${GAP}[^\s:]{1,200}:[ \t]{1,8}([^\n]{1,1000}?)([ \t]{1,8}->[ \t]{1,8}\[Help[ \t]{1,8}\d{1,3}\])?[ \t]*$`,
  "im",
);
/** A line that goes on with the message of the line above it (not Maven's help index or a blank). */
const MAVEN_CONTINUED = /^\n[ \t]{0,8}(?!->)\S/;

/**
 * libpq's unresolved host: 'could not translate host name "db" to address: Name or service not
 * known'. The host is the error; what follows is the C library's wording (glibc's "Name or service
 * not known", musl's "Name does not resolve"), and version 11 read a driver-wrapped report
 * ("(psycopg2.OperationalError) could not translate …") as that wording alone, one form for every
 * host any tool failed to resolve.
 */
const UNRESOLVED_HOST = new RegExp(
  String.raw`\b${spaced("could not translate host name")}${GAP}"([^"\s]{1,255})"${GAP}to${GAP}address`,
  "i",
);

/**
 * Each line without the prefixes versions 1 to 11 read past (timestamps, CI annotations, a compose
 * column "web-1  | ", log levels, a Markdown quote), so the messages above are found in a report
 * whose every line a runner or logger marked, as versions 1 to 11 find theirs. Line by line: linear.
 */
function withoutLinePrefixes(text: string): string {
  return text
    .split("\n")
    .map((line) => {
      let s = line;
      for (let pass = 0; pass < 4; pass++) {
        const before = s;
        for (const re of NOISE_PREFIXES) s = s.replace(re, "");
        if (s === before) break;
      }
      return s;
    })
    .join("\n");
}

/** The line version 11 reads in place of the report, when the report holds one of the messages above. */
function reportLine(raw: string): string | undefined {
  const gates = {
    command: COMMAND_NOT_FOUND_GATE.test(raw),
    addon: /compiled/i.test(raw),
    crate: /custom\s{1,8}build/i.test(raw),
    goal: /execute\s{1,8}goal/i.test(raw),
    host: /translate\s{1,8}host/i.test(raw),
  };
  if (!(gates.command || gates.addon || gates.crate || gates.goal || gates.host)) return undefined;
  const text = withoutLinePrefixes(raw);
  if (gates.command) {
    const command = commandNotFound(text);
    if (command !== undefined) return `${command}: command not found`;
  }
  if (gates.addon) {
    const m = ABI_MISMATCH.exec(text);
    const name = m ? addonName(text.slice(Math.max(0, m.index - 300), m.index)) : undefined;
    if (name) return `Error: The module '${name}' was compiled against a different Node.js version`;
  }
  const crate = gates.crate ? CARGO_BUILD_SCRIPT.exec(text) : null;
  if (crate) return `error: failed to run custom build command for \x60${crate[1]}\x60`;
  const goal = gates.goal ? MAVEN_GOAL.exec(text) : null;
  const end = goal ? goal.index + goal[0].length : 0;
  // Without Maven's help index on its line, the message may go on over the next lines (read past their
  // "[ERROR]" prefix): then version 11's reading stands.
  if (goal && (goal[2] !== undefined || !MAVEN_CONTINUED.test(text.slice(end, end + 200)))) return goal[1]!;
  const host = gates.host ? UNRESOLVED_HOST.exec(text) : null;
  if (host) return `could not translate host name "${host[1]}" to address`;
  return undefined;
}

/**
 * Surroundings removed before version 11 reads the report; each is a tool's advice or a wrapper's
 * line, not the error.
 */
const V12_LINE_RULES: GatedRule[] = [
  // git's advice under "detected dubious ownership in repository at '<dir>'": "To add an exception
  // for this directory, call:" and "git config --global --add safe.directory <dir>", on their own
  // lines, joined to the message's line or after a literal "\n" a tool printed; Git for Windows'
  // "'<dir>' is owned by: / '<SID>' / but the current user is: / '<SID>'".
  [/[ \t|]{0,8}(?:\\n)?To add an exception for this directory(?:, call:)?[ \t]*/g, " ", "To add an exception"],
  [/(?<![^\s>|])git config --global --add safe\.directory[ \t]{1,8}[^\s]{1,500}[ \t]*/g, "", "safe.directory"],
  [
    /^[ \t]{0,8}'[^'\n]{1,500}' is owned by:[ \t]*\n[ \t]{0,8}'[^'\n]{1,200}'[ \t]*\nbut the current user is:[ \t]*\n[ \t]{0,8}'[^'\n]{1,200}'[ \t]*$/gm,
    "",
    "is owned by:",
  ],
  // git's list of the user's files under "Your local changes to the following files would be
  // overwritten by merge:" and its advice ("Please commit your changes or stash them before you
  // merge.", older gits "Please, commit … before you can merge.", "Aborting"), and the
  // "Updating <sha>..<sha>" line above.
  [
    /(would be overwritten by (?:merge|checkout):)[^\n]{0,500}(?:\n(?:[ \t][^\n]{0,500})?){0,200}?\n?[ \t]{0,8}Please,? commit your changes or stash them before you (?:can )?(?:merge|switch branches)\.?/g,
    "$1",
    "would be overwritten by",
  ],
  // ("Aborting" can close a reporter's quotation: 'It give a "Updating … Aborting" error'.)
  [/^[ \t]{0,8}Aborting(?:["'\x60][^\n"'\x60]{0,80}(?=$)|(?=[ \t]*$))/gm, "", "Aborting"],
  [/^[ \t"]{0,8}Updating [0-9a-f]{7,40}\.\.[0-9a-f]{7,40}[ \t]*$/gm, "", "Updating "],
  // Homebrew's hint under "Cannot install under Rosetta 2 in ARM default prefix (/opt/homebrew)!":
  // "To rerun under ARM use: / arch -arm64 brew install ... / To install under x86_64, install
  // Homebrew into /usr/local."
  [/[ \t]{0,8}To rerun under ARM use:[ \t]*/g, "", "arch -arm64"],
  [/^[ \t>\x60]{0,8}arch -arm64 brew install \.\.\.[ \t]*$/gm, "", "arch -arm64"],
  [/^[ \t>\x60]{0,8}To install under x86_64, install Homebrew into \/usr\/local\.?\x60?[ \t]*$/gm, "", "To install under x86_64"],
  // Homebrew's older wordings of that error (2.x: "on Intel processor", 3.0: "in Homebrew under
  // Rosetta 2"), read as the current one.
  [
    /\bCannot install in Homebrew (?:under Rosetta 2|on Intel processor) in ARM default prefix/g,
    "Cannot install under Rosetta 2 in ARM default prefix",
    "in ARM default prefix",
  ],
  // colcon's lines around a package's stderr: "Starting >>> poco_vendor", "--- stderr:
  // foonathan_memory_vendor" (the workspace's package names).
  [/^(?:Starting|Finished|Failed|Aborted)[ \t]{1,8}(?:>>>|<<<)[ \t][^\n]{0,300}$/gm, "", /(?:>>>|<<<) /],
  [/^---[ \t]stderr:[ \t][^\n]{0,300}$/gm, "", "--- stderr:"],
  // psql's prompt ("osm=# create extension postgis;", a bare "dvdrental=#" after the error): the
  // user's database and statement.
  [/^[ \t]{0,8}[A-Za-z_][\w$-]{0,62}=[#>][^\n]{0,2000}$/gm, "", /=[#>]/],
];

/** Lines version 11 would otherwise read first: a build's failure lines hide the error above them. */
const V11_READS_ITSELF = /fatal\s{1,8}error(?:\s{1,8}C1083)?:|error\s{0,8}while\s{0,8}loading/i;

/** An experiment's normal form of a report, given version 12's reading: off (benches only). */
let experimentalForm: ((errorText: string, v12: (text: string) => string) => string) | undefined;

/**
 * Switch on an experiment that gives a report's normal form from version 12's (bench/RESULTS.md,
 * Session 19: anchoring on the tools' message templates, not adopted). Only benches switch it on, in
 * their own process (BENCH_MESSAGE_TEMPLATES, bench/lib/message-template-experiment.ts).
 */
export function setExperimentalForm(form: ((errorText: string, v12: (text: string) => string) => string) | undefined): void {
  experimentalForm = form;
}

/**
 * The version-12 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorText(errorText: string): string {
  return experimentalForm ? experimentalForm(errorText, normalizeErrorTextV12) : normalizeErrorTextV12(errorText);
}

function normalizeErrorTextV12(errorText: string): string {
  // A compiler's missing header or the loader's missing library: version 11's reading stands.
  const line = V11_READS_ITSELF.test(errorText) ? undefined : reportLine(errorText);
  if (line !== undefined) return normalizeErrorTextV11(line);
  const ruled = applyGated(errorText, V12_LINE_RULES);
  // A quoted report's last lines left as nothing but Markdown's ">" once an advice line is removed.
  const stripped = ruled === errorText ? ruled : withoutQuoteMarksAtTheEnd(ruled);
  // A report that is nothing but what these rules remove keeps version 11's reading of it.
  return normalizeErrorTextV11(stripped.trim() === "" ? errorText : stripped);
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
  9: normalizeErrorTextV9,
  10: normalizeErrorTextV10,
  11: normalizeErrorTextV11,
  12: normalizeErrorText,
};

/** The normal form under a given normalizer version (older versions stay computable for aliases). */
export function normalizeErrorTextAt(errorText: string, version: NormalizerVersion): string {
  return BY_VERSION[version](errorText);
}

// The current normalizer (version 6): turns an error report — one line or a pasted block — into
// the form that is hashed into its fingerprint. It removes what differs between two machines,
// tools and wrappers hitting the same error and keeps the words that identify it. Pure: no I/O.
// Secrets are redacted by the caller (fingerprint.ts) before this runs.
//
// Version 6 = version 5 (error-normalizer-v5.ts, frozen; it builds on versions 4 to 1), then the
// rules below on its normal form. Each one only removes or folds what issue 16 lists as
// surroundings (a version qualifier, a documentation link, an environment variable's sigil, a
// runtime value), so two reports version 5 gave one form still share it.
//
// Any change here that alters the output for some input changes fingerprints: raise
// NORMALIZER_VERSION, freeze this version as error-normalizer-v6.ts (as versions 1 to 5 are) and
// let the colony re-fingerprint stored trails at start (docs/fingerprint.md, Versioning).
//
// Every regex starts with a lookbehind, a word boundary or a literal, and has no nested ambiguous
// quantifiers, so the pass stays linear on adversarial input.
import { normalizeErrorTextV1 } from "./error-normalizer-v1.ts";
import { normalizeErrorTextV2 } from "./error-normalizer-v2.ts";
import { normalizeErrorTextV3 } from "./error-normalizer-v3.ts";
import { normalizeErrorTextV4 } from "./error-normalizer-v4.ts";
import { applyGated, type GatedRule, normalizeErrorTextV5, V5_WORDING_RULES } from "./error-normalizer-v5.ts";

/** The version of the rules below. Stored beside every fingerprint (decisions §2). */
export const NORMALIZER_VERSION = 6;
/** Every version this build can compute, oldest first. */
export const NORMALIZER_VERSIONS = [1, 2, 3, 4, 5, 6] as const;
export type NormalizerVersion = (typeof NORMALIZER_VERSIONS)[number];

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
];

/**
 * The version-6 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorText(errorText: string): string {
  const v5 = normalizeErrorTextV5(ANY_DECORATION.test(errorText) ? errorText.replace(LINE_DECORATION, "") : errorText);
  const s = applyGated(v5, V6_RULES).replace(/ {2,}/g, " ").trim();
  // Version 5's last rules look at the end of the message: run them again where it moved.
  return s === v5 ? s : applyGated(s, V5_WORDING_RULES).trim();
}

const BY_VERSION: Record<NormalizerVersion, (errorText: string) => string> = {
  1: normalizeErrorTextV1,
  2: normalizeErrorTextV2,
  3: normalizeErrorTextV3,
  4: normalizeErrorTextV4,
  5: normalizeErrorTextV5,
  6: normalizeErrorText,
};

/** The normal form under a given normalizer version (older versions stay computable for aliases). */
export function normalizeErrorTextAt(errorText: string, version: NormalizerVersion): string {
  return BY_VERSION[version](errorText);
}

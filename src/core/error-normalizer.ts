// The current normalizer (version 10): turns an error report — one line or a pasted block — into
// the form that is hashed into its fingerprint. It removes what differs between two machines,
// tools and wrappers hitting the same error and keeps the words that identify it. Pure: no I/O.
// Secrets are redacted by the caller (fingerprint.ts) before this runs.
//
// Version 10 = version 9 (error-normalizer-v9.ts, frozen; it builds on versions 8 to 1), with two
// kinds of surroundings removed before version 9 reads the report (V10_LINE_RULES): Node's process
// id before a warning, and GCC's and Clang's include chain above a compiler error. They were
// written in session 15 from the fourth external set of real reports
// (test/fixtures/fingerprint-real-variants-4.json) and adopted in session 16 only after a fifth set
// (fingerprint-real-variants-5.json), gathered after them, showed them join reports there without
// splitting any version-9 form or joining any apart pair (bench/RESULTS.md "Session 16").
// error-normalizer-v10.test.ts checks each rule with real reports of the external sets;
// docs/fingerprint.md lists every rule.
//
// Any change here that alters the output for some input changes fingerprints: raise
// NORMALIZER_VERSION, freeze this version as error-normalizer-v10.ts (as versions 1 to 9 are) and
// let the colony re-fingerprint stored trails at start (docs/fingerprint.md, Versioning).
//
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { normalizeErrorTextV1 } from "./error-normalizer-v1.ts";
import { normalizeErrorTextV2 } from "./error-normalizer-v2.ts";
import { normalizeErrorTextV3 } from "./error-normalizer-v3.ts";
import { normalizeErrorTextV4 } from "./error-normalizer-v4.ts";
import { applyGated, type GatedRule } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV5 } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV6 } from "./error-normalizer-v6.ts";
import { normalizeErrorTextV7 } from "./error-normalizer-v7.ts";
import { normalizeErrorTextV8 } from "./error-normalizer-v8.ts";
import { normalizeErrorTextV9 } from "./error-normalizer-v9.ts";

/** The version of the rules below. Stored beside every fingerprint (decisions §2). */
export const NORMALIZER_VERSION = 10;
/** Every version this build can compute, oldest first. */
export const NORMALIZER_VERSIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
export type NormalizerVersion = (typeof NORMALIZER_VERSIONS)[number];

/**
 * Surroundings removed before version 9 reads the report; each differs between two machines or two
 * builds hitting the same error and names nothing of the error itself.
 */
const V10_LINE_RULES: GatedRule[] = [
  // Node's process id before a warning: "(node:68002) Warning: …", "(node:7) [DEP0005]
  // DeprecationWarning: …" (a new number every run; the fourth and fifth sets' Node warnings).
  [/\(node:\d{1,10}\)[ \t]?/g, "", "(node:"],
  // GCC's and Clang's include chain above an error in a header: "In file included from a.c:1:" and
  // its continuation lines "                 from b.h:2,". Which of the user's files pulled the
  // header in is the user's layout; the header and the missing file it names stay.
  [/^[ \t]*In file included from [^\n]{1,500}[:,][ \t]*$/gm, "", "In file included from"],
  [/^[ \t]{2,40}from [^\n\s]{1,300}:\d{1,7}[:,][ \t]*$/gm, "", "from "],
];

/**
 * The version-10 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorText(errorText: string): string {
  const stripped = applyGated(errorText, V10_LINE_RULES);
  // A report that is nothing but what these rules remove keeps version 9's reading of it.
  return normalizeErrorTextV9(stripped.trim() === "" ? errorText : stripped);
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
  10: normalizeErrorText,
};

/** The normal form under a given normalizer version (older versions stay computable for aliases). */
export function normalizeErrorTextAt(errorText: string, version: NormalizerVersion): string {
  return BY_VERSION[version](errorText);
}

// Normalizer version 10, frozen: stored fingerprints computed with it must stay reproducible (aliases
// of stored trails, decisions §2). Do not change its output; the current version is
// error-normalizer.ts. Pure: no I/O. Secrets are redacted by the caller (fingerprint.ts) first.
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
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { applyGated, type GatedRule } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV9 } from "./error-normalizer-v9.ts";

/**
 * Surroundings removed before version 9 reads the report; each differs between two machines or two
 * builds hitting the same error and names nothing of the error itself.
 */
export const V10_LINE_RULES: GatedRule[] = [
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
export function normalizeErrorTextV10(errorText: string): string {
  const stripped = applyGated(errorText, V10_LINE_RULES);
  // A report that is nothing but what these rules remove keeps version 9's reading of it.
  return normalizeErrorTextV9(stripped.trim() === "" ? errorText : stripped);
}

// Error fingerprints (decisions §2): "fp1_" + 32 lowercase hex, computed from the error line alone
// so that the same error on two machines gives the same fingerprint. Pure: hashing is not I/O.
//
// The wire format stays "fp1_" (interface.md); the normalizer carries its own version number
// (NORMALIZER_VERSION), stored beside every fingerprint. A change to normalizeError (or the
// redaction it runs first) that alters the output for some input raises that version; the colony
// then re-fingerprints stored trails and keeps the old fingerprints as aliases (decisions §2,
// docs/fingerprint.md).
import { createHash } from "node:crypto";
import { NORMALIZER_VERSION, NORMALIZER_VERSIONS, type NormalizerVersion, normalizeErrorTextAt } from "./error-normalizer.ts";
import { redactText } from "./redaction.ts";

export { NORMALIZER_VERSION, NORMALIZER_VERSIONS, type NormalizerVersion };

export const FINGERPRINT_PREFIX = "fp1_";
export const FINGERPRINT_PATTERN = /^fp1_[0-9a-f]{32}$/;

/**
 * Redaction placeholders ("<redacted:user>") become plain words, so a redacted user name inside a
 * path still reads as a path segment; addresses join the normalizer's own placeholders, so a
 * public IP (redacted) and a private one (kept by redaction) normalize alike.
 */
function neutralizeRedactions(text: string): string {
  return text.replace(/<redacted:([a-z0-9_]{1,40})>/gi, (_m, kind: string) => {
    const k = kind.toLowerCase();
    if (k === "ip_address") return "0.0.0.0";
    if (k === "email") return "user@example.com";
    return `redacted_${k}`;
  });
}

/**
 * The normalized form that is hashed: secrets redacted, lowercase, single-spaced, with typed
 * placeholders (<path>, <line>, <hex>, <uuid>, <num>, <ver>, <ip>, <port>, ...) for what differs
 * between machines. Exposed for tests and debugging.
 */
export function normalizeError(errorLine: string, version: NormalizerVersion = NORMALIZER_VERSION): string {
  return normalizeErrorTextAt(redactedErrorText(errorLine), version);
}

/** The text the normalizer reads: secrets redacted, their placeholders as plain words (for benches). */
export function redactedErrorText(errorLine: string): string {
  return neutralizeRedactions(redactText(errorLine).text);
}

/**
 * "fp1_" + the first 128 bits of sha256 of the normalized error line, in lowercase hex. `version`
 * computes the fingerprint an older normalizer gave (for aliases of stored trails).
 */
export function fingerprint(errorLine: string, version: NormalizerVersion = NORMALIZER_VERSION): string {
  return fingerprintOfForm(normalizeError(errorLine, version));
}

function fingerprintOfForm(form: string): string {
  return FINGERPRINT_PREFIX + createHash("sha256").update(form, "utf8").digest("hex").slice(0, 32);
}

/**
 * `fingerprint(errorLine, v)` for each of `versions`, redacting the line once: redaction, the same
 * for every version, is about a quarter of the cost of the older versions together.
 */
export function fingerprintsAt(errorLine: string, versions: readonly NormalizerVersion[]): string[] {
  const text = redactedErrorText(errorLine);
  return versions.map((v) => fingerprintOfForm(normalizeErrorTextAt(text, v)));
}

/**
 * The current fingerprint of an error line and the ones older normalizers give it that differ;
 * `versions` limits those to the versions that can still matter (those some stored trail carries).
 * The line is redacted once for all of them (a search asks for both).
 */
export function currentAndOlderFingerprints(
  errorLine: string,
  versions: readonly NormalizerVersion[] = NORMALIZER_VERSIONS,
): { current: string; older: string[] } {
  const text = redactedErrorText(errorLine);
  const current = fingerprintOfForm(normalizeErrorTextAt(text, NORMALIZER_VERSION));
  const older = new Set(versions.filter((v) => v !== NORMALIZER_VERSION).map((v) => fingerprintOfForm(normalizeErrorTextAt(text, v))));
  older.delete(current);
  return { current, older: [...older] };
}

/** The fingerprints older normalizers gave this error line that differ from the current one. */
export const olderFingerprints = (errorLine: string, versions?: readonly NormalizerVersion[]): string[] =>
  currentAndOlderFingerprints(errorLine, versions).older;

/**
 * The fingerprints an error line is kept findable by besides its current one (decisions §2): what
 * every older normalizer gives it, so a client or a replica of an earlier release that computes the
 * fingerprint itself finds a trail first stored under the current version (docs/fingerprint.md,
 * "Aliases of the previous normalizers"). Every frozen version counts: a release date says nothing
 * of when an operator deploys it or how long a client keeps an old one; each alias row expires
 * ALIAS_RETENTION_MS after it is written. Neither the current fingerprint (an alias to itself is
 * pointless) nor the empty text's (it names no error) is one. The rule for every path that sets a
 * trail's fingerprint: enrichment (publish, draft approval, import, a merge) and re-fingerprinting
 * (an upgrade, re-screening). `version` is the normalizer `current` came from: a newer release's
 * (this replica's worker enriching a trail a replica of the next release published, during a
 * rolling upgrade) gets every version this build knows, its own current one included.
 */
export function previousNormalizerFingerprints(errorLine: string, current: string, version: number = NORMALIZER_VERSION): string[] {
  const versions = NORMALIZER_VERSIONS.filter((v) => v < version);
  const previous = new Set(fingerprintsAt(errorLine, versions));
  previous.delete(current);
  previous.delete(EMPTY_FINGERPRINT);
  return [...previous];
}

/**
 * The fingerprint of an error line with nothing left once normalized ("npm ERR!", "fatal error:",
 * "[ERROR]", ":", zero-width characters): every normalizer version hashes the same empty text. It
 * names no error, so it matches nothing (a trail published with such a line would otherwise be the
 * exact match of every search whose line says nothing).
 */
export const EMPTY_FINGERPRINT = FINGERPRINT_PREFIX + createHash("sha256").update("", "utf8").digest("hex").slice(0, 32);

/**
 * A fingerprint as a client may write it: the colony's form (FINGERPRINT_PATTERN) with the blanks
 * the core trims from every string a client sends around it, in any letter case (hex is read
 * either way, as a trail id's UUID is). ASCII letters only: no look-alike or fullwidth form.
 */
export const FINGERPRINT_AS_SENT_PATTERN = /^[Ff][Pp]1_[0-9A-Fa-f]{32}$/;

/**
 * The fingerprint a client sent, as the colony writes it (trimmed, lower case), or null when it is
 * none. One rule for every door that takes one: the lookup (GET /v1/trails/by-fingerprint/{fp},
 * its cache included), a search whose query is a fingerprint (POST /v1/search, colony_search) and
 * `colony lookup`; a lookup refused a padded fingerprint that a search took (session 16).
 */
export function fingerprintAsSent(value: string): string | null {
  const trimmed = value.trim();
  return FINGERPRINT_AS_SENT_PATTERN.test(trimmed) ? trimmed.toLowerCase() : null;
}

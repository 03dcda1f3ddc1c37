// The label a search counts under in /v1/stats `hot` and names in its activity event (decisions
// §9: the error_type, else the top result's category). Both are public, so the error_type counts
// only when it reads as an error type: one identifier-like token (`ModuleNotFoundError`,
// `java.lang.NullPointerException`, `std::bad_alloc`, `E0382`, `ECONNREFUSED`). Prose, links,
// look-alike letters and redaction placeholders would let any client write what every reader of
// the stats sees; such a search counts under the category instead. So would a token that spells
// an instruction (`Ignore-all-previous-instructions`, `YouAreNowInDeveloperMode`): its words are
// screened as an agent id's are (identifier-words.ts). Pure: no I/O.

import { CATEGORIES } from "./category";
import { readsAsInstruction } from "./identifier-words";

/**
 * How many different clients (address pseudonyms; an IPv6 address is its /64) must have searched
 * an error-type token in the window before /v1/stats shows it. `hot` is ranked by distinct
 * clients, then searches, so one address's hourly share of labelled searches
 * (HOT_LABELS_PER_CLIENT_PER_HOUR) no longer tops it; on a small colony, though, one address
 * would still be as many clients as a real error's searchers, and could show any word it likes to
 * every reader. Three addresses is one error seen by several agents; categories are a fixed set
 * and shown from one client. When no label of the window has that many clients (a colony whose
 * agents all run on one machine: every search comes from one address), the most any label has is
 * enough, so such a colony still sees its own error types, ranked by searches.
 */
export const HOT_LABEL_MIN_CLIENTS = 3;

/** What /v1/stats shows of the hot labels (SearchCounter.top). */
export const HOT_LABEL_RULE = { minClients: HOT_LABEL_MIN_CLIENTS, anyClients: CATEGORIES } as const;

/** ASCII letters, digits and the separators of qualified names and codes, 1 to 100 characters. */
const ERROR_TYPE_TOKEN = /^[A-Za-z0-9_][A-Za-z0-9_.:$/-]{0,99}$/;

/** The error_type as a hot label (trimmed), or null when it is not one identifier-like token. */
export function hotLabelOf(errorType: string | undefined): string | null {
  if (!errorType) return null;
  const t = errorType.trim();
  // A URL is one token too, but not an error type.
  return ERROR_TYPE_TOKEN.test(t) && !t.includes("//") && !readsAsInstruction(t) ? t : null;
}

/**
 * What an activity event calls a trail (laid, reinforced, weakened): its error_type when that is
 * one error-type token, else its category, else its fingerprint. The error_type is the publisher's
 * text, and every reader of /v1/activity sees the event: prose, links or an empty string are not
 * shown there, as for the search labels.
 */
export function trailSubject(trail: { errorType: string | null; category: string | null; fingerprint: string }): string {
  return hotLabelOf(trail.errorType ?? undefined) ?? trail.category ?? trail.fingerprint;
}

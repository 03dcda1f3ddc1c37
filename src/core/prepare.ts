// Trail preparation: the one pipeline every way of submitting a trail runs before anything is
// stored or shown (POST /v1/trails, POST /v1/drafts, the colony_publish tool): validate (unknown
// fields dropped, strings trimmed, every failing path listed), the first redaction pass, the cut of
// what redaction cannot make safe (rejection.ts cutSensitiveContent: a field sensitive_content
// flags, such as a private key body no rule recognises, is replaced before the trail is stored or
// shown), the fingerprint of the redacted error line, and the risk assessment when the caller shows
// it. The prompt-injection screen and the second redaction pass run later, in enrichment
// (enrichment.ts), once the trail is stored, so a rejection is recorded with its reasons (a cut
// trail is still refused as sensitive_content there).
import { fingerprint } from "./fingerprint";
import { mergeCounts, placeholderCounts, type RedactionCounts, redactText, redactTrail, truncateChars } from "./redaction";
import { cutSensitiveContent } from "./rejection";
import { assessRisk, type Risk } from "./risk";
import { type Parsed, parseTrail, Trail } from "./trail";

export interface PreparedTrail {
  /** The validated trail after the first redaction pass and the cut of what it cannot make safe. */
  readonly trail: Trail;
  /** What this pass redacted, per kind; `sensitive_content`: the fields it cut. */
  readonly redactions: RedactionCounts;
  /** Placeholders that were already in the input (an MCP server redacts before it sends), per kind. */
  readonly arrivedRedacted: RedactionCounts;
  /** The fingerprint of the redacted error line. */
  readonly fingerprint: string;
  /** The risk of the redacted trail; assessed on first read (a direct publish does not show it). */
  readonly risk: Risk;
}

/** Runs the pipeline on a submitted trail; the failing paths when it does not validate. */
export function prepareTrail(input: unknown): Parsed<PreparedTrail> {
  const parsed = parseTrail(input);
  if (!parsed.ok) return parsed;
  const { value: redacted, counts } = redactTrail(parsed.value);
  const { trail, cut } = cutSensitiveContent(redacted);
  const redactions = cut > 0 ? mergeCounts({ ...counts }, { sensitive_content: cut }) : counts;
  let risk: Risk | undefined;
  let arrived: RedactionCounts | undefined;
  return {
    ok: true,
    value: {
      trail,
      redactions,
      get arrivedRedacted() {
        arrived ??= placeholderCounts(parsed.value);
        return arrived;
      },
      fingerprint: fingerprint(trail.problem.error),
      get risk() {
        risk ??= assessRisk(trail);
        return risk;
      },
    },
  };
}

const MAX_ERROR_CHARS = Trail.properties.problem.properties.error.maxLength!;

/**
 * An error line as a trail keeps it: trimmed, redacted and cut back to the error's limit, as
 * prepareTrail stores it and fingerprints it. A search fingerprints its query in this form, so that
 * it finds the trail published with the same line through either door: the MCP tools send the
 * query so, and POST /v1/search, which fingerprinted the query as it came, gave a line that
 * redaction lengthens past 2000 characters another fingerprint than its trail's.
 */
export function errorLineAsKept(line: string): string {
  return truncateChars(redactText(line.trim()).text, MAX_ERROR_CHARS);
}

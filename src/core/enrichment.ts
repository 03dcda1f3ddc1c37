// The enrichment pipeline's pure stages, in order: second redaction pass, quality, rejection
// checks, category by rules, risk, merge identity, initial strength. The worker adds what needs
// I/O: the merge lookup, the embedding (and the category centroid when rules are unsure).
import { categoryByRules, type Category } from "./category";
import { glossaryExpansion, glossaryText } from "./error-glossary";
import { lexicalDocument } from "./lexical";
import { mergeKey } from "./merge-key";
import { redactTrail, type RedactionCounts } from "./redaction";
import { explainRejection, reasonsOf, type RejectionReason, withoutSensitiveFields } from "./rejection";
import { assessRisk, type Risk } from "./risk";
import { scoreQuality } from "./quality";
import { strength } from "./strength";
import type { Trail } from "./trail";

export interface Analysis {
  /** The trail after the second redaction pass. */
  trail: Trail;
  redactions: RedactionCounts;
  quality: number;
  reasons: RejectionReason[];
  category: { category: Category; confident: boolean };
  risk: Risk;
  mergeKey: string;
  initialStrength: number;
}

export function analyzeTrail(input: Trail): Analysis {
  const { value: redacted, counts: redactions } = redactTrail(input);
  const quality = scoreQuality(redacted);
  const findings = explainRejection(redacted, quality);
  const reasons = reasonsOf(findings);
  // What redaction could not make safe is not kept in the rejected trail either.
  const trail = reasons.includes("sensitive_content") ? withoutSensitiveFields(redacted, findings) : redacted;
  return {
    trail,
    redactions,
    quality,
    reasons,
    category: categoryByRules(trail),
    risk: assessRisk(trail),
    mergeKey: mergeKey(trail),
    initialStrength: strength({ worked: 0, partially_worked: 0, failed: 0 }, quality),
  };
}

/** The text a trail is embedded by: what an agent would paste or describe when it hits the error. */
export function embeddingText(trail: Trail): string {
  const p = trail.problem;
  const glossary = glossaryExpansion().vector ? errorGlossaryText(trail) : undefined;
  return [p.error_type, p.error, p.description, p.root_cause, trail.solution.summary, glossary]
    .filter((s): s is string => typeof s === "string" && s.length > 0)
    .join("\n");
}

/** What the documentation installed says the identifiers of a trail's error mean (core/error-glossary.ts). */
export const errorGlossaryText = (trail: Trail): string =>
  glossaryText([trail.problem.error_type, trail.problem.error].filter(Boolean).join("\n"));

/** The two lexical documents of a trail: the error line, and the explanation with the fix. */
export function lexicalFields(trail: Trail): { error: string; body: string } {
  const p = trail.problem;
  const s = trail.solution;
  const body = [
    p.description,
    p.root_cause,
    s.summary,
    ...(s.steps ?? []),
    ...(s.commands ?? []),
    ...(s.code_patches ?? []).map((c) => c.file_path),
    s.verification,
    glossaryExpansion().lexical ? errorGlossaryText(trail) : undefined,
  ];
  return {
    error: lexicalDocument([p.error_type, p.error].filter(Boolean).join(" ")),
    body: lexicalDocument(body.filter(Boolean).join("\n")),
  };
}

/** Content identity, for tombstones: the same redacted trail always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

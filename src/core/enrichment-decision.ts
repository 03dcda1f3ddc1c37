// What enrichment does with a queued trail, decided from facts alone (the runner,
// src/service/enrichment-worker.ts, gathers them and applies the decision). Two steps, because the
// embedding lies between them: `triage` before it (drop, reject, retry or keep as a candidate),
// `settle` inside the verdict's transaction, once the merge target is known (merge or index).
import type { Category } from "./category";
import { type Analysis, analyzeTrail } from "./enrichment";
import { errorMessage } from "./error-message";
import type { Trail } from "./trail";

/**
 * A trail whose enrichment failed this many times (its analysis threw, or its verdict could not be
 * written while other trails' could) is rejected rather than retried forever.
 */
export const MAX_ATTEMPTS = 5;

export interface TriageFacts {
  /** The stored trail's status; null when it is gone (removed by an operator). */
  status: "queued" | "indexed" | "merged" | "rejected" | null;
  /** The trail as stored (after the first redaction pass). */
  trail: Trail;
  /** An operator removed a trail with identical content within the tombstone period. */
  contentRemoved: boolean;
  /** Analyses of this trail that failed before. */
  attempts: number;
}

export type Triage =
  /** Nothing to do (gone, or already final): the job goes. */
  | { action: "drop" }
  /**
   * `error` says why the analysis failed, for `enrichment_failed`; `analyzed` when the reasons come
   * from the analysis (the trail was checked with the current content rules).
   */
  | { action: "reject"; reasons: string[]; trail: Trail; error?: string; analyzed?: true }
  /** The analysis failed: record the failure, try again later. */
  | { action: "retry"; error: string }
  /** Passed every check: embed, then settle. */
  | { action: "candidate"; analysis: Analysis };

/**
 * Runs the analysis (the pure stages of core/enrichment.ts; `analyze` is replaceable for tests)
 * only when the facts leave it something to decide.
 */
export function triage(f: TriageFacts, analyze: (trail: Trail) => Analysis = analyzeTrail): Triage {
  if (f.status !== "queued") return { action: "drop" };
  if (f.contentRemoved) return { action: "reject", reasons: ["removed_content"], trail: f.trail };
  if (f.attempts >= MAX_ATTEMPTS) {
    return { action: "reject", reasons: ["enrichment_failed"], trail: f.trail, error: `enrichment failed ${f.attempts} times` };
  }
  let analysis: Analysis;
  try {
    analysis = analyze(f.trail);
  } catch (err) {
    const error = errorMessage(err, { withName: true });
    return f.attempts + 1 >= MAX_ATTEMPTS
      ? { action: "reject", reasons: ["enrichment_failed"], trail: f.trail, error }
      : { action: "retry", error };
  }
  if (analysis.reasons.length > 0) return { action: "reject", reasons: analysis.reasons, trail: analysis.trail, analyzed: true };
  return { action: "candidate", analysis };
}

export interface SettleFacts {
  analysis: Analysis;
  /** Who published the candidate. */
  submitter: string;
  /** The indexed trail with the same merge key, when there is one other than the candidate itself. */
  mergeTarget: { id: string; author: string } | null;
  /** The category nearest the trail's embedding; needed only when the rules were unsure. */
  nearestCategory: Category | null;
}

export type Settlement =
  /** The same fix exists: merge into it; `credit` when the submitter is another agent than its author. */
  { action: "merge"; into: string; credit: boolean } | { action: "index"; category: Category; quality: number; strength: number };

export function settle(f: SettleFacts): Settlement {
  if (f.mergeTarget) {
    return { action: "merge", into: f.mergeTarget.id, credit: f.submitter !== f.mergeTarget.author };
  }
  const { category } = f.analysis;
  const chosen = category.confident ? category.category : f.nearestCategory;
  if (!chosen) throw new Error("the category rules were unsure and no nearest category was given");
  return { action: "index", category: chosen, quality: f.analysis.quality, strength: f.analysis.initialStrength };
}

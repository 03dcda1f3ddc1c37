// Re-screening (docs/content-safety.md §7): when a release changes the content rules (redaction,
// prompt-injection and sensitive-content screening, risk flags; CONTENT_RULES_VERSION), stored
// trails are checked again with the current rules, in the background at start, as
// re-fingerprinting does for the normalizer (refingerprint.ts). Progress lives in the rows (each
// carries the rules version its content was last checked with), so a crash loses at most the batch
// in flight and the next start resumes. The rules themselves are not repeated here: each trail goes
// through the enrichment analysis (core/enrichment.ts analyzeTrail: redaction, screening, risk), and
// what publish and enrichment derive from the content (fingerprint and merge key, lexical
// document, embedding) is derived again by the same functions. The notes of outcome reports,
// which the feed shows as replies, are checked again too (rescreenOutcomeNotes), by the function a
// report's notes go through when reported (core/outcome-notes.ts).
import { CONTENT_RULES_VERSION } from "../core/content-rules";
import { type Analysis, analyzeTrail, canonicalJson, embeddingText, lexicalFields } from "../core/enrichment";
import { errorMessage } from "../core/error-message";
import type { RejectionReason } from "../core/rejection";
import type { Trail } from "../core/trail";
import type { Logger } from "../log";
import { screenNotes } from "../core/outcome-notes";
import { type LexicalDoc, type Rescreen, type Store, type StoredNotes, StoreUnavailableError, type TrailRecord } from "../store/ports";
import type { FingerprintChanges, VectorChanges } from "../store/seams";
import { mergeKey } from "../core/merge-key";
import { refingerprintTrail } from "./refingerprint";
import { contentHash } from "./trails";

const BATCH = 100;
/** The longest stretch of analysis between two turns of the event loop. */
const YIELD_AFTER_MS = 5;

/** Plans each row, handing the event loop back every YIELD_AFTER_MS; a row whose plan throws is reported and skipped. */
async function planEach<R, P>(rows: readonly R[], plan: (row: R) => P, failed: (row: R, err: unknown) => void): Promise<P[]> {
  const plans: P[] = [];
  let slice = performance.now();
  for (const row of rows) {
    if (performance.now() - slice >= YIELD_AFTER_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    try {
      plans.push(plan(row));
    } catch (err) {
      failed(row, err);
    }
  }
  return plans;
}

/**
 * Writes a batch's plans in one transaction, or, when the database refuses it, each alone: one row
 * it refuses must not hold back the others (nor stop the pass for good), and stays on its version
 * for the next start. An unavailable store fails the pass: it is tried again later. Returns how
 * many were applied.
 */
async function writeEach<P>(plans: P[], write: (plans: P[]) => Promise<number>, failed: (plan: P, err: unknown) => void): Promise<number> {
  try {
    return await write(plans);
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw err;
    if (plans.length === 1) {
      failed(plans[0]!, err);
      return 0;
    }
    let applied = 0;
    for (const p of plans) {
      try {
        applied += await write([p]);
      } catch (one) {
        if (one instanceof StoreUnavailableError) throw one;
        failed(p, one);
      }
    }
    return applied;
  }
}

/**
 * What makes the current rules refuse a trail already stored: what redaction cannot make safe and
 * text aimed at the reading agent. `low_quality` is not among them: quality is not a content rule,
 * and a stored trail's outcome reports speak for it better than its score.
 */
export const REFUSED_WHEN_STORED: readonly RejectionReason[] = ["sensitive_content", "prompt_injection"];

/** What re-screening does to one stored trail, decided from the trail alone. */
export interface RescreenPlan {
  record: TrailRecord;
  /** The content after the current redaction (the stored content when nothing changed). */
  trail: Trail;
  contentChanged: boolean;
  /** The current risk of a trail that stays indexed. */
  risk?: Analysis["risk"];
  /** The trail is indexed or merged and the current rules refuse it: it becomes rejected. */
  rejectedFor?: RejectionReason[];
  /** A trail that stays indexed and whose embedded text changed: re-embedded. */
  reembed: boolean;
}

/**
 * Runs the current rules on a stored trail (the enrichment analysis). An indexed or merged one the
 * rules refuse becomes rejected; an indexed one that stays gets its current risk. A rejected one is
 * re-redacted and keeps its reasons. (Queued trails are not read: their enrichment runs the current
 * rules.)
 */
export function planRescreen(record: TrailRecord, analyze: (trail: Trail) => Analysis = analyzeTrail): RescreenPlan {
  const analysis = analyze(record.trail);
  const contentChanged = canonicalJson(analysis.trail) !== canonicalJson(record.trail);
  const trail = contentChanged ? analysis.trail : record.trail;
  const screened = record.status === "indexed" || record.status === "merged";
  const refused = screened ? REFUSED_WHEN_STORED.filter((r) => analysis.reasons.includes(r)) : [];
  const rejectedFor = refused.length > 0 ? refused : undefined;
  const staysIndexed = record.status === "indexed" && !rejectedFor;
  return {
    record,
    trail,
    contentChanged,
    risk: staysIndexed ? analysis.risk : undefined,
    rejectedFor,
    reembed: staysIndexed && contentChanged && embeddingText(trail) !== embeddingText(record.trail),
  };
}

export interface RescreenDeps {
  store: Store;
  /** The enrichment model: an indexed trail whose embedded text changed is embedded again. */
  embed: (texts: string[]) => Promise<Float32Array[]>;
  now: () => number;
  logger: Logger;
  /** Told after each commit which fingerprints' lookups changed (the lookup caches). */
  fingerprintChanges: FingerprintChanges;
  /** Told after each commit which trails got a new vector or lost theirs. */
  vectorChanges: VectorChanges;
  /** Called after each batch's commit with its size, for progress. */
  onBatch?: (trails: number) => void | Promise<void>;
  /** Stops between batches (the colony is stopping). */
  stopped?: () => boolean;
  /** Trails per transaction. */
  batchSize?: number;
}

export interface RescreenResult {
  /** Trails checked and brought to the current rules version. */
  checked: number;
  /** Of those, trails whose content the current redaction changed. */
  redacted: number;
  /** Of those, indexed or merged trails the current rules refuse, now rejected. */
  rejected: number;
}

/** Re-checks every stored trail last checked by older content rules. */
export async function rescreenStoredTrails(deps: RescreenDeps): Promise<RescreenResult> {
  const { store, now, logger } = deps;
  const result: RescreenResult = { checked: 0, redacted: 0, rejected: 0 };
  const size = deps.batchSize ?? BATCH;
  /** A trail that could not be re-checked stays on its version: the next start tries it again. */
  const failed = (record: TrailRecord, err: unknown) =>
    logger.error("re-screening a stored trail failed", { trail_id: record.id, error: errorMessage(err, { withName: true }) });
  const write = async (plans: RescreenPlan[], vectorOf: Map<number, Float32Array>): Promise<number> => {
    let applied = 0;
    await store.transaction(async (tx) => {
      applied = 0;
      const at = now();
      // A redacted trail gets a new merge key: wait for a worker indexing a copy under it, as
      // re-fingerprinting does (src/service/refingerprint.ts), so the two never both take the key.
      await tx.trails.holdMergeKeys(plans.filter((p) => p.contentChanged && p.record.mergeKey !== null).map((p) => mergeKey(p.trail)));
      const fingerprints = new Set<string>();
      const upserted: number[] = [];
      const removed: number[] = [];
      const rejected: { trail_id: string; reasons: string[] }[] = [];
      let redacted = 0;
      const lexicalChanges: { seq: number; oldDoc: LexicalDoc; newDoc: LexicalDoc | null }[] = [];
      for (const p of plans) {
        const { record, trail } = p;
        const update: Rescreen = {
          was: { status: record.status, contentRulesVersion: record.contentRulesVersion },
          trail,
          contentHash: p.contentChanged ? contentHash(trail) : record.contentHash,
          errorType: p.contentChanged ? (trail.problem.error_type ?? null) : record.errorType,
          contentRulesVersion: CONTENT_RULES_VERSION,
          risk: p.risk,
          rejectedFor: p.rejectedFor,
        };
        // A removal or another run since the read wins: this trail is left as it is now.
        if (!(await tx.trails.rescreen(record.seq, update))) continue;
        applied++;
        if (p.contentChanged) {
          redacted++;
          // The fingerprint of the redacted error line and the merge key, as publish and enrichment give them.
          for (const fp of await refingerprintTrail(tx, { ...record, trail }, at)) fingerprints.add(fp);
        }
        if (record.status === "indexed") {
          const oldDoc = lexicalFields(record.trail);
          if (p.rejectedFor) {
            await tx.vectors?.remove(record.seq);
            removed.push(record.seq);
            lexicalChanges.push({ seq: record.seq, oldDoc, newDoc: null });
          } else {
            const newDoc = lexicalFields(trail);
            if (newDoc.error !== oldDoc.error || newDoc.body !== oldDoc.body) lexicalChanges.push({ seq: record.seq, oldDoc, newDoc });
            const vector = vectorOf.get(record.seq);
            if (vector && tx.vectors) {
              await tx.vectors.upsert(record.seq, vector);
              upserted.push(record.seq);
            }
          }
          const riskChanged = p.risk !== undefined && canonicalJson(p.risk) !== canonicalJson(record.risk);
          if (p.contentChanged || riskChanged || p.rejectedFor) fingerprints.add(record.fingerprint);
        }
        if (p.rejectedFor) {
          rejected.push({ trail_id: record.id, reasons: p.rejectedFor });
          await tx.stats.bump("rejected", at);
        }
      }
      // The lexical index last, after every trail's row: on PostgreSQL its writers' lock is held to
      // the commit, and a removal holding a later trail's row waits for it (a deadlock when the
      // batch then waited for that row, as the worker's batch did; src/service/enrichment-worker.ts).
      for (const c of lexicalChanges) {
        await tx.lexical.remove(c.seq, c.oldDoc);
        if (c.newDoc) await tx.lexical.add(c.seq, c.newDoc);
      }
      tx.afterCommit(async () => {
        result.checked += applied;
        result.redacted += redacted;
        result.rejected += rejected.length;
        for (const r of rejected) logger.warn("a stored trail is rejected by the current content rules", r);
        if (upserted.length + removed.length > 0) await deps.vectorChanges.announce({ upserted, removed });
        if (fingerprints.size > 0) await deps.fingerprintChanges.announce({ fingerprints: [...fingerprints] });
      });
    });
    return applied;
  };
  let after = 0;
  while (!deps.stopped?.()) {
    const batch = await store.trails.checkedBefore(CONTENT_RULES_VERSION, after, size);
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.seq;
    // About 1 ms of analysis a trail: requests get the event loop back every few milliseconds.
    const plans = await planEach(batch, (record) => planRescreen(record), failed);
    // Embedded before the transaction, which then holds the writer only for the writes.
    const reembedded = plans.filter((p) => p.reembed);
    const vectors = reembedded.length ? await deps.embed(reembedded.map((p) => embeddingText(p.trail))) : [];
    const vectorOf = new Map(reembedded.map((p, i) => [p.record.seq, vectors[i]!]));

    const applied = await writeEach(
      plans,
      (some) => write(some, vectorOf),
      (p, err) => failed(p.record, err),
    );
    await deps.onBatch?.(applied);
    // Let requests run between batches: this is background work.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return result;
}

export interface NotesRescreenDeps {
  store: Store;
  logger: Logger;
  /** Called after each batch's commit with its size, for progress. */
  onBatch?: (notes: number) => void | Promise<void>;
  /** Stops between batches (the colony is stopping). */
  stopped?: () => boolean;
  /** Notes per transaction. */
  batchSize?: number;
}

export interface NotesRescreenResult {
  /** Reports whose notes were checked and brought to the current rules version. */
  checked: number;
  /** Of those, notes the current redaction changed (and kept). */
  redacted: number;
  /** Of those, notes the current screening flags as prompt injection: their text is dropped (the report and its counts stay). */
  dropped: number;
}

/**
 * Re-checks the notes of outcome reports last checked by older content rules, with the rules a
 * report's notes go through when reported (core/outcome-notes.ts screenNotes): a note is
 * re-redacted, and one the current screening flags as prompt injection loses its text (a report
 * with such notes is refused now; a stored one keeps its outcome, its counts and its place in the
 * trail's history). Batched and resumable like the trails' pass: progress is each row's version.
 */
export async function rescreenOutcomeNotes(deps: NotesRescreenDeps): Promise<NotesRescreenResult> {
  const { store, logger } = deps;
  const result: NotesRescreenResult = { checked: 0, redacted: 0, dropped: 0 };
  const size = deps.batchSize ?? BATCH;
  type Plan = {
    id: number;
    trailSeq: number;
    wasVersion: number;
    notes: string | null;
    change: "none" | "redacted" | "dropped";
    kind?: string;
  };
  const plan = (n: StoredNotes): Plan => {
    const screened = screenNotes(n.notes);
    const base = { id: n.id, trailSeq: n.trailSeq, wasVersion: n.contentRulesVersion };
    if (screened.injection) return { ...base, notes: null, change: "dropped", kind: screened.injection.kind };
    return { ...base, notes: screened.text, change: screened.text === n.notes ? "none" : "redacted" };
  };
  const write = async (plans: Plan[]): Promise<number> => {
    let applied = 0;
    await store.transaction(async (tx) => {
      applied = 0;
      const counts = { redacted: 0, dropped: 0 };
      const dropped: Plan[] = [];
      for (const p of plans) {
        const update = { wasVersion: p.wasVersion, notes: p.notes, contentRulesVersion: CONTENT_RULES_VERSION };
        // A report removed with its trail, or checked by another run since the read, is left as it is.
        if (!(await tx.outcomes.rescreenNotes(p.id, update))) continue;
        applied++;
        if (p.change === "redacted") counts.redacted++;
        if (p.change === "dropped") dropped.push(p);
      }
      tx.afterCommit(() => {
        result.checked += applied;
        result.redacted += counts.redacted;
        result.dropped += dropped.length;
        for (const p of dropped)
          logger.warn("the notes of a stored outcome report are dropped by the current content rules", {
            outcome_id: p.id,
            trail_seq: p.trailSeq,
            kind: p.kind,
          });
      });
    });
    return applied;
  };
  /** A report whose notes could not be re-checked stays on its version: the next start tries it again. */
  const failed = (row: { id: number }, err: unknown) =>
    logger.error("re-screening the notes of an outcome report failed", {
      outcome_id: row.id,
      error: errorMessage(err, { withName: true }),
    });
  let after = 0;
  while (!deps.stopped?.()) {
    const batch = await store.outcomes.notesCheckedBefore(CONTENT_RULES_VERSION, after, size);
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.id;
    const plans = await planEach(batch, plan, failed);
    const applied = await writeEach(plans, write, failed);
    await deps.onBatch?.(applied);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return result;
}

// The durable in-process enrichment queue's worker: the runner. It claims jobs oldest first in
// batches (store/seams.ts JobClaims), gathers each trail's facts, lets the pure decision
// (core/enrichment-decision.ts: triage, then settle) say what to do, embeds the candidates, and
// applies each verdict in one transaction with the vector insert and the event, so a crash at any
// point leaves either nothing or everything of a verdict, and a restart simply resumes.
import { CATEGORIES, CATEGORY_SEEDS, nearestCategory, type Category } from "../core/category";
import { CONTENT_RULES_VERSION } from "../core/content-rules";
import { NORMALIZER_VERSION, previousNormalizerFingerprints } from "../core/fingerprint";
import { type Analysis, embeddingText, lexicalFields } from "../core/enrichment";
import { settle, triage } from "../core/enrichment-decision";
import { trailSubject } from "../core/hot-label";
import type { Trail } from "../core/trail";
import type { Embedder } from "../embedding/embedder";
import type { Logger } from "../log";
import { type LexicalDoc, StoreUnavailableError, type Store, type TrailRecord, type Transaction } from "../store/ports";
import type { FingerprintChanges, JobClaims, VectorChanges } from "../store/seams";
import { isCounted, utcDay } from "../core/outcome-counting";
import { addPreviousNormalizerAliases, mapYielding, type PreviousAliases } from "./refingerprint";
import { countingFacts, countOutcome } from "./trails";
import { errorMessage } from "../core/error-message";

import type { EnrichmentOutcome, Metrics } from "./metrics";

export interface WorkerDeps {
  /** A store whose vector index is open. */
  store: Store;
  embedder: Embedder;
  logger: Logger;
  now: () => number;
  /** How this worker takes jobs from the queue (one worker, or one of several). */
  claims: JobClaims;
  batchSize?: number;
  /** Told after a batch's commit which fingerprints' indexed trails changed. */
  fingerprintChanges: FingerprintChanges;
  /** Told after a commit which trails got a vector. */
  vectorChanges: VectorChanges;
  metrics?: Metrics;
}

const RETRY_DELAY_MS = 1000;

type Planned =
  | {
      seq: number;
      record: TrailRecord;
      kind: "rejected";
      reasons: string[];
      trail: TrailRecord["trail"];
      /** The current rules' version when the analysis ran; the stored one when it did not (removed content, failures). */
      contentRulesVersion: number;
    }
  | { seq: number; record: TrailRecord; kind: "candidate"; analysis: Analysis };

type Job = { trailSeq: number; attempts: number };

/**
 * A batch's verdicts could not be written, and not because the store is unavailable: something in
 * one of its trails (a value the database refuses) may be the cause. `seqs` are the trails whose
 * verdicts the transaction held.
 */
class VerdictsNotWritten extends Error {
  constructor(
    readonly seqs: number[],
    readonly reason: unknown,
  ) {
    super(`the verdicts of ${seqs.length} trail(s) could not be written: ${errorText(reason)}`);
  }
}

export class EnrichmentWorker {
  private running: Promise<void> | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private centroids: Map<Category, Float32Array> | null = null;
  /** Counts batches that failed as a whole (the embedder down), for readiness and logs. */
  failedBatches = 0;

  private pollTimer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: WorkerDeps) {
    const { pollMs } = deps.claims;
    if (pollMs) {
      this.pollTimer = setInterval(() => this.notify(), pollMs);
      this.pollTimer.unref?.();
    }
  }

  /** Wakes the worker; cheap to call after every publish. */
  notify(): void {
    if (this.stopped || this.running) return;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  /** Resolves when the queue is empty (or the worker stops). For tests, benchmarks and shutdown. */
  async drain(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stopped && (await this.deps.store.jobs.depth()) > 0) {
      if (Date.now() > deadline) throw new Error("enrichment queue did not drain in time");
      this.notify();
      if (this.running) await this.running;
      else await Bun.sleep(20);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.running) await this.running;
  }

  private async loop(): Promise<void> {
    const batchSize = this.deps.batchSize ?? 32;
    while (!this.stopped) {
      let jobs: Job[] = [];
      try {
        // Inside the try: the store can fail here too (a networked database away), and the
        // loop's promise has nobody to report a rejection to.
        jobs = await this.deps.claims.claim(batchSize);
        if (jobs.length === 0) return;
        const stopRenewing = this.keepLeases(jobs);
        try {
          await this.processIsolatingFailures(jobs);
        } finally {
          stopRenewing();
        }
      } catch (err) {
        await this.deps.claims.release(jobs.map((j) => j.trailSeq)).catch(() => {});
        // A whole-batch failure (the embedder, the store) is transient: retry later, count nothing.
        this.failedBatches++;
        this.deps.logger.error("enrichment batch failed; retrying", { error: errorText(err), jobs: jobs.length });
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          this.notify();
        }, RETRY_DELAY_MS);
        return;
      }
    }
  }

  /**
   * Processes a batch. When its verdicts cannot be written for a reason other than the store being
   * unavailable, each of its trails is tried alone, so one trail the database refuses cannot hold
   * back the others: those written alone are done, and each that fails alone counts an attempt
   * (triage rejects it as enrichment_failed at MAX_ATTEMPTS) and goes back to the queue. Failures of
   * the store or the embedder as a whole are thrown: the loop retries the batch later.
   */
  private async processIsolatingFailures(jobs: Job[]): Promise<void> {
    let held: number[];
    try {
      await this.process(jobs);
      return;
    } catch (err) {
      if (!(err instanceof VerdictsNotWritten)) throw err;
      if (err.seqs.length === 1) return await this.countFailure(err.seqs[0]!, err.reason);
      held = err.seqs;
    }
    // Only the trails the failed transaction held: the batch's others were settled before it (a
    // job dropped, or released to be retried, is not this worker's any more).
    const jobOf = new Map(jobs.map((j) => [j.trailSeq, j]));
    for (const seq of held) {
      try {
        await this.process([jobOf.get(seq)!]);
      } catch (err) {
        if (!(err instanceof VerdictsNotWritten)) throw err;
        await this.countFailure(seq, err.reason);
      }
    }
  }

  /** One trail's enrichment failed on its own: an attempt is counted and the job goes back to the queue. */
  private async countFailure(seq: number, reason: unknown): Promise<void> {
    const { store, logger, metrics, claims, now } = this.deps;
    logger.error("enrichment of a trail failed", { trail_seq: seq, error: errorText(reason) });
    metrics?.enrichment("failed");
    await store.stats.bump("failed", now());
    await store.jobs.recordFailure(seq, errorText(reason));
    await claims.release([seq]);
  }

  /** Renews the leases of a batch's jobs while it is processed (claims that lease); returns the stop. */
  private keepLeases(jobs: Job[]): () => void {
    const { claims, logger } = this.deps;
    if (!claims.renew || !claims.renewEveryMs) return () => {};
    const seqs = jobs.map((j) => j.trailSeq);
    const timer = setInterval(() => {
      // A failed renewal (the database away) is not the batch's failure: the batch finds out itself.
      claims.renew!(seqs).catch((err) => logger.error("renewing job leases failed", { error: errorText(err) }));
    }, claims.renewEveryMs);
    timer.unref?.();
    return () => clearInterval(timer);
  }

  /** Gathers each job's facts and triages it; drops and retries are applied at once. */
  private async plan(jobs: Job[]): Promise<Planned[]> {
    const { store } = this.deps;
    const records = new Map((await store.trails.bySeqs(jobs.map((j) => j.trailSeq))).map((r) => [r.seq, r]));
    const planned: Planned[] = [];
    for (const { trailSeq: seq, attempts } of jobs) {
      const record = records.get(seq);
      const queued = record?.status === "queued";
      const decision = triage({
        status: record?.status ?? null,
        trail: record?.trail as Trail,
        contentRemoved: queued ? await store.tombstones.hasContent(record.contentHash) : false,
        attempts,
      });
      if (decision.action === "drop") {
        await store.jobs.remove(seq); // removed meanwhile, or already final: nothing to do
        continue;
      }
      if (decision.action !== "candidate" && decision.error !== undefined) {
        this.deps.logger.error("enrichment of a trail failed", { trail_id: record!.id, error: decision.error });
        this.deps.metrics?.enrichment("failed");
        await store.stats.bump("failed", this.deps.now());
      }
      if (decision.action === "retry") {
        await store.jobs.recordFailure(seq, decision.error);
        await this.deps.claims.release([seq]);
        continue;
      }
      planned.push(
        decision.action === "reject"
          ? {
              seq,
              record: record!,
              kind: "rejected",
              reasons: decision.reasons,
              trail: decision.trail,
              contentRulesVersion: decision.analyzed ? CONTENT_RULES_VERSION : record!.contentRulesVersion,
            }
          : { seq, record: record!, kind: "candidate", analysis: decision.analysis },
      );
    }
    return planned;
  }

  private async categoryCentroids(): Promise<Map<Category, Float32Array>> {
    if (!this.centroids) {
      const vectors = await this.deps.embedder.embed(CATEGORIES.map((c) => CATEGORY_SEEDS[c]));
      this.centroids = new Map(CATEGORIES.map((c, i) => [c, vectors[i]!]));
    }
    return this.centroids;
  }

  private async process(jobs: Job[]): Promise<void> {
    const { embedder, now } = this.deps;
    const planned = await this.plan(jobs);
    const candidates = planned.filter((p): p is Extract<Planned, { kind: "candidate" }> => p.kind === "candidate");
    const embeddings = candidates.length ? await embedder.embed(candidates.map((c) => embeddingText(c.analysis.trail))) : [];
    const vectorOf = new Map(candidates.map((c, i) => [c.seq, embeddings[i]!]));
    const unsure = candidates.some((c) => !c.analysis.category.confident);
    const centroids = unsure ? await this.categoryCentroids() : null;
    // The fingerprints the previous normalizers give each error, recorded as aliases of the one it
    // is found by (decisions §2): computed here, off the publish request and outside the verdicts'
    // transaction (about 1 ms a trail). A trail an older release stored keeps its version's
    // fingerprint until re-fingerprinting, which records them then; one a newer release stored (a
    // rolling upgrade) gets every version this one knows. The event loop is let go between trails
    // (a batch of 32 is tens of milliseconds of CPU), so requests served meanwhile do not wait for all.
    const current = candidates.filter((c) => c.record.normalizerVersion >= NORMALIZER_VERSION);
    const computed = await mapYielding(current, (c) =>
      previousNormalizerFingerprints(c.record.trail.problem.error, c.record.fingerprint, c.record.normalizerVersion),
    );
    const previous = new Map(current.map((c, i) => [c.seq, computed[i]!]));

    const changed = new Set<string>();
    const aliases: PreviousAliases[] = [];
    const upserted: number[] = [];
    const lexicalDocs: { id: number; doc: LexicalDoc }[] = [];
    const at = now();
    const verdicts: EnrichmentOutcome[] = [];
    await this.writeVerdicts(planned, async (tx) => {
      const counted = async (outcome: EnrichmentOutcome, applied: boolean) => {
        if (!applied) return;
        verdicts.push(outcome);
        await tx.stats.bump(outcome, at);
      };
      // Another replica's worker may be indexing a trail with one of these merge keys right now:
      // wait for it, so the lookups below find its trail and merge into it.
      await tx.trails.holdMergeKeys(candidates.map((c) => c.analysis.mergeKey));
      for (const p of planned) {
        if (p.kind === "rejected") {
          await counted(
            "rejected",
            await tx.trails.applyVerdict(p.seq, {
              status: "rejected",
              trail: p.trail,
              reasons: p.reasons,
              at,
              contentRulesVersion: p.contentRulesVersion,
            }),
          );
          await tx.jobs.remove(p.seq);
          continue;
        }
        const { analysis, record } = p;
        const vector = vectorOf.get(p.seq)!;
        // Looked up inside the transaction, so a duplicate later in the same batch merges too.
        const existing = await tx.trails.indexedByMergeKey(analysis.mergeKey);
        const target = existing && existing.seq !== p.seq ? existing : null;
        // The fix of an indexed trail an operator removed (the tombstone's merge key): rejected as
        // removed content, as an identical copy is by its content hash, whatever its other words.
        if (!target && (await tx.tombstones.hasMergeKey(analysis.mergeKey))) {
          await counted(
            "rejected",
            await tx.trails.applyVerdict(p.seq, {
              status: "rejected",
              trail: analysis.trail,
              reasons: ["removed_content"],
              at,
              contentRulesVersion: CONTENT_RULES_VERSION,
            }),
          );
          await tx.jobs.remove(p.seq);
          continue;
        }
        const settlement = settle({
          analysis,
          submitter: record.author,
          mergeTarget: target,
          nearestCategory: target || analysis.category.confident ? null : nearestCategory(vector, centroids!).category,
        });
        if (settlement.action === "merge") {
          if (
            await tx.trails.applyVerdict(p.seq, {
              status: "merged",
              trail: analysis.trail,
              mergedInto: settlement.into,
              at,
              contentRulesVersion: CONTENT_RULES_VERSION,
            })
          ) {
            await counted("merged", true);
            if (settlement.credit) await this.creditMerge(tx, target!, record, at);
            changed.add(target!.fingerprint);
            // Its error is the trail it joined's: an older release, which may not have merged them,
            // finds that one by this error's fingerprint.
            aliases.push({ previous: previous.get(p.seq) ?? [], current: target!.fingerprint });
          }
        } else {
          const applied = await tx.trails.applyVerdict(p.seq, {
            status: "indexed",
            trail: analysis.trail,
            category: settlement.category,
            quality: settlement.quality,
            risk: analysis.risk,
            strength: settlement.strength,
            mergeKey: analysis.mergeKey,
            at,
            contentRulesVersion: CONTENT_RULES_VERSION,
          });
          if (applied) {
            await counted("indexed", true);
            await tx.vectors!.upsert(p.seq, vector);
            upserted.push(p.seq);
            lexicalDocs.push({ id: p.seq, doc: lexicalFields(analysis.trail) });
            await tx.events.append({
              kind: "laid",
              agent: record.author,
              trailId: record.id,
              text: `laid a trail for ${trailSubject({ ...record, category: settlement.category })} (${record.fingerprint})`,
              at,
            });
            changed.add(record.fingerprint);
            aliases.push({ previous: previous.get(p.seq) ?? [], current: record.fingerprint });
          }
        }
        await tx.jobs.remove(p.seq);
      }
      // The batch's aliases of the previous normalizers, in one statement.
      for (const fp of await addPreviousNormalizerAliases(tx, aliases, at)) changed.add(fp);
      // The lexical documents last, in one statement: on PostgreSQL it takes the index writers'
      // lock, held to the commit, after every row the batch locks. Taken with the batch's first
      // indexed trail, it was held while later trails waited for rows, among them a merge target
      // that a removal had deleted and held while it waited for the same lock: a deadlock.
      if (lexicalDocs.length > 0) await tx.lexical.addMissing(lexicalDocs);
      if (upserted.length > 0) tx.afterCommit(() => this.deps.vectorChanges.announce({ upserted, removed: [] }));
      if (changed.size > 0) tx.afterCommit(() => this.deps.fingerprintChanges.announce({ fingerprints: [...changed] }));
      const metrics = this.deps.metrics;
      if (metrics) tx.afterCommit(() => verdicts.forEach((v) => metrics.enrichment(v)));
    });
  }

  /** The verdicts' transaction; a failure other than the store's being unavailable names the trails it held. */
  private async writeVerdicts(planned: Planned[], write: (tx: Transaction) => Promise<void>): Promise<void> {
    try {
      await this.deps.store.transaction(write);
    } catch (err) {
      if (err instanceof StoreUnavailableError || planned.length === 0) throw err;
      throw new VerdictsNotWritten(
        planned.map((p) => p.seq),
        err,
      );
    }
  }

  /**
   * Re-embeds every indexed trail (after a model change). Idempotent, so a crash midway is
   * resumed from the start by the next process; the caller clears the pending flag when done.
   */
  async reindex(batchSize = 64, onBatch?: (count: number) => void): Promise<number> {
    const { store, embedder } = this.deps;
    let after = 0;
    let done = 0;
    while (!this.stopped) {
      const batch = await store.trails.indexedAfter(after, batchSize);
      if (batch.length === 0) break;
      const embedded = await embedder.embed(batch.map((r) => embeddingText(r.trail)));
      await store.transaction(async (tx) => {
        const upserted: number[] = [];
        // Still indexed, and held so: a removal meanwhile (on any replica) waits for this commit,
        // then deletes the vector written here with its trail.
        const indexed = await tx.trails.holdIndexed(batch.map((r) => r.seq));
        for (const [i, r] of batch.entries()) {
          if (!indexed.has(r.seq)) continue;
          await tx.vectors!.upsert(r.seq, embedded[i]!);
          upserted.push(r.seq);
        }
        if (upserted.length > 0) tx.afterCommit(() => this.deps.vectorChanges.announce({ upserted, removed: [] }));
      });
      after = batch[batch.length - 1]!.seq;
      done += batch.length;
      onBatch?.(batch.length);
    }
    return done;
  }

  /**
   * A merge counts as one success for the existing trail (another agent's): once a day per agent,
   * and once a day per client address, whatever agent ids it publishes under (a trail stored
   * before its client was kept counts as its agent's); and as a counted `worked` report of that
   * agent and address, so their reports and their credits share one allowance
   * (src/core/outcome-counting.ts).
   */
  private async creditMerge(tx: Transaction, existing: TrailRecord, merged: TrailRecord, at: number): Promise<void> {
    const submitter = merged.author;
    const client = merged.client ?? submitter;
    // The facts below stay true until the commit: the target was read under a lock that reports which
    // could count wait for, and that waited for theirs (indexedByMergeKey: FOR KEY SHARE against
    // holdTrail's FOR UPDATE on PostgreSQL; SQLite's writers run one at a time).
    const facts = await countingFacts(tx, existing.seq, submitter, client, at);
    if (!isCounted({ outcome: "worked", byAuthor: false, ...facts })) return;
    if (!(await tx.credits.grant(existing.seq, submitter, client, utcDay(at)))) return;
    await countOutcome(tx, existing.seq, "worked", at);
    await tx.events.append({
      kind: "reinforced",
      agent: submitter,
      trailId: existing.id,
      text: `reinforced by an equivalent trail for ${trailSubject(existing)}`,
      at,
    });
  }
}

function errorText(err: unknown): string {
  return errorMessage(err, { withName: true });
}

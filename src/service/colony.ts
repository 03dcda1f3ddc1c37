// The service core: every rule of the contract lives here once, and both the HTTP routes and the
// MCP tools call it.
import { startProgress } from "../progress";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { Seams } from "../store/seams";
import type { Store } from "../store/ports";
import { VERSION } from "../version";
import { EnrichmentWorker } from "./enrichment-worker";
import { readiness, type Readiness } from "./health";
import type { Subsystems } from "./subsystems";
import { DraftService } from "./drafts";
import { AdminService } from "./admin";
import { FeedService } from "./feed";
import type { Quotas } from "./quotas";
import { NO_METRICS, type Metrics } from "./metrics";
import {
  ALIAS_RETENTION_MS,
  previousAliasesPending,
  recordPreviousAliasesOfStoredTrails,
  refingerprintStoredTrails,
} from "./refingerprint";
import { NORMALIZER_VERSION } from "../core/fingerprint";
import { CONTENT_RULES_VERSION } from "../core/content-rules";
import { type NotesRescreenResult, type RescreenResult, rescreenOutcomeNotes, rescreenStoredTrails } from "./rescreen";
import { type LexicalRebuildResult, lexicalIndexOutdated, lexicalRebuildCounts, rebuildLexicalIndex } from "./lexical-rebuild";
import { SearchService } from "./search";
import { TrailService } from "./trails";
import { errorMessage } from "../core/error-message";

export interface ColonyDeps {
  config: Config;
  logger: Logger;
  subsystems: Subsystems;
  /** The single-process assumptions, as src/compose.ts chose them. */
  seams: Seams;
  quotas: Quotas;
  /** Base of approve_url links (known once the server is bound). */
  publicUrl: () => string;
  now?: () => number;
  /** Where the core reports what it does (NO_METRICS when metrics are off). */
  metrics?: Metrics;
}

const MAINTENANCE_INTERVAL_MS = 3600_000;
/** How often a replica asks again for the lead of re-embedding that another replica holds. */
const LEADERSHIP_RETRY_MS = 2_000;
/**
 * How long search events are kept: the activity list shows the latest 50, and nothing reads older
 * searches (the hot labels and the series have their own counters).
 */
export const SEARCH_EVENT_RETENTION_MS = 2 * 24 * 3600 * 1000;
const PURGE_BATCH = 5000;

/** How often the queue depth is sampled for the console's hourly peak. */
const QUEUE_SAMPLE_INTERVAL_MS = 60_000;
/** How often a replica looks again for stored rows on older versions: see config.ts. */
export { STORED_PASS_RECHECK_MS } from "../config";

export class ColonyService {
  private readonly startedAt: number;
  readonly now: () => number;
  readonly trails: TrailService;
  readonly search: SearchService;
  readonly drafts: DraftService;
  readonly feed: FeedService;
  /** The quotas every route and tool spends (service/quotas.ts). */
  readonly quotas: Quotas;
  readonly admin: AdminService;
  readonly metrics: Metrics;
  /** Null when the store, the vector index or the model did not start: trails stay queued. */
  readonly worker: EnrichmentWorker | null;
  private maintenanceTimer: ReturnType<typeof setInterval> | null = null;
  private queueTimer: ReturnType<typeof setInterval> | null = null;
  private storedPassTimer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: ColonyDeps) {
    this.now = deps.now ?? Date.now;
    this.metrics = deps.metrics ?? NO_METRICS;
    this.startedAt = this.now();
    this.quotas = deps.quotas;
    const { store, vectors, embedder } = deps.subsystems;
    const { seams } = deps;
    this.worker =
      store && vectors && embedder && seams.jobClaims
        ? new EnrichmentWorker({
            store,
            embedder,
            logger: deps.logger,
            now: this.now,
            claims: seams.jobClaims,
            fingerprintChanges: seams.fingerprints,
            vectorChanges: seams.vectors,
            metrics: this.metrics,
          })
        : null;
    this.trails = new TrailService({
      store,
      logger: deps.logger,
      now: this.now,
      quotas: deps.quotas,
      maxQueue: deps.config.maxQueue,
      adminToken: deps.config.adminToken,
      notifyWorker: () => this.worker?.notify(),
      fingerprintChanges: seams.fingerprints,
      vectorChanges: seams.vectors,
    });
    this.search = new SearchService({
      store,
      vectors,
      embedder,
      trails: this.trails,
      now: this.now,
      metrics: this.metrics,
      takeHotLabel: (address) => deps.quotas.takeHotLabel(address),
      takeAgentSeen: (address) => deps.quotas.takeAgentSeen(address),
    });
    this.drafts = new DraftService({
      store,
      trails: this.trails,
      now: this.now,
      publicUrl: deps.publicUrl,
      quotas: deps.quotas,
    });
    this.feed = new FeedService({ store, now: this.now });
    this.admin = new AdminService({
      store,
      adminToken: deps.config.adminToken,
      now: this.now,
      trails: this.trails,
      search: this.search,
      feed: this.feed,
      queueDepth: () => this.queueDepth(),
    });
  }

  /** Resumes queued work and starts periodic maintenance. */
  async start(): Promise<void> {
    await this.maintenance();
    this.maintenanceTimer = setInterval(() => void this.maintenance(), MAINTENANCE_INTERVAL_MS);
    this.maintenanceTimer.unref?.();
    if (this.deps.subsystems.store) {
      this.queueTimer = setInterval(() => void this.admin.sampleQueue().catch(() => {}), QUEUE_SAMPLE_INTERVAL_MS);
      this.queueTimer.unref?.();
    }
    this.worker?.notify();
    const store = this.deps.subsystems.store;
    // A colony with nothing indexed (a new one) records its tokens now, so it is never unready for it.
    try {
      if (store && (await lexicalIndexOutdated(store)) && (await store.stats.trailsIndexed()) === 0) await rebuildLexicalIndex({ store });
    } catch {
      // The background pass below tries again.
    }
    this.lexicalRebuilding = this.rebuildLexical();
    if (this.worker && (await this.deps.subsystems.vectors?.needsReindex())) this.reindexing = this.reindexWhileNeeded(this.worker);
    this.startStoredPasses();
    this.storedPassTimer = setInterval(() => void this.recheckStoredPasses(), this.deps.config.storedPassRecheckMs);
    this.storedPassTimer.unref?.();
  }

  /** Re-fingerprinting, then re-screening of trails, then of outcome notes (each waits for the one before). */
  private startStoredPasses(): void {
    this.refingerprinting = this.refingerprint();
    this.rescreening = this.rescreen();
    this.notesRescreening = this.rescreenNotes();
  }

  /**
   * The stored passes again, once the last ones are over: rows a replica of the previous release
   * wrote after them (a rolling upgrade) get the current fingerprints and rules. Each pass that
   * finds nothing pending ends after its one query. Resolves when they end (the timer; tests).
   */
  async recheckStoredPasses(): Promise<void> {
    if (this.stopping || this.recheckingStoredPasses) return;
    this.recheckingStoredPasses = true;
    try {
      await this.notesRescreening;
      if (this.stopping) return;
      this.startStoredPasses();
      await this.notesRescreening;
    } finally {
      this.recheckingStoredPasses = false;
    }
  }
  private recheckingStoredPasses = false;

  /** Resolves when the re-embedding this process started or waits to take over has ended (tests, stop). */
  reindexing: Promise<void> = Promise.resolve();

  /**
   * Colony-wide background work after an upgrade, as the leader: while `pending()` says there is
   * work and another replica leads it, this one asks again every few seconds. A leader that dies
   * loses its lock with its connection, and the next asker resumes the work; a failed run is tried
   * again the same way. Ends when the work is done, was done here, or this process stops.
   */
  private async leadWhilePending(name: string, what: string, pending: () => Promise<boolean>, task: () => Promise<void>): Promise<void> {
    const { seams, logger } = this.deps;
    while (!this.stopping) {
      try {
        if (!(await pending())) return;
        if (await seams.leadership.run(name, task)) return;
      } catch (err) {
        logger.error(`${what} failed; trying again`, { error: errorMessage(err) });
      }
      const until = performance.now() + LEADERSHIP_RETRY_MS;
      while (!this.stopping && performance.now() < until) await Bun.sleep(50);
    }
  }

  /**
   * A start-time pass over stored rows (re-fingerprinting, re-screening): run by the leader while
   * any row is pending (leadWhilePending), with a progress line from its first batch; its counts
   * summed over the runs this process led.
   */
  private async storedPass<R extends { [K in keyof R]: number }>(pass: {
    name: string;
    what: string;
    label: string;
    unit: string;
    empty: R;
    pending: () => Promise<boolean>;
    run: (tick: (n: number) => void, stopped: () => boolean) => Promise<R>;
  }): Promise<R> {
    const total: Record<string, number> = { ...pass.empty };
    await this.leadWhilePending(pass.name, pass.what, pass.pending, async () => {
      let progress: ReturnType<typeof startProgress> | null = null;
      const tick = (n: number) => {
        progress ??= startProgress({ label: pass.label, unit: pass.unit, logger: this.deps.logger });
        progress.tick(n);
      };
      const run = await pass.run(tick, () => this.stopping);
      for (const [k, v] of Object.entries(run) as [string, number][]) total[k] = (total[k] ?? 0) + v;
      (progress as ReturnType<typeof startProgress> | null)?.finish({ ...run });
    });
    return total as R;
  }

  /** Re-embeds after a model change (by the leader; see leadWhilePending). */
  private reindexWhileNeeded(worker: EnrichmentWorker): Promise<void> {
    const vectors = this.deps.subsystems.vectors!;
    return this.leadWhilePending(
      "reindex",
      "re-embedding",
      () => vectors.needsReindex(),
      () => this.reindex(worker),
    );
  }

  /** Resolves when the start-time rebuild of the lexical index has finished (tests, tools). */
  lexicalRebuilding: Promise<LexicalRebuildResult | null> = Promise.resolve(null);
  /** This process's rebuild of the lexical index, while it leads one: trails done and in all. */
  private lexicalProgress: { readonly done: number; readonly total: number } | null = null;

  /**
   * After a release changes the lexical tokens (core/lexical.ts LEXICAL_VERSION), the index is
   * rebuilt from the stored trails (service/lexical-rebuild.ts), by the leader, until it is current
   * (see leadWhilePending). Until then readiness says unavailable (lexicalStatus): search would
   * miss what the index does not hold yet.
   */
  private async rebuildLexical(): Promise<LexicalRebuildResult | null> {
    const { logger, subsystems } = this.deps;
    const store = subsystems.store;
    if (!store) return null;
    let result: LexicalRebuildResult | null = null;
    await this.leadWhilePending(
      "lexical",
      "rebuilding the lexical index",
      () => lexicalIndexOutdated(store),
      async () => {
        const total = await store.stats.trailsIndexed();
        const label = "rebuilding the lexical index for the current tokens";
        const progress = total > 0 ? startProgress({ label, unit: "trails", total, logger }) : null;
        const counts = lexicalRebuildCounts(total, progress);
        this.lexicalProgress = counts;
        try {
          result = await rebuildLexicalIndex({
            store,
            onResume: counts.resumed,
            onBatch: counts.indexed,
            stopped: () => this.stopping,
          });
        } finally {
          this.lexicalProgress = null;
        }
        if (result.current) progress?.finish({ trails: result.trails, resumed: !result.started });
      },
    );
    return result;
  }

  /**
   * Null when the lexical index is on the current tokens, else what readiness reports: the rebuild
   * under way, here or on another replica, or about to start.
   */
  async lexicalStatus(): Promise<string | null> {
    const store = this.deps.subsystems.store;
    if (!store || !(await lexicalIndexOutdated(store))) return null;
    const p = this.lexicalProgress;
    if (p)
      return `the lexical index is being rebuilt for new tokens: ${p.done.toLocaleString("en-US")} of ${p.total.toLocaleString("en-US")} trails`;
    return "the lexical index is being rebuilt for new tokens (here or by another replica): until it ends, search misses the trails it has not reached";
  }

  /** Resolves when the start-time re-fingerprinting of stored trails has finished (tests, tools). */
  refingerprinting: Promise<number> = Promise.resolve(0);
  private stopping = false;

  /**
   * After a normalizer change, stored trails get their new fingerprints in the background (by the
   * leader, until no stored trail is left on an older normalizer; see leadWhilePending); the old
   * and new fingerprints of each batch are announced to the lookup caches.
   */
  private async refingerprint(): Promise<number> {
    const { subsystems, seams } = this.deps;
    const store = subsystems.store;
    if (!store) return 0;
    // Each batch's changed fingerprints go to the lookup caches (every replica's).
    const announcing = (tick: (n: number) => void) => async (n: number, fingerprints: string[]) => {
      tick(n);
      if (fingerprints.length > 0) await seams.fingerprints.announce({ fingerprints });
    };
    const { trails: done } = await this.storedPass({
      name: "refingerprint",
      what: "re-fingerprinting",
      label: "re-fingerprinting stored trails for the current normalizer",
      unit: "trails",
      empty: { trails: 0 },
      pending: () => store.trails.anyFingerprintedBefore(NORMALIZER_VERSION),
      run: async (tick, stopped) => ({
        trails: await refingerprintStoredTrails({
          store,
          now: this.now,
          onBatch: announcing(tick),
          stopped,
        }),
      }),
    });
    // Searches stop computing the fingerprints of versions no stored trail carries any more.
    if (!this.stopping) await this.trails.checkOlderVersions().catch(() => {});
    // Once: trails indexed on the current version before enrichment recorded the previous
    // normalizers' fingerprints as aliases get them (docs/fingerprint.md).
    await this.storedPass({
      name: "previous-aliases",
      what: "recording the previous normalizers' fingerprints",
      label: "recording the previous normalizers' fingerprints of stored trails as aliases",
      unit: "trails",
      empty: { trails: 0 },
      pending: () => previousAliasesPending(store),
      run: async (tick, stopped) => ({
        trails: await recordPreviousAliasesOfStoredTrails({
          store,
          now: this.now,
          onBatch: announcing(tick),
          stopped,
        }),
      }),
    });
    return done;
  }

  /** Resolves when the start-time re-screening of stored trails has finished (tests, tools). */
  rescreening: Promise<RescreenResult> = Promise.resolve({ checked: 0, redacted: 0, rejected: 0 });

  /**
   * After a content rules change, stored trails are re-redacted and re-screened in the background
   * (by the leader, until no stored trail is left on older rules; see leadWhilePending), after the
   * re-fingerprinting, whose fingerprints it would otherwise race. It embeds what redaction changed
   * with the enrichment model, so it runs where enrichment can (the store, the vector index and the
   * model started); elsewhere the next start does it.
   */
  private async rescreen(): Promise<RescreenResult> {
    const { logger, subsystems, seams } = this.deps;
    const empty: RescreenResult = { checked: 0, redacted: 0, rejected: 0 };
    await this.refingerprinting;
    const { store, vectors, embedder } = subsystems;
    if (!store || !vectors || !embedder) return empty;
    return this.storedPass({
      name: "rescreen",
      what: "re-screening",
      label: "re-screening stored trails with the current content rules",
      unit: "trails",
      empty,
      pending: () => store.trails.anyCheckedBefore(CONTENT_RULES_VERSION),
      run: (tick, stopped) =>
        rescreenStoredTrails({
          store,
          embed: (texts) => embedder.embed(texts),
          now: this.now,
          logger,
          fingerprintChanges: seams.fingerprints,
          vectorChanges: seams.vectors,
          onBatch: tick,
          stopped,
        }),
    });
  }

  /** Resolves when the start-time re-screening of outcome notes has finished (tests, tools). */
  notesRescreening: Promise<NotesRescreenResult> = Promise.resolve({ checked: 0, redacted: 0, dropped: 0 });

  /**
   * After a content rules change, the notes of stored outcome reports are re-redacted and
   * re-screened in the background (by the leader, until no note is left on older rules), after the
   * trails' pass. Needs only the store.
   */
  private async rescreenNotes(): Promise<NotesRescreenResult> {
    const { logger, subsystems } = this.deps;
    const empty: NotesRescreenResult = { checked: 0, redacted: 0, dropped: 0 };
    await this.rescreening;
    const store = subsystems.store;
    if (!store) return empty;
    return this.storedPass({
      name: "rescreen-notes",
      what: "re-screening outcome notes",
      label: "re-screening outcome notes with the current content rules",
      unit: "notes",
      empty,
      pending: () => store.outcomes.hasNotesCheckedBefore(CONTENT_RULES_VERSION),
      run: (tick, stopped) => rescreenOutcomeNotes({ store, logger, onBatch: tick, stopped }),
    });
  }

  /**
   * After a model change, stored trails are re-embedded in the background (by the leader). A
   * failure is thrown to leadWhilePending, which tries again; a stop midway leaves the work
   * pending for the next start or another replica.
   */
  private async reindex(worker: EnrichmentWorker): Promise<void> {
    const { logger, subsystems } = this.deps;
    const total = await subsystems.store?.stats.trailsIndexed();
    // A new data directory has nothing to re-embed: no progress to show.
    const progress = total
      ? startProgress({ label: "re-embedding stored trails for the current model", unit: "trails", total, logger })
      : null;
    const n = await worker.reindex(undefined, (k) => progress?.tick(k));
    if (this.stopping) return; // the worker stopped midway: not done
    await subsystems.vectors!.markReindexed();
    progress?.finish({ trails: n });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.maintenanceTimer) clearInterval(this.maintenanceTimer);
    if (this.queueTimer) clearInterval(this.queueTimer);
    if (this.storedPassTimer) clearInterval(this.storedPassTimer);
    await this.lexicalRebuilding;
    await this.refingerprinting;
    await this.rescreening;
    await this.notesRescreening;
    await this.worker?.stop(); // ends a re-embedding in progress
    await this.reindexing;
  }

  /**
   * Search events past SEARCH_EVENT_RETENTION_MS, in batches, so a large backlog (the first purge
   * after an upgrade) never holds the writer for long. Returns how many went.
   */
  async purgeSearchEvents(store: Store): Promise<number> {
    const before = this.now() - SEARCH_EVENT_RETENTION_MS;
    let purged = 0;
    for (;;) {
      const n = await store.events.purgeSearchesBefore(before, PURGE_BATCH);
      purged += n;
      if (n < PURGE_BATCH) return purged;
    }
  }

  /**
   * Hourly, by the maintenance leader: expired drafts, tombstones and fingerprint aliases past 90
   * days, aggregate buckets nothing reads any more, search events past two days.
   */
  private async maintenance(): Promise<void> {
    const store = this.deps.subsystems.store;
    if (!store) return;
    try {
      await this.deps.seams.leadership.run("maintenance", async () => {
        const tombstones = await this.trails.purgeTombstones();
        const drafts = await this.drafts.purge();
        await store.stats.purgeBefore(this.now() - 2 * 24 * 3600 * 1000);
        const searches = await this.purgeSearchEvents(store);
        await this.admin.purgeSeries();
        // PostgreSQL's counters of the hours already over, back to one row per key. A failed fold
        // (a deadlock with a replica counting in an hour being folded, a timeout) loses nothing:
        // the hour stays spread, folded by a later run; the purges below still run.
        await store.stats.foldHoursBefore?.(this.now() - (this.now() % 3600_000)).catch((err: unknown) => {
          this.deps.logger.error("counter fold failed", { error: errorMessage(err) });
        });
        const aliases = await store.aliases.purgeBefore(this.now() - ALIAS_RETENTION_MS);
        const quotaWindows = await this.deps.seams.quotas.purgeExpired();
        if (tombstones + drafts + aliases + quotaWindows + searches > 0)
          this.deps.logger.info("purged", { tombstones, drafts, aliases, quotaWindows, search_events: searches });
      });
    } catch (err) {
      this.deps.logger.error("maintenance failed", { error: errorMessage(err) });
    }
  }

  /**
   * Calls `listener` whenever what a fingerprint lookup returns may have changed (for response
   * caches), and `lost` when changes may have been missed (everything may have changed).
   */
  onFingerprintChanged(listener: (fingerprint: string) => void, lost?: () => void): () => void {
    return this.deps.seams.fingerprints.subscribe((change) => {
      for (const fp of change.fingerprints) listener(fp);
    }, lost);
  }

  /**
   * With replicas: resolves once every change committed on any replica before the call has been
   * passed to the onFingerprintChanged listeners (a cache may then answer). Null in one process,
   * where listeners hear of every change as it commits.
   */
  fingerprintChangesCaughtUp(): Promise<void> | null {
    const feed = this.deps.seams.fingerprints;
    return feed.catchUp ? feed.catchUp() : null;
  }

  health() {
    return {
      status: "ok" as const,
      version: VERSION,
      uptime_s: Math.floor((this.now() - this.startedAt) / 1000),
      backend: this.deps.subsystems.backend,
    };
  }

  readiness(): Promise<Readiness> {
    return readiness(
      this.deps.subsystems,
      () => this.queueDepth(),
      () => this.lexicalStatus(),
    );
  }

  /** Trails waiting for enrichment. */
  async queueDepth(): Promise<number> {
    try {
      return (await this.deps.subsystems.store?.jobs.depth()) ?? 0;
    } catch {
      return 0;
    }
  }
}

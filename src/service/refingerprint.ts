// Re-fingerprinting (decisions §2): when a release changes the error normalizer, stored trails get
// the fingerprint the current normalizer gives their error, in the background at start. Progress
// lives in the rows themselves (each carries the normalizer version of its fingerprint), so a crash
// loses at most the batch in flight and the next start resumes where this one stopped. The old
// fingerprint stays an alias of the new one (purged after ALIAS_RETENTION_MS by maintenance).
import { fingerprint, NORMALIZER_VERSION } from "../core/fingerprint";
import { mergeKey } from "../core/merge-key";
import type { Logger } from "../log";
import type { Store } from "../store/ports";

/** How long an old fingerprint keeps resolving after its trail was re-fingerprinted (≥ 90 days). */
export const ALIAS_RETENTION_MS = 90 * 24 * 3600 * 1000;

const BATCH = 200;

export interface RefingerprintDeps {
  store: Store;
  logger: Logger;
  now: () => number;
  /** Called after each batch's commit with every fingerprint whose lookups changed (old and new). */
  onChanged: (fingerprint: string) => void;
  /** Stops between batches (the colony is stopping). */
  stopped?: () => boolean;
  /** Trails per transaction. */
  batchSize?: number;
}

/** Re-fingerprints every stored trail computed by an older normalizer; returns how many were updated. */
export async function refingerprintStoredTrails(deps: RefingerprintDeps): Promise<number> {
  const { store, logger, now, onChanged } = deps;
  let after = 0;
  let done = 0;
  let changed = 0;
  const size = deps.batchSize ?? BATCH;
  while (!deps.stopped?.()) {
    const batch = await store.trails.fingerprintedBefore(NORMALIZER_VERSION, after, size);
    if (batch.length === 0) break;
    await store.transaction(async (tx) => {
      const at = now();
      for (const r of batch) {
        const fp = fingerprint(r.trail.problem.error);
        await tx.trails.refingerprint(r.seq, {
          fingerprint: fp,
          normalizerVersion: NORMALIZER_VERSION,
          mergeKey: r.mergeKey === null ? null : mergeKey(r.trail),
        });
        if (fp === r.fingerprint) continue;
        changed++;
        await tx.aliases.add(r.fingerprint, fp, at);
        tx.afterCommit(() => {
          onChanged(r.fingerprint);
          onChanged(fp);
        });
      }
    });
    after = batch[batch.length - 1]!.seq;
    done += batch.length;
    if (done % (size * 25) === 0) logger.info("re-fingerprinting stored trails", { done });
    // Let requests run between batches: this is background work.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (done > 0) logger.info("re-fingerprinted stored trails for normalizer version " + NORMALIZER_VERSION, { trails: done, changed });
  return done;
}

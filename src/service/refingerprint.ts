// Re-fingerprinting (decisions §2): when a release changes the error normalizer, stored trails get
// the fingerprint the current normalizer gives their error, in the background at start. Progress
// lives in the rows themselves (each carries the normalizer version of its fingerprint), so a crash
// loses at most the batch in flight and the next start resumes where this one stopped. The old
// fingerprint stays an alias of the new one (purged after ALIAS_RETENTION_MS by maintenance).
import { EMPTY_FINGERPRINT, fingerprint, NORMALIZER_VERSION, previousNormalizerFingerprints } from "../core/fingerprint";
import { mergeKey } from "../core/merge-key";
import type { Store, TrailRecord, Transaction } from "../store/ports";

/** How long an old fingerprint keeps resolving after its trail was re-fingerprinted (≥ 90 days). */
export const ALIAS_RETENTION_MS = 90 * 24 * 3600 * 1000;

const BATCH = 200;

export interface RefingerprintDeps {
  store: Store;
  now: () => number;
  /**
   * Called after each batch's commit with its size and every fingerprint whose lookups changed
   * (old and new), for progress and the lookup caches.
   */
  onBatch: (trails: number, fingerprints: string[]) => void | Promise<void>;
  /** Stops between batches (the colony is stopping). */
  stopped?: () => boolean;
  /** Trails per transaction. */
  batchSize?: number;
}

/** Re-fingerprints every stored trail computed by an older normalizer; returns how many were updated. */
export async function refingerprintStoredTrails(deps: RefingerprintDeps): Promise<number> {
  const { store, now } = deps;
  let after = 0;
  let done = 0;
  const size = deps.batchSize ?? BATCH;
  while (!deps.stopped?.()) {
    const batch = await store.trails.fingerprintedBefore(NORMALIZER_VERSION, after, size);
    if (batch.length === 0) break;
    const changed: string[] = [];
    const mergeKeys = new Map(batch.filter((r) => r.mergeKey !== null).map((r) => [r.seq, mergeKey(r.trail)]));
    // Every version's fingerprint of each error (about 1 ms a trail) is computed before the
    // transaction, which on SQLite holds every other writer back.
    const computed = await mapYielding(batch, (r) => trailFingerprints(r.trail.problem.error));
    await store.transaction(async (tx) => {
      const at = now();
      // A worker may be indexing a new trail under one of these merge keys right now (replicas keep
      // serving while one re-fingerprints): wait for it, so the store sees that trail and this one
      // keeps its old key, rather than both taking the key and one of the two failing.
      await tx.trails.holdMergeKeys([...mergeKeys.values()]);
      for (const [i, r] of batch.entries()) changed.push(...(await refingerprintTrail(tx, r, at, computed[i])));
    });
    after = batch[batch.length - 1]!.seq;
    done += batch.length;
    await deps.onBatch(batch.length, [...new Set(changed)]);
    // Let requests run between batches: this is background work.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return done;
}

/**
 * `fn` over `items`, letting the event loop go after each: a batch of every version's fingerprints
 * is hundreds of milliseconds of CPU, which requests served meanwhile must not wait for whole.
 */
export async function mapYielding<T, R>(items: readonly T[], fn: (item: T) => R): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) {
    out.push(fn(item));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

/** An error's current fingerprint and those the previous normalizers give it (its aliases). */
export interface TrailFingerprints {
  current: string;
  previous: string[];
}

export function trailFingerprints(errorLine: string): TrailFingerprints {
  const current = fingerprint(errorLine);
  return { current, previous: previousNormalizerFingerprints(errorLine, current) };
}

/** A trail's previousNormalizerFingerprints and the fingerprint they name: its own, or the one it was merged into. */
export interface PreviousAliases {
  previous: readonly string[];
  current: string;
}

/**
 * Records each trail's `previous` fingerprints as aliases of its `current` one, in the caller's
 * transaction and in one statement (on PostgreSQL each is a round trip); returns the fingerprints
 * whose lookups changed. The one writer of that rule: enrichment and re-fingerprinting call it.
 */
export async function addPreviousNormalizerAliases(
  tx: Pick<Transaction, "aliases">,
  trails: readonly PreviousAliases[],
  at: number,
): Promise<string[]> {
  const pairs: [string, string][] = [];
  const changed = new Set<string>();
  for (const { previous, current } of trails) {
    for (const old of new Set(previous)) {
      if (old === current || old === EMPTY_FINGERPRINT) continue;
      pairs.push([old, current]);
      changed.add(old);
    }
  }
  if (pairs.length > 0) await tx.aliases.addAll(pairs, at);
  return [...changed];
}

/**
 * Gives one stored trail the fingerprint the current normalizer gives its error (and its merge key,
 * when it has one), in the caller's transaction; the old fingerprint, and those the previous
 * normalizers give the error, stay aliases of the new one. Returns the fingerprints whose lookups
 * changed. Also used when re-screening changed the error line (service/rescreen.ts).
 */
export async function refingerprintTrail(
  tx: Transaction,
  r: TrailRecord,
  at: number,
  computed: TrailFingerprints = trailFingerprints(r.trail.problem.error),
): Promise<string[]> {
  const fp = computed.current;
  await tx.trails.refingerprint(r.seq, {
    fingerprint: fp,
    normalizerVersion: NORMALIZER_VERSION,
    mergeKey: r.mergeKey === null ? null : mergeKey(r.trail),
  });
  // The stored one first (a version this build may not know, such as a redacted line's old
  // fingerprint); the empty text's fingerprint names no error, so no alias leads from it.
  const previous = [...new Set([r.fingerprint, ...computed.previous])];
  const changed = await addPreviousNormalizerAliases(tx, [{ previous, current: fp }], at);
  return fp === r.fingerprint ? changed : [...changed, fp];
}

/**
 * Where the one-off pass below is: "done", or the seq of the last indexed trail it covered. A trail
 * indexed under the current normalizer before enrichment recorded the previous normalizers'
 * fingerprints (session 14) has no alias of them; re-fingerprinting gives them only to trails of
 * an older version.
 */
export const PREVIOUS_ALIASES_KEY = "previous_normalizer_aliases";

export async function previousAliasesPending(store: Store): Promise<boolean> {
  return (await store.kv.get(PREVIOUS_ALIASES_KEY)) !== "done";
}

/**
 * Records, once, the previous normalizers' fingerprints of every indexed trail on the current
 * version as aliases of its fingerprint (addPreviousNormalizerAliases), in batches in seq order,
 * resumable from the position stored with each batch; returns how many trails it read. Trails
 * indexed meanwhile get them from enrichment, so "done" is never undone.
 */
export async function recordPreviousAliasesOfStoredTrails(deps: RefingerprintDeps): Promise<number> {
  const { store, now } = deps;
  const size = deps.batchSize ?? BATCH;
  let after = Number(await store.kv.get(PREVIOUS_ALIASES_KEY)) || 0;
  let done = 0;
  while (!deps.stopped?.()) {
    const batch = await store.trails.indexedAfter(after, size);
    if (batch.length === 0) {
      await store.kv.set(PREVIOUS_ALIASES_KEY, "done");
      break;
    }
    // An older version's trail gets them when re-fingerprinted (that pass runs first).
    const current = batch.filter((r) => r.normalizerVersion === NORMALIZER_VERSION);
    const previous = await mapYielding(current, (r) => previousNormalizerFingerprints(r.trail.problem.error, r.fingerprint));
    const changed: string[] = [];
    after = batch[batch.length - 1]!.seq;
    await store.transaction(async (tx) => {
      const at = now();
      changed.push(
        ...(await addPreviousNormalizerAliases(
          tx,
          current.map((r, i) => ({ previous: previous[i]!, current: r.fingerprint })),
          at,
        )),
      );
      await tx.kv.set(PREVIOUS_ALIASES_KEY, String(after));
    });
    done += batch.length;
    await deps.onBatch(batch.length, [...new Set(changed)]);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return done;
}

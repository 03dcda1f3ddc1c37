// Rebuilding the lexical index when the tokens change (docs/architecture.md, "The lexical index
// version"). Both stores keep BM25 term statistics counted from each document as it was tokenized
// when added, and a removal subtracts the document as the current code tokenizes it: an index
// built by other tokens (another release's, or the stemming experiment's) would subtract terms it
// never counted and keep those it did. So each database records the tokens its index was built
// with (core/lexical.ts lexicalIndexVersion, in the key-value table), and at start a colony whose
// index is on other tokens empties it and indexes every indexed trail again, in batches.
//
// Crash safety: the pass writes its progress (the version it builds and the last trail done) in the
// same transaction as each batch, so a crash loses at most the batch in flight and the next start
// resumes after the last committed one; the version is recorded as built only with the last batch.
// Live writes while it runs stay exact: each batch first holds the index's writers back, then reads
// its trails, so a trail removed or re-screened is either not read or changed after its batch
// commits; a trail indexed meanwhile is added by enrichment with the current tokens, and the pass
// leaves a document the index holds already as it is (LexicalIndex.addMissing); a removal of a
// trail the pass has not reached yet finds no document and subtracts nothing.
import { lexicalFields } from "../core/enrichment";
import { lexicalIndexVersion } from "../core/lexical";
import type { Progress } from "../progress";
import type { Store } from "../store/ports";

/** Key-value key: the tokens (lexicalIndexVersion) the whole lexical index was built with. */
export const LEXICAL_VERSION_KEY = "lexical.version";
/**
 * Key-value key of a rebuild in progress: `{"version": "...", "after": seq, "done": n}` (the last
 * trail indexed, and how many it has indexed so far: a resumed rebuild reports its progress from there).
 */
export const LEXICAL_REBUILD_KEY = "lexical.rebuild";

const BATCH = 500;

interface RebuildMark {
  version: string;
  after: number;
  /** Trails this rebuild has indexed so far (absent in marks written before it was recorded). */
  done?: number;
}

const parseMark = (raw: string | null): RebuildMark | null => {
  if (!raw) return null;
  try {
    const m = JSON.parse(raw) as RebuildMark;
    if (typeof m.version !== "string" || !Number.isSafeInteger(m.after)) return null;
    return { version: m.version, after: m.after, done: Number.isSafeInteger(m.done) && m.done! >= 0 ? m.done : 0 };
  } catch {
    return null;
  }
};

/** Whether the stored lexical index was built with other tokens than this process makes (or none recorded). */
export async function lexicalIndexOutdated(store: Store): Promise<boolean> {
  return (await store.kv.get(LEXICAL_VERSION_KEY)) !== lexicalIndexVersion();
}

export interface LexicalRebuildDeps {
  store: Store;
  /** Called after each batch's commit with the trails it indexed again. */
  onBatch?: (trails: number) => void | Promise<void>;
  /** Called once, before the first batch, when this run resumes a rebuild: the trails it had indexed already. */
  onResume?: (doneBefore: number) => void;
  /** Stops between batches (the colony is stopping): the next start resumes. */
  stopped?: () => boolean;
  /** Trails per transaction. */
  batchSize?: number;
}

export interface LexicalRebuildResult {
  /** Trails indexed again by this run. */
  trails: number;
  /** The index is on the current tokens now (false: stopped midway; the next start resumes). */
  current: boolean;
  /** This run emptied the index (false when it resumed one a crash or stop left). */
  started: boolean;
}

/**
 * Brings the lexical index to the current tokens: empties it and indexes every indexed trail
 * again, or resumes such a rebuild. Does nothing when the index is current.
 */
export async function rebuildLexicalIndex(deps: LexicalRebuildDeps): Promise<LexicalRebuildResult> {
  const { store } = deps;
  const version = lexicalIndexVersion();
  const size = deps.batchSize ?? BATCH;
  const result: LexicalRebuildResult = { trails: 0, current: false, started: false };
  let first = true;
  while (!deps.stopped?.()) {
    const step = await store.transaction(async (tx) => {
      await tx.lexical.holdWriters();
      // Read again under the writers' hold: another replica may have done this meanwhile.
      if ((await tx.kv.get(LEXICAL_VERSION_KEY)) === version) return { done: true, n: 0, resumedFrom: null };
      let mark = parseMark(await tx.kv.get(LEXICAL_REBUILD_KEY));
      if (mark?.version !== version) {
        // No rebuild to these tokens under way (a first one, or one to other tokens a crash left).
        await tx.lexical.clear();
        mark = { version, after: 0, done: 0 };
        result.started = true;
      }
      const resumedFrom = first && !result.started ? (mark.done ?? 0) : null;
      const batch = await tx.trails.indexedAfter(mark.after, size);
      if (batch.length === 0) {
        await tx.kv.set(LEXICAL_VERSION_KEY, version);
        await tx.kv.delete(LEXICAL_REBUILD_KEY);
        return { done: true, n: 0, resumedFrom };
      }
      await tx.lexical.addMissing(batch.map((r) => ({ id: r.seq, doc: lexicalFields(r.trail) })));
      const next: RebuildMark = { version, after: batch[batch.length - 1]!.seq, done: (mark.done ?? 0) + batch.length };
      await tx.kv.set(LEXICAL_REBUILD_KEY, JSON.stringify(next));
      return { done: false, n: batch.length, resumedFrom };
    });
    first = false;
    if (step.resumedFrom !== null) deps.onResume?.(step.resumedFrom);
    result.trails += step.n;
    if (step.n > 0) await deps.onBatch?.(step.n);
    if (step.done) {
      result.current = true;
      break;
    }
    // Let requests run between batches: this is background work.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return result;
}

/**
 * What a rebuild has done and has in all, for readiness, and its progress line, from the trails
 * indexed when it starts. That count is not the work: trails indexed while it runs are indexed
 * by it too, and a resumed rebuild's earlier count includes trails removed since; so the total
 * grows to what is done whenever it falls short (it said "130 of 117 trails", 111%, before).
 */
export function lexicalRebuildCounts(indexedAtStart: number, progress: Progress | null = null) {
  let done = 0;
  let total = indexedAtStart;
  return {
    get done() {
      return done;
    },
    get total() {
      return total;
    },
    /** onResume of rebuildLexicalIndex: the progress line counts what remains. */
    resumed: (doneBefore: number) => {
      done = doneBefore;
      total = Math.max(total, done);
      progress?.setTotal(Math.max(0, indexedAtStart - doneBefore));
    },
    /** onBatch of rebuildLexicalIndex. */
    indexed: (n: number) => {
      done += n;
      total = Math.max(total, done);
      progress?.tick(n);
    },
  };
}

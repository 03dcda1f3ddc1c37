// GET /v1/trails/by-fingerprint/{fp}: the hottest read, served by Bun's native router instead of
// Elysia (see server.ts) from a cache of encoded answers that is dropped per fingerprint as soon as
// the trails behind it change. Misses are cached too: most lookups are for errors nobody solved yet.
import { fingerprintAsSent } from "../../core/fingerprint";
import type { ColonyService } from "../../service/colony";
import { ServiceError } from "../../service/errors";
import { errorBody } from "../errors";

export const LOOKUP_ROUTE = "/v1/trails/by-fingerprint/:fp";

const FOUND_CACHE = "public, max-age=300";
const NOT_FOUND_CACHE = "public, max-age=60";
/** Bytes the cache may hold, entries' own memory included (a found answer is 1-3 KB). */
const MAX_CACHED_BYTES = 24 * 1024 * 1024;
/**
 * What an entry costs besides its body: the key string, the answer object, the byte array and the
 * map slot, about 300 bytes on Bun 1.4. Counting only the bodies let 24 MB of 72-byte misses hold
 * 330,000 entries, 180 MB of heap.
 */
export const ENTRY_OVERHEAD_BYTES = 320;
/** A miss shares one answer object: it costs its key and map slot only. */
export const SHARED_ENTRY_BYTES = 128;
/**
 * What an answer read through aliases costs besides its entry: its list of the fingerprints it was
 * read under (a map slot and an array), and per fingerprint listed, the string (read from a store
 * row, so held by this list alone), its array slot and its place in the reverse index (a set of its
 * own when no other answer was read under it). Measured on Bun 1.4: 300-360 bytes and 360-400
 * bytes; 96 a fingerprint was counted at first, so a cache of such answers held 2.3-3.6 times its
 * budget.
 */
export const DEPENDENT_LIST_BYTES = 360;
export const DEPENDENCY_BYTES = 420;
const dependencyCost = (fingerprints: number) => (fingerprints === 0 ? 0 : DEPENDENT_LIST_BYTES + fingerprints * DEPENDENCY_BYTES);

export interface LookupAnswer {
  status: 200 | 404;
  body: Uint8Array<ArrayBuffer>;
  cacheControl: string;
}

export class FingerprintLookups {
  // fingerprint -> answer, oldest first
  private readonly answers = new Map<string, LookupAnswer>();
  /**
   * Where eviction goes on: one live iterator, so dropping the oldest entry never rescans the
   * slots of entries deleted before (JavaScriptCore keeps them until a rehash; a fresh keys()
   * per eviction made a full cache cost ~100 µs per miss).
   */
  private evictionCursor = this.answers.keys();
  /** The 404 answers by body text (one message today): every miss shares its object. */
  private readonly misses = new Map<string, LookupAnswer>();
  private readonly shared = new WeakSet<LookupAnswer>();
  /**
   * An answer asked by an old fingerprint is read through its aliases under other (current)
   * fingerprints, and only those are announced when their trails change (an outcome report names
   * the trail's own fingerprint): so each such key is listed under every fingerprint it was read
   * under, and goes with it. `readUnder` holds the reverse, to unlist a key that leaves.
   */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly readUnder = new Map<string, string[]>();
  private bytes = 0;
  /** Bumped by every invalidation: an answer computed across one is returned but not cached. */
  private generation = 0;

  private readonly maxBytes: number;

  constructor(
    private readonly service: ColonyService,
    opts: { maxBytes?: number } = {},
  ) {
    this.maxBytes = opts.maxBytes ?? MAX_CACHED_BYTES;
    service.onFingerprintChanged(
      (fp) => this.forget(fp),
      () => this.forgetAll(),
    );
  }

  /**
   * With replicas, what the others committed must be read before a cached answer is given (one
   * query): a client told `indexed` by one replica finds the trail on every other. Null in one
   * process. Never rejects: should that read fail (the database away), the cache answers as it
   * stands, as it would with the notices cut. The server starts it as a lookup arrives, beside the
   * quota's round trip.
   */
  catchUp(): Promise<void> | null {
    const caughtUp = this.service.fingerprintChangesCaughtUp();
    return caughtUp ? caughtUp.then(noop, noop) : null;
  }

  /**
   * The answer for a lookup: at once from the cache, else read from the store, once `caughtUp`
   * (a catch-up begun after the request arrived) is done. A malformed fingerprint rejects with
   * 400 invalid_request (never cached).
   */
  answer(sent: string, caughtUp: Promise<void> | null = this.catchUp()): LookupAnswer | Promise<LookupAnswer> {
    // Cached under the fingerprint as the colony writes it: an entry under a padded or upper-case
    // spelling would never be dropped when the trails behind it change (invalidation names the
    // colony's form), and would stay stale for the answer's 300 s.
    const fp = fingerprintAsSent(sent) ?? sent;
    if (caughtUp) return caughtUp.then(() => this.answers.get(fp) ?? this.load(fp));
    return this.answers.get(fp) ?? this.load(fp);
  }

  private async load(fp: string): Promise<LookupAnswer> {
    const generation = this.generation;
    const resolved = new Set<string>();
    const answer = await this.compute(fp, resolved);
    // The trails changed while this answer was read: it may be stale, so it is not kept.
    if (generation !== this.generation) return answer;
    const cached = this.answers.get(fp);
    if (cached) return cached;
    resolved.delete(fp);
    const under = [...resolved];
    const cost = this.costOf(answer) + dependencyCost(under.length);
    while (this.bytes + cost > this.maxBytes && this.answers.size > 0) this.evictOldest();
    this.answers.set(fp, answer);
    this.bytes += cost;
    if (under.length > 0) {
      this.readUnder.set(fp, under);
      for (const other of under) {
        let keys = this.dependents.get(other);
        if (!keys) this.dependents.set(other, (keys = new Set()));
        keys.add(fp);
      }
    }
    return answer;
  }

  /** The memory an entry holds: a shared miss its key and slot, any other answer its body too. */
  costOf(answer: LookupAnswer): number {
    return this.shared.has(answer) ? SHARED_ENTRY_BYTES : answer.body.length + ENTRY_OVERHEAD_BYTES;
  }

  /** Entries held. */
  get size(): number {
    return this.answers.size;
  }

  private evictOldest(): void {
    let next = this.evictionCursor.next();
    if (next.done) {
      this.evictionCursor = this.answers.keys();
      next = this.evictionCursor.next();
    }
    if (!next.done) this.drop(next.value);
  }

  /** Encoded bytes held. */
  get cachedBytes(): number {
    return this.bytes;
  }

  /** Changes may have been missed (see store/seams.ts ChangeFeed): nothing cached can be trusted. */
  private forgetAll(): void {
    this.generation++;
    this.answers.clear();
    this.dependents.clear();
    this.readUnder.clear();
    this.bytes = 0;
  }

  /**
   * The trails of `fp` changed: its answer goes, so do the answers read through aliases under it,
   * and answers being read meanwhile are not kept.
   */
  private forget(fp: string): void {
    this.generation++;
    this.drop(fp);
    const keys = this.dependents.get(fp);
    if (keys) for (const key of [...keys]) this.drop(key);
  }

  /** Removes an entry (eviction does not make other answers stale). */
  private drop(fp: string): void {
    const answer = this.answers.get(fp);
    if (!answer) return;
    this.answers.delete(fp);
    this.bytes -= this.costOf(answer);
    const under = this.readUnder.get(fp);
    if (!under) return;
    this.readUnder.delete(fp);
    this.bytes -= dependencyCost(under.length);
    for (const other of under) {
      const keys = this.dependents.get(other);
      keys?.delete(fp);
      if (keys?.size === 0) this.dependents.delete(other);
    }
  }

  /** One shared answer object per 404 body. */
  private missAnswer(text: string): LookupAnswer {
    let answer = this.misses.get(text);
    if (!answer) {
      answer = { status: 404, body: encoder.encode(text), cacheControl: NOT_FOUND_CACHE };
      this.misses.set(text, answer);
      this.shared.add(answer);
    }
    return answer;
  }

  private async compute(fp: string, resolved: Set<string>): Promise<LookupAnswer> {
    try {
      const envelope = await this.service.trails.byFingerprint(fp, resolved);
      return { status: 200, body: encode(envelope), cacheControl: FOUND_CACHE };
    } catch (err) {
      if (err instanceof ServiceError && err.code === "not_found") {
        return this.missAnswer(JSON.stringify(errorBody(err.code, err.message)));
      }
      throw err;
    }
  }
}

const noop = () => {};
const encoder = new TextEncoder();
const encode = (value: unknown) => encoder.encode(JSON.stringify(value));

// GET /v1/trails/by-fingerprint/{fp}: the hottest read, served by Bun's native router instead of
// Elysia (see server.ts) from a cache of encoded answers that is dropped per fingerprint as soon as
// the trails behind it change. Misses are cached too: most lookups are for errors nobody solved yet.
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
  answer(fp: string, caughtUp: Promise<void> | null = this.catchUp()): LookupAnswer | Promise<LookupAnswer> {
    if (caughtUp) return caughtUp.then(() => this.answers.get(fp) ?? this.load(fp));
    return this.answers.get(fp) ?? this.load(fp);
  }

  private async load(fp: string): Promise<LookupAnswer> {
    const generation = this.generation;
    const answer = await this.compute(fp);
    // The trails changed while this answer was read: it may be stale, so it is not kept.
    if (generation !== this.generation) return answer;
    const cached = this.answers.get(fp);
    if (cached) return cached;
    const cost = this.costOf(answer);
    while (this.bytes + cost > this.maxBytes && this.answers.size > 0) this.evictOldest();
    this.answers.set(fp, answer);
    this.bytes += cost;
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
    this.bytes = 0;
  }

  /** The trails of `fp` changed: its answer goes, and answers being read meanwhile are not kept. */
  private forget(fp: string): void {
    this.generation++;
    this.drop(fp);
  }

  /** Removes an entry (eviction does not make other answers stale). */
  private drop(fp: string): void {
    const answer = this.answers.get(fp);
    if (!answer) return;
    this.answers.delete(fp);
    this.bytes -= this.costOf(answer);
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

  private async compute(fp: string): Promise<LookupAnswer> {
    try {
      const envelope = await this.service.trails.byFingerprint(fp);
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

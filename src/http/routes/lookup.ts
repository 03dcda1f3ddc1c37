// GET /v1/trails/by-fingerprint/{fp}: the hottest read, served by Bun's native router instead of
// Elysia (see server.ts) from a cache of encoded answers that is dropped per fingerprint as soon as
// the trails behind it change. Misses are cached too: most lookups are for errors nobody solved yet.
import type { ColonyService } from "../../service/colony";
import { ServiceError } from "../../service/errors";
import { errorBody } from "../errors";

export const LOOKUP_ROUTE = "/v1/trails/by-fingerprint/:fp";

const FOUND_CACHE = "public, max-age=300";
const NOT_FOUND_CACHE = "public, max-age=60";
/** Bytes of encoded answers held (a found answer is 1-3 KB, a miss under 100 bytes). */
const MAX_CACHED_BYTES = 24 * 1024 * 1024;

export interface LookupAnswer {
  status: 200 | 404;
  body: Uint8Array<ArrayBuffer>;
  cacheControl: string;
}

export class FingerprintLookups {
  // fingerprint -> answer, oldest first
  private readonly answers = new Map<string, LookupAnswer>();
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
   * The answer for a lookup: at once from the cache, else read from the store. A malformed
   * fingerprint rejects with 400 invalid_request (never cached).
   */
  answer(fp: string): LookupAnswer | Promise<LookupAnswer> {
    return this.answers.get(fp) ?? this.load(fp);
  }

  private async load(fp: string): Promise<LookupAnswer> {
    const generation = this.generation;
    const answer = await this.compute(fp);
    // The trails changed while this answer was read: it may be stale, so it is not kept.
    if (generation !== this.generation) return answer;
    const cached = this.answers.get(fp);
    if (cached) return cached;
    while (this.bytes + answer.body.length > this.maxBytes && this.answers.size > 0) {
      this.forget(this.answers.keys().next().value!);
    }
    this.answers.set(fp, answer);
    this.bytes += answer.body.length;
    return answer;
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

  private forget(fp: string): void {
    this.generation++;
    const answer = this.answers.get(fp);
    if (!answer) return;
    this.answers.delete(fp);
    this.bytes -= answer.body.length;
  }

  private async compute(fp: string): Promise<LookupAnswer> {
    try {
      const envelope = await this.service.trails.byFingerprint(fp);
      return { status: 200, body: encode(envelope), cacheControl: FOUND_CACHE };
    } catch (err) {
      if (err instanceof ServiceError && err.code === "not_found") {
        return { status: 404, body: encode(errorBody(err.code, err.message)), cacheControl: NOT_FOUND_CACHE };
      }
      throw err;
    }
  }
}

const encoder = new TextEncoder();
const encode = (value: unknown) => encoder.encode(JSON.stringify(value));

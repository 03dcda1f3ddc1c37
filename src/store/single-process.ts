// The in-process versions of the seams in ./seams.ts: what one colony process uses today. Each
// assumes it is the only process on its data: counters in memory, feeds as plain listeners, the
// one worker takes the oldest jobs, and this process always leads.
import type { JobQueue } from "./ports";
import type { ChangeFeed, ClaimedJob, JobClaims, Leadership, QuotaCounters, QuotaDecision, QuotaWindow, Seams } from "./seams";

interface Window {
  start: number;
  used: number;
}

/**
 * The most windows a limiter holds: about 150 bytes each, so 15 MB at most per quota whatever the
 * number of client addresses (an IPv6 client has billions to rotate through).
 */
export const MAX_QUOTA_WINDOWS = 100_000;

/**
 * Fixed-window quotas per key (client address), in memory. A restart forgets the windows, which
 * errs on the side of the client; the windows are short (a minute or an hour).
 *
 * Memory is bounded without scanning: windows live in two generations. New windows go into the
 * current one; once a window length has passed, the current generation becomes the previous one
 * and the previous one is dropped: every window in it started more than a window length ago, so
 * it had expired. When the current generation reaches half of `maxWindows` first, it is rotated
 * early and the oldest windows are forgotten (their clients start afresh: again on the client's
 * side). While idle, a timer keeps rotating, so the windows of a burst are gone two window
 * lengths later. Looking at a quota (peek) never stores a window. (Evicting the oldest entry of
 * one Map instead costs a scan over deleted slots in JavaScriptCore: seconds per 100,000.)
 */
export class FixedWindowLimiter implements QuotaWindow {
  private current = new Map<string, Window>();
  private previous = new Map<string, Window>();
  private rotatedAt: number;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxWindows = MAX_QUOTA_WINDOWS,
  ) {
    this.rotatedAt = now();
  }

  /** Windows held (for tests and benchmarks). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  private state(w: Window, t: number, allowed: boolean): QuotaDecision {
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - w.used),
      reset: Math.max(1, Math.ceil((w.start + this.windowMs - t) / 1000)),
    };
  }

  private find(key: string, t: number): Window | undefined {
    const w = this.current.get(key) ?? this.previous.get(key);
    return w && t - w.start < this.windowMs ? w : undefined;
  }

  private rotateIfDue(t: number): void {
    const elapsed = t - this.rotatedAt;
    if (elapsed < this.windowMs && this.current.size < this.maxWindows / 2) return;
    // Two window lengths without a rotation: the current generation has expired as well.
    this.previous = elapsed >= 2 * this.windowMs ? new Map() : this.current;
    this.current = new Map();
    this.rotatedAt = t;
  }

  /** Counts one use when the quota allows it. */
  take(key: string): QuotaDecision {
    const t = this.now();
    this.rotateIfDue(t);
    let w = this.find(key, t);
    if (!w) {
      w = { start: t, used: 0 };
      this.current.set(key, w);
      this.armIdleRotation();
    }
    if (w.used >= this.limit) return this.state(w, t, false);
    w.used++;
    return this.state(w, t, true);
  }

  /** The current state without counting a use. */
  peek(key: string): QuotaDecision {
    const t = this.now();
    const w = this.find(key, t) ?? { start: t, used: 0 };
    return this.state(w, t, w.used < this.limit);
  }

  /** While windows are held, a timer (not keeping the process alive) rotates the generations. */
  private armIdleRotation(): void {
    if (this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.rotateIfDue(this.now());
      if (this.size > 0) this.armIdleRotation();
    }, this.windowMs);
    this.idleTimer.unref?.();
  }
}

export class InMemoryQuotaCounters implements QuotaCounters {
  constructor(private readonly now: () => number = Date.now) {}

  window(_quota: string, limit: number, windowMs: number): FixedWindowLimiter {
    return new FixedWindowLimiter(limit, windowMs, this.now);
  }

  /** The in-memory windows drop themselves (FixedWindowLimiter rotates its generations). */
  async purgeExpired(): Promise<number> {
    return 0;
  }
}

/** Listeners in this process; `announce` calls them before it resolves. */
export class LocalChangeFeed<T> implements ChangeFeed<T> {
  private readonly listeners = new Set<(change: T) => void>();

  async announce(change: T): Promise<void> {
    for (const listener of this.listeners) listener(change);
  }

  subscribe(listener: (change: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The only worker takes the oldest waiting jobs; nothing to hold, so a release changes nothing. */
export class SingleWorkerClaims implements JobClaims {
  constructor(private readonly jobs: JobQueue) {}

  claim(limit: number): Promise<ClaimedJob[]> {
    return this.jobs.next(limit);
  }

  async release(_trailSeqs: number[]): Promise<void> {}
}

/** This process always leads; a task still running is not started a second time. */
export class SoleLeader implements Leadership {
  private readonly running = new Set<string>();

  async run(name: string, task: () => Promise<void>): Promise<boolean> {
    if (this.running.has(name)) return false;
    this.running.add(name);
    try {
      await task();
      return true;
    } finally {
      this.running.delete(name);
    }
  }
}

/** The seams of a colony that is the only process on its data. */
export function singleProcessSeams(jobs: JobQueue | null, now: () => number = Date.now): Seams {
  return {
    quotas: new InMemoryQuotaCounters(now),
    fingerprints: new LocalChangeFeed(),
    vectors: new LocalChangeFeed(),
    jobClaims: jobs ? new SingleWorkerClaims(jobs) : null,
    leadership: new SoleLeader(),
  };
}

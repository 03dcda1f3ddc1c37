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
 * Fixed-window quotas per key (client address), in memory. A restart forgets the windows, which
 * errs on the side of the client; the windows are short (a minute or an hour).
 */
export class FixedWindowLimiter implements QuotaWindow {
  private windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private window(key: string, t: number): Window {
    let w = this.windows.get(key);
    if (!w || t - w.start >= this.windowMs) {
      w = { start: t, used: 0 };
      this.windows.set(key, w);
    }
    return w;
  }

  private state(w: Window, t: number, allowed: boolean): QuotaDecision {
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - w.used),
      reset: Math.max(1, Math.ceil((w.start + this.windowMs - t) / 1000)),
    };
  }

  /** Counts one use when the quota allows it. */
  take(key: string): QuotaDecision {
    const t = this.now();
    this.sweep(t);
    const w = this.window(key, t);
    if (w.used >= this.limit) return this.state(w, t, false);
    w.used++;
    return this.state(w, t, true);
  }

  /** The current state without counting a use. */
  peek(key: string): QuotaDecision {
    const t = this.now();
    const w = this.window(key, t);
    return this.state(w, t, w.used < this.limit);
  }

  /** Drops expired windows now and then, so memory stays bounded by active clients. */
  private sweep(t: number): void {
    if (t - this.lastSweep < this.windowMs) return;
    this.lastSweep = t;
    for (const [k, w] of this.windows) if (t - w.start >= this.windowMs) this.windows.delete(k);
  }
}

export class InMemoryQuotaCounters implements QuotaCounters {
  constructor(private readonly now: () => number = Date.now) {}

  window(_quota: string, limit: number, windowMs: number): FixedWindowLimiter {
    return new FixedWindowLimiter(limit, windowMs, this.now);
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

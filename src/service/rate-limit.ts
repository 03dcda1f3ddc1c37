import type { ErrorCode } from "../core/error-codes";
import { ServiceError } from "./errors";

// Fixed-window quotas per key (client address), in memory. A restart forgets the windows, which
// errs on the side of the client; the windows are short (a minute or an hour).

export interface QuotaState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
}

export interface QuotaDecision extends QuotaState {
  allowed: boolean;
}

interface Window {
  start: number;
  used: number;
}

export class FixedWindowLimiter {
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

/** The decision when the quota allows the call; else 429 with the contract's code and Retry-After. */
export function admit(q: QuotaDecision, code: Extract<ErrorCode, `${string}_limited`>, message: string): QuotaDecision {
  if (q.allowed) return q;
  throw new ServiceError(code, message, undefined, { ...quotaHeaders(q), "Retry-After": String(q.reset) });
}

export function quotaHeaders(q: QuotaState): Record<string, string> {
  return {
    "RateLimit-Limit": String(q.limit),
    "RateLimit-Remaining": String(q.remaining),
    "RateLimit-Reset": String(q.reset),
  };
}

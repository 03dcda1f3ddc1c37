// The shared quota counters (./seams.ts PgQuotaCounters) with a bound on each use. They count in
// the replica's memory when the database fails, but a server that stopped answering does not fail:
// its queries wait, and every request waits with them in the quota check before it reaches the
// store. Past the bound, a use is counted in memory here instead (as on a failure), and the
// request goes on to meet the store's own bound (503 unavailable) or be served from a cache.
import { InMemoryQuotaCounters } from "../single-process";
import type { QuotaCounters, QuotaDecision, QuotaWindow } from "../seams";
import type { Patience } from "./failures";

/** `inner` with each use bounded by the store's patience (shared: a stalled server is known to both). */
export function boundedQuotas(inner: QuotaCounters, patience: Patience, now: () => number = Date.now): QuotaCounters {
  if (patience.timeoutMs <= 0) return inner;
  const local = new InMemoryQuotaCounters(now);
  return {
    window(quota, limit, windowMs): QuotaWindow {
      const shared = inner.window(quota, limit, windowMs);
      const fallback = local.window(quota, limit, windowMs);
      return {
        limit,
        take: (key) => within(shared.take(key), () => fallback.take(key), patience),
        peek: (key) => within(shared.peek(key), () => fallback.peek(key), patience),
      };
    },
    purgeExpired: () => inner.purgeExpired(),
  };
}

function within(
  decision: QuotaDecision | Promise<QuotaDecision>,
  fallback: () => QuotaDecision | Promise<QuotaDecision>,
  patience: Patience,
): QuotaDecision | Promise<QuotaDecision> {
  if (!(decision instanceof Promise)) return decision;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<QuotaDecision>((resolve) => {
    timer = setTimeout(() => {
      patience.unanswered();
      resolve(fallback());
    }, patience.waitMs());
  });
  // PgQuotaCounters answers from memory itself when the database fails: a decision that comes
  // is not proof the server answered, so only the store's own calls clear the stall.
  return Promise.race([decision, late]).finally(() => clearTimeout(timer));
}

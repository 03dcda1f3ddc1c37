// The metrics port: what the service core and the HTTP layer report as they work. The Prometheus
// adapter (src/ops/prometheus.ts) is wired in at start when the operator endpoints are on; the
// default records nothing. Calls sit on hot paths: an implementation must only count.
export type SearchPhase = "embed" | "vector" | "lexical" | "rank";
export type EnrichmentOutcome = "indexed" | "merged" | "rejected" | "failed";

export interface Metrics {
  /** One answered request: its route template (never the raw path), status and duration. */
  request(method: string, route: string, status: number, seconds: number): void;
  /** Time spent in one phase of a search. */
  searchPhase(phase: SearchPhase, seconds: number): void;
  /** The verdict of one enrichment attempt (`failed`: an attempt that threw; it is retried). */
  enrichment(outcome: EnrichmentOutcome): void;
  /** A request refused by a quota, by the quota's error code (rate_limited, publish_limited, draft_limited). */
  quotaRejected(quota: string): void;
}

export const NO_METRICS: Metrics = {
  request() {},
  searchPhase() {},
  enrichment() {},
  quotaRejected() {},
};

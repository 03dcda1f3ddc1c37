// The Prometheus adapter of the metrics port (src/service/metrics.ts), exposed at GET /metrics.
// prom-client keeps the registry and writes the exposition format. Requests are the one hot path
// (a cached fingerprint lookup takes ~20 µs, and prom-client's labelled observe ~0.5-1 µs): they
// are counted in plain per-series numbers here and handed to the registry as a histogram at
// scrape time, so a request costs a Map lookup and a few additions.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Gauges } from "../service/admin";
import type { EnrichmentOutcome, Metrics, SearchPhase } from "../service/metrics";

/** Request durations: from a cached lookup (~20 µs) to a slow search (~1 s). */
export const HTTP_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const SEARCH_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

class RequestSeries {
  count = 0;
  sum = 0;
  /** Per bucket, not cumulative; the last one is +Inf. */
  readonly counts = new Float64Array(HTTP_BUCKETS.length + 1);
  constructor(readonly labels: { method: string; route: string; status: string }) {}
}

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

/** A metric of prom-client's registry whose samples are computed when it is scraped. */
function scraped(name: string, help: string, type: "counter" | "histogram", samples: () => Sample[]) {
  return {
    name,
    help,
    type,
    aggregator: "sum" as const,
    get: async () => ({ name, help, type, aggregator: "sum" as const, values: samples() }),
    reset() {},
  };
}

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  /** route → method → status → series: three Map lookups cost less than building a string key. */
  private readonly requests = new Map<string, Map<string, Map<number, RequestSeries>>>();
  private readonly searchPhases: Histogram<"phase">;
  private readonly enrichments: Counter<"outcome">;
  private readonly quotas: Counter<"quota">;
  private readonly queueDepth: Gauge;
  private readonly trails: Gauge<"state">;
  private readonly storeBytes: Gauge;

  constructor(private readonly gauges: () => Promise<Gauges>) {
    const registers = [this.registry];
    this.registry.registerMetric(
      scraped("colony_http_requests_total", "Requests answered, by method, route template and status.", "counter", () =>
        this.allSeries().map((s) => ({ labels: s.labels, value: s.count })),
      ) as never,
    );
    this.registry.registerMetric(
      scraped(
        "colony_http_request_duration_seconds",
        "Time from receiving a request to its answer, by method, route template and status.",
        "histogram",
        () => this.allSeries().flatMap((s) => histogramSamples("colony_http_request_duration_seconds", s)),
      ) as never,
    );
    this.searchPhases = new Histogram({
      name: "colony_search_phase_duration_seconds",
      help: "Time spent in each phase of a search: embed (the query's embedding), lexical, vector, rank (fusion and loading results).",
      labelNames: ["phase"],
      buckets: SEARCH_BUCKETS,
      registers,
    });
    this.enrichments = new Counter({
      name: "colony_enrichment_outcomes_total",
      help: "Enrichment verdicts (indexed, merged, rejected) and failed attempts (retried, rejected after 5).",
      labelNames: ["outcome"],
      registers,
    });
    this.quotas = new Counter({
      name: "colony_quota_rejections_total",
      help: "Requests refused by a quota, by its error code (rate_limited, publish_limited, draft_limited).",
      labelNames: ["quota"],
      registers,
    });
    this.queueDepth = new Gauge({ name: "colony_queue_depth", help: "Trails waiting for enrichment.", registers });
    this.trails = new Gauge({
      name: "colony_trails",
      help: "Trails by state; removed: tombstones held (trails removed in the last 90 days).",
      labelNames: ["state"],
      registers,
    });
    this.storeBytes = new Gauge({ name: "colony_store_bytes", help: "Bytes the store takes on disk (database and WAL).", registers });
    // The process: CPU, resident memory, open files, heap, event-loop lag (prom-client's defaults).
    collectDefaultMetrics({ register: this.registry });
    // Every label value known up front shows as 0 before it first happens, so rates work from the start.
    for (const o of ["indexed", "merged", "rejected", "failed"]) this.enrichments.inc({ outcome: o }, 0);
    for (const q of ["rate_limited", "publish_limited", "draft_limited"]) this.quotas.inc({ quota: q }, 0);
  }

  request(method: string, route: string, status: number, seconds: number): void {
    let series = this.requests.get(route)?.get(method)?.get(status);
    if (series === undefined) series = this.newSeries(method, route, status);
    series.count++;
    series.sum += seconds;
    let i = 0;
    while (i < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[i]!) i++;
    series.counts[i]!++;
  }

  private newSeries(method: string, route: string, status: number): RequestSeries {
    const series = new RequestSeries({ method, route, status: String(status) });
    let byMethod = this.requests.get(route);
    if (!byMethod) this.requests.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    byStatus.set(status, series);
    return series;
  }

  private allSeries(): RequestSeries[] {
    return [...this.requests.values()].flatMap((m) => [...m.values()].flatMap((s) => [...s.values()]));
  }

  searchPhase(phase: SearchPhase, seconds: number): void {
    this.searchPhases.observe({ phase }, seconds);
  }

  enrichment(outcome: EnrichmentOutcome): void {
    this.enrichments.inc({ outcome });
  }

  quotaRejected(quota: string): void {
    this.quotas.inc({ quota });
  }

  /** The exposition text, with the gauges read now. */
  async render(): Promise<string> {
    const g = await this.gauges();
    this.queueDepth.set(g.queue_depth);
    for (const [state, n] of Object.entries(g.trails_by_state)) this.trails.set({ state }, n);
    this.storeBytes.set(g.store_bytes);
    return this.registry.metrics();
  }
}

function histogramSamples(name: string, s: RequestSeries): Sample[] {
  const out: Sample[] = [];
  let cumulative = 0;
  for (let i = 0; i < HTTP_BUCKETS.length; i++) {
    cumulative += s.counts[i]!;
    out.push({ labels: { ...s.labels, le: HTTP_BUCKETS[i]! }, value: cumulative, metricName: `${name}_bucket` });
  }
  out.push({ labels: { ...s.labels, le: "+Inf" }, value: s.count, metricName: `${name}_bucket` });
  out.push({ labels: s.labels, value: s.sum, metricName: `${name}_sum` });
  out.push({ labels: s.labels, value: s.count, metricName: `${name}_count` });
  return out;
}

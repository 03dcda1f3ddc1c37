// What the operator sees (GET /metrics, the console's /v1/admin/… endpoints): the state of the
// colony, hourly series, the explained search and a trail's whole record. Every call checks the
// operator token first (src/service/operator.ts).
import { Type, type Static } from "@sinclair/typebox";
import { parseQuery } from "../core/trail";
import { SERIES, type SeriesName, type Store, type TrailStatus } from "../store/ports";
import { requireStore, ServiceError } from "./errors";
import type { FeedService } from "./feed";
import { authorizeOperator } from "./operator";
import type { SearchService } from "./search";
import type { TrailService } from "./trails";

const HOUR_MS = 3600_000;
/** Series are kept this long (the hourly maintenance drops older points). */
export const SERIES_RETENTION_MS = 30 * 24 * HOUR_MS;
const HISTORY_LIMIT = 100;

/** Query of GET /v1/admin/series. */
export const SeriesQuery = Type.Object({
  hours: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 720, default: 48, description: "how many hours back, the current one included" }),
  ),
});

export interface Gauges {
  queue_depth: number;
  /** `removed`: tombstones held (trails removed in the last 90 days). */
  trails_by_state: Record<TrailStatus | "removed", number>;
  store_bytes: number;
}

export interface AdminDeps {
  store: Store | null;
  adminToken: string | null;
  now: () => number;
  trails: TrailService;
  search: SearchService;
  feed: FeedService;
  queueDepth: () => Promise<number>;
}

export class AdminService {
  constructor(private readonly deps: AdminDeps) {}

  private get store(): Store {
    return requireStore(this.deps.store);
  }

  /** 501 without an operator token configured, 401 for a missing or wrong one. */
  authorize(authorization: string | null): void {
    authorizeOperator(this.deps.adminToken, authorization);
  }

  /** The gauges of /metrics and the console (no token check: the caller has made it). */
  async gauges(): Promise<Gauges> {
    const store = this.store;
    return {
      queue_depth: await this.deps.queueDepth(),
      trails_by_state: { ...(await store.trails.countByStatus()), removed: await store.tombstones.count() },
      store_bytes: await store.sizeBytes(),
    };
  }

  /** GET /v1/admin/overview: the gauges and the public counters. */
  async overview(authorization: string | null) {
    this.authorize(authorization);
    return { ...(await this.gauges()), stats: await this.deps.feed.stats() };
  }

  /** GET /v1/admin/series: one row per hour (oldest first, empty hours included) of every series. */
  async series(authorization: string | null, query: object) {
    this.authorize(authorization);
    const parsed = parseQuery(SeriesQuery, query as Record<string, unknown>);
    if (!parsed.ok) throw new ServiceError("invalid_request", "the query parameters are not valid", parsed.details);
    const hours = (parsed.value as Static<typeof SeriesQuery>).hours ?? 48;
    const current = Math.floor(this.deps.now() / HOUR_MS) * HOUR_MS;
    const first = current - (hours - 1) * HOUR_MS;
    const rows = new Map<number, Record<SeriesName, number>>();
    for (let h = first; h <= current; h += HOUR_MS) {
      rows.set(h, Object.fromEntries(SERIES.map((n) => [n, 0])) as Record<SeriesName, number>);
    }
    for (const p of await this.store.stats.series(first)) {
      const row = rows.get(p.hour);
      if (row) row[p.name] = p.value;
    }
    return { series: [...SERIES], hours: [...rows].map(([hour, values]) => ({ hour: new Date(hour).toISOString(), ...values })) };
  }

  /** POST /v1/admin/search: the search with each result's ranking terms; not recorded as a search. */
  async explainSearch(authorization: string | null, body: unknown) {
    this.authorize(authorization);
    return this.deps.search.explain(body);
  }

  /** GET /v1/admin/trails/{id}: the status record, its author, its job, its reports and its events. */
  async trail(authorization: string | null, trailId: string) {
    this.authorize(authorization);
    const status = await this.deps.trails.status(trailId);
    // status() answered, so the id is a UUID; its stored form is the one status() reports.
    const id = status.trail_id as string;
    if (status.status === "removed") return { ...status, reports: [], history: await this.history(id) };
    const store = this.store;
    const record = (await store.trails.byId(id))!;
    const outcomes = await store.outcomes.forTrail(record.seq, HISTORY_LIMIT);
    return {
      ...status,
      author: record.author,
      indexed_at: record.indexedAt === null ? null : new Date(record.indexedAt).toISOString(),
      reinforced_at: record.reinforcedAt === null ? null : new Date(record.reinforcedAt).toISOString(),
      reports: outcomes.map((o) => ({
        outcome: o.outcome,
        counted: o.counted,
        agent: o.agent,
        model: o.model,
        notes: o.notes,
        at: new Date(o.at).toISOString(),
      })),
      history: await this.history(id),
    };
  }

  private async history(trailId: string) {
    return (await this.store.events.forTrail(trailId, HISTORY_LIMIT)).map((e) => ({
      kind: e.kind,
      agent: e.agent,
      text: e.text,
      at: new Date(e.at).toISOString(),
    }));
  }

  /** Samples the queue for the console's chart (its hourly peak). */
  async sampleQueue(): Promise<void> {
    const depth = await this.deps.queueDepth();
    if (depth > 0) await this.store.stats.peak("queue_depth", this.deps.now(), depth);
  }

  purgeSeries(): Promise<void> {
    return this.store.stats.purgeSeriesBefore(this.deps.now() - SERIES_RETENTION_MS);
  }
}

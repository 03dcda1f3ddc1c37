// Every quota in one place (decisions §10, interface.md §7): the three quotas with their windows and
// refusals, and the one table of which route spends which. The HTTP server layer, the trail and
// draft services and the hosted MCP tools (which call those services as their caller) all ask
// this module; the counters behind it are a seam (store/seams.ts QuotaCounters).
import type { ErrorCode } from "../core/error-codes";
import type { MaybePromise, QuotaCounters, QuotaDecision, QuotaState, QuotaWindow } from "../store/seams";
import { ServiceError } from "./errors";
import { NO_METRICS, type Metrics } from "./metrics";

export type { QuotaDecision, QuotaState };

export type QuotaName = "general" | "publish" | "draft";

interface QuotaSpec {
  windowMs: number;
  /** The refusal: 429 with this code and Retry-After. */
  code: Extract<ErrorCode, `${string}_limited`>;
  message: string;
}

/** The quotas, counted per client address; their limits come from the configuration. */
export const QUOTAS: Record<QuotaName, QuotaSpec> = {
  /** Every HTTP request, refused or not (COLONY_RATE_LIMIT). */
  general: { windowMs: 60_000, code: "rate_limited", message: "too many requests from this address" },
  /** Trails published, directly or by approving a draft (COLONY_PUBLISH_LIMIT). */
  publish: { windowMs: 3600_000, code: "publish_limited", message: "hourly publish quota exceeded for this address" },
  /** Drafts created (COLONY_DRAFT_LIMIT). */
  draft: { windowMs: 3600_000, code: "draft_limited", message: "too many drafts from this address" },
};

/**
 * The one table of operations metered by a quota of their own, besides the general quota every
 * HTTP request spends (GET /v1/trails/by-fingerprint and POST /mcp included). `http` is the route;
 * `mcp` names the tools that reach the operation: the hosted /mcp tools call the service as their
 * caller, so they spend the same quota of the same address; the local MCP servers call the route.
 */
export const METERED = {
  publishTrail: { quota: "publish", http: "POST /v1/trails", mcp: "colony_publish (local server, COLONY_PUBLISH auto or ask)" },
  publishDraft: { quota: "publish", http: "POST /v1/drafts/:id/publish", mcp: null },
  createDraft: { quota: "draft", http: "POST /v1/drafts", mcp: "colony_publish (hosted /mcp)" },
} as const satisfies Record<string, { quota: QuotaName; http: string; mcp: string | null }>;

export type MeteredOperation = keyof typeof METERED;

/**
 * "POST /v1/drafts/:id/publish" → the method and a pattern for the path, with or without the
 * trailing slash the router also serves it with.
 */
const ROUTES = Object.entries(METERED).map(([operation, m]) => {
  const [method, template] = m.http.split(" ") as [string, string];
  const pattern = new RegExp(`^${template.replace(/:[a-z]+/g, "[^/]+")}/?$`);
  return { operation: operation as MeteredOperation, method, pattern };
});

/** The metered operation behind an HTTP request, or null for one that spends only the general quota. */
export function operationOfRoute(method: string, path: string): MeteredOperation | null {
  for (const r of ROUTES) if (r.method === method && r.pattern.test(path)) return r.operation;
  return null;
}

export type QuotaLimits = Record<QuotaName, number>;

/**
 * How many searches of one address an hour count under their error_type in the hot labels (and
 * name it in their activity event); the rest count under their top result's category. One address
 * at the general quota otherwise added 864,000 distinct labels a day, which every /v1/stats call
 * grouped (0.4 s each). It also bounds the label rows of `search_clients` one address adds. The
 * order of `hot` is not this bound's: it ranks distinct clients (HOT_LABEL_MIN_CLIENTS).
 */
export const HOT_LABELS_PER_CLIENT_PER_HOUR = 100;

/**
 * How many searches under a declared agent id one address makes count that agent as seen
 * (`agents_24h`) an hour. Agent ids are free to invent: one address at the general quota added
 * 864,000 agents a day, each a row every /v1/stats call counts. An agent seen earlier in the hour
 * stays counted.
 */
export const AGENTS_SEEN_PER_CLIENT_PER_HOUR = 100;

/** The quota windows of a colony, over the counters compose.ts chose. */
export class Quotas {
  private readonly windows: Record<QuotaName, QuotaWindow>;
  /** Not a refusal: searches past it are served, their error_type is not counted (HOT_LABELS_PER_CLIENT_PER_HOUR). */
  private readonly hotLabels: QuotaWindow;
  /** Not a refusal either: searches past it do not mark their declared agent as seen (AGENTS_SEEN_PER_CLIENT_PER_HOUR). */
  private readonly agentsSeen: QuotaWindow;

  constructor(
    limits: QuotaLimits,
    counters: QuotaCounters,
    /** Where refusals are counted, per quota. */
    private readonly metrics: Metrics = NO_METRICS,
  ) {
    const make = (name: QuotaName) => counters.window(name, limits[name], QUOTAS[name].windowMs);
    this.windows = { general: make("general"), publish: make("publish"), draft: make("draft") };
    this.hotLabels = counters.window("hot_label", HOT_LABELS_PER_CLIENT_PER_HOUR, 3600_000);
    this.agentsSeen = counters.window("agent_seen", AGENTS_SEEN_PER_CLIENT_PER_HOUR, 3600_000);
  }

  /** Counts one search of the address under a declared agent id; false once its hourly share is used. */
  async takeAgentSeen(address: string): Promise<boolean> {
    return (await this.agentsSeen.take(address)).allowed;
  }

  /** Counts one labelled search of the address; false once its hourly share of hot labels is used. */
  async takeHotLabel(address: string): Promise<boolean> {
    return (await this.hotLabels.take(address)).allowed;
  }

  /** Counts one request against the general quota (refused or not). */
  takeGeneral(address: string): MaybePromise<QuotaDecision> {
    return this.windows.general.take(address);
  }

  /**
   * Counts `count` more requests against the general quota, stopping at the first refusal, and
   * returns the last decision: the messages of a JSON-RPC batch on the hosted /mcp beyond the
   * first, each of which runs a tool as a request of its own would (one POST carried up to 100
   * searches for the price of one).
   */
  async takeGeneralMore(address: string, count: number): Promise<QuotaDecision | null> {
    let last: QuotaDecision | null = null;
    for (let i = 0; i < count; i++) {
      last = await this.windows.general.take(address);
      if (!last.allowed) break;
    }
    return last;
  }

  /**
   * The state of the quota an HTTP request spends, when its route is metered (null otherwise),
   * without counting: the server layer shows it on every answer of that route, a 413 included.
   */
  routeState(method: string, path: string, address: string): MaybePromise<QuotaDecision> | null {
    const operation = operationOfRoute(method, path);
    return operation ? this.windows[METERED[operation].quota].peek(address) : null;
  }

  /** The state of the operation's quota for an address, without counting. */
  async state(operation: MeteredOperation, address: string): Promise<QuotaDecision> {
    return this.windows[METERED[operation].quota].peek(address);
  }

  /** The operation's quota state, or 429 with its code and Retry-After when it is used up. */
  async admit(operation: MeteredOperation, address: string): Promise<QuotaState> {
    const quota = METERED[operation].quota;
    return this.refuseUnlessAllowed(await this.windows[quota].peek(address), quota);
  }

  /** The decision when the quota allows the call; else 429 (counted in the metrics). */
  refuseUnlessAllowed(q: QuotaDecision, quota: QuotaName): QuotaDecision {
    if (!q.allowed) this.metrics.quotaRejected(QUOTAS[quota].code);
    return refuseUnlessAllowed(q, quota);
  }

  /**
   * Counts one use of the operation's quota, or 429 when it is used up. Called once the request
   * is known to be valid, right before the write: the count and the check are one step, so a
   * burst of concurrent requests cannot all pass a check made before any of them was counted (on
   * PostgreSQL, 50 concurrent publishes against a quota of 5 stored 50 when the use was counted
   * after the write). A write that fails after this (a store failure, a second approval of the
   * same draft) has used its count.
   */
  async take(operation: MeteredOperation, address: string): Promise<QuotaState> {
    const quota = METERED[operation].quota;
    return this.refuseUnlessAllowed(await this.windows[quota].take(address), quota);
  }
}

/** The decision when the quota allows the call; else 429 with the quota's code and Retry-After. */
export function refuseUnlessAllowed(q: QuotaDecision, quota: QuotaName): QuotaDecision {
  if (q.allowed) return q;
  const { code, message } = QUOTAS[quota];
  throw new ServiceError(code, message, undefined, { ...quotaHeaders(q), "Retry-After": String(q.reset) });
}

export function quotaHeaders(q: QuotaState): Record<string, string> {
  return {
    "RateLimit-Limit": String(q.limit),
    "RateLimit-Remaining": String(q.remaining),
    "RateLimit-Reset": String(q.reset),
  };
}

// What the MCP tools need from a colony, behind one small interface with two adapters: in-process
// (the hosted /mcp route calls the service core directly, with the caller's address and agent id,
// so quotas apply as for the HTTP API and nothing loops back over HTTP) and HTTP (the local stdio
// server and the standalone HTTP server talk to COLONY_URL).
import { isRetryable } from "../core/error-codes";
import type { OutcomeReport, SearchRequest, Trail, ValidationDetail } from "../core/trail";
import type { ColonyService } from "../service/colony";
import { toServiceError, type Caller } from "../service/errors";
import type { SearchEnvelope } from "../service/trails";
import { errorMessage } from "../core/error-message";

export interface OutcomeResult {
  trail_id: string;
  strength: number;
  outcomes: { worked: number; partially_worked: number; failed: number };
  counted: boolean;
}

export interface DraftCreated {
  draft_id: string;
  approve_url: string;
  expires_in: number;
  fingerprint: string;
  redactions: Record<string, number>;
  risk: { level: string; flags: { command_index: number | null; flag: string; level: string; detail: string }[] };
  trail: Trail;
}

export interface PublishAccepted {
  trail_id: string;
  fingerprint: string;
  status: string;
  status_url: string;
}

/** GET /v1/trails/{id} (decisions §5); only the fields the tools read are typed. */
export interface TrailStatus {
  trail_id: string;
  status: "queued" | "indexed" | "merged" | "rejected" | "removed";
  merged_into?: string;
  reasons?: string[];
  strength?: number;
  category?: string;
  [k: string]: unknown;
}

/** GET /v1/drafts/{id} (decisions §7). */
export interface DraftStatus {
  draft_id: string;
  state: "pending" | "published" | "discarded";
  expires_in?: number;
  trail_id?: string;
  trail_status?: string;
  reasons?: string[];
  [k: string]: unknown;
}

export interface ColonyClient {
  /** Where the colony is, for messages ("in-process" when hosted). */
  readonly target: string;
  /**
   * This client for one tool call: its requests to the colony end when `signal` aborts (the call
   * was cancelled, or its POST ran past the deadline), and none waits past `deadline` (epoch ms).
   */
  forCall(signal: AbortSignal, deadline?: number): ColonyClient;
  search(request: SearchRequest): Promise<SearchEnvelope>;
  report(trailId: string, report: OutcomeReport): Promise<OutcomeResult>;
  createDraft(trail: Trail): Promise<DraftCreated>;
  publish(trail: Trail): Promise<PublishAccepted>;
  trailStatus(trailId: string): Promise<TrailStatus>;
  draftStatus(draftId: string): Promise<DraftStatus>;
}

/**
 * A refusal or failure of the colony. Status 0 when it gave no answer: code "unreachable" (no
 * connection), "timeout" (no answer within the time limit) or "abandoned" (the call ended first).
 */
export class ColonyClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
    readonly details: ValidationDetail[] = [],
  ) {
    super(message);
  }

  /** The contract's table says the same request may succeed later (429, 503). */
  get retryable(): boolean {
    return isRetryable(this.code);
  }
}

function fromServiceError(thrown: unknown): never {
  const err = toServiceError(thrown);
  if (err) {
    const retry = Number(err.headers["Retry-After"]);
    throw new ColonyClientError(err.status, err.code, err.message, Number.isFinite(retry) ? retry : null, err.details ?? []);
  }
  throw thrown;
}

/** Calls the service core of this process on behalf of one MCP caller (hosted mode). */
export class InProcessColonyClient implements ColonyClient {
  readonly target = "this colony";

  constructor(
    private readonly service: ColonyService,
    private readonly caller: Caller,
  ) {}

  /** The service core's work is bounded by its own store time limits (COLONY_DATABASE_TIMEOUT_MS). */
  forCall(): ColonyClient {
    return this;
  }

  private async run<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      return fromServiceError(err);
    }
  }

  search(request: SearchRequest) {
    return this.run(() => this.service.search.search(request, this.caller));
  }

  report(trailId: string, report: OutcomeReport) {
    return this.run(async () => {
      const { trail_id, strength, outcomes, counted } = await this.service.trails.reportOutcome(trailId, report, this.caller);
      return { trail_id, strength, outcomes, counted };
    });
  }

  createDraft(trail: Trail) {
    return this.run(async () => (await this.service.drafts.create(trail, this.caller)).body as DraftCreated);
  }

  publish(trail: Trail) {
    return this.run(async () => (await this.service.trails.publish(trail, this.caller)).body);
  }

  trailStatus(trailId: string) {
    return this.run(async () => (await this.service.trails.status(trailId)) as TrailStatus);
  }

  draftStatus(draftId: string) {
    return this.run(async () => (await this.service.drafts.get(draftId)) as DraftStatus);
  }
}

export interface HttpClientOptions {
  /** Base URL of the colony, without a trailing slash. */
  baseUrl: string;
  /** Sent as X-Colony-Agent when set. */
  agentId?: string | null;
  /** Sent as X-Forwarded-For (standalone HTTP mode): honoured only by a colony with COLONY_TRUST_PROXY. */
  forwardedFor?: string | null;
  /** Per-request time limit (COLONY_CALL_TIMEOUT_MS when omitted). */
  timeoutMs?: number;
  /** Ends every request when it aborts (the tool call behind them was cancelled or abandoned). */
  signal?: AbortSignal;
  /** No request waits past this moment (epoch ms), but for a last second: the time left of the tool call's budget. */
  deadline?: number;
}

/**
 * The longest one request to the colony may take. A healthy colony answers in milliseconds, and
 * one whose database stalls answers 503 itself after COLONY_DATABASE_TIMEOUT_MS (10 s); so two
 * requests (colony_publish_status) fit in an MCP POST's deadline, and a publish with its verdict
 * wait in the 60 s an MCP client waits for a call (docs/mcp.md "Time limits").
 */
export const COLONY_CALL_TIMEOUT_MS = 15_000;

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/**
 * The colony's URL as it may be shown (tool texts, the confirmation prompt, /healthz, logs):
 * without the user and password a COLONY_URL may carry for a proxy that asks for Basic auth.
 * Requests still use the whole URL (fetch sends them as an Authorization header).
 */
export function shownColonyUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    if (url.username === "" && url.password === "") return baseUrl;
    return `${url.origin}${url.pathname === "/" ? "" : url.pathname}`;
  } catch {
    return baseUrl;
  }
}

/** Talks to a colony over its HTTP API (local stdio and standalone HTTP modes). */
export class HttpColonyClient implements ColonyClient {
  readonly target: string;

  constructor(private readonly opts: HttpClientOptions) {
    this.target = shownColonyUrl(opts.baseUrl);
  }

  forCall(signal: AbortSignal, deadline?: number): ColonyClient {
    const signals = this.opts.signal ? AbortSignal.any([this.opts.signal, signal]) : signal;
    const earliest = deadline === undefined ? this.opts.deadline : Math.min(deadline, this.opts.deadline ?? deadline);
    return new HttpColonyClient({ ...this.opts, signal: signals, deadline: earliest });
  }

  /** The time limit of the next request: the per-request limit, or less when the call's budget ends sooner. */
  private timeLimitMs(): number {
    const limit = this.opts.timeoutMs ?? COLONY_CALL_TIMEOUT_MS;
    // A request made once the budget is spent still gets a second (a last status read).
    return this.opts.deadline === undefined ? limit : Math.min(limit, Math.max(1000, this.opts.deadline - Date.now()));
  }

  private async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.opts.agentId) headers["x-colony-agent"] = this.opts.agentId;
    if (this.opts.forwardedFor) headers["x-forwarded-for"] = this.opts.forwardedFor;
    const limitMs = this.timeLimitMs();
    const timeout = AbortSignal.timeout(limitMs);
    const signal = this.opts.signal ? AbortSignal.any([timeout, this.opts.signal]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.opts.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await res.text(); // a colony that sends its headers and stalls is held to the same limit
    } catch (err) {
      throw this.noAnswer(err, timeout, limitMs);
    }
    let parsed: any = null;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {}
    if (res.ok) {
      if (parsed === null) throw new ColonyClientError(res.status, "bad_response", `the colony answered ${res.status} without a JSON body`);
      return parsed as T;
    }
    const retry = Number(res.headers.get("retry-after"));
    const error = parsed?.error;
    throw new ColonyClientError(
      res.status,
      typeof error?.code === "string" ? error.code : `http_${res.status}`,
      typeof error?.message === "string" ? error.message : `the colony answered ${res.status}`,
      res.headers.has("retry-after") && Number.isFinite(retry) ? retry : null,
      Array.isArray(error?.details) ? error.details : [],
    );
  }

  /** Why a request got no answer: a timeout and an abandoned call are not a colony that cannot be reached. */
  private noAnswer(err: unknown, timeout: AbortSignal, limitMs: number): ColonyClientError {
    const where = `the colony at ${this.target}`;
    if (timeout.aborted) {
      return new ColonyClientError(0, "timeout", `${where} did not answer within ${seconds(limitMs)} s`);
    }
    if (this.opts.signal?.aborted) return new ColonyClientError(0, "abandoned", `the request to ${where} was abandoned: the call ended`);
    return new ColonyClientError(0, "unreachable", `${where} cannot be reached (${errorMessage(err)})`);
  }

  search(request: SearchRequest) {
    return this.call<SearchEnvelope>("POST", "/v1/search", request);
  }

  /**
   * An id as one path segment. encodeURIComponent leaves "." and ".." as they are, and URL
   * parsing resolves them: a report on trail ".." went to POST /v1/outcomes. No
   * trail or draft has such an id, so it is not found, as the colony says of any unknown id.
   */
  private segment(id: string, what: "trail" | "draft"): string {
    if (id === "." || id === "..") throw new ColonyClientError(404, "not_found", `no ${what} with the id ${JSON.stringify(id)}`);
    return encodeURIComponent(id);
  }

  report(trailId: string, report: OutcomeReport) {
    return this.call<OutcomeResult>("POST", `/v1/trails/${this.segment(trailId, "trail")}/outcomes`, report);
  }

  createDraft(trail: Trail) {
    return this.call<DraftCreated>("POST", "/v1/drafts", trail);
  }

  publish(trail: Trail) {
    return this.call<PublishAccepted>("POST", "/v1/trails", trail);
  }

  trailStatus(trailId: string) {
    return this.call<TrailStatus>("GET", `/v1/trails/${this.segment(trailId, "trail")}`);
  }

  draftStatus(draftId: string) {
    return this.call<DraftStatus>("GET", `/v1/drafts/${this.segment(draftId, "draft")}`);
  }
}

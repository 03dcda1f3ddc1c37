// The outer layer around the Elysia app: client address and quota, body limit before parsing,
// agent identity, RateLimit headers on every response, and one log line per request.
import type { Server } from "bun";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { ColonyApp } from "./app";
import { readBodyLimited } from "./body";
import { clientAddress, identify } from "./client";
import { bindContext, type RequestContext } from "./context";
import { ServiceError } from "../service/errors";
import { errorResponse } from "./errors";
import { admit, FixedWindowLimiter, quotaHeaders, type QuotaState } from "../service/rate-limit";

export interface ServerDeps {
  config: Config;
  logger: Logger;
  app: ColonyApp;
  /** Server-side secret that keys the pseudonyms of client addresses. */
  pseudonymSecret: string;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export interface DrainOptions {
  /** How long no request must be in flight before the drain ends. */
  quietMs?: number;
  /** The longest the drain waits, however busy the server stays. */
  maxMs?: number;
}

export function createFetchHandler(deps: ServerDeps) {
  const general = new FixedWindowLimiter(deps.config.rateLimit, 60_000);
  let inFlight = 0;
  let draining = false;

  async function fetch(request: Request, server: Server<unknown>): Promise<Response> {
    inFlight++;
    try {
      const response = await handle(request, server);
      // While draining, each connection is closed after its answer, so no client is left with an
      // idle keep-alive connection that the final stop would reset under a request it just sent.
      if (draining) response.headers.set("Connection", "close");
      return response;
    } finally {
      inFlight--;
    }
  }

  /**
   * Before the server stops: keep accepting, answer with `Connection: close`, and wait until no
   * request has been in flight for `quietMs`. Requests a client sent just before SIGTERM may still
   * sit unread in socket buffers while the event loop is busy; stopping at once resets them.
   */
  async function drain(opts: DrainOptions = {}): Promise<void> {
    draining = true;
    const quietMs = opts.quietMs ?? 30;
    const deadline = performance.now() + (opts.maxMs ?? 3000);
    let quietSince = inFlight === 0 ? performance.now() : null;
    while (performance.now() < deadline) {
      await Bun.sleep(10);
      if (inFlight > 0) quietSince = null;
      else if (quietSince === null) quietSince = performance.now();
      else if (performance.now() - quietSince >= quietMs) return;
    }
  }

  return Object.assign(fetch, { drain });

  async function handle(request: Request, server: Server<unknown>): Promise<Response> {
    const started = performance.now();
    const address = clientAddress(request.headers, server.requestIP(request)?.address ?? null, deps.config.trustProxy);
    const decision = general.take(address);
    let quota: QuotaState = decision;
    let route = "(unmatched)";
    let response: Response;
    try {
      admit(decision, "rate_limited", "too many requests from this address");
      // Handlers read the body we already hold (size-checked); bodiless requests pass as they are.
      const inner = BODY_METHODS.has(request.method)
        ? new Request(request.url, { method: request.method, headers: request.headers, body: await readBodyLimited(request) })
        : request;
      const client = identify(request.headers, address, deps.pseudonymSecret);
      const ctx: RequestContext = { client, route, quota };
      bindContext(inner, ctx);
      response = await deps.app.handle(inner);
      route = ctx.route;
      quota = ctx.quota;
    } catch (err) {
      if (!(err instanceof ServiceError)) {
        deps.logger.error("request failed", { error: err instanceof Error ? err.message : String(err) });
      }
      response = errorResponse(err instanceof ServiceError ? err : new ServiceError(500, "internal", "internal error"));
    }
    for (const [k, v] of Object.entries(quotaHeaders(quota))) response.headers.set(k, v);
    response.headers.set("X-Content-Type-Options", "nosniff");
    deps.logger.info("request", {
      method: request.method,
      route,
      status: response.status,
      ms: Math.round((performance.now() - started) * 100) / 100,
    });
    return response;
  }
}

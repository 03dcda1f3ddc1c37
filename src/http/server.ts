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
import { FixedWindowLimiter, quotaHeaders, type QuotaState } from "../service/rate-limit";

export interface ServerDeps {
  config: Config;
  logger: Logger;
  app: ColonyApp;
  /** Server-side secret that keys the pseudonyms of client addresses. */
  pseudonymSecret: string;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function createFetchHandler(deps: ServerDeps) {
  const general = new FixedWindowLimiter(deps.config.rateLimit, 60_000);

  return async function fetch(request: Request, server: Server<unknown>): Promise<Response> {
    const started = performance.now();
    const address = clientAddress(request.headers, server.requestIP(request)?.address ?? null, deps.config.trustProxy);
    let quota: QuotaState = general.peek(address);
    let route = "(unmatched)";
    let response: Response;
    try {
      const decision = general.take(address);
      quota = decision;
      if (!decision.allowed) {
        throw new ServiceError(429, "rate_limited", "too many requests from this address", undefined, {
          "Retry-After": String(decision.reset),
        });
      }
      const body = BODY_METHODS.has(request.method) ? await readBodyLimited(request) : null;
      const client = identify(request.headers, address, deps.pseudonymSecret);
      // Handlers read the body we already hold (size-checked); bodiless requests pass as they are.
      const inner = BODY_METHODS.has(request.method)
        ? new Request(request.url, { method: request.method, headers: request.headers, body })
        : request;
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
  };
}

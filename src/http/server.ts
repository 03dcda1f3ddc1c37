// The outer layer around the Elysia app: client address and quota, body limit before parsing,
// agent identity, RateLimit headers on every response, and one log line per request.
import type { BunRequest, Server } from "bun";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { ColonyApp } from "./app";
import { readBodyLimited } from "./body";
import { hostRefusal, readableUrl, requestPath } from "./host";
import { checkAgentHeader, clientAddress, identify, type ClientIdentity } from "./client";
import { bindContext, type RequestContext } from "./context";
import { ServiceError, toServiceError } from "../service/errors";
import { type ErrorShapes, errorResponse } from "./errors";
import { quotaHeaders, type QuotaDecision, type Quotas, type QuotaState } from "../service/quotas";
import { LOOKUP_ROUTE, type FingerprintLookups, type LookupAnswer } from "./routes/lookup";
import { errorMessage } from "../core/error-message";
import { NO_METRICS, type Metrics } from "../service/metrics";

export interface ServerDeps {
  config: Config;
  logger: Logger;
  app: ColonyApp;
  lookups: FingerprintLookups;
  /** Server-side secret that keys the pseudonyms of client addresses. */
  pseudonymSecret: string;
  /** The general quota of every request, and the own quota of metered routes (service/quotas.ts). */
  quotas: Quotas;
  /** Paths whose refusals take their own shape (the MCP endpoint's JSON-RPC errors). */
  errorShapes?: ErrorShapes;
  /** Request counts and durations (NO_METRICS when metrics are off). */
  metrics?: Metrics;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export interface DrainOptions {
  /** How long no request must be in flight before the drain ends. */
  quietMs?: number;
  /** The longest the drain waits, however busy the server stays. */
  maxMs?: number;
}

/** What the outer layer knows of a request before a handler runs. */
interface Pass {
  started: number;
  address: string;
  /** The quota shown in the RateLimit headers. */
  quota: QuotaDecision;
}

export function createFetchHandler(deps: ServerDeps) {
  let inFlight = 0;
  let draining = false;
  const logRequests = deps.logger.enabled("info");
  const metrics = deps.metrics ?? NO_METRICS;
  const timed = logRequests || metrics !== NO_METRICS;

  async function fetch(request: Request, server: Server<unknown>): Promise<Response> {
    inFlight++;
    try {
      return await handle(request, server);
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

  /**
   * Routes Bun's native router serves without Elysia: fingerprint lookups are the hottest read, and
   * Elysia's dispatch cost more than the cached lookup itself. They pass the same layer, but build
   * their response with every header at once (changing a built response's headers costs ~1.5 µs each).
   */
  function lookup(request: BunRequest<typeof LOOKUP_ROUTE>, server: Server<unknown>): Response | Promise<Response> {
    return lookupOf(request.params.fp, request, server);
  }

  /** The lookup path without a fingerprint: the service refuses it as any malformed one (400). */
  function lookupWithoutFingerprint(request: Request, server: Server<unknown>): Response | Promise<Response> {
    return lookupOf("", request, server);
  }

  function lookupOf(fp: string, request: Request, server: Server<unknown>): Response | Promise<Response> {
    const begun = begin(request, server);
    if (!(begun instanceof Promise)) return lookupPassed(fp, request, begun, deps.lookups.catchUp());
    // Shared counters (replicas): the read-your-writes catch-up goes out beside the quota's round
    // trip rather than after it. Begun after the request arrived, it still sees every change
    // committed before; a refused request only wasted a read shared with the others in flight.
    const caughtUp = deps.lookups.catchUp();
    return begun.then((pass) => lookupPassed(fp, request, pass, caughtUp));
  }

  function lookupPassed(fp: string, request: Request, pass: Pass, caughtUp: Promise<void> | null): Response | Promise<Response> {
    let answer: LookupAnswer | Promise<LookupAnswer>;
    try {
      deps.quotas.refuseUnlessAllowed(pass.quota, "general");
      checkAgentHeader(request.headers); // a lookup does not use the agent, but a malformed id is still refused
      if (readableUrl(request) === null) throw hostRefusal();
      answer = deps.lookups.answer(fp, caughtUp);
    } catch (err) {
      return end(request, pass, failure(err), LOOKUP_ROUTE);
    }
    // A cache hit is answered without a promise; a miss waits for the store.
    if (answer instanceof Promise) {
      return answer.then(
        (loaded) => lookupResponse(request, pass, loaded),
        (err) => end(request, pass, failure(err), LOOKUP_ROUTE),
      );
    }
    return lookupResponse(request, pass, answer);
  }

  function lookupResponse(request: Request, pass: Pass, answer: LookupAnswer): Response {
    const headers = layerHeaders(pass.quota);
    headers["content-type"] = "application/json; charset=utf-8";
    headers["Cache-Control"] = answer.cacheControl;
    logRequest(request, pass, answer.status, LOOKUP_ROUTE);
    return new Response(answer.body, { status: answer.status, headers });
  }

  const routes = {
    [LOOKUP_ROUTE]: { GET: lookup },
    // Every other route is served with a trailing slash too (Elysia's router); this one was 404.
    [`${LOOKUP_ROUTE}/`]: { GET: lookup },
    "/v1/trails/by-fingerprint/": { GET: lookupWithoutFingerprint },
    "/v1/trails/by-fingerprint": { GET: lookupWithoutFingerprint },
  };

  return Object.assign(fetch, { drain, routes });

  /**
   * Address and general quota: counted for every request, refused or not. The in-process counters
   * answer at once; shared ones (several replicas) may need a round trip.
   */
  function begin(request: Request, server: Server<unknown>): Pass | Promise<Pass> {
    const started = timed ? performance.now() : 0;
    const peer = server.requestIP(request)?.address ?? null;
    const address = clientAddress(request, peer, deps.config.trustProxy);
    const quota = deps.quotas.takeGeneral(address);
    return quota instanceof Promise ? quota.then((q) => ({ started, address, quota: q })) : { started, address, quota };
  }

  /** 429 when the general quota is spent, 400 for a malformed agent id; else who is calling. */
  function admitClient(pass: Pass, request: Request): ClientIdentity {
    deps.quotas.refuseUnlessAllowed(pass.quota, "general");
    return identify(request.headers, pass.address, deps.pseudonymSecret);
  }

  /** The error's answer: the REST error shape, or the route's own (JSON-RPC's on the MCP endpoint). */
  function failure(err: unknown, request?: Request): Response {
    const known = toServiceError(err);
    if (known !== err) deps.logger.error("request failed", { error: errorMessage(err) });
    const answer = known ?? new ServiceError("internal");
    if (request && deps.errorShapes?.size) {
      // The path as the router matches it: `/mcp/` is the MCP route too, and its refusals are JSON-RPC.
      const path = requestPath(request);
      const render =
        deps.errorShapes.get(path) ?? (path.length > 1 && path.endsWith("/") ? deps.errorShapes.get(path.slice(0, -1)) : undefined);
      if (render) return render(answer, request);
    }
    return errorResponse(answer);
  }

  /** Headers every response carries: the RateLimit trio, nosniff, and Connection: close while draining. */
  function layerHeaders(quota: QuotaState): Record<string, string> {
    const headers = quotaHeaders(quota);
    headers["X-Content-Type-Options"] = "nosniff";
    // While draining, each connection is closed after its answer, so no client is left with an
    // idle keep-alive connection that the final stop would reset under a request it just sent.
    if (draining) headers.Connection = "close";
    return headers;
  }

  /** The log line and the request metrics. */
  function logRequest(request: Request, pass: Pass, status: number, route: string): void {
    if (!timed) return;
    const elapsed = performance.now() - pass.started;
    metrics.request(request.method, route, status, elapsed / 1000);
    if (!logRequests) return;
    deps.logger.info("request", { method: request.method, route, status, ms: Math.round(elapsed * 100) / 100 });
  }

  /** The layer's headers added to a response a handler built, and the log line. */
  function end(request: Request, pass: Pass, response: Response, route: string, quota: QuotaState = pass.quota): Response {
    for (const [k, v] of Object.entries(layerHeaders(quota))) response.headers.set(k, v);
    logRequest(request, pass, response.status, route);
    return response;
  }

  async function handle(request: Request, server: Server<unknown>): Promise<Response> {
    const begun = begin(request, server);
    const pass = begun instanceof Promise ? await begun : begun;
    let route = "(unmatched)";
    let quota: QuotaState = pass.quota;
    let response: Response;
    try {
      const url = readableUrl(request);
      if (url === null) throw hostRefusal();
      const client = admitClient(pass, request);
      let inner = request;
      if (BODY_METHODS.has(request.method)) {
        // From here on, a 413 or a malformed body shows the route's own quota, as its other answers do.
        quota = (await deps.quotas.routeState(request.method, new URL(url).pathname, pass.address)) ?? quota;
        // Handlers read the body we already hold (size-checked); bodiless requests pass as they are.
        inner = new Request(url, { method: request.method, headers: request.headers, body: await readBodyLimited(request) });
      } else if (url !== request.url) {
        inner = new Request(url, { method: request.method, headers: request.headers, signal: request.signal });
      }
      const ctx: RequestContext = { client, route, quota };
      bindContext(inner, ctx);
      response = await deps.app.handle(inner);
      route = ctx.route;
      quota = ctx.quota;
    } catch (err) {
      response = failure(err, request);
    }
    return end(request, pass, response, route, quota);
  }
}

// `colony mcp --http`: the MCP server on its own port (COLONY_MCP_PORT or --port, default 8090,
// host 127.0.0.1), talking to the colony at COLONY_URL over HTTP. Stateless like the hosted
// route; it also serves GET /healthz. Each caller's address goes to the colony as
// X-Forwarded-For (honoured only by a colony with COLONY_TRUST_PROXY), so per-client quotas hold.
// Errors on /mcp are JSON-RPC error objects (src/mcp/jsonrpc-errors.ts); a browser page of a
// foreign Origin is refused (src/mcp/origin.ts), a foreign Host too.
import type { Server } from "bun";
import { BodyParseError, parseJsonBody, readBodyLimited } from "../http/body";
import { checkAgentHeader } from "../http/client";
import { serverFallbacks } from "../http/errors";
import { hostRefusal, noRouteMessage, requestPath, routeReadAs } from "../http/host";
import { ListenError } from "../http/listen-error";
import type { Logger } from "../log";
import { ServiceError, toServiceError } from "../service/errors";
import { VERSION } from "../version";
import { HttpColonyClient, shownColonyUrl } from "./colony-client";
import { standaloneToolConfig, type McpConfig } from "./config";
import { MCP_PATH, serviceErrorAsJsonRpc } from "./jsonrpc-errors";
import { busyResponse, InFlightLimit } from "./in-flight";
import { OriginPolicy } from "./origin";
import { handleStatelessPost, MCP_REQUEST_DEADLINE_MS, methodNotAllowed } from "./stateless";
import { createToolServer } from "./tool-server";
import { errorMessage } from "../core/error-message";

export interface RunningMcpServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });

const errorJson = (status: number, code: string, message: string) => json(status, { error: { code, message } });

export function startStandalone(
  cfg: McpConfig,
  opts: { port: number; hostname?: string; logger: Logger /** Tests: the POST deadline. */; requestDeadlineMs?: number },
): RunningMcpServer {
  const tools = standaloneToolConfig(cfg);
  const startedAt = Date.now();
  const { logger } = opts;
  let allowedHosts: string[] | undefined;
  const origins = new OriginPolicy(cfg.allowedOrigins);

  async function handle(request: Request, server: Server<undefined>): Promise<Response> {
    const path = requestPath(request);
    // `/mcp/` too, as the hosted route serves it: some clients and config tools write the URL so.
    const isMcp = path === "/mcp" || path === "/mcp/";
    // Served on loopback names only, so a request without a Host is refused too.
    if (!URL.canParse(request.url)) {
      const refused = hostRefusal();
      return isMcp ? serviceErrorAsJsonRpc(refused) : errorJson(refused.status, refused.code, refused.message);
    }
    // Every path, not only /mcp (where the SDK's transport checks it, answering JSON-RPC): a
    // DNS-rebinding page reads a GET as same-origin, without Origin, and /healthz tells where the
    // colony is.
    if (!isMcp && allowedHosts && !allowedHosts.includes(request.headers.get("host") ?? "")) {
      return errorJson(403, "forbidden_host", "this server answers loopback names only (127.0.0.1, localhost, [::1])");
    }
    if (path === "/healthz") {
      if (request.method !== "GET" && request.method !== "HEAD") return errorJson(405, "method_not_allowed", "use GET");
      return json(200, {
        status: "ok",
        version: VERSION,
        uptime_s: Math.floor((Date.now() - startedAt) / 1000),
        colony_url: shownColonyUrl(cfg.colonyUrl),
      });
    }
    if (!isMcp) {
      // A path that reads as /mcp (`//mcp`, `/MCP`) is answered as /mcp answers, so an MCP client can parse it.
      if (routeReadAs(path) === MCP_PATH) return serviceErrorAsJsonRpc(new ServiceError("not_found", noRouteMessage(path)));
      return errorJson(404, "not_found", noRouteMessage(path));
    }
    if (request.method === "OPTIONS") return origins.preflight(request);
    const refused = origins.refusal(request);
    if (refused) return refused;
    return origins.withCors(request, await handleMcp(request, server));
  }

  /** POSTs being handled, from before their body is read until their answer is made: one client, one count. */
  const inFlight = new InFlightLimit(cfg.maxConcurrent);

  async function handleMcp(request: Request, server: Server<undefined>): Promise<Response> {
    if (request.method !== "POST") return methodNotAllowed();
    // Each POST may hold its connection, a server and requests to the colony up to its deadline;
    // uncapped, a client that keeps sending them (a retry loop, a hostile local process) piles up
    // without bound. One more than the cap is refused at once, unread.
    if (inFlight.tryEnter("") !== null) return busyResponse(cfg.maxConcurrent, "this server");
    try {
      return await handleCountedPost(request, server);
    } finally {
      inFlight.leave("");
    }
  }

  async function handleCountedPost(request: Request, server: Server<undefined>): Promise<Response> {
    let parsed: unknown;
    let agentHeader: string | null;
    try {
      agentHeader = checkAgentHeader(request.headers);
      const bytes = await readBodyLimited(request);
      try {
        parsed = parseJsonBody(new TextDecoder().decode(bytes ?? new Uint8Array()));
      } catch (err) {
        throw err instanceof ServiceError ? err : new BodyParseError();
      }
    } catch (err) {
      if (err instanceof ServiceError) return serviceErrorAsJsonRpc(err);
      throw err;
    }
    const client = new HttpColonyClient({
      baseUrl: cfg.colonyUrl,
      agentId: agentHeader ?? cfg.agentId,
      forwardedFor: server.requestIP(request)?.address ?? null,
    });
    const deadlineMs = opts.requestDeadlineMs ?? MCP_REQUEST_DEADLINE_MS;
    // Bun resets a connection whose answer takes longer than its idle timeout (10 s): this one
    // lives until its deadline's answer is sent.
    server.timeout(request, Math.ceil(deadlineMs / 1000) + 5);
    return handleStatelessPost(createToolServer(client, tools), request, parsed, allowedHosts, deadlineMs);
  }

  const hostname = opts.hostname ?? "127.0.0.1";
  let server: Server<undefined>;
  try {
    server = listen();
  } catch (err) {
    throw ListenError.from(err, hostname, opts.port, "COLONY_MCP_PORT (or --port N)");
  }
  function listen() {
    return Bun.serve({
      hostname,
      port: opts.port,
      ...serverFallbacks(logger, serviceErrorAsJsonRpc),
      async fetch(request, srv) {
        const started = performance.now();
        let response: Response;
        try {
          response = await handle(request, srv);
        } catch (err) {
          logger.error("mcp request failed", { error: errorMessage(err) });
          response = serviceErrorAsJsonRpc(toServiceError(err) ?? new ServiceError("internal"));
        }
        logger.info("request", {
          method: request.method,
          route: requestPath(request) === "/healthz" ? "/healthz" : "/mcp",
          status: response.status,
          ms: Math.round((performance.now() - started) * 100) / 100,
        });
        return response;
      },
    });
  }
  const url = `http://${server.hostname}:${server.port}`;
  // On loopback, a web page could reach this port through DNS rebinding; its requests carry the
  // page's host name, so only loopback names are served.
  allowedHosts =
    (opts.hostname ?? "127.0.0.1") === "127.0.0.1"
      ? [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`]
      : undefined;
  logger.info("colony mcp listening", { url: `${url}/mcp`, colony_url: shownColonyUrl(cfg.colonyUrl) });
  return {
    url,
    port: server.port!,
    async stop() {
      await server.stop(false);
    },
  };
}

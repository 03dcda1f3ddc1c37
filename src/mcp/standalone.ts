// `colony mcp --http`: the MCP server on its own port (COLONY_MCP_PORT or --port, default 8090,
// host 127.0.0.1), talking to the colony at COLONY_URL over HTTP. Stateless like the hosted
// route; it also serves GET /healthz. Each caller's address goes to the colony as
// X-Forwarded-For (honoured only by a colony with COLONY_TRUST_PROXY), so per-client quotas hold.
import type { Server } from "bun";
import { parseJsonBody, readBodyLimited } from "../http/body";
import { AGENT_ID_PATTERN } from "../http/client";
import type { Logger } from "../log";
import { ServiceError } from "../service/errors";
import { VERSION } from "../version";
import { HttpColonyClient } from "./colony-client";
import { standaloneToolConfig, type McpConfig } from "./config";
import { handleStatelessPost, methodNotAllowed } from "./stateless";
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

export function startStandalone(cfg: McpConfig, opts: { port: number; hostname?: string; logger: Logger }): RunningMcpServer {
  const tools = standaloneToolConfig(cfg);
  const startedAt = Date.now();
  const { logger } = opts;
  let allowedHosts: string[] | undefined;

  async function handle(request: Request, server: Server<undefined>): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/healthz") {
      if (request.method !== "GET" && request.method !== "HEAD") return errorJson(405, "method_not_allowed", "use GET");
      return json(200, {
        status: "ok",
        version: VERSION,
        uptime_s: Math.floor((Date.now() - startedAt) / 1000),
        colony_url: cfg.colonyUrl,
      });
    }
    if (path !== "/mcp") return errorJson(404, "not_found", "no such route");
    if (request.method !== "POST") return methodNotAllowed();

    const agentHeader = request.headers.get("x-colony-agent");
    if (agentHeader !== null && !AGENT_ID_PATTERN.test(agentHeader)) {
      return errorJson(400, "invalid_request", "X-Colony-Agent must be 8 to 64 characters from [A-Za-z0-9_-]");
    }
    let parsed: unknown;
    try {
      const bytes = await readBodyLimited(request);
      parsed = parseJsonBody(new TextDecoder().decode(bytes ?? new Uint8Array()));
    } catch (err) {
      if (err instanceof ServiceError) return errorJson(err.status, err.code, err.message);
      return errorJson(400, "invalid_request", "the body is not valid JSON");
    }
    const client = new HttpColonyClient({
      baseUrl: cfg.colonyUrl,
      agentId: agentHeader ?? cfg.agentId,
      forwardedFor: server.requestIP(request)?.address ?? null,
    });
    return handleStatelessPost(createToolServer(client, tools), request, parsed, allowedHosts);
  }

  const server = Bun.serve({
    hostname: opts.hostname ?? "127.0.0.1",
    port: opts.port,
    async fetch(request, srv) {
      const started = performance.now();
      let response: Response;
      try {
        response = await handle(request, srv);
      } catch (err) {
        logger.error("mcp request failed", { error: errorMessage(err) });
        response = errorJson(500, "internal", "internal error");
      }
      logger.info("request", {
        method: request.method,
        route: new URL(request.url).pathname === "/healthz" ? "/healthz" : "/mcp",
        status: response.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
      });
      return response;
    },
  });
  const url = `http://${server.hostname}:${server.port}`;
  // On loopback, a web page could reach this port through DNS rebinding; its requests carry the
  // page's host name, so only loopback names are served.
  allowedHosts =
    (opts.hostname ?? "127.0.0.1") === "127.0.0.1"
      ? [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`]
      : undefined;
  logger.info("colony mcp listening", { url: `${url}/mcp`, colony_url: cfg.colonyUrl });
  return {
    url,
    port: server.port!,
    async stop() {
      await server.stop(false);
    },
  };
}

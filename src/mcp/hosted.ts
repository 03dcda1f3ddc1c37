// The colony's own MCP endpoint, POST /mcp (interface.md §4.14, decisions §12). The server layer
// has already applied the general quota, the 64 KB body limit and X-Colony-Agent; the tools call
// the service core in-process as that caller, so draft and publish quotas count its address.
// A browser page of a foreign Origin is refused (src/mcp/origin.ts).
import type { Elysia } from "elysia";
import { contextOf } from "../http/context";
import type { ColonyService } from "../service/colony";
import { hostedToolConfig, mcpMaxConcurrent, mcpMaxConcurrentTotal, type ToolConfig } from "./config";
import type { ErrorRenderer } from "../http/errors";
import type { ServiceError } from "../service/errors";
import { MCP_PATH, serviceErrorAsJsonRpc } from "./jsonrpc-errors";
import { busyResponse, InFlightLimit } from "./in-flight";
import { OriginPolicy } from "./origin";

let handler: Promise<typeof import("./hosted-handler")> | null = null;
const loadHandler = () => (handler ??= import("./hosted-handler"));

export function mcpRoutes(
  service: ColonyService,
  config: ToolConfig = hostedToolConfig(),
  origins = new OriginPolicy([]),
  inFlight = new InFlightLimit(mcpMaxConcurrent(process.env), mcpMaxConcurrentTotal(process.env)),
) {
  const notAllowed = async (ctx: { [key: string]: any }) =>
    origins.withCors(ctx.request as Request, (await loadHandler()).methodNotAllowed());
  const answerPost = async (request: Request, body: unknown, ctx: ReturnType<typeof contextOf>) => {
    const handler = await loadHandler();
    // Refused before anything runs (Accept, Content-Type, not JSON-RPC): it costs no more than
    // the HTTP request, so a batch is judged before it pays for its messages.
    const early = handler.refusalBeforeRunning(request, body);
    if (early) return origins.withCors(request, early);
    // A batch runs each of its messages as a request of its own would: each counts (the first
    // was counted with the HTTP request).
    if (Array.isArray(body) && body.length > 1) {
      const batch = await service.quotas.takeGeneralMore(ctx.client.address, body.length - 1);
      if (batch) {
        ctx.quota = batch; // shown in the RateLimit headers, a refusal's too
        service.quotas.refuseUnlessAllowed(batch, "general");
      }
    }
    const answer = await handler.handleHostedPost(service, config, ctx.client, request, body);
    return origins.withCors(request, answer);
  };
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post(MCP_PATH, async ({ request, body }) => {
        const refused = origins.refusal(request);
        if (refused) return refused;
        const ctx = contextOf(request);
        // Each address has COLONY_MCP_MAX_CONCURRENT POSTs in flight at most (src/mcp/in-flight.ts):
        // the quota bounds how many it starts a minute, not how many slow searches it holds at once.
        // All addresses together have COLONY_MCP_MAX_CONCURRENT_TOTAL: many addresses, each under
        // its own cap, held as many servers and searches as they liked.
        const address = ctx.client.address;
        const full = inFlight.tryEnter(address);
        if (full === "client") return origins.withCors(request, busyResponse(inFlight.max, "this address"));
        if (full === "all") return origins.withCors(request, busyResponse(inFlight.maxTotal, "this colony"));
        try {
          return await answerPost(request, body, ctx);
        } finally {
          inFlight.leave(address);
        }
      })
      .options(MCP_PATH, ({ request }) => origins.preflight(request))
      // GET (an event stream), DELETE (end a session) and the methods MCP has no use for: 405 as
      // JSON-RPC, as the standalone server answers them (PUT and PATCH were the REST 404).
      .get(MCP_PATH, notAllowed)
      .delete(MCP_PATH, notAllowed)
      .put(MCP_PATH, notAllowed)
      .patch(MCP_PATH, notAllowed);
}

/**
 * How the outer layer's refusals on /mcp are answered (a spent quota, a body over 64 KB, a bad
 * X-Colony-Agent, a body that is not JSON): JSON-RPC error objects, with the CORS headers of a
 * listed origin, so that a browser page can read why it was refused (and the Retry-After).
 */
export function hostedErrorShape(origins: OriginPolicy): ErrorRenderer {
  return (err: ServiceError, request: Request) => origins.withCors(request, serviceErrorAsJsonRpc(err));
}

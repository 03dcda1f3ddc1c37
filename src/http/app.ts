// The Elysia application: routing, JSON parsing and the error shape. Each route is a thin layer
// over the service core; rules live in the core, not here.
import { Elysia } from "elysia";
import type { ColonyService } from "../service/colony";
import { parseJsonBody } from "./body";
import { contextOf } from "./context";
import { ServiceError, toServiceError } from "../service/errors";
import { errorResponse, jsonResponse } from "./errors";
import type { Config } from "../config";
import type { Logger } from "../log";
import { hostedToolConfig } from "../mcp/config";
import { mcpRoutes } from "../mcp/hosted";
import { approveRoutes } from "./routes/approve";
import { draftRoutes } from "./routes/drafts";
import { feedRoutes } from "./routes/feed";
import { searchRoutes } from "./routes/search";
import { trailRoutes } from "./routes/trails";
import { errorMessage } from "../core/error-message";

export function createApp(service: ColonyService, config: Config, logger: Logger) {
  return (
    // standardHostname off: Elysia otherwise assumes a Host of at least 4 characters and finds
    // the path from offset 11 of the URL, so `Host: x` routed /v1/search as /search (a 404).
    new Elysia({ handler: { standardHostname: false } })
      .onParse(async ({ request }) => {
        const text = await request.text();
        if (text === "") return undefined;
        return parseJsonBody(text); // a SyntaxError surfaces as Elysia's PARSE error below
      })
      .onError(({ code, error, request, route }) => {
        try {
          contextOf(request).route = route || "(unmatched)";
        } catch {}
        if (error instanceof ServiceError) return errorResponse(error);
        const storeFailure = toServiceError(error); // a write the store could not keep: 503
        if (storeFailure) {
          logger.error("a write could not be stored", { route, error: errorMessage(error) });
          return errorResponse(storeFailure);
        }
        // Elysia wraps what the parse hook throws (a body nested too deep) in its ParseError.
        const cause = (error as { cause?: unknown }).cause;
        if (code === "PARSE" && cause instanceof ServiceError) return errorResponse(cause);
        if (code === "NOT_FOUND") return errorResponse(new ServiceError("not_found", "no such route"));
        if (code === "PARSE") return errorResponse(new ServiceError("invalid_request", "the body is not valid JSON"));
        if (code === "VALIDATION") return errorResponse(new ServiceError("invalid_request", "the request is not valid"));
        logger.error("unhandled error", {
          route,
          error: errorMessage(error, { withName: true }),
        });
        return errorResponse(new ServiceError("internal"));
      })
      .onBeforeHandle(({ request, route }) => {
        contextOf(request).route = route;
      })
      .get("/healthz", () => service.health())
      .get("/readyz", async () => {
        const r = await service.readiness();
        return jsonResponse(r.status === "ready" ? 200 : 503, r);
      })
      .use(trailRoutes(service))
      .use(searchRoutes(service))
      .use(draftRoutes(service))
      .use(feedRoutes(service))
      .use(approveRoutes())
      // Hosted MCP follows this colony's own configuration for high-risk trails.
      .use(mcpRoutes(service, { ...hostedToolConfig(), allowHighRisk: config.allowHighRisk }))
  );
}

export type ColonyApp = ReturnType<typeof createApp>;

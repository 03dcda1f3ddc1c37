// The Elysia application: routing, JSON parsing and the error shape. Each route is a thin layer
// over the service core; rules live in the core, not here.
import { Elysia } from "elysia";
import type { ColonyService } from "../service/colony";
import { BodyParseError, parseJsonBody, refuseUndeclaredBrowserBody } from "./body";
import { contextOf } from "./context";
import { methodsAt, noRouteMessage, requestPath, routeReadAs } from "./host";
import { ServiceError, toServiceError } from "../service/errors";
import { type ErrorShapes, errorResponse, jsonResponse } from "./errors";
import type { Logger } from "../log";
import { approveRoutes } from "./routes/approve";
import { docsRoutes } from "./routes/docs";
import { draftRoutes } from "./routes/drafts";
import { feedRoutes } from "./routes/feed";
import { searchRoutes } from "./routes/search";
import { trailRoutes } from "./routes/trails";
import { errorMessage } from "../core/error-message";

type AnyElysia = Elysia<any, any, any, any, any, any, any>;

/** Routes mounted beside the API by the composition root (the hosted MCP endpoint, /metrics). */
export type RoutePlugin = (app: AnyElysia) => AnyElysia;

export function createApp(service: ColonyService, logger: Logger, plugins: RoutePlugin[] = [], errorShapes: ErrorShapes = new Map()) {
  const app =
    // standardHostname off: Elysia otherwise assumes a Host of at least 4 characters and finds
    // the path from offset 11 of the URL, so `Host: x` routed /v1/search as /search (a 404).
    new Elysia({ handler: { standardHostname: false } })
      .onParse(async ({ request }) => {
        const text = await request.text();
        if (text === "") return undefined;
        refuseUndeclaredBrowserBody(request.headers);
        return parseJsonBody(text); // a SyntaxError surfaces as Elysia's PARSE error below
      })
      .onError(({ code, error, request, route }) => {
        try {
          contextOf(request).route = route || "(unmatched)";
        } catch {}
        // A plugin's route may answer its errors in its own shape (JSON-RPC on /mcp), the rest in the
        // REST one; a path no route takes, in the shape of the route it reads as (`//mcp`, `/MCP`).
        const shape = errorShapes.get(route) ?? (code === "NOT_FOUND" ? errorShapes.get(routeReadAs(requestPath(request))) : undefined);
        const render = shape ? (err: ServiceError) => shape(err, request) : errorResponse;
        if (error instanceof ServiceError) return render(error);
        const storeFailure = toServiceError(error); // a write the store could not keep: 503
        if (storeFailure) {
          logger.error("a write could not be stored", { route, error: errorMessage(error) });
          return render(storeFailure);
        }
        // Elysia wraps what the parse hook throws (a body nested too deep) in its ParseError.
        const cause = (error as { cause?: unknown }).cause;
        if (code === "PARSE" && cause instanceof ServiceError) return render(cause);
        if (code === "NOT_FOUND") {
          // A right path with the wrong method (`GET /v1/search`) is told the methods it takes.
          const path = requestPath(request);
          const methods = methodsAt(app.routes, path).filter((m) => m !== request.method);
          const allow: Record<string, string> = methods.length > 0 ? { Allow: methods.join(", ") } : {};
          return render(new ServiceError("not_found", noRouteMessage(path, request.method, methods), undefined, allow));
        }
        if (code === "PARSE") return render(new BodyParseError());
        if (code === "VALIDATION") return render(new ServiceError("invalid_request", "the request is not valid"));
        logger.error("unhandled error", {
          route,
          error: errorMessage(error, { withName: true }),
        });
        return render(new ServiceError("internal"));
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
      .use(docsRoutes());
  for (const plugin of plugins) app.use(plugin);
  return app;
}

export type ColonyApp = ReturnType<typeof createApp>;

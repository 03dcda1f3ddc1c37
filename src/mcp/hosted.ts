// The colony's own MCP endpoint, POST /mcp (interface.md §4.14, decisions §12). The server layer
// has already applied the general quota, the 64 KB body limit and X-Colony-Agent; the tools call
// the service core in-process as that caller, so draft and publish quotas count its address.
import type { Elysia } from "elysia";
import { contextOf } from "../http/context";
import type { ColonyService } from "../service/colony";
import { hostedToolConfig, type ToolConfig } from "./config";

let handler: Promise<typeof import("./hosted-handler")> | null = null;
const loadHandler = () => (handler ??= import("./hosted-handler"));

export function mcpRoutes(service: ColonyService, config: ToolConfig = hostedToolConfig()) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post("/mcp", async ({ request, body }) =>
        (await loadHandler()).handleHostedPost(service, config, contextOf(request).client, request, body),
      )
      .get("/mcp", async () => (await loadHandler()).methodNotAllowed())
      .delete("/mcp", async () => (await loadHandler()).methodNotAllowed());
}

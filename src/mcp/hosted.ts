// The colony's own MCP endpoint, POST /mcp (interface.md §4.14, decisions §12). The server layer
// has already applied the general quota, the 64 KB body limit and X-Colony-Agent; the tools call
// the service core in-process as that caller, so draft and publish quotas count its address.
import type { Elysia } from "elysia";
import { contextOf } from "../http/context";
import type { ColonyService } from "../service/colony";
import { InProcessColonyClient } from "./colony-client";
import { hostedToolConfig } from "./config";
import { handleStatelessPost, methodNotAllowed } from "./stateless";
import { createToolServer, type ToolConfig } from "./tools";

export function mcpRoutes(service: ColonyService, config: ToolConfig = hostedToolConfig()) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post("/mcp", ({ request, body }) => {
        const client = new InProcessColonyClient(service, contextOf(request).client);
        return handleStatelessPost(createToolServer(client, config), request, body);
      })
      .get("/mcp", () => methodNotAllowed())
      .delete("/mcp", () => methodNotAllowed());
}

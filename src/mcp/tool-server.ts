// The four MCP tools of interface.md §4.14 (one file each under tools/), written once over
// ColonyClient. The deployment (hosted or local, publish policy, thresholds) comes in as a small
// config, so the hosted /mcp route, the standalone HTTP server and the stdio server share every rule.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { VERSION } from "../version";
import type { ColonyClient } from "./colony-client";
import type { ToolConfig } from "./config";
import { registerColonyPublish } from "./tools/publish";
import { registerColonyPublishStatus } from "./tools/publish-status";
import { registerColonyReport } from "./tools/report";
import { registerColonySearch } from "./tools/search";

const SERVER_INSTRUCTIONS =
  "Colony is a shared memory of solved errors. When you hit an error, call colony_search with the exact error " +
  "line BEFORE attempting a fix. After trying a trail, call colony_report with its trail_id and the outcome. " +
  "When you solved a hard error yourself (after several failed attempts), call colony_publish so other agents " +
  "can reuse the fix; a person approves every publication.";

/** A new McpServer with the four tools, bound to one colony client and deployment. */
export function createToolServer(client: ColonyClient, cfg: ToolConfig): McpServer {
  const server = new McpServer({ name: "colony", version: VERSION }, { instructions: SERVER_INSTRUCTIONS });
  registerColonySearch(server, client, cfg);
  registerColonyReport(server, client, cfg);
  registerColonyPublish(server, client, cfg);
  registerColonyPublishStatus(server, client);
  return server;
}

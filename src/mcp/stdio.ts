// `colony mcp`: the local MCP server over stdio, talking to COLONY_URL. Everything it sends is
// redacted here first (the tools redact queries, notes and trails before calling the colony).
// stdout carries the protocol only: logs go to stderr.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Logger } from "../log";
import { HttpColonyClient } from "./colony-client";
import { localToolConfig, type McpConfig } from "./config";
import { createToolServer } from "./tool-server";

export async function runStdio(cfg: McpConfig, logger: Logger): Promise<void> {
  const client = new HttpColonyClient({ baseUrl: cfg.colonyUrl, agentId: cfg.agentId });
  const server = createToolServer(client, localToolConfig(cfg));
  const transport = new StdioServerTransport();
  let closing = false;
  const close = async (why: string) => {
    if (closing) return;
    closing = true;
    logger.info("colony mcp stopping", { why });
    await server.close().catch(() => {});
    process.exit(0);
  };
  // The client closing our stdin ends the session.
  process.stdin.on("end", () => void close("stdin closed"));
  process.on("SIGTERM", () => void close("SIGTERM"));
  process.on("SIGINT", () => void close("SIGINT"));
  await server.connect(transport);
  logger.info("colony mcp serving over stdio", { colony_url: cfg.colonyUrl, publish: cfg.publish });
}

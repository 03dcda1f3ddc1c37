// The shape of one MCP tool: its input and output as TypeBox schemas (JSON Schema on the wire,
// validated with the same code as the HTTP routes), and a handler over the colony client.
import type { Static, TObject } from "@sinclair/typebox";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { ColonyClient } from "../colony-client";
import type { ToolConfig } from "../config";

export interface ToolContext {
  server: Server;
  client: ColonyClient;
  cfg: ToolConfig;
  /** Aborted when the client cancels the call (notifications/cancelled): the answer is dropped. */
  signal: AbortSignal;
}

export interface ColonyTool<I extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  /** Every successful answer's structuredContent conforms to it. */
  output: TObject;
  annotations: ToolAnnotations;
  run(args: Static<I>, ctx: ToolContext): Promise<CallToolResult>;
}

/** A tool's schema with a description for the model, keeping every constraint of the original. */
export const described = <T extends object>(schema: T, description: string): T => ({ ...schema, description });

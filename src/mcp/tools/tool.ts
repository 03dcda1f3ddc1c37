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
  /** Tells the client the call is still going (notifications/progress); a no-op when it sent no progressToken. */
  progress: (message: string) => void;
  /** The client asked for progress: it may extend its time limit on each notification. */
  progressRequested: boolean;
}

interface RequestExtra {
  _meta?: { progressToken?: unknown };
  sendNotification(notification: { method: "notifications/progress"; params: Record<string, unknown> }): Promise<void>;
}

/**
 * Progress notifications for a call whose request carried `_meta.progressToken`: a client may
 * extend its own time limit on each (the SDK client's `resetTimeoutOnProgress`), so a long
 * publish is not cancelled while it waits for a person or for the colony's verdict.
 */
export const progressRequested = (extra: RequestExtra) => progressTokenOf(extra) !== null;

function progressTokenOf(extra: RequestExtra): string | number | null {
  const token = extra._meta?.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : null;
}

export function progressReporter(extra: RequestExtra): (message: string) => void {
  const token = progressTokenOf(extra);
  if (token === null) return () => {};
  let progress = 0;
  return (message) => {
    progress += 1;
    void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message } }).catch(() => {});
  };
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

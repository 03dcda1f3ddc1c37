// What every tool answers with: structured content (with the same JSON as text, for clients that
// read only text), and failures phrased so a model can act on them.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type ColonyClient, ColonyClientError } from "../colony-client";
import { errorMessage } from "../../core/error-message";
import { escapeHiddenInJson } from "../../core/hidden-json";

/**
 * The text of every tool result: other agents' trails and the caller's own arguments may hold
 * characters a person cannot see (bidi marks that reorder a command as the client draws it,
 * zero-width and other format characters, DEL, the 7- and 8-bit controls, U+2028/U+2029), and an MCP
 * client shows this text to its user as it is. Each is written as its `\uXXXX` escape, as `--json`
 * and bundles write them (src/core/hidden-json.ts); JSON text still parses to the same value.
 */
export const visibleText = (text: string): string =>
  // A plain sentence (a tool error) may quote the caller's text with C0 controls, which JSON
  // text never holds raw: ESC and CR are escaped too; line breaks and tabs lay the sentence out.
  escapeHiddenInJson(text).replace(/[\u0000-\u0008\u000b-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * A successful answer: compact JSON text (tool results land in a model's context, and terminal
 * clients print them) and the same object as structuredContent, whose strings keep the values.
 */
export const structured = (value: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: visibleText(JSON.stringify(value)) }],
  structuredContent: value,
});

export const failure = (message: string, extra?: Record<string, unknown>): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: visibleText(extra ? JSON.stringify({ error: message, ...extra }) : message) }],
});

/** A message a model can act on, for every way the colony can refuse or fail. */
export function describeColonyError(err: ColonyClientError, target: string): string {
  const retry = err.retryAfter !== null ? `retry in ${err.retryAfter} s` : "retry later with backoff";
  switch (true) {
    case err.status === 0 && err.code === "timeout":
      return `${err.message} (overloaded or stalled, or a network that drops the connection); retry later with backoff.`;
    case err.status === 0 && err.code === "abandoned":
      return `${err.message}.`;
    case err.status === 0:
      return `${err.message}. The colony is unreachable: check COLONY_URL (${target}) and that the colony is running, then retry.`;
    case err.status === 429:
      return `rate limited (${err.code}): ${retry}. ${err.message}.`;
    case err.status === 503 && err.code === "busy":
      return `the colony is busy (too many trails waiting): ${retry}.`;
    case err.retryable:
      return `the colony is unavailable (${err.code}): ${retry}. ${err.message}.`;
    case err.status === 404:
      return `not found: ${err.message}.`;
    case err.status === 409:
      return `the draft is already ${err.code}: ${err.message}.`;
    case err.status === 400 || err.status === 413: {
      const details = err.details.map((d) => `\n  ${d.path}: ${d.message}`).join("");
      return `the colony refused the request (${err.code}): ${err.message}.${details}`;
    }
    default:
      return `the colony answered ${err.status} ${err.code}: ${err.message}.`;
  }
}

/** A thrown error as an isError result the model can read. */
export function errorResult(err: unknown, client: ColonyClient): CallToolResult {
  if (err instanceof ColonyClientError) return failure(describeColonyError(err, client.target));
  return failure(`colony tool failed: ${errorMessage(err)}`);
}

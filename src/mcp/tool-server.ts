// The four MCP tools of interface.md §4.14 (one file each under tools/), written once over
// ColonyClient. The deployment (hosted or local, publish policy, thresholds) comes in as a small
// config, so the hosted /mcp route, the standalone HTTP server and the stdio server share every rule.
//
// Built on the SDK's low-level Server rather than McpServer: the tools' schemas are the TypeBox
// schemas of the HTTP API (JSON Schema as they are), arguments are validated by the same code as
// the HTTP routes, an unknown tool is a protocol error, and only capabilities the server honours
// are advertised (a stateless server never sends list_changed notifications).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CallToolResult,
  CancelledNotificationSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type RequestId,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { TObject } from "@sinclair/typebox";
import { cutToChars, parseWith, type ValidationDetail } from "../core/trail";
import { UNKNOWN_FIELD_MESSAGE } from "../core/validation-message";
import { VERSION } from "../version";
import type { ColonyClient } from "./colony-client";
import type { ToolConfig } from "./config";
import { colonyPublish } from "./tools/publish";
import { colonyPublishStatus } from "./tools/publish-status";
import { colonyReport } from "./tools/report";
import { quotedClientText } from "../core/hidden-json";
import { foldLetters } from "../core/screening-text";
import { errorResult, failure } from "./tools/results";
import { colonySearch } from "./tools/search";
import { type ColonyTool, progressReporter, progressRequested, type ToolContext } from "./tools/tool";

const TOOLS: readonly ColonyTool<any>[] = [colonySearch, colonyReport, colonyPublish, colonyPublishStatus];
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/**
 * A tool's arguments as they are advertised and checked: an argument the tool does not have is
 * refused, naming it (a misspelt `notes`, or POST /v1/search's `limit` or `min_confidence` given to
 * colony_search, was dropped without a word and read as applied). Only the top level: a `trail`
 * keeps the Trail's rule of decisions §1 (unknown fields dropped).
 */
const STRICT_INPUT = new Map(TOOLS.map((t) => [t.name, { ...t.input, additionalProperties: false } as TObject]));

const SERVER_INSTRUCTIONS =
  "Colony is a shared memory of solved errors. When you hit an error, call colony_search with the exact error " +
  "line BEFORE attempting a fix. After trying a trail, call colony_report with its trail_id and the outcome. " +
  "When you solved a hard error yourself (after several failed attempts), call colony_publish so other agents " +
  "can reuse the fix; a person approves every publication.";

// Built once: a hosted server builds a new Server per request, the tool list need not be.
// JSON.stringify leaves TypeBox's symbol keys behind: what remains is plain JSON Schema.
const TOOL_LIST: Tool[] = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: JSON.parse(JSON.stringify(STRICT_INPUT.get(t.name))),
  outputSchema: JSON.parse(JSON.stringify(t.output)),
  annotations: t.annotations,
}));

/** A JSON-RPC error the SDK sends with this exact message (an McpError would prefix "MCP error N:" to it). */
export function protocolError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** The longest argument name or path a message quotes: the caller's text, kept out of the model's context beyond that. */
const QUOTED_PATH_CHARS = 100;

/** "/trail/problem/dead_ends/0/attempt" → "trail.problem.dead_ends[0].attempt" (cut to 100 characters). */
function argumentPath(pointer: string): string {
  const parts = pointer.split("/").slice(1).filter(Boolean);
  if (parts.length === 0) return "the arguments";
  return cutToChars(parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join(""), QUOTED_PATH_CHARS);
}

/** "/a~1b" → "\"a/b\"": an argument name the tool does not have, any text (empty, blank, digits), quoted by the one rule for client text. */
function quotedName(pointer: string): string {
  return quotedClientText(pointer.slice(1).replaceAll("~1", "/").replaceAll("~0", "~"), QUOTED_PATH_CHARS);
}

/**
 * The arguments without the optional ones sent as null: a model in a strict function-calling mode
 * (every field required, the optional ones nullable) writes `"error_type": null, "packages": null`
 * for what it leaves out, and every such call was refused ("error_type must be a string. packages
 * must be an array. …"), as a blank optional argument is not. A required argument sent as null, and
 * null inside an argument (a trail's fields), are refused as before. `Object.fromEntries` keeps a
 * `__proto__` key an own key, never the prototype.
 */
function withoutNullOptionals(schema: TObject, args: Record<string, unknown>): Record<string, unknown> {
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(
    Object.entries(args).filter(([key, value]) => !(value === null && Object.hasOwn(schema.properties, key) && !required.has(key))),
  );
}

/**
 * A name that is none of `names` but reads as one once case, width, blanks, invisible characters
 * and look-alike letters are folded (`Colony_Search`, `ｅｒｒｏｒ`, `err<U+200B>or`): the sentence
 * saying which to send, or "". Names stay exact (as enums do); a model retries a name it was only
 * told is wrong unchanged. Tool names and argument names alike.
 */
export function readsAsName(sent: string, names: Iterable<string>): string {
  if (sent.length > 100) return "";
  const folded = foldLetters(sent).trim();
  for (const name of names) {
    if (name === folded && name !== sent) {
      return ` It reads as ${name} but differs in case, width, blanks or invisible characters: send exactly ${name}.`;
    }
  }
  return "";
}

/** One plain sentence per failing argument, for the model to correct its call. */
export function invalidArguments(tool: string, details: ValidationDetail[]): CallToolResult {
  const unknown = (d: ValidationDetail) => d.message === UNKNOWN_FIELD_MESSAGE && d.path.lastIndexOf("/") === 0;
  const known = Object.keys(STRICT_INPUT.get(tool)?.properties ?? {});
  const sentName = (pointer: string) => pointer.slice(1).replaceAll("~1", "/").replaceAll("~0", "~");
  const lines = details.map((d) =>
    unknown(d)
      ? `${quotedName(d.path)} is not an argument of ${tool}.${readsAsName(sentName(d.path), known)}`
      : `${argumentPath(d.path)} ${d.message}.`,
  );
  if (details.some(unknown) && known.length > 0) lines.push(`Its arguments are: ${known.join(", ")}.`);
  return failure(`Invalid arguments for ${tool}: ${lines.join(" ")}`);
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

interface SchemaIssue {
  path: PropertyKey[];
  message: string;
}

/** The issues of the SDK's schema parser (zod), when err is its refusal of a request. */
function schemaIssues(err: unknown): SchemaIssue[] | null {
  const issues = (err as { issues?: unknown } | null)?.issues;
  return err instanceof Error && !("code" in err && Number.isSafeInteger(err.code)) && Array.isArray(issues) ? issues : null;
}

/** "params.protocolVersion: expected string, received number" for each issue (the first three). */
function issueSentence(method: string, issues: SchemaIssue[]): string {
  const parts = issues.slice(0, 3).map((i) => {
    const path = i.path.map((p, k) => (typeof p === "number" ? `[${p}]` : k === 0 ? String(p) : `.${String(p)}`)).join("") || "the request";
    return `${path}: ${String(i.message).replace(/^Invalid input: /, "")}`;
  });
  return `Invalid params for ${method}: ${parts.join("; ")}.`;
}

/**
 * Every request the SDK parses with its own schema (initialize, ping, tools/list): malformed params
 * became -32603 "internal error" with a JSON dump of the parser's issues, which reads as a colony
 * defect to retry; they are -32602 invalid params with one plain sentence, as tools/call.
 */
function plainInvalidParams(server: Server): void {
  // The SDK keeps its handlers in a private map; each is wrapped, none replaced.
  const handlers = (server as unknown as { _requestHandlers?: Map<string, RequestHandler> })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (err) {
        const issues = schemaIssues(err);
        if (issues === null) throw err;
        throw protocolError(ErrorCode.InvalidParams, issueSentence(method, issues));
      }
    });
  }
}

/** A new Server with the four tools, bound to one colony client and deployment. */
export function createToolServer(client: ColonyClient, cfg: ToolConfig): Server {
  const server = new Server({ name: "colony", version: VERSION }, { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    // Every tool fits one page and no nextCursor is given, so a cursor is one the server never
    // issued: MCP pagination says an invalid cursor SHOULD be -32602 (an empty one reads as none).
    if (request.params?.cursor) {
      throw protocolError(
        ErrorCode.InvalidParams,
        "Invalid params for tools/list: this server lists every tool in one page and gives no cursor; call tools/list without params.cursor.",
      );
    }
    return { tools: TOOL_LIST };
  });
  // tools/call is answered by the fallback handler, not a registered one: the SDK parses a
  // registered request with its own schema first, and a malformed call (arguments an array or a
  // string, no tool name) became -32603 "internal error" with a dump of the parser's issues.
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== "tools/call") throw protocolError(ErrorCode.MethodNotFound, "Method not found");
    // The call's requests to the colony end with it (cancelled, or its POST past the deadline).
    return callTool(request.params, {
      server,
      client: client.forCall(extra.signal),
      cfg,
      signal: extra.signal,
      progress: progressReporter(extra),
      progressRequested: progressRequested(extra),
    });
  };
  plainInvalidParams(server);
  // A request augmented with a task (`params.task`, MCP 2025-11-25) failed with -32603 "Server
  // does not support task creation", which reads as a colony defect; a server that declares no
  // tasks capability MUST process such a request normally, ignoring the task metadata.
  (server as unknown as { assertTaskHandlerCapability: (method: string) => void }).assertTaskHandlerCapability = () => {};
  // The SDK numbers the server's own requests (elicitations) from 0, and its Protocol ignores the
  // cancellation of a request whose id is 0 (`if (!requestId) return`): an SDK client would never
  // close the first prompt of a session when the call behind it is cancelled.
  const numbering = server as unknown as { _requestMessageId?: unknown };
  if (numbering._requestMessageId === 0) numbering._requestMessageId = 1;
  // The same check dropped the client's cancellation of its own call numbered 0 or "" (ids JSON-RPC
  // allows): a cancelled colony_publish kept its prompt open and published once it was ticked.
  const running = (server as unknown as { _requestHandlerAbortControllers?: Map<RequestId, AbortController> })
    ._requestHandlerAbortControllers;
  if (running instanceof Map) {
    server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
      const id = notification.params.requestId;
      if (id !== undefined) running.get(id)?.abort(notification.params.reason);
    });
  }
  async function callTool(params: unknown, ctx: ToolContext): Promise<CallToolResult> {
    const { name, arguments: args } = (params ?? {}) as { name?: unknown; arguments?: unknown };
    /** The caller's tool name as an error quotes it: bounded, its invisible characters shown. */
    const quoted = () => quotedClientText(String(name));
    if (typeof name !== "string") {
      throw protocolError(ErrorCode.InvalidParams, "tools/call needs params.name, the name of a tool (a string)");
    }
    if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
      // A client that serialises its arguments itself sends `"{\"error\": …}"`: say so.
      const asText = typeof args === "string" && /^\s*\{/.test(args) ? " (a string holding JSON was sent: send the object itself)" : "";
      throw protocolError(ErrorCode.InvalidParams, `the arguments of ${quoted()} must be an object of named arguments${asText}`);
    }
    const tool = BY_NAME.get(name);
    if (!tool) {
      // `Colony_Search`, `colony_search ` (a trailing blank), a zero-width space: the name reads as
      // one of the tools. Names stay exact (as enums do); the hint says which to send.
      const meant = readsAsName(name, BY_NAME.keys());
      throw protocolError(ErrorCode.InvalidParams, `Unknown tool ${quoted()}; this server has ${[...BY_NAME.keys()].join(", ")}.${meant}`);
    }
    // Wrong arguments are a tool error, not a protocol error: the model reads it and corrects the call.
    const schema = STRICT_INPUT.get(name)!;
    const parsed = parseWith(schema, withoutNullOptionals(schema, (args ?? {}) as Record<string, unknown>));
    // The strings are trimmed by a copy that skips a `__proto__` key (assigning it would swap the
    // prototype), so the check never saw it: named as any argument the tool does not have.
    const prototypeKey: ValidationDetail[] =
      args !== undefined && Object.hasOwn(args, "__proto__") ? [{ path: "/__proto__", message: UNKNOWN_FIELD_MESSAGE }] : [];
    if (!parsed.ok || prototypeKey.length > 0) return invalidArguments(name, [...prototypeKey, ...(parsed.ok ? [] : parsed.details)]);
    try {
      return await tool.run(parsed.value, ctx);
    } catch (err) {
      return errorResult(err, client);
    }
  }
  return server;
}

// Stateless Streamable HTTP (interface.md §4.14): every POST gets its own McpServer and transport,
// so replicas need no shared session state and one caller's request never sees another's.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { MAX_BATCH_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { escapeHiddenInJson } from "../core/hidden-json";
import { cutToChars } from "../core/trail";
import { ANSWER_TYPE, acceptsAnswer, answerType, EVENT_STREAM_TYPE, SDK_ACCEPT } from "./accept";
import { answerableRequestId, JSON_RPC_ERRORS, jsonRpcErrorResponse, paramsRefusal } from "./jsonrpc-errors";

/**
 * JSON that is no JSON-RPC message (or batch of them) is JSON-RPC's "Invalid Request", -32600;
 * the SDK's transport would call it a parse error (-32700), which JSON-RPC keeps for text that is
 * not JSON at all.
 */
function invalidRequest(parsedBody: unknown): Response | null {
  const messages = Array.isArray(parsedBody) ? parsedBody : [parsedBody];
  if (messages.length > 0 && messages.every((m) => JSONRPCMessageSchema.safeParse(m).success)) return duplicateId(messages);
  // A lone request whose id was read is answered with it (JSON-RPC 2.0 §5), as over stdio; a batch,
  // refused whole, has no one id.
  const at = messages.findIndex((m) => !JSONRPCMessageSchema.safeParse(m).success);
  const why = at >= 0 ? paramsRefusal(messages[at]) : null;
  return jsonRpcErrorResponse(
    400,
    JSON_RPC_ERRORS.invalidRequest,
    why
      ? `Invalid Request: ${Array.isArray(parsedBody) ? `message ${at + 1} of the batch: ` : ""}${why}`
      : 'Invalid Request: the body must be a JSON-RPC 2.0 message (jsonrpc "2.0", method, id) or a batch of them',
    undefined,
    {},
    answerableRequestId(parsedBody),
  );
}

/**
 * A batch whose requests share an id is refused before any runs: the transport answers one
 * response per id, so the others would run (a search counted, a report stored) unanswered.
 */
function duplicateId(messages: unknown[]): Response | null {
  const seen = new Set<string>();
  for (const m of messages) {
    const id = (m as { id?: unknown; method?: unknown }).id;
    if (id === undefined || (m as { method?: unknown }).method === undefined) continue; // a notification or a response
    const key = `${typeof id}:${String(id)}`;
    if (seen.has(key)) {
      return jsonRpcErrorResponse(
        400,
        JSON_RPC_ERRORS.invalidRequest,
        `Invalid Request: the requests of a batch need distinct ids; id ${JSON.stringify(id)} is used more than once`,
      );
    }
    seen.add(key);
  }
  return null;
}

/**
 * A POST whose Accept refuses both forms the endpoint answers in (application/json, or the same
 * answers as an event stream) is 406, -32000 as the SDK answered it, naming what to send.
 */
function notAcceptable(): Response {
  return jsonRpcErrorResponse(
    406,
    -32000,
    `Not Acceptable: this endpoint answers ${ANSWER_TYPE} or ${EVENT_STREAM_TYPE}, which the Accept header refuses; send "Accept: ${SDK_ACCEPT}" (or */*, or no Accept)`,
  );
}

/** The SDK transport's own refusal of a body that is not declared JSON, made before anything runs. */
function unsupportedMediaType(): Response {
  return jsonRpcErrorResponse(415, -32000, "Unsupported Media Type: Content-Type must be application/json");
}

/**
 * What refuses a POST before any of its messages runs: an Accept that refuses the answer, a
 * Content-Type that is not JSON, a body that is no JSON-RPC message or batch, a batch reusing an
 * id. Null when it may run. The hosted route asks before a batch pays its quota (a refused POST
 * costs no more than any other refused request).
 */
export function refusalBeforeRunning(request: Request, parsedBody: unknown, allowedHosts?: string[]): Response | null {
  if (request.method !== "POST") return null;
  // A foreign Host is the transport's to refuse first (403), as it was before these checks.
  const hostServed = !allowedHosts || allowedHosts.includes(request.headers.get("host") ?? "");
  if (hostServed && !acceptsAnswer(request.headers.get("accept"))) return notAcceptable();
  if (hostServed && !isJsonContentType(request.headers.get("content-type"))) return unsupportedMediaType();
  return invalidRequest(parsedBody) ?? (hostServed ? transportRefusal(request, parsedBody) : null);
}

const isInitialize = (m: unknown) => m !== null && typeof m === "object" && (m as { method?: unknown }).method === "initialize";

/**
 * What the SDK's transport refuses once the body is read, judged here first so that a batch it
 * refuses costs one request on the hosted quota, not one per message (a batch of 101 pings spent
 * 101 and ran none): a batch over the transport's 100 messages, an initialize in a batch of
 * more than one, and an unsupported MCP-Protocol-Version on a POST that is no initialize (the
 * transport quoted the header whole: 8 KB came back, its C1 controls raw; quoted here cut).
 * The same answers as the transport's.
 */
function transportRefusal(request: Request, parsedBody: unknown): Response | null {
  const messages = Array.isArray(parsedBody) ? parsedBody : [parsedBody];
  if (messages.length > MAX_BATCH_SIZE) {
    return jsonRpcErrorResponse(400, JSON_RPC_ERRORS.invalidRequest, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
  }
  if (!messages.some(isInitialize)) {
    const version = request.headers.get("mcp-protocol-version");
    if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return jsonRpcErrorResponse(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${cutToChars(version, 100)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      );
    }
  } else if (messages.length > 1) {
    return jsonRpcErrorResponse(400, JSON_RPC_ERRORS.invalidRequest, "Invalid Request: Only one initialization request is allowed");
  }
  return null;
}

/**
 * The request as the SDK's transport is given it: the caller's Accept, once judged acceptable by
 * RFC 9110 (src/mcp/accept.ts), replaced by the one the transport's substring check looks for.
 * The body was read and parsed already, so the copy has none.
 */
function withSdkAccept(request: Request): Request {
  if (request.headers.get("accept") === SDK_ACCEPT) return request;
  const headers = new Headers(request.headers);
  headers.set("accept", SDK_ACCEPT);
  return new Request(request.url, { method: request.method, headers, signal: request.signal });
}

/** A cancellation notification (a request of that name, with an id, is answered as any other). */
const isCancellation = (m: unknown) =>
  m !== null && typeof m === "object" && (m as { method?: unknown }).method === "notifications/cancelled" && !("id" in m);

/**
 * A batch without its cancellations. A stateless server holds nothing but the requests of this
 * POST, so a cancellation can only name one of them: the SDK then never answered that request, and
 * the transport waited for the answer forever, holding the connection and the server for as long
 * as the client kept waiting (a batch of a ping and its cancellation hung either endpoint). MCP
 * lets a receiver ignore a cancellation; every request of a batch is answered.
 */
function withoutCancellations(parsedBody: unknown): unknown {
  return Array.isArray(parsedBody) && parsedBody.some(isCancellation) ? parsedBody.filter((m) => !isCancellation(m)) : parsedBody;
}

/** The longest message of a refusal the SDK's transport writes, in characters. */
const REFUSAL_MESSAGE_CHARS = 300;

/**
 * A refusal of the SDK's transport with its message cut: some quote a header whole, as sent
 * (`Unsupported protocol version: …` answered an 8 KB MCP-Protocol-Version back, its C1 controls
 * raw; `Invalid Host header: …`).
 */
function withRefusalCut(text: string): string {
  let parsed: { error?: { message?: unknown } };
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const message = parsed?.error?.message;
  if (typeof message !== "string") return text;
  const cut = cutToChars(message, REFUSAL_MESSAGE_CHARS);
  if (cut === message) return text;
  parsed.error!.message = cut;
  return JSON.stringify(parsed);
}

/**
 * A JSON answer as the endpoint writes it (a refusal of the SDK's transport: escaped as below, its
 * message cut by withRefusalCut):
 * - every character a person cannot see (src/core/hidden-json.ts: bidi marks, DEL and C1, format
 *   characters, U+2028/U+2029) as its `\uXXXX` escape, as `colony mcp` writes each stdout line:
 *   a trail's values in structuredContent reached curl's terminal, a proxy's log or a client's
 *   debug view raw (a CSI acting on the terminal, a right-to-left mark reordering a command), and
 *   the parsed value is the same;
 * - the answer to a batch as an array (JSON-RPC 2.0 §6), also when the batch holds one request:
 *   the SDK's transport answered a lone object then, which a client matching a batch to its answer
 *   cannot read;
 * - for a caller that takes only text/event-stream, server-sent events: one `message` event per
 *   JSON-RPC response (a batch's answers each in its own, as the SDK's streaming transport sends
 *   them), then the stream ends.
 * Refusals (statuses other than 200) are written by jsonRpcErrorResponse, with the same escapes,
 * or stay as the SDK answers them; a POST of notifications alone stays 202 without a body.
 */
async function asWritten(answer: Response, batch: boolean, eventStream: boolean): Promise<Response> {
  if (!answer.headers.get("content-type")?.includes("application/json")) return answer;
  const text = await answer.text();
  const headers = new Headers(answer.headers);
  headers.delete("content-length");
  if (answer.status !== 200) return new Response(escapeHiddenInJson(withRefusalCut(text)), { status: answer.status, headers });
  if (eventStream) {
    const parsed: unknown = JSON.parse(text);
    const events = (Array.isArray(parsed) ? parsed : [parsed]).map(
      (m) => `event: message\ndata: ${escapeHiddenInJson(JSON.stringify(m))}\n\n`,
    );
    headers.set("content-type", EVENT_STREAM_TYPE);
    headers.set("cache-control", "no-cache, no-transform");
    return new Response(events.join(""), { status: 200, headers });
  }
  const body = batch && text.trimStart().startsWith("{") ? `[${text}]` : text;
  return new Response(escapeHiddenInJson(body), { status: answer.status, headers });
}

/**
 * The longest one POST to `colony mcp --http` is handled. Its slowest legitimate call is a
 * colony_publish_status, two requests to the colony of at most COLONY_CALL_TIMEOUT_MS (15 s)
 * each; under the 60 s an MCP SDK client waits, so the client reads why rather than its own timeout.
 */
export const MCP_REQUEST_DEADLINE_MS = 45_000;

/**
 * The longest one POST to the hosted /mcp is handled. Its calls run in-process and wait for the
 * store at most COLONY_DATABASE_TIMEOUT_MS (10 s by default, then 503). The colony's HTTP server
 * (Bun's default idle timeout) resets a connection whose answer takes 10 s, so the deadline is
 * just under it: the client reads a JSON-RPC error instead of a reset, and the calls are abandoned.
 */
export const HOSTED_MCP_DEADLINE_MS = 9_000;

/**
 * A POST still running at its deadline: 503 with one JSON-RPC error object, id null, as the
 * endpoints' other refusals (docs/mcp.md, -32016); every request of the POST, a batch's too, is
 * abandoned unanswered.
 */
function pastDeadline(deadlineMs: number): Response {
  return jsonRpcErrorResponse(
    503,
    JSON_RPC_ERRORS.deadline,
    `the request was not answered within ${deadlineMs / 1000} s and was abandoned; retry later with backoff`,
    { code: "unavailable", deadline_s: deadlineMs / 1000 },
  );
}

/**
 * Answers one MCP POST with a fresh server; both are closed once the response is complete, at
 * the deadline, or when the client hangs up: closing the server aborts the signal of every call still running, which ends its
 * requests to the colony (a call the SDK never answers would otherwise hold the connection, the
 * server and its handlers for as long as the client waits).
 */
export async function handleStatelessPost(
  server: Server,
  request: Request,
  parsedBody: unknown,
  /** Host headers to accept (DNS-rebinding protection of a server on loopback); all when omitted. */
  allowedHosts?: string[],
  deadlineMs = MCP_REQUEST_DEADLINE_MS,
): Promise<Response> {
  const refused = refusalBeforeRunning(request, parsedBody, allowedHosts);
  if (refused) return refused;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    ...(allowedHosts ? { enableDnsRebindingProtection: true, allowedHosts } : {}),
    // Plain JSON answers: a stateless server never sends requests back to the client, so there is
    // nothing to stream, and the response is complete when handleRequest returns.
    enableJsonResponse: true,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await server.connect(transport);
    const handled = transport.handleRequest(
      request.method === "POST" ? withSdkAccept(request) : request,
      parsedBody === undefined ? undefined : { parsedBody: withoutCancellations(parsedBody) },
    );
    const overdue = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), deadlineMs)));
    // A client that hangs up is not waited for either: closing the server (finally) ends its calls.
    const gone = new Promise<"gone">((resolve) => {
      if (request.signal.aborted) resolve("gone");
      else request.signal.addEventListener("abort", () => resolve("gone"), { once: true });
    });
    const answer = await Promise.race([handled, overdue, gone]);
    if (answer === null || answer === "gone") {
      handled.catch(() => {}); // never settles, or fails once its server is closed: nobody reads it
      return pastDeadline(deadlineMs);
    }
    return asWritten(answer, Array.isArray(parsedBody), answerType(request.headers.get("accept")) === EVENT_STREAM_TYPE);
  } finally {
    clearTimeout(timer);
    void server.close().catch(() => {});
  }
}

/** GET (server-sent event stream) and DELETE (end a session) have no meaning without sessions. */
export function methodNotAllowed(): Response {
  return new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Method not allowed: this MCP server is stateless; use POST." },
      id: null,
    }),
    { status: 405, headers: { Allow: "POST", "content-type": "application/json" } },
  );
}

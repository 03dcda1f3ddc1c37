// Errors of the MCP endpoints (hosted POST /mcp and `colony mcp --http`) in JSON-RPC's shape: an
// MCP client reads `{jsonrpc, error: {code, message, data}, id: null}`, not the REST error shape.
// The HTTP status and the layer's headers (RateLimit-*, Retry-After) stay as on every route.
// JSON-RPC 2.0 reserves -32000 to -32099 for server errors; Colony's are listed in docs/mcp.md.
import { escapeHiddenInJson } from "../core/hidden-json";
import { BodyParseError, DuplicateKeyError } from "../http/body";
import { InvalidAgentHeaderError } from "../http/client";
import type { ServiceError } from "../service/errors";

export const MCP_PATH = "/mcp";

export const JSON_RPC_ERRORS = {
  /** The body is not JSON, or nests deeper than the colony parses. */
  parseError: -32700,
  /** JSON, but not a JSON-RPC request (answered by the MCP SDK's transport). */
  invalidRequest: -32600,
  internalError: -32603,
  /** 413: the body is over 64 KB. */
  tooLarge: -32010,
  /** 429: a quota of the caller's address is used up; Retry-After says when to try again. */
  rateLimited: -32011,
  /** 400: X-Colony-Agent is malformed. */
  invalidAgent: -32012,
  /** 403: a browser page of a foreign Origin (DNS rebinding, cross-site requests). */
  forbiddenOrigin: -32013,
  /** 503: the colony cannot serve the request now (store down or full, queue full); retry later. */
  unavailable: -32014,
  /** 400: another request error found before the JSON-RPC message is read. */
  badRequest: -32015,
  /** 503: the POST ran past its deadline (MCP_REQUEST_DEADLINE_MS); its calls were abandoned. */
  deadline: -32016,
  /** The client (or, hosted, all addresses together) has as many requests in flight as the cap allows (src/mcp/in-flight.ts); retry later. */
  busy: -32017,
} as const;

/**
 * The id an answer to a request refused as unreadable carries, on every door (stdio and HTTP):
 * JSON-RPC 2.0 §5 says the request's id, or null when it cannot be detected. Detected means the
 * message is a request (it has a method: a response the client sent carries an id of the server's
 * numbering, and an error with it would read as the answer to a call of the client's own) and its
 * id is one MCP allows and JSON carries exactly: a string, or an integer within 2^53. A fraction
 * (`1.5`), `1e400` or an integer past 2^53 (which JSON.parse rounds: echoed, it names another
 * request) is null; stdio echoed them as read (session 16's note).
 */
export function answerableRequestId(value: unknown): string | number | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const { id, method } = value as { id?: unknown; method?: unknown };
  if (typeof method !== "string") return null;
  if (typeof id === "string" || Number.isSafeInteger(id)) return id as string | number;
  return null;
}

/**
 * Why a message with a sound envelope (`jsonrpc: "2.0"`, a string method) is still no JSON-RPC
 * message the SDK reads: its `params` or `params._meta` is not an object, or its progress token is
 * neither a string nor an integer. Such a message was refused as "must be a JSON-RPC 2.0 message
 * (jsonrpc, method, id)", which it reads as, so the client could not tell what to fix. Null when
 * the envelope itself is wrong (the general message says it) or nothing here is.
 */
export function paramsRefusal(value: unknown): string | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const { jsonrpc, method, params } = value as { jsonrpc?: unknown; method?: unknown; params?: unknown };
  if (jsonrpc !== "2.0" || typeof method !== "string" || params === undefined) return null;
  const isObject = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(params)) return "params must be an object of named parameters";
  const meta = (params as { _meta?: unknown })._meta;
  if (meta === undefined) return null;
  if (!isObject(meta)) return "params._meta must be an object (or left out)";
  const token = (meta as { progressToken?: unknown }).progressToken;
  if (token === undefined || typeof token === "string" || Number.isInteger(token)) return null;
  return "params._meta.progressToken must be a string or an integer (or left out)";
}

/** A JSON-RPC error response; its id null unless the request's id was read (answerableRequestId). */
export function jsonRpcErrorResponse(
  status: number,
  code: number,
  message: string,
  data?: Record<string, unknown>,
  headers: Record<string, string> = {},
  id: string | number | null = null,
): Response {
  // Written with the hidden characters escaped, as the endpoints' answers are: a message may quote
  // the caller's id or text.
  const body = JSON.stringify({ jsonrpc: "2.0", error: data ? { code, message, data } : { code, message }, id });
  return new Response(escapeHiddenInJson(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/**
 * The id an answer to a message refused for a key held twice carries: the request's, read as any
 * refused request's is, unless the key held twice is its `id` (then null: which was meant cannot
 * be told). A client's call then ends at once rather than at its own timeout.
 */
export function duplicateKeyAnswerId(err: DuplicateKeyError): string | number | null {
  return err.idIsTwice ? null : answerableRequestId(err.value);
}

function codeOf(err: ServiceError): number {
  // JSON it is, read whole: refused as a request, not as text that does not parse.
  if (err instanceof DuplicateKeyError) return JSON_RPC_ERRORS.invalidRequest;
  if (err instanceof BodyParseError) return JSON_RPC_ERRORS.parseError;
  if (err instanceof InvalidAgentHeaderError) return JSON_RPC_ERRORS.invalidAgent;
  if (err.status === 413) return JSON_RPC_ERRORS.tooLarge;
  if (err.status === 429) return JSON_RPC_ERRORS.rateLimited;
  if (err.status === 503) return JSON_RPC_ERRORS.unavailable;
  if (err.status >= 500) return JSON_RPC_ERRORS.internalError;
  return JSON_RPC_ERRORS.badRequest;
}

/** A refusal of the colony's layer, as an MCP endpoint answers it; `data.code` is the REST code. */
export function serviceErrorAsJsonRpc(err: ServiceError): Response {
  const id = err instanceof DuplicateKeyError ? duplicateKeyAnswerId(err) : null;
  return jsonRpcErrorResponse(err.status, codeOf(err), err.message, { code: err.code }, err.headers, id);
}

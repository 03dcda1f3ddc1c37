// Which browser pages may call an MCP endpoint. The MCP specification asks Streamable HTTP servers
// to validate Origin against DNS rebinding: a page on evil.example whose name is made to resolve to
// 127.0.0.1 sends Origin http://evil.example:8090 and Host evil.example:8090, so "same origin"
// must not be judged from the Host header the attacker chose. A request passes when it has no
// Origin (MCP clients that are not browsers send none), when its Origin is a loopback name on the
// port the request came to (127.0.0.1, localhost, [::1]), or when it is listed: the colony's
// COLONY_PUBLIC_URL and COLONY_ALLOWED_ORIGINS. Listed origins also get CORS headers, so a
// browser-based MCP client served from them can read the answers.
//
// The SDK's transport has `allowedOrigins` too, but it compares the raw header with a fixed list,
// knows no loopback-on-this-port rule, sends no CORS headers, and answers its generic -32000;
// the colony applies this policy before the transport instead (the standalone server keeps the
// SDK's allowedHosts check of Host as well).
import { JSON_RPC_ERRORS, jsonRpcErrorResponse } from "./jsonrpc-errors";

const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"];

/** Request headers a browser-based MCP client sends (preflight answer). */
const CORS_ALLOW_HEADERS = "content-type, accept, x-colony-agent, mcp-protocol-version, mcp-session-id, last-event-id";
/** Response headers such a client may read. */
const CORS_EXPOSE_HEADERS = "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Mcp-Session-Id";

/** A header's origin as browsers write it (URL.origin), or null for "null", garbage or another scheme. */
function normalize(origin: string): string | null {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch {
    return null;
  }
}

export class OriginPolicy {
  private readonly listed: Set<string>;

  /** `listed`: origins as written in configuration (normalized here). */
  constructor(listed: readonly string[]) {
    this.listed = new Set(listed.map(normalize).filter((o): o is string => o !== null));
  }

  /** Loopback names on the port the request came to: a browser's URL and Host always agree on it. */
  private isOwnLoopback(origin: URL, request: Request): boolean {
    const port = new URL(request.url).port;
    return LOOPBACK_HOSTS.includes(origin.hostname) && origin.port === port && origin.protocol === "http:";
  }

  /** "absent", "own", "listed" or "foreign". */
  classify(request: Request): "absent" | "own" | "listed" | "foreign" {
    const header = request.headers.get("origin");
    if (header === null) return "absent";
    const origin = normalize(header);
    if (origin === null) return "foreign";
    if (this.listed.has(origin)) return "listed";
    return this.isOwnLoopback(new URL(origin), request) ? "own" : "foreign";
  }

  /** 403 with a JSON-RPC error for a foreign Origin; null when the request may go on. */
  refusal(request: Request): Response | null {
    if (this.classify(request) !== "foreign") return null;
    return jsonRpcErrorResponse(
      403,
      JSON_RPC_ERRORS.forbiddenOrigin,
      `Forbidden: requests from the web origin ${JSON.stringify(request.headers.get("origin"))} are not allowed; ` +
        "the operator can allow it with COLONY_ALLOWED_ORIGINS",
      { code: "forbidden_origin" },
    );
  }

  /** CORS headers for an answer to a listed origin (none otherwise). */
  corsHeaders(request: Request): Record<string, string> {
    if (this.classify(request) !== "listed") return {};
    return {
      "Access-Control-Allow-Origin": request.headers.get("origin")!,
      "Access-Control-Expose-Headers": CORS_EXPOSE_HEADERS,
      Vary: "Origin",
    };
  }

  /** The answer to a CORS preflight (OPTIONS): 204 for a listed origin, else 403. */
  preflight(request: Request): Response {
    const refused = this.refusal(request);
    if (refused) return refused;
    return new Response(null, {
      status: 204,
      headers: {
        ...this.corsHeaders(request),
        "Access-Control-Allow-Methods": "POST",
        "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
        "Access-Control-Max-Age": "600",
      },
    });
  }

  /** The response with CORS headers added when the request came from a listed origin. */
  withCors(request: Request, response: Response): Response {
    for (const [k, v] of Object.entries(this.corsHeaders(request))) response.headers.set(k, v);
    return response;
  }
}

// Stateless Streamable HTTP (interface.md §4.14): every POST gets its own McpServer and transport,
// so replicas need no shared session state and one caller's request never sees another's.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** Answers one MCP POST with a fresh server; both are closed once the response is complete. */
export async function handleStatelessPost(
  server: Server,
  request: Request,
  parsedBody: unknown,
  /** Host headers to accept (DNS-rebinding protection of a server on loopback); all when omitted. */
  allowedHosts?: string[],
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    ...(allowedHosts ? { enableDnsRebindingProtection: true, allowedHosts } : {}),
    // Plain JSON answers: a stateless server never sends requests back to the client, so there is
    // nothing to stream, and the response is complete when handleRequest returns.
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    return await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  } finally {
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

// The error shape of interface.md §7: { error: { code, message, details? } }.
import type { ValidationDetail } from "../core/trail";
import type { Logger } from "../log";
import { ServiceError } from "../service/errors";

export function errorBody(code: string, message: string, details?: ValidationDetail[]) {
  return { error: details ? { code, message, details } : { code, message } };
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

export function errorResponse(err: ServiceError): Response {
  return jsonResponse(err.status, errorBody(err.code, err.message, err.details), err.headers);
}

/**
 * Renders a refusal in a route's own shape. It gets the request, so that a route whose answers
 * carry CORS headers (the hosted MCP endpoint) adds them to the refusals of the outer layer too.
 */
export type ErrorRenderer = (err: ServiceError, request: Request) => Response;

/**
 * Routes whose refusals take another shape than the REST one, by path (the hosted MCP endpoint
 * answers JSON-RPC error objects); given by the composition root with the routes themselves.
 */
export type ErrorShapes = ReadonlyMap<string, ErrorRenderer>;

/**
 * Options for Bun.serve that no server of Colony goes without: Bun's development error page (500,
 * HTML quoting the source lines around a throw; on by default unless NODE_ENV=production) is
 * never shown, and an exception that escapes every layer is logged and answered in the door's
 * own error shape (`answer`), without its message or stack. The port is the server's alone: out of
 * development mode Bun sets SO_REUSEPORT unless told not to, and two servers that both set it
 * share a port, so a second colony (or `colony mcp --http`) started on a taken port listened
 * beside the first and the kernel split the requests between them, instead of EADDRINUSE.
 */
export function serverFallbacks(logger: Logger, answer: (err: ServiceError) => Response) {
  return {
    development: false,
    reusePort: false,
    error(err: Error): Response {
      logger.error("request failed outside every handler", { error: String(err?.message ?? err).slice(0, 300) });
      return answer(new ServiceError("internal"));
    },
  } as const;
}

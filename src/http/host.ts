// RFC 9112 §3.2: a request whose Host field value is not a valid host is answered 400. Bun gives
// such a request (`Host: evil\x9b2J`, `Host: [::1`) a URL that does not parse, often its path
// alone: code reading `new URL(request.url)` threw, and the colony's POST routes, its pages and
// /mcp, and `colony mcp --http`, answered Bun's development error page instead (500, HTML quoting
// the source lines around the throw).
import { ServiceError } from "../service/errors";

/**
 * The request's URL as the layers may read it: its own when it parses; for a request without a
 * Host (HTTP/1.0 needs none, and an empty one says the target has no authority: a load
 * balancer's health check) its path on `http://localhost`; null when its Host is not a valid
 * host (refused with hostRefusal).
 */
export function readableUrl(request: Request): string | null {
  if (URL.canParse(request.url)) return request.url;
  if (request.headers.get("host")) return null;
  return new URL(request.url, "http://localhost").href;
}

/** 400 invalid_request for a request whose Host is not a valid host. */
export function hostRefusal(): ServiceError {
  return new ServiceError("invalid_request", "the Host header is not a valid host name or address (RFC 9112 §3.2)");
}

/** The request's path, also when its URL does not parse. */
export function requestPath(request: Request): string {
  try {
    return new URL(request.url, "http://localhost").pathname;
  } catch {
    // An absolute URL whose authority does not parse (`http://[::1/mcp`): the path after it.
    return /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/.exec(request.url)?.[1] || "/";
  }
}

/**
 * A 404's message for a path no route takes. A doubled slash (`//v1/feed`, `/v1//feed`) is what a
 * client makes joining a base URL that ends in `/` to `/v1/…`; it is not routed as the single slash
 * (a proxy's rule on `/v1/admin` would not see `//v1/admin`), so the message says what to fix.
 */
export function noRouteMessage(path: string): string {
  if (path.includes("//")) {
    return "no such route: the path has an empty segment (//), as a base URL ending in / joined to a path beginning with / makes; send it with one slash";
  }
  // `/MCP`, `/V1/feed`: a hand-written URL or a config tool that capitalises. Not routed (paths are
  // exact, as a proxy's rules read them); the message says what differs.
  if (/[A-Z]/.test(path) && path !== path.toLowerCase() && /^[\x21-\x7e]*$/.test(path)) {
    return "no such route: paths are lowercase; send it in lowercase";
  }
  return "no such route";
}

/**
 * The route an unrouted path reads as: empty segments and a trailing slash dropped, lowercased
 * (`//mcp`, `/MCP`, `/mcp//`: /mcp). A 404 is answered in the shape of the route it reads as, so
 * a client of that route (an MCP client posting to `//mcp`) can parse why it was refused.
 */
export function routeReadAs(path: string): string {
  return path
    .replace(/\/{2,}/g, "/")
    .replace(/(.)\/$/, "$1")
    .toLowerCase();
}

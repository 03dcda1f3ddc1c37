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
 * (a proxy's rule on `/v1/admin` would not see `//v1/admin`), so the message says what to fix; so
 * is an encoded slash (`/v1%2Ffeed`: a client that escaped the whole path). `methods`: those that
 * another route takes at this path (`GET /v1/search`), when the path is right and the method not.
 */
export function noRouteMessage(path: string, method = "", methods: string[] = []): string {
  if (methods.length > 0) return `no such route for ${method}: this path takes ${methods.join(", ")}`;
  if (path.includes("//")) {
    return "no such route: the path has an empty segment (//), as a base URL ending in / joined to a path beginning with / makes; send it with one slash";
  }
  if (/%2f/i.test(path)) return "no such route: the path holds an encoded slash (%2F); send / as it is";
  // `/MCP`, `/V1/feed`: a hand-written URL or a config tool that capitalises. Not routed (paths are
  // exact, as a proxy's rules read them); the message says what differs. The hex digits of a
  // percent-escape (`%2F`, `%E2`) are no capitals.
  const letters = path.replace(/%[0-9A-Fa-f]{2}/g, "");
  if (/[A-Z]/.test(letters) && /^[\x21-\x7e]*$/.test(path)) {
    return "no such route: paths are lowercase; send it in lowercase";
  }
  return "no such route";
}

/** A route as the router lists it: a method and a path pattern (`/v1/trails/:id`). */
export interface RoutePattern {
  method: string;
  path: string;
}

/**
 * The methods routes take at `path`, in a stable order (HEAD beside GET, as the server answers
 * HEAD for every GET route): what an Allow header names. Patterns' `:param` segments match any
 * one segment; `*` the rest.
 */
export function methodsAt(routes: RoutePattern[], path: string): string[] {
  const methods = new Set<string>();
  const routed = path.replace(/(.)\/$/, "$1"); // routes take a trailing slash as without
  for (const r of routes) {
    if (r.method === "ALL" || !patternOf(r.path).test(routed)) continue;
    methods.add(r.method);
    if (r.method === "GET") methods.add("HEAD");
  }
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
  return [...methods].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
}

const patterns = new Map<string, RegExp>();
function patternOf(route: string): RegExp {
  let re = patterns.get(route);
  if (!re) {
    const body = route
      .split("/")
      .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/");
    re = new RegExp(`^${body}$`);
    patterns.set(route, re);
  }
  return re;
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

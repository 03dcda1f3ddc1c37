// Static pages served from the binary (the approval page, the API reference, the operator console):
// imported as text so that they are embedded in the compiled binary, served with a strict CSP (no
// inline script or style, nothing from another origin) and the same security headers.
import { createHash } from "node:crypto";
import { ifNoneMatchNames } from "../core/entity-tags";

export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  "Content-Security-Policy": PAGE_CSP,
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

export interface Asset {
  body: string;
  headers: Record<string, string>;
  /** A page: its relative links (scripts, styles, the API) only work at its own path. */
  page?: boolean;
}

export function asset(body: string, contentType: string, cacheControl: string): Asset {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, headers: { ...SECURITY_HEADERS, "Content-Type": contentType, "Cache-Control": cacheControl, ETag: etag } };
}

/** Pages are never cached; scripts and styles revalidate by ETag, so an upgrade never pairs a new page with an old script. */
export const page = (body: string): Asset => ({ ...asset(body, "text/html; charset=utf-8", "no-store"), page: true });
export const script = (body: string) => asset(body, "text/javascript; charset=utf-8", "no-cache");
export const style = (body: string) => asset(body, "text/css; charset=utf-8", "no-cache");

export function serve(a: Asset, request: Request): Response {
  // The router serves `/console/` as `/console`, but there the page's relative links name
  // `/console/console.js` and `/console/v1/…`: a blank page. Sent to its own path instead; relative,
  // so a path prefix in front of the colony stays, and the browser keeps the fragment (a draft id).
  const path = new URL(request.url).pathname;
  if (a.page && path.length > 1 && path.endsWith("/")) {
    const name = path.slice(0, -1).split("/").pop()!;
    return new Response(null, { status: 308, headers: { Location: `../${name}`, "Cache-Control": "no-store" } });
  }
  if (a.headers["Cache-Control"] !== "no-store" && ifNoneMatchNames(request.headers.get("if-none-match"), a.headers.ETag!)) {
    return new Response(null, { status: 304, headers: a.headers });
  }
  return new Response(a.body, { status: 200, headers: a.headers });
}

// The draft approval page (docs/approval-page.md): static files (page, script, style, icon), imported as text so that
// they are embedded in the compiled binary, served with a strict CSP. The page talks to the
// draft API on the same origin; the draft id travels in the URL fragment only.
import { createHash } from "node:crypto";
import type { Elysia } from "elysia";
import html from "../static/approve.html" with { type: "text" };
import js from "../static/approve.js" with { type: "text" };
import css from "../static/approve.css" with { type: "text" };
import icon from "../static/approve-icon.svg" with { type: "text" };

export const APPROVE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  "Content-Security-Policy": APPROVE_CSP,
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

interface Asset {
  body: string;
  headers: Record<string, string>;
}

function asset(body: string, contentType: string, cacheControl: string): Asset {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, headers: { ...SECURITY_HEADERS, "Content-Type": contentType, "Cache-Control": cacheControl, ETag: etag } };
}

// The page is never cached (it is the credential's landing place); script and style revalidate
// by ETag, so a colony upgrade never pairs a new page with an old script.
const PAGE = asset(html, "text/html; charset=utf-8", "no-store");
const SCRIPT = asset(js, "text/javascript; charset=utf-8", "no-cache");
const STYLE = asset(css, "text/css; charset=utf-8", "no-cache");
// Declared by the page, so the browser does not ask for /favicon.ico (a 404 the console reports).
const ICON = asset(icon, "image/svg+xml", "public, max-age=86400");

function serve(a: Asset, request: Request): Response {
  if (a.headers["Cache-Control"] !== "no-store" && request.headers.get("if-none-match") === a.headers.ETag) {
    return new Response(null, { status: 304, headers: a.headers });
  }
  return new Response(a.body, { status: 200, headers: a.headers });
}

export function approveRoutes() {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .get("/approve.html", ({ request }) => serve(PAGE, request))
      .get("/approve.js", ({ request }) => serve(SCRIPT, request))
      .get("/approve.css", ({ request }) => serve(STYLE, request))
      .get("/approve-icon.svg", ({ request }) => serve(ICON, request));
}

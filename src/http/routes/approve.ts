// The draft approval page (docs/approval-page.md): static files (page, script, style, icon), imported as text so that
// they are embedded in the compiled binary, served with a strict CSP. The page talks to the
// draft API on the same origin; the draft id travels in the URL fragment only.
import type { Elysia } from "elysia";
import html from "../static/approve.html" with { type: "text" };
import js from "../static/approve.js" with { type: "text" };
import css from "../static/approve.css" with { type: "text" };
import icon from "../static/approve-icon.svg" with { type: "text" };
import baseCss from "../static/base.css" with { type: "text" };
import { asset, page, PAGE_CSP, script, serve, style } from "../static-assets";

export const APPROVE_CSP = PAGE_CSP;

const PAGE = page(html);
const SCRIPT = script(js);
const STYLE = style(css);
// The palette and base rules every page links before its own stylesheet (the console and /docs too).
const BASE_STYLE = style(baseCss);
// Declared by the page, so the browser does not ask for /favicon.ico (a 404 the console reports).
const ICON = asset(icon, "image/svg+xml", "public, max-age=86400");

export function approveRoutes() {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .get("/approve.html", ({ request }) => serve(PAGE, request))
      .get("/approve.js", ({ request }) => serve(SCRIPT, request))
      .get("/approve.css", ({ request }) => serve(STYLE, request))
      .get("/base.css", ({ request }) => serve(BASE_STYLE, request))
      .get("/approve-icon.svg", ({ request }) => serve(ICON, request));
}

// GET /openapi.json (the OpenAPI 3.1 document, built once from the schemas) and GET /docs (a
// reference page that renders it, served from the binary: works without any other origin).
import type { Elysia } from "elysia";
import html from "../static/docs.html" with { type: "text" };
import js from "../static/docs.js" with { type: "text" };
import css from "../static/ops.css" with { type: "text" };
import dom from "../static/dom.js" with { type: "text" };
import { openApiDocument } from "../openapi";
import { asset, page, script, serve, style } from "../static-assets";

const PAGE = page(html);
const SCRIPT = script(js);
export const OPS_STYLE = style(css);
// The DOM helper docs.js and console.js import (both pages load their scripts as modules).
const DOM_SCRIPT = script(dom);

export function docsRoutes() {
  // Built once: an ETag lets a client revalidate it (304) instead of fetching it whole each time.
  const document = asset(JSON.stringify(openApiDocument()), "application/json; charset=utf-8", "no-cache");
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .get("/openapi.json", ({ request }) => serve(document, request))
      .get("/docs", ({ request }) => serve(PAGE, request))
      .get("/docs.js", ({ request }) => serve(SCRIPT, request))
      .get("/ops.css", ({ request }) => serve(OPS_STYLE, request))
      .get("/dom.js", ({ request }) => serve(DOM_SCRIPT, request));
}

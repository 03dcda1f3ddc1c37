// Operator routes: GET /metrics (Prometheus), the console page and its admin API. Every JSON and
// metrics answer needs the operator token (401/501 as DELETE /v1/trails/{id}); the page itself is
// static and asks for the token. Rules live in the service core (src/service/admin.ts).
import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import html from "../static/console.html" with { type: "text" };
import js from "../static/console.js" with { type: "text" };
import { jsonResponse } from "../errors";
import { queryWithRepeats } from "../query";
import { page, script, serve } from "../static-assets";

/** Renders the metrics exposition (the Prometheus adapter; null when metrics are off). */
export interface MetricsExporter {
  contentType: string;
  render(): Promise<string>;
}

const PAGE = page(html);
const SCRIPT = script(js);
const NO_STORE = { "Cache-Control": "no-store" };

export function operatorRoutes(service: ColonyService, exporter: MetricsExporter | null) {
  const auth = (request: Request) => request.headers.get("authorization");
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .get("/metrics", async ({ request }) => {
        service.admin.authorize(auth(request));
        // With a token configured the exporter is always wired (src/compose.ts).
        const text = exporter ? await exporter.render() : "";
        return new Response(text, { headers: { "content-type": exporter?.contentType ?? "text/plain", ...NO_STORE } });
      })
      .get("/console", ({ request }) => serve(PAGE, request))
      .get("/console.js", ({ request }) => serve(SCRIPT, request))
      .get("/v1/admin/overview", async ({ request }) => jsonResponse(200, await service.admin.overview(auth(request)), NO_STORE))
      .get("/v1/admin/series", async ({ request, query }) =>
        jsonResponse(200, await service.admin.series(auth(request), queryWithRepeats(request, query)), NO_STORE),
      )
      .post("/v1/admin/search", async ({ request, body }) =>
        jsonResponse(200, await service.admin.explainSearch(auth(request), body), NO_STORE),
      )
      .get("/v1/admin/trails/:id", async ({ request, params }) =>
        jsonResponse(200, await service.admin.trail(auth(request), params.id), NO_STORE),
      );
}

// Operator routes: GET /metrics (Prometheus). It needs the operator token (401/501 as
// DELETE /v1/trails/{id}); the rules live in the service core (src/service/admin.ts).
import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";

/** Renders the metrics exposition (the Prometheus adapter; null when metrics are off). */
export interface MetricsExporter {
  contentType: string;
  render(): Promise<string>;
}

const NO_STORE = { "Cache-Control": "no-store" };

export function operatorRoutes(service: ColonyService, exporter: MetricsExporter | null) {
  const auth = (request: Request) => request.headers.get("authorization");
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app.get("/metrics", async ({ request }) => {
      service.admin.authorize(auth(request));
      // With a token configured the exporter is always wired (src/compose.ts).
      const text = exporter ? await exporter.render() : "";
      return new Response(text, { headers: { "content-type": exporter?.contentType ?? "text/plain", ...NO_STORE } });
    });
}

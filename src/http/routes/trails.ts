// Trail routes: thin adapters from HTTP to the trail service.
import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { contextOf, meteredCall } from "../context";
import { jsonResponse } from "../errors";

export function trailRoutes(service: ColonyService) {
  // GET /v1/trails/by-fingerprint/{fp} is served outside Elysia: see ./lookup.ts.
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post("/v1/trails", async ({ request, body }) =>
        jsonResponse(202, await meteredCall(request, (client) => service.trails.publish(body, client))),
      )
      .get("/v1/trails/:id", async ({ params }) => jsonResponse(200, await service.trails.status(params.id)))
      .post("/v1/trails/:id/outcomes", async ({ params, body, request }) => {
        return jsonResponse(202, await service.trails.reportOutcome(params.id, body, contextOf(request).client));
      })
      .delete("/v1/trails/:id", async ({ params, request, body }) =>
        jsonResponse(200, await service.trails.remove(params.id, request.headers.get("authorization"), body)),
      );
}

// Trail routes: thin adapters from HTTP to the trail service.
import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { ServiceError } from "../../service/errors";
import { contextOf } from "../context";
import { jsonResponse } from "../errors";

const FOUND_CACHE = "public, max-age=300";
const NOT_FOUND_CACHE = "public, max-age=60";

export function trailRoutes(service: ColonyService) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post("/v1/trails", ({ request, body }) => {
        const ctx = contextOf(request);
        ctx.quota = service.trails.publishQuotaState(ctx.client.address);
        const { body: published, quota } = service.trails.publish(body, ctx.client);
        ctx.quota = quota;
        return jsonResponse(202, published);
      })
      .get("/v1/trails/by-fingerprint/:fp", ({ params, query }) => {
        try {
          const envelope = service.trails.byFingerprint(params.fp, {
            errorType: typeof query.error_type === "string" ? query.error_type : undefined,
          });
          return jsonResponse(200, envelope, { "Cache-Control": FOUND_CACHE });
        } catch (err) {
          if (err instanceof ServiceError && err.status === 404) {
            throw new ServiceError(404, err.code, err.message, undefined, { "Cache-Control": NOT_FOUND_CACHE });
          }
          throw err;
        }
      })
      .get("/v1/trails/:id", ({ params }) => jsonResponse(200, service.trails.status(params.id)))
      .post("/v1/trails/:id/outcomes", ({ params, body, request }) => {
        const { fingerprint: _fp, ...result } = service.trails.reportOutcome(params.id, body, contextOf(request).client);
        return jsonResponse(202, result);
      })
      .delete("/v1/trails/:id", ({ params, request }) =>
        jsonResponse(200, service.trails.remove(params.id, request.headers.get("authorization"))),
      );
}

// Trail routes: thin adapters from HTTP to the trail service.
import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { ServiceError } from "../../service/errors";
import { contextOf, meteredCall } from "../context";
import { jsonResponse } from "../errors";

const FOUND_CACHE = "public, max-age=300";
const NOT_FOUND_CACHE = "public, max-age=60";

/** Serialized lookup answers, dropped as soon as the trails behind a fingerprint change. */
const MAX_CACHED_LOOKUPS = 10_000;

export function trailRoutes(service: ColonyService) {
  // fingerprint -> error_type ("" for none) -> serialized envelope
  const lookups = new Map<string, Map<string, string>>();
  service.onFingerprintChanged((fp) => lookups.delete(fp));
  const cachedLookup = (fp: string, errorType = ""): string => {
    let byType = lookups.get(fp);
    let body = byType?.get(errorType);
    if (body === undefined) {
      body = JSON.stringify(service.trails.byFingerprint(fp, { errorType: errorType || undefined }));
      if (!byType) {
        if (lookups.size >= MAX_CACHED_LOOKUPS) lookups.delete(lookups.keys().next().value!); // oldest first
        byType = new Map();
        lookups.set(fp, byType);
      }
      if (byType.size < 16) byType.set(errorType, body);
    }
    return body;
  };
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post("/v1/trails", ({ request, body }) =>
        jsonResponse(
          202,
          meteredCall(request, (a) => service.trails.publishQuotaState(a), (client) => service.trails.publish(body, client)),
        ),
      )
      .get("/v1/trails/by-fingerprint/:fp", ({ params, query }) => {
        try {
          const body = cachedLookup(params.fp, typeof query.error_type === "string" ? query.error_type : undefined);
          return new Response(body, {
            headers: { "content-type": "application/json; charset=utf-8", "Cache-Control": FOUND_CACHE },
          });
        } catch (err) {
          if (err instanceof ServiceError && err.status === 404) {
            throw new ServiceError(404, err.code, err.message, undefined, { "Cache-Control": NOT_FOUND_CACHE });
          }
          throw err;
        }
      })
      .get("/v1/trails/:id", ({ params }) => jsonResponse(200, service.trails.status(params.id)))
      .post("/v1/trails/:id/outcomes", ({ params, body, request }) => {
        return jsonResponse(202, service.trails.reportOutcome(params.id, body, contextOf(request).client));
      })
      .delete("/v1/trails/:id", ({ params, request }) =>
        jsonResponse(200, service.trails.remove(params.id, request.headers.get("authorization"))),
      );
}

import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { contextOf } from "../context";
import { jsonResponse } from "../errors";

export function draftRoutes(service: ColonyService) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post("/v1/drafts", ({ body, request }) => {
        const ctx = contextOf(request);
        ctx.quota = service.drafts.quotaState(ctx.client.address);
        const { body: draft, quota } = service.drafts.create(body, ctx.client);
        ctx.quota = quota;
        return jsonResponse(201, draft, { "Cache-Control": "no-store" });
      })
      .get("/v1/drafts/:id", ({ params }) => jsonResponse(200, service.drafts.get(params.id), { "Cache-Control": "no-store" }))
      .post("/v1/drafts/:id/publish", ({ params, request }) => {
        const ctx = contextOf(request);
        ctx.quota = service.trails.publishQuotaState(ctx.client.address);
        const { body, quota } = service.drafts.publish(params.id, ctx.client);
        ctx.quota = quota;
        return jsonResponse(202, body);
      })
      .post("/v1/drafts/:id/discard", ({ params }) => jsonResponse(200, service.drafts.discard(params.id)));
}

import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { meteredCall } from "../context";
import { jsonResponse } from "../errors";

export function draftRoutes(service: ColonyService) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .post("/v1/drafts", async ({ body, request }) => {
        const draft = await meteredCall(request, (client) => service.drafts.create(body, client));
        return jsonResponse(201, draft, { "Cache-Control": "no-store" });
      })
      .get("/v1/drafts/:id", async ({ params }) => {
        const { body, tag } = await service.drafts.read(params.id);
        return jsonResponse(200, body, { "Cache-Control": "no-store", ...(tag ? { ETag: `"${tag}"` } : {}) });
      })
      .post("/v1/drafts/:id/publish", async ({ params, request }) =>
        jsonResponse(
          202,
          await meteredCall(request, (client) => service.drafts.publish(params.id, client, request.headers.get("if-match"))),
        ),
      )
      .post("/v1/drafts/:id/discard", async ({ params }) => jsonResponse(200, await service.drafts.discard(params.id)));
}

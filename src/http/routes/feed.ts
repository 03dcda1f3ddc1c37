import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { jsonResponse } from "../errors";
import { queryWithRepeats } from "../query";

export function feedRoutes(service: ColonyService) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .get("/v1/feed", async ({ request, query }) => jsonResponse(200, await service.feed.feed(queryWithRepeats(request, query))))
      .get("/v1/activity", async ({ request, query }) => jsonResponse(200, await service.feed.activity(queryWithRepeats(request, query))))
      .get("/v1/stats", async () => jsonResponse(200, await service.feed.stats()));
}

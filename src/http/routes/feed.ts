import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { jsonResponse } from "../errors";

export function feedRoutes(service: ColonyService) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .get("/v1/feed", async ({ query }) => jsonResponse(200, await service.feed.feed(query)))
      .get("/v1/activity", async ({ query }) => jsonResponse(200, await service.feed.activity(query)))
      .get("/v1/stats", async () => jsonResponse(200, await service.feed.stats()));
}

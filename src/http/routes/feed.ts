import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { jsonResponse } from "../errors";

export function feedRoutes(service: ColonyService) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app
      .get("/v1/feed", ({ query }) => jsonResponse(200, service.feed.feed(query)))
      .get("/v1/activity", ({ query }) => jsonResponse(200, service.feed.activity(query)))
      .get("/v1/stats", () => jsonResponse(200, service.feed.stats()));
}

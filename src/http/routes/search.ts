import type { Elysia } from "elysia";
import type { ColonyService } from "../../service/colony";
import { contextOf } from "../context";
import { jsonResponse } from "../errors";

export function searchRoutes(service: ColonyService) {
  return <A extends Elysia<any, any, any, any, any, any, any>>(app: A) =>
    app.post("/v1/search", async ({ body, request }) => jsonResponse(200, await service.search.search(body, contextOf(request).client)));
}

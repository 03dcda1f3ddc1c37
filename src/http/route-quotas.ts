// Which routes are metered by their own quota rather than the general one. The server layer looks
// the quota up before it reads the body, so every answer of such a route, a 413 or a malformed
// body included, carries that quota's RateLimit headers.
import type { ColonyService } from "../service/colony";
import type { QuotaState } from "../service/rate-limit";

export type RouteQuota = (method: string, path: string, address: string) => QuotaState | null;

const DRAFT_PUBLISH = /^\/v1\/drafts\/[^/]+\/publish$/;

export function routeQuotas(service: ColonyService): RouteQuota {
  return (method, path, address) => {
    if (method !== "POST") return null;
    if (path === "/v1/trails" || DRAFT_PUBLISH.test(path)) return service.trails.publishQuotaState(address);
    if (path === "/v1/drafts") return service.drafts.quotaState(address);
    return null;
  };
}

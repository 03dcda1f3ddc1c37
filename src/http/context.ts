// Per-request facts computed by the outer server layer, looked up by the Elysia handlers.
import type { ClientIdentity } from "./client";
import type { QuotaState } from "../service/quotas";

export interface RequestContext {
  client: ClientIdentity;
  /** Route template, for logs (never the raw path: it may hold a draft id). */
  route: string;
  /** The quota shown in the RateLimit headers; a route with its own quota replaces it. */
  quota: QuotaState;
}

const contexts = new WeakMap<Request, RequestContext>();

export function bindContext(request: Request, ctx: RequestContext): void {
  contexts.set(request, ctx);
}

/**
 * Runs a call metered by the route's own quota (publish, drafts). The server layer has already put
 * that quota in the context (src/service/quotas.ts), so a refusal reports it; afterwards the
 * RateLimit headers show it with the use counted.
 */
export async function meteredCall<T>(
  request: Request,
  call: (client: ClientIdentity) => Promise<{ body: T; quota: QuotaState }>,
): Promise<T> {
  const ctx = contextOf(request);
  const { body, quota } = await call(ctx.client);
  ctx.quota = quota;
  return body;
}

export function contextOf(request: Request): RequestContext {
  const ctx = contexts.get(request);
  if (!ctx) throw new Error("request reached a handler without passing the server layer");
  return ctx;
}

// Per-request facts computed by the outer server layer, looked up by the Elysia handlers.
import type { ClientIdentity } from "./client";
import type { QuotaState } from "../service/rate-limit";

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
 * Runs a call metered by the route's own quota (publish, drafts): the RateLimit headers show that
 * quota, before the call (so a refusal reports it) and after it (with the use counted).
 */
export async function meteredCall<T>(
  request: Request,
  current: (address: string) => QuotaState,
  call: (client: ClientIdentity) => Promise<{ body: T; quota: QuotaState }>,
): Promise<T> {
  const ctx = contextOf(request);
  ctx.quota = current(ctx.client.address);
  const { body, quota } = await call(ctx.client);
  ctx.quota = quota;
  return body;
}

export function contextOf(request: Request): RequestContext {
  const ctx = contexts.get(request);
  if (!ctx) throw new Error("request reached a handler without passing the server layer");
  return ctx;
}

// Errors with the contract's status and code (interface.md §7). Thrown by the service core;
// the HTTP layer renders them as { error: { code, message, details? } }, the MCP tools as tool errors.
import type { ValidationDetail } from "../core/trail";

export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ValidationDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The store, or 503 unavailable when it did not start (readiness names the failing check). */
export function requireStore<S>(store: S | null): S {
  if (!store) throw new ServiceError(503, "unavailable", "the store is not available; retry with backoff");
  return store;
}

/** The caller of an operation, as the transport saw it. */
export interface Caller {
  /** The client address; used for quotas only, never stored or logged raw. */
  address: string;
  /** The agent id sent by the client, or the pseudonym of its address. */
  agent: string;
  /** True when the agent id was declared (X-Colony-Agent or COLONY_AGENT_ID). */
  agentDeclared: boolean;
}

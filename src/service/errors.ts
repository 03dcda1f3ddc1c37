// Errors with the contract's code (interface.md §7); the status comes from the code's row in
// core/error-codes.ts. Thrown by the service core; the HTTP layer renders them as
// { error: { code, message, details? } }, the MCP tools as tool errors.
import { ERROR_CODES, type ErrorCode } from "../core/error-codes";
import type { ValidationDetail } from "../core/trail";

export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code].message,
    readonly details?: ValidationDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_CODES[code].status;
  }
}

/** The store, or 503 unavailable when it did not start (readiness names the failing check). */
export function requireStore<S>(store: S | null): S {
  if (!store) throw new ServiceError("unavailable", "the store is not available; retry with backoff");
  return store;
}

/** The caller of an operation, as the transport saw it. */
export interface Caller {
  /** The client address; used for quotas only, never stored or logged raw. */
  address: string;
  /**
   * The keyed pseudonym of the client address (`anon-…`): the only form of the address a rule may
   * store, e.g. to limit counted outcome reports per address whatever agent ids it sends.
   */
  client: string;
  /** The agent id sent by the client, or the pseudonym of its address. */
  agent: string;
  /** True when the agent id was declared (X-Colony-Agent or COLONY_AGENT_ID). */
  agentDeclared: boolean;
}

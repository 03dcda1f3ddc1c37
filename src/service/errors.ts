// Errors with the contract's code (interface.md §7); the status comes from the code's row in
// core/error-codes.ts. Thrown by the service core; the HTTP layer renders them as
// { error: { code, message, details? } }, the MCP tools as tool errors.
import { ERROR_CODES, type ErrorCode } from "../core/error-codes";
import type { ValidationDetail } from "../core/trail";
import { StoreUnavailableError } from "../store/ports";

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

/** Seconds a client is asked to wait when the store could not serve it (a full disk, a database away). */
export const STORE_RETRY_AFTER_S = 30;
const RETRY_AFTER = { "Retry-After": String(STORE_RETRY_AFTER_S) };

/**
 * The contract's error for anything thrown below an answer: a ServiceError as it is, a write the
 * store could not keep (disk full, I/O error) as 503 unavailable with Retry-After, anything else
 * null (a defect: the caller answers 500 internal and logs it).
 */
export function toServiceError(err: unknown): ServiceError | null {
  if (err instanceof ServiceError) return err;
  if (err instanceof StoreUnavailableError) {
    return new ServiceError(
      "unavailable",
      "the colony's store cannot serve this right now (storage full or failing, or its database unreachable); retry later",
      undefined,
      { ...RETRY_AFTER },
    );
  }
  return null;
}

/** The store, or 503 unavailable when it did not start (readiness names the failing check). */
export function requireStore<S>(store: S | null): S {
  if (!store) throw new ServiceError("unavailable", "the store is not available; retry later", undefined, { ...RETRY_AFTER });
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

// One rule for every MCP door: at most COLONY_MCP_MAX_CONCURRENT requests of one client in flight,
// one more refused at once with JSON-RPC -32017 `busy`. A client is what the door can tell apart:
// `colony mcp` (stdio) and `colony mcp --http` serve one user on one machine, so the process's
// count is that client's; the colony's hosted /mcp serves every address, so it counts each
// address on its own: one address holding slow searches fills its own places, not everyone's,
// and all addresses together at most COLONY_MCP_MAX_CONCURRENT_TOTAL (many addresses, each under
// its cap, could otherwise hold every server and search the process has).
// Stdio keeps its own map of the requests it has read (the drain waits for them, a reused id is
// refused) and asks this limit only whether one more may run: a ping is never counted.
import { JSON_RPC_ERRORS, jsonRpcErrorResponse } from "./jsonrpc-errors";

/** Whose places are full: the client's own (`max`), or every client's together (`maxTotal`). */
export type Refusal = "client" | "all";

/**
 * Requests in flight, per client key, and all keys together: `tryEnter` refuses one past `max` for
 * its key or past `maxTotal` for the process. Per key alone, many addresses each under their `max`
 * together held as many requests as they liked (each a server and a search up to its deadline).
 */
export class InFlightLimit {
  private readonly counts = new Map<string, number>();
  private total = 0;

  constructor(
    readonly max: number,
    readonly maxTotal = Number.POSITIVE_INFINITY,
  ) {}

  /** Counts a request of `key` in (null), or says whose places are full. */
  tryEnter(key: string): Refusal | null {
    const n = this.counts.get(key) ?? 0;
    if (n >= this.max) return "client";
    if (this.total >= this.maxTotal) return "all";
    this.counts.set(key, n + 1);
    this.total++;
    return null;
  }

  /** Counts a request of `key` out (its answer is made); a key at zero is forgotten. */
  leave(key: string): void {
    const n = this.counts.get(key) ?? 0;
    if (n === 0) return;
    this.total--;
    if (n > 1) this.counts.set(key, n - 1);
    else this.counts.delete(key);
  }

  /** Keys with a request in flight (tests: nothing is left counted). */
  get clients(): number {
    return this.counts.size;
  }
}

/** Whose places are full, as a refusal names them. */
export type BusyWhose = "this server" | "this address" | "this colony";

/**
 * The refusal of a request past the limit, as every door words it (-32017, `data.code` busy).
 * `retryAfter`: the HTTP doors send Retry-After; stdio has no header to send it in.
 */
export function busyError(max: number, whose: BusyWhose, retryAfter: boolean) {
  const retry = retryAfter ? "Retry after Retry-After seconds" : "Retry once an earlier call is answered";
  if (whose === "this colony") {
    return {
      code: JSON_RPC_ERRORS.busy,
      message: `this colony is handling ${max} MCP requests in flight from all addresses together (COLONY_MCP_MAX_CONCURRENT_TOTAL), the limit; this one was not run. ${retry}`,
      data: { code: "busy", max_total: max },
    };
  }
  const holding = whose === "this server" ? "this server is handling" : "this address has";
  return {
    code: JSON_RPC_ERRORS.busy,
    message: `${holding} ${max} MCP requests in flight (COLONY_MCP_MAX_CONCURRENT), the limit; this one was not run. ${retry}, or send fewer requests at once`,
    data: { code: "busy", max_concurrent: max },
  };
}

/** The HTTP doors' refusal of a POST past the limit: 503, -32017, `data.code` busy, retry in a second. */
export function busyResponse(max: number, whose: BusyWhose): Response {
  const { code, message, data } = busyError(max, whose, true);
  return jsonRpcErrorResponse(503, code, message, data, { "Retry-After": "1" });
}

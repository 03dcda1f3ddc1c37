// One rule for every MCP door: at most COLONY_MCP_MAX_CONCURRENT requests of one client in flight,
// one more refused at once with JSON-RPC -32017 `busy`. A client is what the door can tell apart:
// `colony mcp` (stdio) and `colony mcp --http` serve one user on one machine, so the process's
// count is that client's; the colony's hosted /mcp serves every address, so it counts each
// address on its own: one address holding slow searches fills its own places, not everyone's.
import { JSON_RPC_ERRORS, jsonRpcErrorResponse } from "./jsonrpc-errors";

/** Requests in flight, per client key; `tryEnter` refuses one past `max`. */
export class InFlightLimit {
  private readonly counts = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Counts a request of `key` in, or false when `key` already has `max` in flight. */
  tryEnter(key: string): boolean {
    const n = this.counts.get(key) ?? 0;
    if (n >= this.max) return false;
    this.counts.set(key, n + 1);
    return true;
  }

  /** Counts a request of `key` out (its answer is made); a key at zero is forgotten. */
  leave(key: string): void {
    const n = (this.counts.get(key) ?? 0) - 1;
    if (n > 0) this.counts.set(key, n);
    else this.counts.delete(key);
  }

  /** Keys with a request in flight (tests: nothing is left counted). */
  get clients(): number {
    return this.counts.size;
  }
}

/** The HTTP doors' refusal of a POST past the limit: 503, -32017, `data.code` busy, retry in a second. */
export function busyResponse(max: number, whose: "this server" | "this address"): Response {
  return jsonRpcErrorResponse(
    503,
    JSON_RPC_ERRORS.busy,
    `${whose === "this server" ? "this server is handling" : "this address has"} ${max} MCP requests in flight (COLONY_MCP_MAX_CONCURRENT), the limit; this one was not run. Retry after Retry-After seconds, or send fewer requests at once`,
    { code: "busy", max_concurrent: max },
    { "Retry-After": "1" },
  );
}

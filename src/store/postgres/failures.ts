// The one place where PostgreSQL's "cannot serve now" failures become the port's
// StoreUnavailableError (503 unavailable with Retry-After): the server down, unreachable, restarting
// or refusing connections, a connection cut, a read-only server (a standby after a failover), or a
// transaction the server aborted to break a deadlock. Anything else (a defect) passes as it is.
import { StoreUnavailableError } from "../ports";

/** SQLSTATEs: connection exceptions (08…), shutdown/cannot connect now (57P0…), too many connections, read-only, deadlock/serialization. */
const UNAVAILABLE_STATE = /^(08|57P0[1-4]|53300|25006|40001|40P01)/;
/** Bun.SQL's own codes for a connection that failed or ended. */
const UNAVAILABLE_CODE = /^ERR_POSTGRES_(CONNECTION|IDLE_TIMEOUT|LIFETIME_TIMEOUT|CONNECTION_TIMEOUT|UNSUPPORTED_AUTH|TLS)/;

export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown } | null;
  return (
    (typeof e?.code === "string" && UNAVAILABLE_CODE.test(e.code)) ||
    (typeof e?.errno === "string" && UNAVAILABLE_STATE.test(e.errno)) ||
    (typeof e?.code === "string" && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH)$/.test(e.code))
  );
}

/** Passes `err` on, as StoreUnavailableError when PostgreSQL cannot serve right now. */
export function unavailable(err: unknown): never {
  if (err instanceof StoreUnavailableError || !isUnavailable(err)) throw err;
  const e = err as { code?: string; errno?: string; message?: string };
  throw new StoreUnavailableError(`PostgreSQL cannot serve the request (${e.errno ?? e.code}: ${e.message})`, { cause: err });
}

/** The repository with every method's failures passed through `unavailable`. */
export function guarded<T extends object>(repo: T): T {
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function" || prop === "constructor") return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(target, args);
          return result instanceof Promise ? result.catch(unavailable) : result;
        } catch (err) {
          unavailable(err);
        }
      };
    },
  });
}

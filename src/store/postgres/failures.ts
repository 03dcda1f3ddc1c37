// The one place where PostgreSQL's "cannot serve now" failures become the port's
// StoreUnavailableError (503 unavailable with Retry-After): the server down, unreachable, restarting
// or refusing connections, a connection cut, a read-only server (a standby after a failover), or a
// transaction the server aborted to break a deadlock, a statement the server cancelled at its
// statement_timeout, or no answer within the replica's own bound (a server that stopped answering).
// Anything else (a defect) passes as it is.
import { StoreUnavailableError } from "../ports";

/**
 * SQLSTATEs: connection exceptions (08…), shutdown/cannot connect now (57P0…), too many
 * connections, read-only, deadlock/serialization, statement cancelled (statement_timeout).
 */
const UNAVAILABLE_STATE = /^(08|57P0[1-4]|53300|25006|40001|40P01|57014)/;
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

/**
 * How long the replica waits for the database. A call waits up to `timeoutMs`; once one went
 * unanswered that long, the server is taken to have stopped answering and the next calls wait at
 * most STALLED_WAIT_MS each, until one settles: a request that makes several calls is answered
 * within about one bound, not one per call.
 */
export class Patience {
  private stalled = false;
  constructor(readonly timeoutMs: number) {}

  /** How long the next call may wait; 0: no bound. */
  waitMs(): number {
    return this.stalled ? Math.min(this.timeoutMs, STALLED_WAIT_MS) : this.timeoutMs;
  }

  unanswered(): void {
    this.stalled = true;
  }

  answered(): void {
    this.stalled = false;
  }
}

/** A call's wait while the server is taken to have stopped answering. */
const STALLED_WAIT_MS = 250;

/** How the store's calls are bounded and watched. */
export interface Guard {
  /** Bounds each call; none: a call waits as long as the client does. */
  patience?: Patience;
  /** Told of every failure that made the database unavailable (the host selection looks again). */
  onUnavailable?: (err: StoreUnavailableError) => void;
}

const UNBOUNDED: Guard = {};

/**
 * `work`'s result, or StoreUnavailableError once it failed as unavailable or did not settle within
 * the guard's bound. Bun's client has no per-query timeout and a query sent to a server that stopped
 * answering waits for it (TCP keeps the connection open), so the bound is a race: the call itself
 * goes on, and settles unobserved when the server answers or the connection is closed.
 */
export function bounded<T>(work: Promise<T>, guard: Guard = UNBOUNDED): Promise<T> {
  const seen = (err: unknown) => unavailableSeen(err, guard);
  const patience = guard.patience;
  const waitMs = patience?.waitMs() ?? 0;
  if (!patience || waitMs <= 0) return work.catch(seen);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      patience.unanswered();
      reject(new StoreUnavailableError(`PostgreSQL did not answer within ${waitMs} ms (COLONY_DATABASE_TIMEOUT_MS)`));
    }, waitMs);
  });
  // Settled either way: the server answers. A call that loses the race must not become an
  // unhandled rejection.
  work.then(
    () => patience.answered(),
    () => patience.answered(),
  );
  return Promise.race([work, late])
    .catch(seen)
    .finally(() => clearTimeout(timer));
}

/** `unavailable`, telling the guard when the database is unavailable. */
function unavailableSeen(err: unknown, guard: Guard): never {
  try {
    return unavailable(err);
  } catch (thrown) {
    if (thrown instanceof StoreUnavailableError) guard.onUnavailable?.(thrown);
    throw thrown;
  }
}

/** The repository with every method's failures passed through `unavailable`, each call bounded by `guard`. */
export function guarded<T extends object>(repo: T, guard: Guard = UNBOUNDED): T {
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function" || prop === "constructor") return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(target, args);
          return result instanceof Promise ? bounded(result, guard) : result;
        } catch (err) {
          unavailableSeen(err, guard);
        }
      };
    },
  });
}

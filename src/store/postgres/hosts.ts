// The connection pool on the host COLONY_DATABASE_URL leads to. One host: Bun's own pool on it,
// exactly as written. Several hosts (libpq's postgres://u@db1:5432,db2:5432/colony form, which
// Bun's client refuses): Colony tries them in the order written, as libpq does, and keeps a pool on
// the first that accepts a connection and suits target_session_attrs (read-write: not read-only;
// primary: not in recovery). The store holds one client object that passes every call to the pool
// of the moment; when the database may have moved (a connection refused or cut, a write refused as
// read-only, no answer within the bound), the hosts are tried again and, if another one suits, a
// pool on it replaces the old one: the LISTEN registrations move with it and run their `onlisten`
// (the change feeds catch up and the lookup cache is dropped, as after any reconnect). While no host
// suits, the old pool stays and its calls fail as unavailable (503 with Retry-After); the hosts
// are tried again every half second until one suits.
import { SQL } from "bun";
import type { DatabaseHost, DatabaseTarget } from "../../core/database-url";
import { errorMessage } from "../../core/error-message";
import { StoreUnavailableError } from "../ports";

export interface PoolOptions {
  max: number;
  /** Seconds to wait for a connection. */
  connectionTimeout: number;
  idleTimeout: number;
  connection: Record<string, string | number | boolean>;
}

export interface DatabasePool {
  /** The client the store uses: Bun's pool itself for one host, a pass-through to the current pool for several. */
  readonly sql: SQL;
  /** The database failed as unavailable: with several hosts, look for the one that suits again. */
  suspect(err?: unknown): void;
  /** The host in use (host:port). */
  current(): string;
  close(opts?: { timeout?: number }): Promise<void>;
}

/** Hosts are not tried again sooner than this after the last try (failures come in bursts). */
const LOOK_INTERVAL_MS = 500;
/** Failures that do not mean the database moved: the server answered. */
const ANSWERED_STATE = /^(40001|40P01|57014)$/;

const label = (h: DatabaseHost) => (h.host.includes(":") ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`);

/** Opens the pool; with several hosts, on the first that suits (StoreUnavailableError when none does). */
export async function openPool(target: DatabaseTarget, options: PoolOptions): Promise<DatabasePool> {
  if (target.hosts.length === 1) {
    const sql = new SQL(target.hosts[0]!.url, options);
    return { sql, suspect() {}, current: () => label(target.hosts[0]!), close: (opts) => sql.close(opts) };
  }
  const pool = new MultiHostPool(target, options);
  await pool.start();
  return pool;
}

interface Registration {
  channel: string;
  onnotify: (payload: string) => void;
  onlisten?: () => void;
  /** On the current pool; null when subscribing there failed (tried again at the next look). */
  subscription: Promise<SQL.ListenSubscription | null> | null;
}

class MultiHostPool implements DatabasePool {
  private pool!: SQL;
  private index = -1;
  private readonly registrations = new Set<Registration>();
  private looking: Promise<void> | null = null;
  private lookedAt = 0;
  /** Set while no host suits: hosts are tried again every LOOK_INTERVAL_MS. */
  private retry: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  readonly sql: SQL;

  constructor(
    private readonly target: DatabaseTarget,
    private readonly options: PoolOptions,
  ) {
    // An arrow function as the target: it has no `prototype` that the proxy would have to keep.
    this.sql = new Proxy((() => {}) as unknown as SQL, {
      apply: (_target, _this, args) => (this.pool as unknown as (...a: unknown[]) => unknown)(...args),
      get: (_target, prop) => {
        if (prop === "listen") return this.listen;
        if (prop === "close" || prop === "end") return (opts?: { timeout?: number }) => this.close(opts);
        const value = Reflect.get(this.pool, prop);
        return typeof value === "function" ? value.bind(this.pool) : value;
      },
    });
  }

  async start(): Promise<void> {
    const found = await this.find();
    if (found.index < 0) throw new StoreUnavailableError(this.noHostMessage(found.reasons));
    this.use(found.index);
  }

  current(): string {
    return label(this.target.hosts[this.index]!);
  }

  suspect(err?: unknown): void {
    const state = (err as { cause?: { errno?: unknown } } | undefined)?.cause?.errno;
    if (typeof state === "string" && ANSWERED_STATE.test(state)) return;
    if (this.closed || this.looking || performance.now() - this.lookedAt < LOOK_INTERVAL_MS) return;
    this.looking = this.look().finally(() => {
      this.looking = null;
    });
  }

  private async look(): Promise<void> {
    const found = await this.find();
    this.lookedAt = performance.now();
    if (this.closed) return;
    if (found.index >= 0 && found.index !== this.index) this.use(found.index);
    else if (found.index >= 0) this.resubscribeFailed();
    if (found.index < 0) {
      // Keep trying while no host suits: nothing else may call (no traffic, a LISTEN retrying quietly).
      this.retry ??= setTimeout(() => {
        this.retry = null;
        this.suspect();
      }, LOOK_INTERVAL_MS);
      this.retry.unref?.();
    }
  }

  /** The first host, in the order written, that accepts a connection and suits target_session_attrs. */
  private async find(): Promise<{ index: number; reasons: string[] }> {
    const reasons: string[] = [];
    for (const [i, host] of this.target.hosts.entries()) {
      const why = await this.unsuitable(host);
      if (why === null) return { index: i, reasons };
      reasons.push(`${label(host)}: ${why}`);
    }
    return { index: -1, reasons };
  }

  /** Why the host does not suit, or null when it does. */
  private async unsuitable(host: DatabaseHost): Promise<string | null> {
    const probe = new SQL(host.url, {
      ...this.options,
      max: 1,
      idleTimeout: 1,
      // Not counted as one of the colony's connections (`colony migrate` refuses a database in use).
      connection: { ...this.options.connection, application_name: "colony-probe" },
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const answer = probe`SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only`;
      // The connection timeout does not cover a server that accepted the connection and went quiet.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer")), this.options.connectionTimeout * 1000);
      });
      const [row] = (await Promise.race([answer, late])) as { in_recovery: boolean; read_only: string }[];
      const attrs = this.target.targetSessionAttrs;
      if (attrs === "read-write" && row!.read_only === "on") return row!.in_recovery ? "read-only (a standby)" : "read-only";
      if (attrs === "primary" && row!.in_recovery) return "a standby";
      return null;
    } catch (err) {
      return errorMessage(err);
    } finally {
      clearTimeout(timer);
      void probe.close({ timeout: 0 }).catch(() => {});
    }
  }

  private noHostMessage(reasons: string[]): string {
    const want =
      this.target.targetSessionAttrs === "any" ? "accepts a connection" : `suits target_session_attrs=${this.target.targetSessionAttrs}`;
    return `no PostgreSQL host of ${this.target.description} ${want} (${reasons.join("; ")})`;
  }

  /** Makes a pool on host `index` the current one; the old pool closes once its calls end. */
  private use(index: number): void {
    const old = this.index >= 0 ? this.pool : null;
    this.index = index;
    this.pool = new SQL(this.target.hosts[index]!.url, {
      ...this.options,
      // A connection to this host that failed or was cut: the database may have moved.
      onclose: (err) => {
        const code = (err as { code?: string } | null)?.code ?? "";
        if (!/^ERR_POSTGRES_(CONNECTION_CLOSED|IDLE_TIMEOUT|LIFETIME_TIMEOUT)$/.test(code)) this.suspect();
      },
    });
    for (const r of this.registrations) this.subscribe(r);
    if (old) void old.close({ timeout: 5 }).catch(() => {});
  }

  private subscribe(r: Registration): void {
    r.subscription = this.pool.listen(r.channel, r.onnotify, r.onlisten).catch(() => null);
  }

  /** Registrations whose subscription failed on the current pool, made again (the pool is back). */
  private resubscribeFailed(): void {
    for (const r of this.registrations) {
      void r.subscription?.then((s) => {
        if (s === null && this.registrations.has(r)) this.subscribe(r);
      });
    }
  }

  private readonly listen = async (channel: string, onnotify: (payload: string) => void, onlisten?: () => void) => {
    const r: Registration = { channel, onnotify, onlisten, subscription: null };
    const subscription = this.pool.listen(channel, onnotify, onlisten);
    r.subscription = subscription.catch(() => null);
    this.registrations.add(r);
    try {
      await subscription;
    } catch (err) {
      this.registrations.delete(r);
      throw err;
    }
    const unlisten = async () => {
      this.registrations.delete(r);
      await (await r.subscription)?.unlisten();
    };
    return { channel, unlisten, [Symbol.asyncDispose]: unlisten } as SQL.ListenSubscription;
  };

  async close(opts?: { timeout?: number }): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.looking?.catch(() => {});
    await this.pool.close(opts);
  }
}

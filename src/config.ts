// Every setting, read once at start from the environment. A bad value stops the process with a
// message naming the variable and what it accepts (main.ts exits with code 2).
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { DatabaseUrlError, parseDatabaseUrl } from "./core/database-url";
import { parseTrustProxy, TRUST_PROXY_ACCEPTS, type TrustProxy } from "./core/proxy-trust";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/**
 * How often a replica looks again for stored rows on an older normalizer or older content rules
 * once its start-time passes are over: during a rolling upgrade a replica of the previous release
 * keeps writing them (docs/scale-out.md, "Maintenance"), and until they are brought up to date a
 * lookup by the current fingerprint misses them and a trail the current rules refuse stays served.
 * Each look is one indexed `LIMIT 1` query per pass, so the window is kept to seconds (it was a
 * minute until session 16: the probe saw lookups miss for 53 s after the old replica stopped).
 * The default of COLONY_STORED_PASS_RECHECK_MS (ColonyService's timer, src/service/colony.ts).
 */
export const STORED_PASS_RECHECK_MS = 5_000;

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Base of approve_url links; null means http://<host>:<the port actually bound>. */
  publicUrl: string | null;
  adminToken: string | null;
  /** General requests per minute per client address. */
  rateLimit: number;
  /** Publishes per hour per client address. */
  publishLimit: number;
  /** Drafts per hour per client address. */
  draftLimit: number;
  maxQueue: number;
  /** Whose X-Forwarded-For entries name the client (src/core/proxy-trust.ts). */
  trustProxy: TrustProxy;
  /** A user-supplied model directory; null means the default model shipped with Colony. */
  modelDir: string | null;
  cacheDir: string;
  logLevel: LogLevel;
  allowHighRisk: boolean;
  /** postgres:// URL of a shared PostgreSQL database; null keeps the embedded SQLite store. */
  databaseUrl: string | null;
  /** Connections per replica to PostgreSQL. */
  databasePool: number;
  /**
   * PostgreSQL: how long a request waits for the database before it is answered 503 unavailable
   * (also the server's statement_timeout on the replica's connections).
   */
  databaseTimeoutMs: number;
  /** How long an enrichment job claimed by a PostgreSQL replica stays its own before another may take it. */
  jobLeaseMs: number;
  /** How often a replica looks for stored rows on an older normalizer or content rules (a rolling upgrade's window). */
  storedPassRecheckMs: number;
  /** Browser origins, besides the colony's own, that may call POST /mcp (COLONY_ALLOWED_ORIGINS). */
  allowedOrigins: string[];
  /** POSTs of one address the hosted /mcp handles at once (COLONY_MCP_MAX_CONCURRENT, src/mcp/in-flight.ts). */
  mcpMaxConcurrent: number;
  /** POSTs of all addresses together the hosted /mcp handles at once (COLONY_MCP_MAX_CONCURRENT_TOTAL). */
  mcpMaxConcurrentTotal: number;
}

/**
 * MCP requests of one client in flight at once, on every door (src/mcp/in-flight.ts): `colony mcp`
 * over stdio and `colony mcp --http` (one user each), each address on the colony's /mcp. Each may
 * hold a request to the colony (and, over HTTP, its connection and a server up to its deadline);
 * an SDK client sends one call at a time, a model's parallel tool calls or a few agents on one
 * machine a few: 32 leaves them room and keeps a runaway or hostile client from piling up thousands.
 */
export const DEFAULT_MCP_MAX_CONCURRENT = 32;

/**
 * MCP requests in flight on the hosted /mcp from all addresses together, per process. The
 * per-address cap keeps one address from taking every place, but many addresses (a botnet, a
 * fleet of agents behind many NAT addresses, an IPv6 client rotating its address) each under it
 * held as many servers and searches as they liked, each up to its 9 s deadline. 256: eight
 * addresses at their full cap; 2,000 searches at once from 2,000 addresses never held that many
 * on a 2-core replica over SQLite (their handlers are CPU-bound; the backlog waits unread), so it
 * bounds what waits on I/O (a PostgreSQL pool, a store that stopped answering) and refuses nothing
 * a busy SQLite replica runs (bench/RESULTS.md, Session 19 http19). Past it a POST is refused at
 * once, not run.
 */
export const DEFAULT_MCP_MAX_CONCURRENT_TOTAL = 256;

/** COLONY_MCP_MAX_CONCURRENT_TOTAL (1 to 1000000). */
export function mcpMaxConcurrentTotal(env: Env): number {
  return int(env, "COLONY_MCP_MAX_CONCURRENT_TOTAL", DEFAULT_MCP_MAX_CONCURRENT_TOTAL, 1, 1_000_000);
}

/** COLONY_MCP_MAX_CONCURRENT (1 to 10000). */
export function mcpMaxConcurrent(env: Env): number {
  return int(env, "COLONY_MCP_MAX_CONCURRENT", DEFAULT_MCP_MAX_CONCURRENT, 1, 10_000);
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly accepts: string,
    readonly got: string,
  ) {
    super(`${variable}=${JSON.stringify(got)} is not valid: ${variable} accepts ${accepts}`);
  }
}

export type Env = Record<string, string | undefined>;

/** A variable's trimmed value; unset and blank are the same. */
export function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/** A whole number within bounds, or the fallback when unset; anything else is a ConfigError. */
export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `a whole number from ${min} to ${max}`, raw);
  }
  return Number(raw);
}

function trustProxy(env: Env, name: string): TrustProxy {
  const raw = str(env, name);
  const parsed = parseTrustProxy(raw);
  if (parsed === null) throw new ConfigError(name, TRUST_PROXY_ACCEPTS, raw ?? "");
  return parsed;
}

function url(env: Env, name: string): string | null {
  const raw = str(env, name);
  if (raw === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, "an absolute http:// or https:// URL", raw);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ConfigError(name, "an absolute http:// or https:// URL", raw);
  }
  return raw.replace(/\/+$/, "");
}

function databaseUrl(env: Env, name: string): string | null {
  const raw = str(env, name);
  if (raw === undefined) return null;
  const accepts =
    "a postgres:// or postgresql:// connection URL: one host, or several as libpq writes them (postgres://user@db1:5432,db2:5432/colony?target_session_attrs=read-write)";
  try {
    parseDatabaseUrl(raw);
  } catch (err) {
    if (!(err instanceof DatabaseUrlError)) throw err;
    // The URL may hold a password: never echoed; the reason names the part that is wrong.
    throw new ConfigError(name, `${accepts}; this one: ${err.message}`, "<hidden>");
  }
  return raw;
}

const ORIGINS_ACCEPTS =
  "a comma-separated list of origins, each scheme://host[:port] (http or https, no path), e.g. https://inspector.example.com";

/** COLONY_ALLOWED_ORIGINS: origins as browsers send them (URL.origin), for exact comparison. */
export function allowedOrigins(env: Env, name = "COLONY_ALLOWED_ORIGINS"): string[] {
  const raw = str(env, name);
  if (raw === undefined) return [];
  return raw
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      let parsed: URL | null = null;
      try {
        parsed = new URL(entry);
      } catch {}
      const bare = parsed && (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.pathname === "/";
      if (!parsed || !bare || parsed.search || parsed.hash || parsed.username) {
        throw new ConfigError(name, ORIGINS_ACCEPTS, raw);
      }
      return parsed.origin;
    });
}

function defaultCacheDir(env: Env): string {
  const xdg = str(env, "XDG_CACHE_HOME");
  return join(xdg ?? join(env.HOME ?? homedir(), ".cache"), "colony");
}

export function loadConfig(env: Env = process.env): Config {
  const host = str(env, "COLONY_HOST") ?? "127.0.0.1";
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host)) {
    throw new ConfigError("COLONY_HOST", "a host name or IP address to listen on", host);
  }
  const port = int(env, "COLONY_PORT", 8080, 0, 65535);
  const logLevel = (str(env, "COLONY_LOG_LEVEL") ?? "info").toLowerCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new ConfigError("COLONY_LOG_LEVEL", LOG_LEVELS.join(", "), logLevel);
  }
  const adminToken = str(env, "COLONY_ADMIN_TOKEN") ?? null;
  if (adminToken !== null && adminToken.length < 16) {
    throw new ConfigError("COLONY_ADMIN_TOKEN", "a secret of at least 16 characters", "<hidden>");
  }
  return {
    host,
    port,
    dataDir: resolve(str(env, "COLONY_DATA_DIR") ?? "colony_data"),
    publicUrl: url(env, "COLONY_PUBLIC_URL"),
    adminToken,
    rateLimit: int(env, "COLONY_RATE_LIMIT", 600, 1, 1_000_000_000),
    publishLimit: int(env, "COLONY_PUBLISH_LIMIT", 30, 1, 1_000_000_000),
    draftLimit: int(env, "COLONY_DRAFT_LIMIT", 30, 1, 1_000_000_000),
    maxQueue: int(env, "COLONY_MAX_QUEUE", 1000, 1, 1_000_000_000),
    trustProxy: trustProxy(env, "COLONY_TRUST_PROXY"),
    modelDir: str(env, "COLONY_MODEL_DIR") ? resolve(str(env, "COLONY_MODEL_DIR")!) : null,
    cacheDir: resolve(str(env, "COLONY_CACHE_DIR") ?? defaultCacheDir(env)),
    logLevel: logLevel as LogLevel,
    allowHighRisk: str(env, "COLONY_ALLOW_HIGH_RISK") === "1",
    databaseUrl: databaseUrl(env, "COLONY_DATABASE_URL"),
    databasePool: int(env, "COLONY_DATABASE_POOL", 16, 1, 1000),
    databaseTimeoutMs: int(env, "COLONY_DATABASE_TIMEOUT_MS", 10_000, 0, 3_600_000),
    jobLeaseMs: int(env, "COLONY_JOB_LEASE_MS", 60_000, 1_000, 3_600_000),
    storedPassRecheckMs: int(env, "COLONY_STORED_PASS_RECHECK_MS", STORED_PASS_RECHECK_MS, 1_000, 3_600_000),
    allowedOrigins: allowedOrigins(env),
    mcpMaxConcurrent: mcpMaxConcurrent(env),
    mcpMaxConcurrentTotal: mcpMaxConcurrentTotal(env),
  };
}

/** The variables and their defaults, for `colony --help` and the README. */
export const CONFIG_DOC: [string, string, string][] = [
  ["COLONY_HOST", "127.0.0.1", "address to listen on"],
  ["COLONY_PORT", "8080", "port to listen on (0 picks a free one)"],
  ["COLONY_DATA_DIR", "./colony_data", "where the SQLite database lives"],
  ["COLONY_PUBLIC_URL", "http://<host>:<port>", "base URL used in approve_url links"],
  ["COLONY_ADMIN_TOKEN", "(none)", "operator token (16+ characters); unset = operator endpoints off (501)"],
  ["COLONY_RATE_LIMIT", "600", "general requests per minute per client address"],
  ["COLONY_PUBLISH_LIMIT", "30", "publishes per hour per client address"],
  ["COLONY_DRAFT_LIMIT", "30", "drafts per hour per client address"],
  ["COLONY_MAX_QUEUE", "1000", "trails waiting for enrichment before publish answers 503 busy"],
  [
    "COLONY_TRUST_PROXY",
    "off",
    "proxies in front: a hop count (1 = one) or their addresses/CIDRs; the client is the right-most X-Forwarded-For entry not a proxy",
  ],
  ["COLONY_MODEL_DIR", "(embedded default)", "a sentence-transformers ONNX export or a Colony static model"],
  ["COLONY_CACHE_DIR", "$XDG_CACHE_HOME/colony or ~/.cache/colony", "where the binary extracts its native parts"],
  ["COLONY_LOG_LEVEL", "info", "debug, info, warn, error or silent"],
  ["COLONY_ALLOW_HIGH_RISK", "(unset)", "1 lets MCP callers ask for high-risk trails"],
  ["COLONY_DATABASE_URL", "(unset: embedded SQLite)", "postgres://… to keep the colony in PostgreSQL, shared by replicas"],
  ["COLONY_DATABASE_POOL", "16", "connections per replica to PostgreSQL"],
  [
    "COLONY_DATABASE_TIMEOUT_MS",
    "10000",
    "PostgreSQL: longest wait for the database on a request (then 503 unavailable); also the server's statement_timeout; 0 = none",
  ],
  [
    "COLONY_JOB_LEASE_MS",
    "60000",
    "PostgreSQL: how long a replica holds a claimed enrichment job; a dead replica's jobs pass to another after it",
  ],
  [
    "COLONY_STORED_PASS_RECHECK_MS",
    "5000",
    "how often a replica looks for trails left on an older normalizer or content rules by a replica of the previous release (a rolling upgrade)",
  ],
  ["COLONY_ALLOWED_ORIGINS", "(none)", "browser origins (comma-separated) that may call POST /mcp besides the colony's own"],
  [
    "COLONY_MCP_MAX_CONCURRENT",
    String(DEFAULT_MCP_MAX_CONCURRENT),
    "POST /mcp requests of one address handled at once (1-10000); more are refused with 503, JSON-RPC -32017",
  ],
  [
    "COLONY_MCP_MAX_CONCURRENT_TOTAL",
    String(DEFAULT_MCP_MAX_CONCURRENT_TOTAL),
    "POST /mcp requests of all addresses together handled at once, per process (1-1000000); more are refused with 503, JSON-RPC -32017",
  ],
];

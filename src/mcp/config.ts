// Settings of the MCP server (interface.md §4.14), read once from the environment. A bad value
// stops the process with a message naming the variable (main.ts exits with code 2), in the same
// style as src/config.ts.
import { allowedOrigins, ConfigError, DEFAULT_MCP_MAX_CONCURRENT, int, mcpMaxConcurrent, str, type Env } from "../config";

export { DEFAULT_MCP_MAX_CONCURRENT, mcpMaxConcurrent, mcpMaxConcurrentTotal } from "../config";
import { AGENT_ID_RULE, isAgentId } from "../core/agent-id";
import { codePointLength, Trail } from "../core/trail";

export type PublishPolicy = "off" | "ask" | "auto";
const PUBLISH_POLICIES: readonly PublishPolicy[] = ["off", "ask", "auto"];

/** What the tools need to know about their deployment; the three transports each build one. */
export interface ToolConfig {
  /** hosted: publishing creates a draft for a person to approve; local: COLONY_PUBLISH decides. */
  mode: "hosted" | "local";
  publish: PublishPolicy;
  minFailedAttempts: number;
  allowHighRisk: boolean;
  agentModel: string;
  /** Fill a missing trail environment from this machine (only true where the agent runs). */
  detectEnvironment: boolean;
  /** How long a local publish waits for the verdict, in seconds. */
  publishWaitS: number;
  /** Poll interval while waiting for the verdict. */
  pollIntervalMs?: number;
  /** Tests: the time a local publish has to answer (PUBLISH_BUDGET_MS). */
  publishBudgetMs?: number;
}

export interface McpConfig {
  /** The colony the local and standalone servers talk to. */
  colonyUrl: string;
  /** Reserved by the contract; read so that setting it is not an error, and never sent. */
  apiKey: string | null;
  publish: PublishPolicy;
  minFailedAttempts: number;
  /** COLONY_ALLOW_HIGH_RISK=1: the model may ask for high-risk trails with include_high_risk. */
  allowHighRisk: boolean;
  /** Pseudonymous agent id sent as X-Colony-Agent (local and standalone modes). */
  agentId: string | null;
  agentModel: string;
  /** How long a local publish waits for the colony's verdict (default 25 s). */
  publishWaitS: number;
  /** Port of `colony mcp --http` when --port is not given. */
  mcpPort: number;
  /** Browser origins, besides its own loopback ones, that may call `colony mcp --http`. */
  allowedOrigins: string[];
  /**
   * POSTs `colony mcp --http` handles at once, and requests `colony mcp` (stdio) runs at once; one
   * more is refused (JSON-RPC -32017, over HTTP with 503).
   */
  maxConcurrent: number;
}

export const DEFAULT_COLONY_URL = "http://127.0.0.1:8080";
export const DEFAULT_MCP_PORT = 8090;
export const DEFAULT_PUBLISH_WAIT_S = 25;
const MODEL_MAX = Trail.properties.agent_info.properties.model.maxLength!;

/** The settings a hosted /mcp route uses too. */
function sharedSettings(env: Env) {
  const highRisk = str(env, "COLONY_ALLOW_HIGH_RISK");
  if (highRisk !== undefined && highRisk !== "1" && highRisk !== "0") {
    throw new ConfigError("COLONY_ALLOW_HIGH_RISK", "1 (allow) or 0 / unset (do not allow)", highRisk);
  }
  const agentModel = str(env, "COLONY_AGENT_MODEL") ?? "unknown";
  // Characters as the trail's schema counts them (code points): `.length` counted UTF-16 units, so
  // a model name of 101-200 emoji, valid in a trail, stopped the server.
  if (codePointLength(agentModel) > MODEL_MAX) {
    throw new ConfigError("COLONY_AGENT_MODEL", `a model name of at most ${MODEL_MAX} characters`, agentModel);
  }
  return {
    minFailedAttempts: int(env, "COLONY_MIN_FAILED_ATTEMPTS", 3, 0, 1000),
    allowHighRisk: highRisk === "1",
    agentModel,
  };
}

/**
 * The tool config of the colony's own /mcp route: it reads only the variables that matter there
 * (COLONY_MIN_FAILED_ATTEMPTS, COLONY_ALLOW_HIGH_RISK, COLONY_AGENT_MODEL), so a colony does not
 * refuse to start over a client-side variable.
 */
export function hostedToolConfig(env: Env = process.env): ToolConfig {
  return { mode: "hosted", publish: "off", detectEnvironment: false, publishWaitS: 0, ...sharedSettings(env) };
}

/** The tool config of `colony mcp` over stdio: the agent's own machine. */
export function localToolConfig(cfg: McpConfig): ToolConfig {
  return {
    mode: "local",
    publish: cfg.publish,
    minFailedAttempts: cfg.minFailedAttempts,
    allowHighRisk: cfg.allowHighRisk,
    agentModel: cfg.agentModel,
    detectEnvironment: true,
    publishWaitS: cfg.publishWaitS,
  };
}

/**
 * The tool config of `colony mcp --http`: it serves agents on other machines, so like the hosted
 * route it publishes only through drafts a person approves, and detects no environment.
 */
export function standaloneToolConfig(cfg: McpConfig): ToolConfig {
  return { ...localToolConfig(cfg), mode: "hosted", detectEnvironment: false };
}

/**
 * A COLONY_URL that does not parse, as it may be echoed: everything before its last `@` but the
 * scheme replaced. Not only up to the first `/`, `?` or `#`: a password holding one of them
 * unencoded (a generated one) is what made the URL unparsable, and one written without a scheme
 * (`bob:pw@host`) has no `//`. A URL whose path holds an `@` loses more than its credentials: a
 * message may show less, never a password.
 */
export function unparsedUrlShown(rawUrl: string): string {
  const at = rawUrl.lastIndexOf("@");
  if (at < 0) return rawUrl;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(rawUrl)?.[0] ?? "";
  return `${scheme}<credentials>${rawUrl.slice(at)}`;
}

export function loadMcpConfig(env: Env = process.env): McpConfig {
  const rawUrl = str(env, "COLONY_URL") ?? DEFAULT_COLONY_URL;
  let parsed: URL | null = null;
  try {
    parsed = new URL(rawUrl);
  } catch {}
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    // Echoed without the user and password it may carry: the refusal goes to stderr, which MCP
    // clients keep in log files.
    throw new ConfigError("COLONY_URL", "an absolute http:// or https:// URL", unparsedUrlShown(rawUrl));
  }
  const publish = (str(env, "COLONY_PUBLISH") ?? "off").toLowerCase();
  if (!PUBLISH_POLICIES.includes(publish as PublishPolicy)) {
    throw new ConfigError("COLONY_PUBLISH", PUBLISH_POLICIES.join(", "), publish);
  }
  const agentId = str(env, "COLONY_AGENT_ID") ?? null;
  if (agentId !== null && !isAgentId(agentId)) {
    throw new ConfigError("COLONY_AGENT_ID", AGENT_ID_RULE, agentId);
  }
  return {
    colonyUrl: rawUrl.replace(/\/+$/, ""),
    apiKey: str(env, "COLONY_API_KEY") ?? null,
    publish: publish as PublishPolicy,
    ...sharedSettings(env),
    agentId,
    publishWaitS: int(env, "COLONY_PUBLISH_WAIT_S", DEFAULT_PUBLISH_WAIT_S, 0, 600),
    mcpPort: int(env, "COLONY_MCP_PORT", DEFAULT_MCP_PORT, 0, 65535),
    allowedOrigins: allowedOrigins(env),
    maxConcurrent: mcpMaxConcurrent(env),
  };
}

/** The variables and their defaults, for `colony --help` and docs/mcp.md. */
export const MCP_CONFIG_DOC: [string, string, string][] = [
  ["COLONY_URL", DEFAULT_COLONY_URL, "colony used by `colony mcp` (stdio and --http)"],
  ["COLONY_API_KEY", "(none)", "reserved; unused"],
  ["COLONY_PUBLISH", "off", "local colony_publish: off (preview only), ask (elicitation) or auto"],
  ["COLONY_MIN_FAILED_ATTEMPTS", "3", "colony_publish refuses fixes with fewer failed attempts"],
  ["COLONY_ALLOW_HIGH_RISK", "(unset)", "1 lets the model ask for high-risk trails (include_high_risk)"],
  ["COLONY_AGENT_ID", "(none)", "X-Colony-Agent sent by `colony mcp` (8-64 of [A-Za-z0-9_-])"],
  ["COLONY_AGENT_MODEL", "unknown", "model name sent with outcome reports and trails"],
  ["COLONY_PUBLISH_WAIT_S", String(DEFAULT_PUBLISH_WAIT_S), "seconds a local publish waits for the colony's verdict"],
  ["COLONY_MCP_PORT", String(DEFAULT_MCP_PORT), "port of `colony mcp --http` (host 127.0.0.1)"],
  ["COLONY_ALLOWED_ORIGINS", "(none)", "browser origins (comma-separated) that may call `colony mcp --http` besides its own"],
  [
    "COLONY_MCP_MAX_CONCURRENT",
    String(DEFAULT_MCP_MAX_CONCURRENT),
    "POSTs `colony mcp --http`, or requests `colony mcp` (stdio), handled at once (1-10000); more are refused with -32017",
  ],
];

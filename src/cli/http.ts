// The HTTP side of the client commands (`colony search|lookup|publish|report|status`): where the
// colony is (COLONY_URL), the agent id sent (COLONY_AGENT_ID), one request function, and how an
// answer becomes output and an exit code. Errors from the colony are shown as their code and
// message (and each failing path of a validation error); --json prints the body as it came.
import { ConfigError } from "../config";
import { errorMessage } from "../core/error-message";
import { escapeHiddenInJson } from "../core/hidden-json";
import { printable } from "./table";
import { AGENT_ID_RULE, isAgentId } from "../core/agent-id";
import { shownColonyUrl } from "../mcp/colony-client";
import { DEFAULT_COLONY_URL, unparsedUrlShown } from "../mcp/config";
import { EXIT } from "./command";

const TIMEOUT_MS = 30_000;

export interface ClientTarget {
  /** Base URL without a trailing slash. */
  url: string;
  /** The URL as messages, `colony status` and export bundles show it: without a user and password. */
  shown: string;
  agent: string | null;
}

export function clientTarget(env: Record<string, string | undefined> = process.env): ClientTarget {
  const raw = env.COLONY_URL?.trim() || DEFAULT_COLONY_URL;
  let parsed: URL | null = null;
  try {
    parsed = new URL(raw);
  } catch {}
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    // A ConfigError, as every bad variable: main prints the one line and exits 2 (as a UsageError it
    // was followed by the command's usage, which the user had written right).
    throw new ConfigError("COLONY_URL", "an absolute http:// or https:// URL", unparsedUrlShown(raw));
  }
  const agent = env.COLONY_AGENT_ID?.trim() || null;
  if (agent !== null && !isAgentId(agent)) {
    throw new ConfigError("COLONY_AGENT_ID", AGENT_ID_RULE, agent);
  }
  const url = raw.replace(/\/+$/, "");
  return { url, shown: shownColonyUrl(url), agent };
}

export interface Answer {
  status: number;
  body: unknown;
  /** Seconds the colony asks the client to wait (`Retry-After` of a 429 or 503), null without one. */
  retryAfterS?: number | null;
}

/** Retry-After as seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text);
  // An HTTP date names its day and month in letters; Date.parse would also read "-5" as a year.
  const at = /^[A-Za-z]{3}, /.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The colony did not answer: `unreachable` (refused connection, not HTTP), `timeout` (no answer
 * within the time limit: a colony that is up but stalled, which COLONY_URL does not fix) or
 * `not_a_colony` (a success whose body is not JSON: COLONY_URL reaches something else, a proxy's
 * sign-in page, another service).
 */
export class UnreachableError extends Error {
  constructor(
    message: string,
    readonly kind: "unreachable" | "timeout" | "not_a_colony" = "unreachable",
  ) {
    super(message);
  }
}

export async function request(
  target: ClientTarget,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  timeoutMs = TIMEOUT_MS,
): Promise<Answer> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (target.agent) headers["X-Colony-Agent"] = target.agent;
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(target.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: timeout,
    });
    text = await res.text(); // a colony that sends its headers and stalls is held to the same limit
  } catch (err) {
    if (timeout.aborted) {
      throw new UnreachableError(`the colony at ${target.shown} did not answer within ${timeoutMs / 1000} s`, "timeout");
    }
    throw new UnreachableError(`cannot reach the colony at ${target.shown}: ${errorMessage(err)} (set COLONY_URL)`);
  }
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // Every route the CLI calls answers JSON; a success that is not is no colony's, and reading it
    // as one ended the command with a stack trace.
    if (res.ok) {
      const type = res.headers.get("content-type") ?? "no Content-Type";
      throw new UnreachableError(
        `${method} ${path} at ${target.shown} answered ${res.status} with something that is not JSON (${printable(type).slice(0, 100)}); is COLONY_URL a colony? (a proxy's sign-in page answers so)`,
        "not_a_colony",
      );
    }
  }
  return { status: res.status, body: parsed, retryAfterS: retryAfterSeconds(res.headers.get("retry-after")) };
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown; details?: unknown };
}

/** Exit code for an error answer: 404 nothing found, other 4xx refused, 5xx unavailable. */
export function exitCodeFor(status: number): number {
  if (status === 404) return EXIT.notFound;
  if (status >= 400 && status < 500) return EXIT.refused;
  return EXIT.unavailable;
}

/** Prints an error answer as "colony: CODE: message" (+ details) on stderr; returns the exit code. */
export function reportError(answer: Answer, json: boolean): number {
  if (json) printJson(answer.body);
  const e = (answer.body as ErrorBody | null)?.error;
  const code = typeof e?.code === "string" ? e.code : `http_${answer.status}`;
  const message = typeof e?.message === "string" ? e.message : `the colony answered ${answer.status}`;
  let text = `colony: ${code}: ${message}\n`;
  if (Array.isArray(e?.details)) {
    for (const d of e.details as { path?: unknown; message?: unknown }[]) {
      text += `  ${typeof d.path === "string" && d.path !== "" ? d.path : "(body)"}: ${String(d.message)}\n`;
    }
  }
  process.stderr.write(text);
  return exitCodeFor(answer.status);
}

/** Runs a client command body; an unreachable or silent colony is one line and exit 4. */
export async function withColony(run: (target: ClientTarget) => Promise<number>): Promise<number> {
  const target = clientTarget();
  try {
    return await run(target);
  } catch (err) {
    if (err instanceof UnreachableError) {
      process.stderr.write(`colony: ${err.kind}: ${err.message}\n`);
      return EXIT.unavailable;
    }
    throw err;
  }
}

/**
 * Prints a value as JSON on stdout (one line, for scripts), every character a person cannot see
 * escaped as a bundle writes it (src/core/hidden-json.ts): no raw control character reaches the
 * terminal, and a bidi override or a zero-width character in another agent's trail does not make
 * the person reading it see other text than it holds. Parsed, it is the same value.
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${escapeHiddenInJson(JSON.stringify(value))}\n`);
}

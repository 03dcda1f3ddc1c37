// `colony mcp`: the local MCP server over stdio, talking to COLONY_URL. Everything it sends is
// redacted here first (the tools redact queries, notes and trails before calling the colony).
// stdout carries the protocol only: logs go to stderr.
//
// A client may write its requests and close stdin at once (a pipe, a script, a client shutting
// down): the requests already read are still answered. On the end of stdin, SIGTERM or SIGINT the
// server stops reading, waits for the answers of calls in flight (at most DRAIN_MS), flushes
// stdout, then exits.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../core/error-message";
import type { Logger } from "../log";
import { HttpColonyClient, shownColonyUrl } from "./colony-client";
import { localToolConfig, type McpConfig } from "./config";
import { busyError, InFlightLimit } from "./in-flight";
import { JSON_RPC_ERRORS } from "./jsonrpc-errors";
import { StdioLineTransport } from "./stdio-transport";
import { createToolServer } from "./tool-server";

/** The longest the server waits for calls in flight once it is told to stop. */
export const DRAIN_MS = 30_000;

type RequestId = string | number;

/** Cancelled requests' ids remembered, to refuse their reuse (a few bytes each). */
const CANCELLED_IDS_KEPT = 1024;

/** The one client of a stdio process, as InFlightLimit counts it. */
const STDIO_CLIENT = "";

/**
 * The stdio transport, knowing the requests read and not answered yet (by id: the drain waits for
 * them, and a request reusing one's id is refused) and counting those the cap counts in the rule
 * every door shares (InFlightLimit).
 */
export class DrainingTransport implements Transport {
  onclose?: Transport["onclose"];
  onerror?: Transport["onerror"];
  onmessage?: Transport["onmessage"];
  /** Requests read and not answered, each with whether it holds a place of the cap. */
  private readonly pending = new Map<RequestId, boolean>();
  private readonly inFlightLimit: InFlightLimit;
  /**
   * Ids of requests the client cancelled, the latest CANCELLED_IDS_KEPT: a request reusing one is
   * refused (MCP: an id is never reused in a session). The cancelled call's handler may still be
   * ending, and as it ends the SDK drops the cancellation handle of its id, the new call's.
   */
  private readonly cancelledIds = new Set<RequestId>();
  private idleWaiters: (() => void)[] = [];
  /** The id of the initialize request being answered (another meanwhile is refused), then whether one was answered with a result. */
  private initializing: RequestId | undefined;
  private initialized = false;

  constructor(
    private readonly inner: Transport,
    private readonly logger: Pick<Logger, "warn"> | null = null,
    /** Requests run at once (COLONY_MCP_MAX_CONCURRENT); one more is refused with -32017 `busy`. */
    maxInFlight = Number.POSITIVE_INFINITY,
  ) {
    this.inFlightLimit = new InFlightLimit(maxInFlight);
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message)) {
        // A request reusing the id of one in flight (MCP: a requestor MUST NOT reuse an id) is not
        // run: the SDK kept one cancellation handle per id, so cancelling that id reached only the
        // later call, and a cancelled colony_publish published the earlier one once it was ticked.
        if (this.pending.has(message.id)) return this.refuseReusedId(message.id, "in flight");
        if (this.cancelledIds.has(message.id)) return this.refuseReusedId(message.id, "cancelled");
        // A session initializes once (MCP lifecycle): the SDK answered a second initialize and
        // replaced the client's capabilities and protocol version mid-session (a client claiming
        // elicitation it had not declared, a version it had not negotiated), where the HTTP
        // endpoints' SDK transport refuses re-initialization. Refused, the session goes on as it was.
        const secondInitialize = this.initialized || this.initializing !== undefined;
        if (message.method === "initialize" && secondInitialize) return this.refuseSecondInitialize(message.id);
        // Bounded as `colony mcp --http` bounds its POSTs: a client writing calls without waiting
        // for answers had each run at once, every one holding a request to the colony up to its
        // timeout. A ping or an initialize is answered by the server itself at once and holds no
        // request to the colony: a liveness check still passes, and a call read in the same chunk as
        // the handshake (a client that starts before the process has read its stdin) is not refused.
        const counted = message.method !== "ping" && message.method !== "initialize";
        if (counted && this.inFlightLimit.tryEnter(STDIO_CLIENT) !== null) return this.refuseOverCap(message.id);
        if (message.method === "initialize") this.initializing = message.id;
        this.pending.set(message.id, counted);
      }
      this.onmessage?.(message, extra);
      // The SDK never answers a request the client cancelled: waiting for its answer held the
      // process for the whole drain once stdin closed.
      if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
        const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (id !== undefined && this.pending.has(id)) {
          this.settle(id);
          this.cancelledIds.add(id);
          if (this.cancelledIds.size > CANCELLED_IDS_KEPT) this.cancelledIds.delete(this.cancelledIds.values().next().value!);
        }
      }
    };
  }

  private refuseReusedId(id: RequestId, used: "in flight" | "cancelled"): void {
    const message =
      used === "in flight"
        ? `Invalid Request: id ${JSON.stringify(id)} is used by a request still in flight; this request was not run ` +
          "(the earlier one goes on and is answered). Give every request its own id."
        : `Invalid Request: id ${JSON.stringify(id)} was used by a request this session cancelled; this request was not run. ` +
          "Give every request its own id.";
    this.logger?.warn(`refused a request reusing the id of one ${used}`, { id });
    void this.inner
      .send({ jsonrpc: "2.0", id, error: { code: JSON_RPC_ERRORS.invalidRequest, message } })
      .catch((error) => this.onerror?.(error));
  }

  private refuseOverCap(id: RequestId): void {
    const max = this.inFlightLimit.max;
    this.logger?.warn("refused a request over the cap", { id, max_concurrent: max });
    void this.inner.send({ jsonrpc: "2.0", id, error: busyError(max, "this server", false) }).catch((error) => this.onerror?.(error));
  }

  private refuseSecondInitialize(id: RequestId): void {
    const message =
      "Invalid Request: this session is already initialized; initialize is the first request of a session only " +
      "(start a new `colony mcp` process for another session). The session goes on as it was initialized.";
    this.logger?.warn("refused a second initialize", { id });
    void this.inner
      .send({ jsonrpc: "2.0", id, error: { code: JSON_RPC_ERRORS.invalidRequest, message } })
      .catch((error) => this.onerror?.(error));
  }

  private settle(id: RequestId): void {
    const counted = this.pending.get(id);
    if (counted === undefined) return;
    this.pending.delete(id);
    if (counted) this.inFlightLimit.leave(STDIO_CLIENT);
    if (this.pending.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    await this.inner.send(message, options);
    const answered = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message) ? message.id : undefined;
    // Only a successful initialize ends the handshake: one refused for its params may be sent again.
    if (answered !== undefined && answered === this.initializing) {
      this.initializing = undefined;
      if (isJSONRPCResultResponse(message)) this.initialized = true;
    }
    if (answered !== undefined && answered !== null) this.settle(answered);
  }

  /** Requests read and not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Resolves once every request read so far is answered (true), or after `maxMs` (false). */
  async drained(maxMs: number): Promise<boolean> {
    if (this.pending.size === 0) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), maxMs)));
    const done = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    return done;
  }
}

/** Resolves once everything written to stdout so far has been handed to the OS. */
function flushStdout(): Promise<void> {
  return new Promise((resolve) => process.stdout.write("", () => resolve()));
}

/**
 * A protocol error the SDK reports (an answer to an id it never sent, a progress notification of
 * an unknown token, a handler that failed to send) as log fields: the SDK's sentence without the
 * message it quotes (a client's answer may hold anything), and that message's id.
 */
export function protocolErrorFields(err: unknown): { error: string; id?: string | number } {
  const text = errorMessage(err);
  const quoted = text.search(/: [{[]/);
  const fields: { error: string; id?: string | number } = { error: (quoted === -1 ? text : text.slice(0, quoted)).slice(0, 200) };
  const id = /"(?:id|requestId|progressToken)":("(?:[^"\\]|\\.){0,100}"|-?\d{1,20})/.exec(text)?.[1];
  if (id !== undefined) fields.id = JSON.parse(id);
  return fields;
}

export async function runStdio(cfg: McpConfig, logger: Logger, drainMs = DRAIN_MS): Promise<void> {
  const client = new HttpColonyClient({ baseUrl: cfg.colonyUrl, agentId: cfg.agentId });
  const server = createToolServer(client, localToolConfig(cfg));
  // The SDK reports what it cannot match (an answer to an unknown id, …) here and nowhere else:
  // logged on stderr, never on stdout, which carries the protocol only.
  server.onerror = (err) => logger.warn("mcp protocol error", protocolErrorFields(err));
  const transport = new DrainingTransport(new StdioLineTransport(logger), logger, cfg.maxConcurrent);
  let closing = false;
  const close = async (why: string) => {
    if (closing) return;
    closing = true;
    const inFlight = transport.inFlight;
    logger.info("colony mcp stopping", { why, in_flight: inFlight });
    if (inFlight > 0 && !(await transport.drained(drainMs))) {
      logger.warn("calls still running when the drain ended; their answers are dropped", {
        in_flight: transport.inFlight,
        drain_ms: drainMs,
      });
    }
    await flushStdout();
    await server.close().catch(() => {});
    process.exit(0);
  };
  process.on("SIGTERM", () => void close("SIGTERM"));
  process.on("SIGINT", () => void close("SIGINT"));
  await server.connect(transport);
  // The client closing our stdin ends the session, once the calls it sent are answered. Listened
  // to after the transport's own listener, which reads a last line that lacks its newline first.
  process.stdin.on("end", () => void close("stdin closed"));
  logger.info("colony mcp serving over stdio", { colony_url: shownColonyUrl(cfg.colonyUrl), publish: cfg.publish });
}

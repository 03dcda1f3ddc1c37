// The stdio transport of `colony mcp`: one JSON-RPC message per line on stdin, one per line on
// stdout (the MCP stdio transport). It replaces the SDK's StdioServerTransport, which dropped a
// line it could not read without a word (the client's request then waited for its own timeout),
// and closed the session on a line over 10 MB, after which the process exited 0 in silence.
// Here every line that is no message is answered with a JSON-RPC error, as the HTTP endpoints
// answer such a body, and the session goes on:
// - not JSON, or nesting deeper than the HTTP endpoints parse (parseJsonBody): -32700, id null;
// - an object holding a key twice: -32600, with the request's id unless `id` is the key held twice;
// - JSON that is no JSON-RPC message (a batch, a request with params not an object, …): -32600,
//   with the request's id when it has one, so the client's call ends at once;
// - a line over MAX_LINE_BYTES: -32010, id null; the rest of the line is skipped unread.
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { BodyParseError, DuplicateKeyError, parseJsonBody } from "../http/body";
import type { Logger } from "../log";
import { escapeHiddenInJson } from "../core/hidden-json";
import { answerableRequestId, duplicateKeyAnswerId, JSON_RPC_ERRORS, paramsRefusal } from "./jsonrpc-errors";

/** The longest line read, as the SDK's transport allowed (a tool's text is cut locally, not refused). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

const NEWLINE = 0x0a;
const UTF8 = new TextDecoder();

/**
 * A message as one line of stdout. JSON.stringify leaves DEL, the 8-bit controls (C1: CSI, NEL),
 * U+2028/U+2029 and the invisible format characters raw: a trail's C1 and bidi marks reached a
 * terminal running `colony mcp` by hand through structuredContent (the tool's text already escaped
 * them), and a line reader that splits on Unicode line breaks cut the frame in two. Escaped as
 * `--json` and tool texts escape them (src/core/hidden-json.ts), the message parses to the same value.
 */
export function stdoutLine(message: JSONRPCMessage): string {
  return escapeHiddenInJson(JSON.stringify(message));
}

export class StdioLineTransport implements Transport {
  onclose?: Transport["onclose"];
  onerror?: Transport["onerror"];
  onmessage?: Transport["onmessage"];
  private parts: Buffer[] = [];
  private bytes = 0;
  /** The current line passed MAX_LINE_BYTES: its rest is dropped up to the next newline. */
  private skipping = false;

  constructor(
    private readonly logger: Pick<Logger, "warn"> | null = null,
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.stdin.on("data", this.ondata);
    this.stdin.on("end", this.onend);
    this.stdin.on("error", this.onstdinerror);
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.ondata);
    this.stdin.off("end", this.onend);
    this.stdin.off("error", this.onstdinerror);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.parts = [];
    this.bytes = 0;
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${stdoutLine(message)}\n`)) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  private readonly onstdinerror = (error: Error) => this.onerror?.(error);

  private readonly ondata = (chunk: Buffer | string) => {
    const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (;;) {
      const newline = data.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.keep(data.subarray(start));
        return;
      }
      this.keep(data.subarray(start, newline));
      this.endLine();
      start = newline + 1;
    }
  };

  /** A last line without its newline is read as a line: answered, or refused with a reason. */
  private readonly onend = () => {
    if (this.bytes > 0 || this.skipping) this.endLine();
  };

  private keep(part: Buffer): void {
    if (this.skipping || part.length === 0) return;
    if (this.bytes + part.length > this.maxLineBytes) {
      this.skipping = true;
      this.parts = [];
      this.bytes = 0;
      return;
    }
    this.parts.push(part);
    this.bytes += part.length;
  }

  private endLine(): void {
    if (this.skipping) {
      this.skipping = false;
      this.refuse(null, JSON_RPC_ERRORS.tooLarge, `the line is over ${this.maxLineBytes / (1024 * 1024)} MB; it was not read`);
      return;
    }
    // Decoded as the HTTP endpoints decode a body: a leading byte order mark (Windows PowerShell
    // writes one) is dropped, and invalid UTF-8 becomes U+FFFD.
    const line = UTF8.decode(Buffer.concat(this.parts, this.bytes)).replace(/\r$/, "");
    this.parts = [];
    this.bytes = 0;
    if (line.trim() === "") return;
    this.read(line);
  }

  private read(line: string): void {
    let value: unknown;
    try {
      value = parseJsonBody(line);
    } catch (err) {
      if (err instanceof DuplicateKeyError) {
        const why = err.message.replace(/^the body/, "the line");
        this.refuse(duplicateKeyAnswerId(err), JSON_RPC_ERRORS.invalidRequest, `Invalid Request: ${why}`);
        return;
      }
      const why = err instanceof BodyParseError ? err.message.replace(/^the body/, "the line") : "the line is not valid JSON";
      this.refuse(null, JSON_RPC_ERRORS.parseError, `Parse error: ${why}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const what = Array.isArray(value)
        ? "a batch (a JSON array) is not read over stdio; write one message per line"
        : (paramsRefusal(value) ?? 'the line must be one JSON-RPC 2.0 message (jsonrpc "2.0", a method and an id, params an object)');
      this.refuse(answerableRequestId(value), JSON_RPC_ERRORS.invalidRequest, `Invalid Request: ${what}`);
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private refuse(id: RequestId | null, code: number, message: string): void {
    this.logger?.warn("refused a line of stdin", { code, message, id });
    // JSON-RPC 2.0 answers an unreadable request with id null, which the SDK's types do not allow.
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

// MCP clients for tests: the SDK's own Client over Streamable HTTP and over stdio, and a recording
// proxy that sits between an MCP server and a real colony to show what went over the wire.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "bun:test";
import { join } from "node:path";
import { REPO_DIR } from "./paths";

export const BUN = join(REPO_DIR, "node_modules/.bin/bun");

export interface ClientOptions {
  /** Declare elicitation and answer each request with this function; `signal` aborts when the server withdraws it. */
  elicit?: (request: ElicitRequest, signal: AbortSignal) => ElicitResult | Promise<ElicitResult>;
  name?: string;
}

function newClient(opts: ClientOptions): Client {
  const client = new Client(
    { name: opts.name ?? "colony-test-client", version: "1.0.0" },
    { capabilities: opts.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (opts.elicit) client.setRequestHandler(ElicitRequestSchema, (req, extra) => opts.elicit!(req, extra.signal));
  return client;
}

export async function connectHttp(mcpUrl: string, headers: Record<string, string> = {}, opts: ClientOptions = {}): Promise<Client> {
  const client = newClient(opts);
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers } }));
  await client.listTools(); // the SDK checks each tool's structuredContent against its outputSchema from now on
  return client;
}

export interface StdioClient {
  client: Client;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Spawns an MCP server (command + args) and connects over its stdin/stdout. */
export async function connectStdio(
  command: string,
  args: string[],
  env: Record<string, string>,
  opts: ClientOptions = {},
): Promise<StdioClient> {
  const client = newClient(opts);
  const transport = new StdioClientTransport({ command, args, env, stderr: "pipe", cwd: env.MCP_TEST_CWD ?? REPO_DIR });
  let err = "";
  transport.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  await client.connect(transport);
  await client.listTools(); // the SDK checks each tool's structuredContent against its outputSchema from now on
  return { client, stderr: () => err, close: () => client.close() };
}

/** Environment for a spawned `colony mcp`: only what it needs. */
export function mcpEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", COLONY_LOG_LEVEL: "info", ...extra };
}

export interface ToolAnswer {
  isError: boolean;
  text: string;
  /** The text parsed as JSON, or null when it is not JSON. */
  json: any;
  /** structuredContent (checked by the SDK against the tool's outputSchema), or null. */
  structured: any;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { type: string; text: string }[];
    structuredContent?: unknown;
  };
  const text = r.content.map((c) => c.text).join("\n");
  let json: any = null;
  try {
    // The data is the last text item; a plain sentence may come before it (colony_search's
    // "No strong match" line).
    json = JSON.parse(r.content[r.content.length - 1]?.text ?? "");
  } catch {}
  return { isError: r.isError === true, text, json, structured: r.structuredContent ?? null };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A pass-through HTTP proxy to a real colony that records every request it forwards. */
export function recordingProxy(target: string) {
  const seen: RecordedRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
      seen.push({ method: req.method, path: url.pathname, headers: Object.fromEntries(req.headers), body });
      const headers = new Headers(req.headers);
      headers.delete("host");
      headers.delete("content-length");
      const res = await fetch(target + url.pathname + url.search, {
        method: req.method,
        headers,
        body: body === "" ? undefined : body,
      });
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

/**
 * A colony that is slow: a loopback proxy to `target` that holds every request `holdMs`, before it
 * forwards it (the call is surely in flight meanwhile) or after the colony answered.
 */
export function slowColony(target: string, holdMs: number, hold: "before" | "after"): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === "GET" ? undefined : await req.text();
      const headers = new Headers(req.headers);
      headers.delete("host");
      if (hold === "before") await Bun.sleep(holdMs);
      const answer = await fetch(target + url.pathname + url.search, { method: req.method, headers, body });
      if (hold === "after") await Bun.sleep(holdMs);
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers });
    },
  });
}

/** colony_search over the hosted /mcp as one fresh client (headers: the agent's), closed after the call. */
export async function searchOverHostedMcp(colonyUrl: string, headers: Record<string, string>, error: string): Promise<ToolAnswer> {
  const client = await connectHttp(`${colonyUrl}/mcp`, headers);
  try {
    return await callTool(client, "colony_search", { error });
  } finally {
    await client.close();
  }
}

/** A hostile call must never break a later one: an ordinary colony_search on the same client is served. */
export async function expectOrdinarySearchServed(client: Client): Promise<void> {
  const result = await client.callTool({ name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" } });
  expect(result.isError).toBeFalsy();
}

/** One JSON-RPC message as `colony mcp` (stdio) reads it: a line. */
export const jsonRpcLine = (message: unknown) => `${JSON.stringify(message)}\n`;

/** An ordinary colony_search call as a stdio line. */
export const searchCallLine = (id: number) =>
  jsonRpcLine({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" } },
  });

/** `colony mcp` from source over raw pipes, with mcpEnv's variables and `extra`. */
export function spawnStdioMcp(extra: Record<string, string>) {
  return Bun.spawn([BUN, join(REPO_DIR, "src/main.ts"), "mcp"], {
    cwd: REPO_DIR,
    env: mcpEnv(extra),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
}

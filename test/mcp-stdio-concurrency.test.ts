// `colony mcp` (stdio) bounds the requests it runs at once, as `colony mcp --http` bounds its POSTs
// (COLONY_MCP_MAX_CONCURRENT): a client that writes thousands of calls without waiting for answers
// (a runaway loop, a hostile local process) had every one run at once, each holding a request to
// the colony for up to its 15 s timeout. One more than the cap is answered at once with JSON-RPC
// -32017 `busy`, its id kept, and the session goes on. Shown with a raw pipe and the SDK client.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { startTestColony, type TestColony } from "./support/colony";
import { BUN, callTool, connectStdio, jsonRpcLine, mcpEnv, searchCallLine, spawnStdioMcp } from "./support/mcp";
import { REPO_DIR } from "./support/paths";
import { agent, json, sampleTrail } from "./support/trails";

let colony: TestColony;

beforeAll(async () => {
  colony = await startTestColony();
  await colony.fetch("/v1/trails", json(sampleTrail(), agent("author-agent-01")));
  await colony.service.worker!.drain();
});
afterAll(() => colony?.dispose());

/** A loopback colony that holds every request until `release()`, counting them, then forwards it. */
function holdingColony(target: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      arrived++;
      const url = new URL(req.url);
      const body = req.method === "GET" ? undefined : await req.text();
      const headers = new Headers(req.headers);
      headers.delete("host");
      await released;
      const answer = await fetch(target + url.pathname + url.search, { method: req.method, headers, body });
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, arrived: () => arrived, release, stop: () => server.stop(true) };
}

const line = jsonRpcLine;
const search = searchCallLine;

describe("colony mcp (stdio): requests at once are capped (COLONY_MCP_MAX_CONCURRENT)", () => {
  test("a raw client writing 300 calls without waiting: the cap runs, the rest are -32017 at once with their ids; later calls are served", async () => {
    const held = holdingColony(colony.url);
    const proc = spawnStdioMcp({ COLONY_URL: held.url, COLONY_AGENT_ID: "stdio-flood-01", COLONY_MCP_MAX_CONCURRENT: "4" });
    try {
      const answers: any[] = [];
      const reading = (async () => {
        let rest = "";
        for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
          rest += new TextDecoder().decode(chunk);
          const lines = rest.split("\n");
          rest = lines.pop()!;
          for (const l of lines) if (l) answers.push(JSON.parse(l));
        }
      })();
      proc.stdin.write(
        line({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "flood", version: "1" } },
        }) + line({ jsonrpc: "2.0", method: "notifications/initialized" }),
      );
      const waitFor = async (ok: () => boolean, ms: number) => {
        const until = Date.now() + ms;
        while (!ok() && Date.now() < until) await Bun.sleep(20);
      };
      await waitFor(() => answers.length === 1, 10_000);
      let all = "";
      for (let id = 1; id <= 300; id++) all += search(id);
      proc.stdin.write(all);
      await proc.stdin.flush();
      await waitFor(() => answers.length >= 1 + 296 && held.arrived() >= 4, 10_000);
      await Bun.sleep(300);
      // The colony saw the cap's requests only, and every other call was answered at once.
      expect(held.arrived()).toBe(4);
      const busy = answers.filter((a) => a.error?.code === -32017);
      expect(busy.length).toBe(296);
      expect(busy[0].error.data).toEqual({ code: "busy", max_concurrent: 4 });
      expect(busy[0].error.message).toContain("COLONY_MCP_MAX_CONCURRENT");
      expect(new Set(busy.map((a) => a.id)).size).toBe(296);
      // Released, the four are answered, and the session serves the next call.
      held.release();
      await waitFor(() => answers.filter((a) => a.result?.content).length >= 4, 10_000);
      proc.stdin.write(search(301));
      await proc.stdin.flush();
      await waitFor(() => answers.some((a) => a.id === 301), 10_000);
      const served = answers.filter((a) => a.result?.content && !a.result.isError).map((a) => a.id);
      expect(served.length).toBe(5);
      expect(served).toContain(301);
      proc.stdin.end();
      expect(await proc.exited).toBe(0);
      await reading;
      const stderr = await new Response(proc.stderr).text();
      expect(stderr).toContain("refused a request over the cap");
    } finally {
      proc.kill();
      held.stop();
    }
  }, 30_000);

  test("the SDK client firing 12 calls at once: the cap's are served, the others reject with McpError -32017, and the next call works", async () => {
    const held = holdingColony(colony.url);
    const stdio = await connectStdio(
      BUN,
      [join(REPO_DIR, "src/main.ts"), "mcp"],
      mcpEnv({ COLONY_URL: held.url, COLONY_MCP_MAX_CONCURRENT: "3" }),
    );
    try {
      let refusedSoFar = 0;
      const calls = Array.from({ length: 12 }, () =>
        callTool(stdio.client, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" }).then(
          (answer) => ({ answer }),
          (error: unknown) => {
            refusedSoFar++;
            return { error };
          },
        ),
      );
      // Released once the cap's calls reached the colony and the others were refused (a loaded
      // machine may take a while to read all twelve).
      const until = Date.now() + 15_000;
      while ((held.arrived() < 3 || refusedSoFar < 9) && Date.now() < until) await Bun.sleep(20);
      held.release();
      const settled = await Promise.all(calls);
      const refused = settled.filter((s): s is { error: McpError } => "error" in s);
      expect(refused.length).toBe(9);
      for (const { error } of refused) {
        expect(error).toBeInstanceOf(McpError);
        expect(error.code).toBe(-32017);
      }
      expect(settled.filter((s) => "answer" in s && !s.answer.isError).length).toBe(3);
      expect(held.arrived()).toBe(3);
      const next = await callTool(stdio.client, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" });
      expect(next.isError).toBe(false);
      expect(next.structured.trails.length).toBeGreaterThan(0);
    } finally {
      await stdio.close();
      held.stop();
    }
  }, 30_000);

  // The cap counted every request read and not answered, pings too, though a ping holds nothing:
  // a ping written in the same chunk as a call (a client's keep-alive beside its work) took the
  // call's place, and with COLONY_MCP_MAX_CONCURRENT=1 the call was -32017 busy.
  test("a ping beside a call holds no place of the cap: with a cap of 1, the call written with it is served", async () => {
    const proc = spawnStdioMcp({ COLONY_URL: colony.url, COLONY_AGENT_ID: "stdio-ping-cap-01", COLONY_MCP_MAX_CONCURRENT: "1" });
    try {
      proc.stdin.write(
        line({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ping-cap", version: "1" } },
        }) + line({ jsonrpc: "2.0", method: "notifications/initialized" }),
      );
      await proc.stdin.flush();
      await Bun.sleep(500);
      proc.stdin.write(line({ jsonrpc: "2.0", id: 1, method: "ping" }) + search(2) + line({ jsonrpc: "2.0", id: 3, method: "ping" }));
      await proc.stdin.flush();
      await Bun.sleep(300);
      proc.stdin.end();
      const answers = (await new Response(proc.stdout).text())
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(await proc.exited).toBe(0);
      const byId = new Map(answers.map((a) => [a.id, a]));
      expect(byId.get(1)?.result).toEqual({});
      expect(byId.get(3)?.result).toEqual({});
      expect(byId.get(2)?.error).toBeUndefined();
      expect(byId.get(2)?.result?.isError).toBeFalsy();
    } finally {
      proc.kill();
    }
  }, 30_000);
});

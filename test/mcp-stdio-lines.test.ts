// `colony mcp` over stdio as a sloppy or hostile client writes to it (session 12 MCP audit): raw
// lines into the real process, against a real colony. A line that is no JSON-RPC message is
// answered with a JSON-RPC error, as the HTTP endpoints answer such a body, and the session goes
// on; a call the client cancelled does not hold the process once stdin closes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestColony, type TestColony } from "./support/colony";
import { jsonRpcLine, searchCallLine, slowColony, spawnStdioMcp } from "./support/mcp";
import { agent, json, sampleTrail } from "./support/trails";

const HOLD_MS = 3000;
let colony: TestColony;
let slow: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  colony = await startTestColony();
  await colony.fetch("/v1/trails", json(sampleTrail(), agent("author-agent-01")));
  await colony.service.worker!.drain();
  slow = slowColony(colony.url, HOLD_MS, "before");
});
afterAll(async () => {
  await slow?.stop(true);
  await colony?.dispose();
});

const line = jsonRpcLine;
const INITIALIZE =
  line({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "stdio-lines-test", version: "1" } },
  }) + line({ jsonrpc: "2.0", method: "notifications/initialized" });
const ping = (id: number) => line({ jsonrpc: "2.0", id, method: "ping" });

/** Runs `colony mcp`, writes each chunk in turn, closes stdin; every answer, stderr and the exit. */
async function session(chunks: (string | Uint8Array)[], colonyUrl = colony.url) {
  const proc = spawnStdioMcp({ COLONY_URL: colonyUrl, COLONY_AGENT_ID: "stdio-lines-01" });
  for (const chunk of chunks) {
    proc.stdin.write(chunk);
    await proc.stdin.flush();
    await Bun.sleep(50);
  }
  const closedAt = Date.now();
  await proc.stdin.end();
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const answers = stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  return { answers, stderr, code, exitMs: Date.now() - closedAt };
}

const errorsOf = (answers: any[]) => answers.filter((a) => a.error).map((a) => ({ id: a.id, code: a.error.code }));

describe("lines that are no JSON-RPC message", () => {
  test("are answered with a JSON-RPC error (the request's id when it has one), logged, and the session goes on", async () => {
    const deep = `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"colony_search","arguments":{"error":"ModuleNotFoundError: x","extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}}}\n`;
    const { answers, stderr, code } = await session([
      INITIALIZE,
      "{not json\n",
      // params must be an object: the SDK's transport dropped it, and the call waited for the client's timeout
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["colony_search"]}\n',
      // nesting deeper than the HTTP endpoints parse: an internal error -32603 ("Maximum call stack size exceeded") before
      deep,
      `[${line({ jsonrpc: "2.0", id: 7, method: "ping" }).trim()}]\n`,
      '{"jsonrpc":"2.0","id":8,"result":{"action"\n', // a broken answer to an elicitation is no request of the client's
      ping(2),
    ]);
    expect(errorsOf(answers)).toEqual([
      { id: null, code: -32700 },
      { id: 5, code: -32600 },
      { id: null, code: -32700 },
      { id: null, code: -32600 },
      { id: null, code: -32700 },
    ]);
    expect(answers.find((a) => a.id === null && a.error.code === -32600).error.message).toContain("one message per line");
    expect(answers.filter((a) => a.error?.code === -32700)[1].error.message).toContain("deeper than 64 levels");
    expect(answers.at(-1)).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    expect(stderr.match(/refused a line of stdin/g)).toHaveLength(5);
    expect(code).toBe(0);
  }, 30_000);

  test("a line over 10 MB is refused with -32010 without being read, and the session goes on", async () => {
    // The SDK's transport closed the session on it: the next call went unanswered and the process exited 0 in silence.
    const huge = line({ jsonrpc: "2.0", id: 3, method: "ping", params: { pad: "x".repeat(11 * 1024 * 1024) } });
    const { answers, stderr, code } = await session([INITIALIZE, huge, ping(4)]);
    expect(errorsOf(answers)).toEqual([{ id: null, code: -32010 }]);
    expect(answers.at(-1)).toEqual({ jsonrpc: "2.0", id: 4, result: {} });
    expect(stderr).toContain("the line is over 10 MB");
    expect(code).toBe(0);
  }, 30_000);

  test("a byte order mark, CRLF line ends, a message split over writes, and a last message without its newline are all read", async () => {
    // Windows PowerShell pipes UTF-8 with a byte order mark: the first message (initialize) was dropped.
    const { answers, code } = await session([`\ufeff${INITIALIZE}`, '{"jsonrpc":"2.0",', '"id":2,"method":"ping"}\r\n', ping(3).trim()]);
    expect(answers[0].result.protocolVersion).toBe("2025-06-18");
    expect(answers.slice(1)).toEqual([
      { jsonrpc: "2.0", id: 2, result: {} },
      { jsonrpc: "2.0", id: 3, result: {} },
    ]);
    expect(code).toBe(0);
  }, 30_000);
});

test("a refused request is answered with its id over stdio and HTTP alike: the id when it is read, null when it cannot be (JSON-RPC 2.0 §5)", async () => {
  // stdio echoed an id it had not read exactly (a fraction, an integer past 2^53 rounded by
  // JSON.parse, which names another request) where the HTTP endpoints answered null, and the HTTP
  // endpoints answered null where stdio echoed a request's readable id (session 16's note).
  const lines = [
    '{"jsonrpc":"2.0","id":1.5,"method":"ping","params":[]}',
    '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":[]}',
    '{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping","params":[]}',
    '{"jsonrpc":"2.0","id":1e400,"method":"ping","params":[]}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"2.0","id":[7],"method":"ping"}',
    '{"jsonrpc":"2.0","id":{"n":7},"method":"ping"}',
    '{"jsonrpc":"2.0","id":true,"method":"ping"}',
    '{"jsonrpc":"2.0","id":31,"result":{},"method":7}', // a method that is no string: not a request
    '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping","params":[]}',
    '{"jsonrpc":"2.0","id":-0,"method":"ping","params":[]}',
    '{"jsonrpc":"2.0","id":"","method":"ping","params":[]}',
    '{"jsonrpc":"1.0","id":"abc","method":"ping"}',
    '{"id":12,"method":"ping"}',
  ];
  const expected = [null, null, null, null, null, null, null, null, null, 9007199254740991, 0, "", "abc", 12];
  const { answers } = await session([INITIALIZE, ...lines.map((l) => `${l}\n`)]);
  const viaStdio = answers.filter((a) => a.error).map((a) => [a.error.code, a.id]);
  const viaHttp: unknown[] = [];
  for (const body of lines) {
    const res = await fetch(`${colony.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body,
    });
    const answer = (await res.json()) as any;
    viaHttp.push([answer.error.code, answer.id]);
  }
  const want = expected.map((id) => [-32600, id]);
  expect({ viaStdio, viaHttp }).toEqual({ viaStdio: want, viaHttp: want });
}, 30_000);

test("a second initialize in a session is refused with -32600 and the session goes on as first initialized", async () => {
  // The SDK answered it: the client's capabilities and protocol version were replaced mid-session
  // (elicitation claimed after declaring none, a version not negotiated), where the HTTP
  // endpoints' transport refuses re-initialization.
  const initialize = (id: number, protocolVersion: string, capabilities = {}) =>
    line({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion, capabilities, clientInfo: { name: "again", version: "1" } },
    });
  const { answers, stderr, code } = await session([
    initialize(2, "2025-06-18"),
    line({ jsonrpc: "2.0", method: "notifications/initialized" }),
    initialize(3, "2025-11-25", { elicitation: { form: {} } }),
    initialize(4, "1999-01-01"),
    ping(5),
  ]);
  // Lines read in one chunk are refused before the first initialize is answered: compared by id.
  answers.sort((a, b) => a.id - b.id);
  expect(answers.map((a) => [a.id, a.error?.code ?? a.result?.protocolVersion ?? a.result])).toEqual([
    [2, "2025-06-18"],
    [3, -32600],
    [4, -32600],
    [5, {}],
  ]);
  expect(answers[1].error.message).toContain("already initialized");
  expect(stderr.match(/refused a second initialize/g)).toHaveLength(2);
  expect(code).toBe(0);
}, 30_000);

test("a call the client cancelled does not hold the process for the drain once stdin closes", async () => {
  const search = line({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" } },
  });
  const cancel = line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "the user stopped it" } });
  const { answers, stderr, code, exitMs } = await session([INITIALIZE, search, cancel], `http://127.0.0.1:${slow.port}`);
  // The SDK never answers a cancelled request; the drain waited 30 s for it before.
  expect(answers.map((a) => a.id)).toEqual([1]);
  expect(code).toBe(0);
  expect(stderr).not.toContain("calls still running");
  expect(exitMs).toBeLessThan(HOLD_MS);
}, 60_000);

test("stdout carries no raw 8-bit control, line separator or invisible format character of a trail, and the values are the same", async () => {
  // The tool's text escaped C1 controls and DEL (terminal clients print it), but the frame wrote
  // structuredContent with JSON.stringify, which leaves them raw: a person running `colony mcp` in
  // a terminal got a trail's CSI (U+009B) and NEL as bytes, and U+2028/U+2029, which line readers
  // that split on Unicode line breaks take for the end of the frame, came through as well.
  // A right-to-left mark and a soft hyphen (session 16) reached that terminal raw the same way.
  const error = "TypeError: frame\u009b2Jcheck \u0085next\u2028line\u2029para\u007f end \u200f# ~/ fr- mr\u200f py\u00adyaml";
  const trail = sampleTrail({ error, commands: ["echo frame\u009b31m"] });
  const published = await colony.fetch("/v1/trails", json(trail, agent("frame-agent-01")));
  expect(published.status).toBe(202);
  await colony.service.worker!.drain();
  const call = line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "colony_search", arguments: { error } } });
  const proc = spawnStdioMcp({ COLONY_URL: colony.url });
  proc.stdin.write(INITIALIZE + call);
  await proc.stdin.flush();
  await proc.stdin.end();
  const stdout = await new Response(proc.stdout).text();
  await proc.exited;
  expect(stdout.match(/[\u007f-\u009f\u2028\u2029\p{Cf}]/gu)).toBeNull();
  const answer = stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((a) => a.id === 2);
  const found = answer.result.structuredContent.trails.find((t: { error: string }) => t.error === error);
  expect(found?.commands[0].command).toBe("echo frame\u009b31m");
}, 30_000);

test("a request with an odd progress token is told which field is wrong over stdio, and the session goes on", async () => {
  // It was "the line must be one JSON-RPC 2.0 message (jsonrpc "2.0", a method and an id, params an
  // object)", which the line is: the client could not tell what to fix.
  const call = (id: number, meta: unknown) =>
    line({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "colony_search", arguments: { error: "x" }, _meta: meta } });
  const { answers, code } = await session([INITIALIZE, call(2, { progressToken: { a: 1 } }), call(3, "x"), ping(4)]);
  answers.sort((a, b) => a.id - b.id);
  expect(answers.slice(1).map((a) => [a.id, a.error?.code ?? a.result, a.error?.message])).toEqual([
    [2, -32600, "Invalid Request: params._meta.progressToken must be a string or an integer (or left out)"],
    [3, -32600, "Invalid Request: params._meta must be an object (or left out)"],
    [4, {}, undefined],
  ]);
  expect(code).toBe(0);
}, 30_000);

test("a line holding a key twice is refused with -32600 and its id (null when id is the key held twice), and the session goes on", async () => {
  const twiceInArguments =
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"colony_search","arguments":{"error":"a","error":"b"}}}\n';
  const { answers, code } = await session([INITIALIZE, '{"jsonrpc":"2.0","id":2,"method":"ping","id":3}\n', twiceInArguments, ping(4)]);
  expect(answers.filter((a) => a.id !== 1)).toEqual([
    {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: 'Invalid Request: the line has the key "id" twice in one object (at "/"): send each key once' },
    },
    {
      jsonrpc: "2.0",
      id: 5,
      error: {
        code: -32600,
        message: 'Invalid Request: the line has the key "error" twice in one object (at "/params/arguments"): send each key once',
      },
    },
    { jsonrpc: "2.0", id: 4, result: {} },
  ]);
  expect(code).toBe(0);
}, 30_000);

// MCP: a request id MUST NOT be reused in a session. A reuse of an id in flight was refused; one
// right after its call was cancelled was run: the cancelled call's handler, ending, dropped the
// SDK's cancellation handle of that id, so cancelling the new call did nothing (a colony_publish
// prompt would stay open and publish once ticked; here a search is answered though cancelled).
test("a request reusing the id of a call the client just cancelled is refused, not run; the session goes on", async () => {
  const search = searchCallLine;
  const cancel = (id: number) => line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
  const proc = spawnStdioMcp({ COLONY_URL: `http://127.0.0.1:${slow.port}`, COLONY_AGENT_ID: "stdio-lines-01" });
  const write = async (text: string, thenMs: number) => {
    proc.stdin.write(text);
    await proc.stdin.flush();
    await Bun.sleep(thenMs);
  };
  await write(INITIALIZE, 300);
  await write(search(7), 200);
  await write(cancel(7) + search(7), 200);
  await write(cancel(7), HOLD_MS + 1000); // past the slow colony's hold: an answer would be written by now
  await write(ping(8), 200);
  await proc.stdin.end();
  const answers = (await new Response(proc.stdout).text())
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  expect(await proc.exited).toBe(0);
  const seven = answers.filter((a) => a.id === 7);
  expect(seven).toHaveLength(1);
  expect(seven[0].error?.code).toBe(-32600);
  expect(seven[0].error.message).toContain("cancelled");
  expect(answers.find((a) => a.id === 8)?.result).toEqual({});
}, 30_000);

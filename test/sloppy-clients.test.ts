// What a sloppy third-party client sends and what it gets back (session 18, http18b): refusals it
// can act on, that quote nothing it sent raw, in the shape of the door it used.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../src/log";
import { loadMcpConfig } from "../src/mcp/config";
import { startStandalone, type RunningMcpServer } from "../src/mcp/standalone";
import { startTestColony, type TestColony } from "./support/colony";
import { rawRequest } from "./support/fuzz";
import { connectHttp, expectOrdinarySearchServed } from "./support/mcp";
import { agent, json, sampleTrail } from "./support/trails";

let colony: TestColony;
let standalone: RunningMcpServer;

beforeAll(async () => {
  colony = await startTestColony({ COLONY_RATE_LIMIT: "100000" });
  standalone = startStandalone(loadMcpConfig({ COLONY_URL: colony.url }), { port: 0, logger: createLogger("silent") });
});
afterAll(async () => {
  await standalone?.stop();
  await colony?.dispose();
});

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sloppy", version: "1" } },
});

// `//mcp` (a base URL ending in / joined to /mcp) and `/MCP` got the REST 404 `{error: {code,
// message}}`, which an MCP client cannot read as JSON-RPC; other paths keep the REST shape.
test("a path that reads as /mcp is answered 404 in JSON-RPC's shape on both doors, saying what differs", async () => {
  for (const [base, port] of [
    [colony.url, colony.replicas[0]!.port],
    [standalone.url.replace(/\/mcp$/, ""), standalone.port],
  ] as const) {
    for (const [path, says] of [
      ["//mcp", "send it with one slash"],
      ["/MCP", "paths are lowercase"],
      ["/Mcp/", "paths are lowercase"],
      ["/mcp//", "send it with one slash"],
    ]) {
      // Raw bytes: Bun's fetch sends `http://host//mcp` as /mcp; curl and most clients send it as written.
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${initialize.length}\r\nConnection: close\r\n\r\n${initialize}`;
      const res = (await rawRequest(port, [new TextEncoder().encode(head)]))!;
      expect([base, path, res.status]).toEqual([base, path, 404]);
      const body = JSON.parse(res.text);
      expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32015, data: { code: "not_found" } } });
      expect(body.error.message).toContain(says);
    }
    const rest = (await (await fetch(`${base}/V1/feed`)).json()) as any;
    expect(rest.error).toEqual({ code: "not_found", message: "no such route: paths are lowercase; send it in lowercase" });
    // The SDK client is told why (it shows the body's text), and the right path still serves.
    await expect(connectHttp(`${base}/MCP`)).rejects.toThrow(/paths are lowercase/);
    const client = await connectHttp(`${base}/mcp`);
    await client.close();
  }
});

// The refusal quoted the client's solution_id raw: a zero-width space or a bidi override in it made
// the message read as other text than was sent (a right-to-left override reverses what follows).
test("a solution_id naming another trail is quoted with its invisible characters escaped", async () => {
  const published = await colony.fetch(
    "/v1/trails",
    json(sampleTrail({ error: "sloppy-clients: quoted solution id" }), agent("agent-sloppy")),
  );
  expect(published.status).toBe(202);
  const id = ((await published.json()) as any).trail_id as string;
  const sent = "other\u200b\u202etrail\u2066";
  const report = () =>
    colony.fetch(
      `/v1/trails/${id}/outcomes`,
      json({ protocol_version: "1.0", outcome: "worked", solution_id: sent }, agent("agent-sloppy")),
    );
  let res = await report();
  // Published is queued: 404 until the worker indexed it.
  for (let i = 0; i < 100 && res.status === 404; i++) {
    await Bun.sleep(50);
    res = await report();
  }
  expect(res.status).toBe(400);
  const text = await res.text();
  expect(text).not.toMatch(/[\u200b\u202e\u2066]/);
  const detail = (JSON.parse(text) as any).error.details[0];
  expect(detail.path).toBe("/solution_id");
  expect(detail.message).toStartWith('names "other\\u200b\\u202etrail\\u2066", but the report is for trail');
});

// `?limit=５` was "must be a whole number" and nothing more: to a person or a model the 5 looks
// right. The hint names the ASCII number it reads as, not the characters sent.
test("a number in the query that reads as one is told what differs and what to send", async () => {
  for (const [q, message] of [
    [
      "?limit=%EF%BC%95",
      "must be a whole number (the value sent reads as 5 but is written with other characters than ASCII digits, or invisible ones: send 5 in ASCII digits)",
    ],
    [
      "?limit=1%E2%80%8B2",
      "must be a whole number (the value sent reads as 12 but is written with other characters than ASCII digits, or invisible ones: send 12 in ASCII digits)",
    ],
    ["?limit=%D9%A3", "must be a whole number"], // Arabic-Indic 3: no hint (NFKC keeps it)
    ["?limit=1.5", "must be a whole number"],
  ]) {
    const res = await colony.fetch(`/v1/feed${q}`);
    const body = (await res.json()) as any;
    expect({ q, status: res.status, details: body.error.details }).toEqual({ q, status: 400, details: [{ path: "/limit", message }] });
  }
  const res = await colony.fetch(
    "/v1/search",
    json({ protocol_version: "1.0", query: "ENOENT no such file", limit: "5" }, agent("agent-sloppy")),
  );
  expect(res.status).toBe(400);
  expect(((await res.json()) as any).error.details).toEqual([
    { path: "/limit", message: "must be a whole number (the value sent is the text 5: send the number 5, without quotes)" },
  ]);
});

// A tools/call whose `_meta.progressToken` is an object or a fraction (a client that sends its own
// handle) was refused as "must be a JSON-RPC 2.0 message (jsonrpc, method, id)", which it is: the
// client could not tell what to fix. Now the refusal names the field, on the HTTP doors and stdio.
test("a request with an odd progress token or _meta is told which field is wrong; the next request is served", async () => {
  const call = (meta: unknown) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" }, _meta: meta },
    });
  for (const url of [`${colony.url}/mcp`, `${standalone.url.replace(/\/mcp$/, "")}/mcp`]) {
    for (const [meta, says] of [
      [{ progressToken: { a: 1 } }, "params._meta.progressToken must be a string or an integer"],
      [{ progressToken: 1.5 }, "params._meta.progressToken must be a string or an integer"],
      ["x", "params._meta must be an object"],
    ] as const) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: call(meta),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32600 } });
      expect(body.error.message).toStartWith(`Invalid Request: ${says}`);
    }
    const client = await connectHttp(url);
    const result = (await client.callTool({
      name: "colony_search",
      arguments: { error: "ModuleNotFoundError: No module named 'yaml'" },
      _meta: { progressToken: "p-1" },
    })) as any;
    expect(result.isError).toBeFalsy();
    await client.close();
  }
});

// A tool name in another case or with a trailing blank, and arguments sent as a JSON string, were
// refused with the list of tools or "must be an object", which a model retries unchanged.
test("a tool name that reads as a tool, and arguments sent as a JSON string, are told what to send (SDK client, both doors)", async () => {
  for (const url of [`${colony.url}/mcp`, `${standalone.url.replace(/\/mcp$/, "")}/mcp`]) {
    const client = await connectHttp(url);
    for (const name of ["Colony_Search", "colony_search ", "colony_\u200bsearch", "cоlony_search"]) {
      await expect(client.callTool({ name, arguments: { error: "x" } })).rejects.toThrow(
        "It reads as colony_search but differs in case, width, blanks or invisible characters: send exactly colony_search.",
      );
    }
    await expect(client.callTool({ name: "colony_nope", arguments: {} })).rejects.toThrow(/colony_publish_status\.$/);
    await expect(client.callTool({ name: "colony_search", arguments: '{"error": "x"}' as any })).rejects.toThrow(
      'the arguments of "colony_search" must be an object of named arguments (a string holding JSON was sent: send the object itself)',
    );
    await expectOrdinarySearchServed(client);
    await client.close();
  }
});

// JSON.parse keeps the last of two equal keys; a proxy, a validator or a log in front of the colony
// may read the first, so `{"error":"benign","error":"…"}` was one body to them and another to the
// colony. Refused on every door, naming the key and its object, and the next request is served.
test("a body holding a key twice is refused on every door, naming the key; the next request is served", async () => {
  const trail = JSON.stringify(sampleTrail({ error: "sloppy-clients: a key twice" }));
  // The second `error` of problem spelled with an escape, as a smuggler would.
  const twice = trail.replace('"error":"sloppy-clients: a key twice"', '"error":"benign","\\u0065rror":"sloppy-clients: a key twice"');
  expect(twice).not.toBe(trail);
  const rest = await colony.fetch("/v1/trails", {
    method: "POST",
    headers: { "content-type": "application/json", ...agent("agent-sloppy") },
    body: twice,
  });
  expect(rest.status).toBe(400);
  expect(((await rest.json()) as any).error).toEqual({
    code: "invalid_request",
    message: 'the body has the key "error" twice in one object (at "/problem"): send each key once',
  });
  const call = (args: string) => `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"colony_search","arguments":${args}}}`;
  for (const url of [`${colony.url}/mcp`, `${standalone.url.replace(/\/mcp$/, "")}/mcp`]) {
    for (const [body, at, id] of [
      ['{"jsonrpc":"2.0","id":1,"method":"ping","id":2}', "/", null],
      [call('{"error":"ModuleNotFoundError: No module named \'yaml\'","error":"x"}'), "/params/arguments", 9],
    ] as const) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body,
      });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      const answer = (await res.json()) as any;
      // JSON, read and refused as a request: answered with its id, so the client's call ends at
      // once; null when `id` is the key held twice (which was meant cannot be told).
      expect(answer).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32600, data: { code: "invalid_request" } } });
      expect(answer.error.message).toContain(`twice in one object (at "${at}")`);
    }
    const client = await connectHttp(url);
    expect(((await client.callTool({ name: "colony_search", arguments: { error: "x" } })) as any).isError).toBeFalsy();
    await client.close();
  }
  expect((await colony.fetch("/v1/trails", json(JSON.parse(trail), agent("agent-sloppy")))).status).toBe(202);
});

// A path with an encoded slash or any percent-escape (`/v1%2Ffeed`, `/v1/f%65ed`) was told "paths
// are lowercase", the hex digits of the escape read as capitals; and a route sent with the wrong
// method (`GET /v1/search`, `POST /v1/feed`) was "no such route", though the path is right: a
// client fixes the path that is not wrong. Still 404 not_found (interface.md §7 has no 405), now
// saying what differs, with the methods the path takes in Allow (RFC 9110 §10.2.1).
test("a path no route takes is told what differs: an encoded slash, or the methods the path takes; the next request is served", async () => {
  const noRoute = async (path: string, init: RequestInit = {}) => {
    const res = await colony.fetch(path, init);
    return { status: res.status, allow: res.headers.get("allow"), error: ((await res.json()) as any).error };
  };
  expect(await noRoute("/v1%2Ffeed")).toEqual({
    status: 404,
    allow: null,
    error: { code: "not_found", message: "no such route: the path holds an encoded slash (%2F); send / as it is" },
  });
  expect((await noRoute("/v1/f%65ed")).error.message).toBe("no such route");
  expect((await noRoute("/V1/feed")).error.message).toBe("no such route: paths are lowercase; send it in lowercase");
  expect(await noRoute("/v1/search")).toEqual({
    status: 404,
    allow: "POST",
    error: { code: "not_found", message: "no such route for GET: this path takes POST" },
  });
  expect((await noRoute("/v1/search/")).error.message).toBe("no such route for GET: this path takes POST");
  expect(await noRoute("/v1/feed", { method: "POST", ...json({}) })).toMatchObject({
    allow: "GET, HEAD",
    error: { message: "no such route for POST: this path takes GET, HEAD" },
  });
  expect((await noRoute("/v1/trails/01ARZ3NDEKTSV4RRFFQ69G5FAV", { method: "PUT" })).error.message).toMatch(
    /^no such route for PUT: this path takes GET, HEAD, DELETE$/,
  );
  expect((await colony.fetch("/v1/feed?limit=1")).status).toBe(200);
});

// An argument name in another case, width or with an invisible character (`Error`, `ｅｒｒｏｒ`,
// `err<U+200B>or`, `error ` with a blank) was told only that it is not an argument, beside the list
// holding what looks like the same name: a model retries it unchanged. A tool name so written was
// already told which to send; argument names now are too, by the same rule.
test("an argument name that reads as one of the tool's is told which to send (SDK client, both doors)", async () => {
  for (const url of [`${colony.url}/mcp`, `${standalone.url.replace(/\/mcp$/, "")}/mcp`]) {
    const client = await connectHttp(url);
    for (const key of ["Error", "ｅｒｒｏｒ", "err\u200bor", "error "]) {
      const result = (await client.callTool({ name: "colony_search", arguments: { [key]: "ModuleNotFoundError: x" } })) as any;
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toContain(
        "It reads as error but differs in case, width, blanks or invisible characters: send exactly error.",
      );
    }
    // A name that reads as no argument gets no hint; one sent beside the exact name is still named.
    const other = (await client.callTool({ name: "colony_search", arguments: { errors: "x", error: "y" } })) as any;
    expect(other.content[0].text).not.toContain("reads as");
    await expectOrdinarySearchServed(client);
    await client.close();
  }
});

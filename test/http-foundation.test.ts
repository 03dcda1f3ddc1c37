// The HTTP skeleton over real loopback HTTP: error shapes, limits, headers, health.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startTestColony, spawnColony, TEST_BACKEND, freePort, waitFor, tempDir, type TestColony } from "./support/colony";
import { rawRequest } from "./support/fuzz";
import { sampleTrail } from "./support/trails";

let colony: TestColony;
beforeAll(async () => {
  colony = await startTestColony();
});
afterAll(() => colony.dispose());

const expectErrorShape = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as any;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
};

const expectRateHeaders = (res: Response) => {
  for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) {
    expect(res.headers.get(h)).toMatch(/^\d+$/);
  }
};

describe("health", () => {
  test("GET /healthz: status, version, uptime", async () => {
    const res = await colony.fetch("/healthz");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toEqual({
      status: "ok",
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      uptime_s: expect.any(Number),
      backend: TEST_BACKEND,
    });
    expectRateHeaders(res);
  });

  test("GET /readyz: every subsystem really answers", async () => {
    const res = await colony.fetch("/readyz");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.status).toBe("ready");
    expect(body.backend).toBe(TEST_BACKEND);
    expect(body.queue_depth).toBe(0);
    for (const check of ["kv", "vector", "embedding"]) {
      expect(body.checks[check].ok).toBe(true);
      expect(body.checks[check].latency_ms).toBeGreaterThanOrEqual(0);
    }
  });

  test("a COLONY_MODEL_DIR that cannot load stops the start, naming the variable (never a colony that is never ready)", async () => {
    const modelDir = tempDir("no-model-");
    await expect(startTestColony({ COLONY_MODEL_DIR: modelDir })).rejects.toThrow(
      `COLONY_MODEL_DIR=${modelDir} does not load: ${modelDir} holds no model Colony can run`,
    );
    rmSync(modelDir, { recursive: true, force: true });
  });

  test("a model that stops working makes /readyz 503 naming the failing check", async () => {
    const broken = await startTestColony();
    try {
      // The model's session is gone (on every replica): every embedding fails.
      for (const replica of broken.replicas) await replica.subsystems.embedder!.close();
      const res = await broken.fetch("/readyz");
      expect(res.status).toBe(503);
      const body = (await res.json()) as any;
      expect(body.status).toBe("unavailable");
      expect(body.checks.kv.ok).toBe(true);
      expect(body.checks.embedding.ok).toBe(false);
      expect(body.checks.embedding.detail).toContain("closed");
      expect((await broken.fetch("/healthz")).status).toBe(200); // alive, just not ready
    } finally {
      await broken.dispose();
    }
  });
});

describe("errors", () => {
  test("unknown route: 404 not_found in the error shape, with RateLimit headers", async () => {
    const res = await colony.fetch("/v1/nothing-here");
    await expectErrorShape(res, 404, "not_found");
    expectRateHeaders(res);
  });

  test("a path with a doubled slash (a base URL ending in / joined to /v1/…): 404 saying what to fix, not routed", async () => {
    // Session 18: `//v1/feed` and `/v1//feed` were 404 "no such route", which reads as a colony
    // without the route. Not routed as the single slash: a proxy's rule on /v1/admin would not see //v1/admin.
    // Raw bytes: Bun's fetch sends `http://host//v1/feed` as /v1/feed; curl and most clients send it as written.
    const port = colony.replicas[0]!.port;
    for (const path of ["//v1/feed", "/v1//feed", "//v1/trails/by-fingerprint/fp1_00000000000000000000000000000000"]) {
      const head = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;
      const res = (await rawRequest(port, [new TextEncoder().encode(head)]))!;
      const body = JSON.parse(res.text);
      expect([path, res.status, body.error.code, body.error.message]).toEqual([
        path,
        404,
        "not_found",
        expect.stringContaining("empty segment (//)"),
      ]);
    }
    expect(((await (await colony.fetch("/v1/nothing-here")).json()) as any).error.message).toBe("no such route");
    expect((await colony.fetch("/v1/feed")).status).toBe(200);
  });

  test("body over 64 KB with Content-Length: 413 too_large", async () => {
    const res = await colony.fetch("/v1/trails", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ pad: "x".repeat(70_000) }),
    });
    await expectErrorShape(res, 413, "too_large");
    expectRateHeaders(res);
  });

  test("a compressed body (Content-Encoding gzip): 400 invalid_request saying so, not that the JSON is invalid", async () => {
    const { gzipSync } = await import("node:zlib");
    const res = await colony.fetch("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipSync(JSON.stringify({ query: "TypeError: compressed" })),
    });
    const body = await expectErrorShape(res, 400, "invalid_request");
    expect(body.error.message).toBe("Content-Encoding gzip is not supported: send the body uncompressed");
    // identity is no encoding at all.
    const plain = await colony.fetch("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "identity" },
      body: JSON.stringify({ query: "TypeError: plain" }),
    });
    expect(plain.status).toBe(200);
  });

  test("a body in another charset than UTF-8: 400 invalid_request saying so, nothing stored with U+FFFD in its place", async () => {
    // A Latin-1 body declared as such was read as UTF-8: "caf\xe9" was stored as "caf\ufffd"
    // (silently, a trail's text changed); a UTF-16 body was "not valid JSON", with no reason given.
    const trail = sampleTrail({ error: "ValueError: the café is closed (charset)" });
    const latin1 = new Uint8Array([...JSON.stringify(trail)].map((c) => c.charCodeAt(0)));
    const declared = await colony.fetch("/v1/trails", {
      method: "POST",
      headers: { "content-type": "application/json; charset=ISO-8859-1" },
      body: latin1,
    });
    const body = await expectErrorShape(declared, 400, "invalid_request");
    expect(body.error.message).toBe("the body must be UTF-8 JSON; its Content-Type declares charset=iso-8859-1");
    expect(await colony.query("SELECT id FROM trails WHERE content LIKE $1", "%charset)%")).toEqual([]);

    const text = JSON.stringify({ query: "TypeError: sent as UTF-16" });
    const utf16 = new Uint8Array(2 + text.length * 2);
    utf16.set([0xff, 0xfe]);
    for (let i = 0; i < text.length; i++) utf16[2 + 2 * i] = text.charCodeAt(i);
    const bom = await colony.fetch("/v1/search", { method: "POST", headers: { "content-type": "application/json" }, body: utf16 });
    expect((await expectErrorShape(bom, 400, "invalid_request")).error.message).toBe(
      "the body is UTF-16 (it starts with a byte order mark): send it as UTF-8",
    );

    const wide = await colony.fetch("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json; charset=UTF-16LE" },
      body: utf16.slice(2),
    });
    expect((await expectErrorShape(wide, 400, "invalid_request")).error.message).toContain("charset=utf-16le");

    // UTF-8 and ASCII, in any spelling, are read as before; so is a charset on an empty body, and
    // an ASCII body under an 8-bit charset (some client libraries declare ISO-8859-1 by default).
    const ascii = await colony.fetch("/v1/search", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=ISO-8859-1" },
      body: JSON.stringify({ query: "TypeError: plain ASCII" }),
    });
    expect(ascii.status).toBe(200);
    // The Encoding Standard's and IANA's other names of UTF-8 too (unicode-1-1-utf-8 was refused as
    // UTF-16, even with an ASCII body).
    for (const charset of ["utf-8", "UTF-8", '"utf-8"', "utf8", "us-ascii", "unicode-1-1-utf-8", "x-unicode20utf8", "csUTF8"]) {
      const res = await colony.fetch("/v1/search", {
        method: "POST",
        headers: { "content-type": `application/json; charset=${charset}` },
        body: JSON.stringify({ query: "TypeError: café" }),
      });
      expect([charset, res.status]).toEqual([charset, 200]);
    }
    // A charset declared twice, differently: the colony read the first, a proxy or validator in
    // front may read the last (as a key held twice in the body: one body, two readings).
    const twice = await colony.fetch("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8; charset=ISO-8859-1" },
      body: JSON.stringify({ query: "TypeError: café" }),
    });
    expect((await expectErrorShape(twice, 400, "invalid_request")).error.message).toBe(
      "the body must be UTF-8 JSON; its Content-Type declares charset more than once (utf-8, iso-8859-1): declare it once",
    );
    const sameTwice = await colony.fetch("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8; charset=UTF8" },
      body: JSON.stringify({ query: "TypeError: café" }),
    });
    expect(sameTwice.status).toBe(200);
    const empty = await colony.fetch("/v1/drafts/no-such-draft-id-000000000000000/discard", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=latin1" },
    });
    expect(empty.status).toBe(404);
  });

  test("body over 64 KB streamed without Content-Length: 413 too_large", async () => {
    const chunk = new TextEncoder().encode("x".repeat(8192));
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (n++ < 12) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await colony.fetch("/v1/trails", { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(res.headers.get("content-length")).not.toBeNull(); // our response, not a reset connection
    await expectErrorShape(res, 413, "too_large");
  });

  test("a body nested 25,000 levels deep: 400 invalid_request on every JSON route (JSON-RPC's parse error on /mcp), and the colony still serves", async () => {
    const deep = (inner: string) => "[".repeat(25_000) + inner + "]".repeat(25_000);
    for (const [path, body] of [
      ["/v1/trails", deep("")],
      ["/v1/search", `{"query":${deep("")}}`],
      ["/v1/drafts", `{"trail":{"a":${deep("{}")}}}`],
      ["/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${deep("")}}`],
    ] as const) {
      const res = await colony.fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body,
      });
      if (path === "/mcp") {
        expect(res.status).toBe(400);
        const rpc = (await res.json()) as any;
        expect(rpc).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700, data: { code: "invalid_request" } } });
        expect(rpc.error.message).toContain("64 levels");
        continue;
      }
      const shape = await expectErrorShape(res, 400, "invalid_request");
      expect(shape.error.message).toContain("64 levels");
    }
    expect((await colony.fetch("/healthz")).status).toBe(200);
  });

  test("invalid X-Colony-Agent: 400 invalid_request", async () => {
    for (const agent of ["short", "has spaces in it", "x".repeat(65)]) {
      const res = await colony.fetch("/healthz", { headers: { "X-Colony-Agent": agent } });
      await expectErrorShape(res, 400, "invalid_request");
      expectRateHeaders(res);
    }
    expect((await colony.fetch("/healthz", { headers: { "X-Colony-Agent": "agent-0001" } })).status).toBe(200);
  });
});

// RFC 9112 §3.2: a Host that is no host is 400. Bun gives such a request a URL that does not
// parse, and the routes reading it (every POST, the pages, /mcp) threw: Bun's development error
// page answered, 500 HTML quoting the source around the throw. HTTP/1.0 needs no Host (a load
// balancer's health check): such requests are served as before, POSTs and pages included.
describe("a Host header that is no host", () => {
  const request = (method: string, path: string, hostLine: Uint8Array | null, body = "", version = "1.1") => {
    const head = `${method} ${path} HTTP/${version}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n`;
    const host = hostLine ? [new TextEncoder().encode("Host: "), hostLine, new TextEncoder().encode("\r\n")] : [];
    return [new TextEncoder().encode(head), ...host, new TextEncoder().encode(`\r\n${body}`)];
  };
  const search = JSON.stringify({ query: "ModuleNotFoundError: No module named 'yaml'" });
  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  const routes: [string, string, string][] = [
    ["POST", "/v1/search", search],
    ["POST", "/mcp", ping],
    ["GET", "/console", ""],
    ["GET", "/v1/stats", ""],
    ["GET", "/v1/trails/by-fingerprint/fp1_00000000000000000000000000000000", ""],
    ["GET", "/healthz", ""],
  ];

  test("is 400 in the route's error shape, never a 500 page", async () => {
    const port = colony.replicas[0]!.port; // raw bytes go to a replica itself, not through the test proxy
    for (const host of [
      Uint8Array.from([0x65, 0x76, 0x9b, 0x32, 0x4a]),
      new TextEncoder().encode("[::1"),
      new TextEncoder().encode("host:99999"),
    ]) {
      for (const [method, path, body] of routes) {
        const res = await rawRequest(port, request(method, path, host, body));
        const answer = JSON.parse(res?.text ?? "null");
        const code = path === "/mcp" ? answer?.error?.data?.code : answer?.error?.code;
        expect({ path, host: [...host].join(","), status: res?.status, code }).toEqual({
          path,
          host: [...host].join(","),
          status: 400,
          code: "invalid_request",
        });
      }
    }
  });

  test("HTTP/1.0 without a Host is served, POSTs and pages included", async () => {
    const port = colony.replicas[0]!.port;
    for (const [method, path, body] of routes) {
      const res = await rawRequest(port, request(method, path, null, body, "1.0"));
      expect({ path, status: res?.status }).toEqual({ path, status: path.includes("by-fingerprint") ? 404 : 200 });
    }
  });
});

describe("conditional requests of scripts, styles and the API document", () => {
  // RFC 9110 §13.1.2: If-None-Match holds `*` or a list of tags, compared weakly. A proxy or CDN
  // that compresses the answer weakens its ETag (W/"…"), and a cache may send several tags: the
  // colony matched the header against its tag as one exact string and sent the script whole.
  test("a weak tag, a list holding the tag and * are answered 304, GET and HEAD alike", async () => {
    for (const path of ["/approve.js", "/console.js", "/dom.js", "/base.css", "/openapi.json"]) {
      const first = await colony.fetch(path);
      const etag = first.headers.get("etag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, `W/"other",W/${etag}`, "*"]) {
        for (const method of ["GET", "HEAD"]) {
          const res = await colony.fetch(path, { method, headers: { "If-None-Match": header } });
          expect([path, header, method, res.status]).toEqual([path, header, method, 304]);
          expect(res.headers.get("etag")).toBe(etag);
          expectRateHeaders(res);
        }
      }
      for (const header of ['"other"', `W/"other", "${etag.slice(2)}`, etag.slice(1, -1), ""]) {
        expect([header, (await colony.fetch(path, { headers: { "If-None-Match": header } })).status]).toEqual([header, 200]);
      }
    }
    // Pages are never cached: always whole.
    expect((await colony.fetch("/approve.html", { headers: { "If-None-Match": "*" } })).status).toBe(200);
  });
});

describe("general quota", () => {
  test("the N+1th request in a minute gets 429 rate_limited with Retry-After", async () => {
    const limited = await startTestColony({ COLONY_RATE_LIMIT: "3" });
    try {
      const statuses: number[] = [];
      let last!: Response;
      for (let i = 0; i < 4; i++) {
        last = await limited.fetch("/healthz");
        statuses.push(last.status);
        if (i < 3) expect(last.headers.get("RateLimit-Remaining")).toBe(String(2 - i));
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      await expectErrorShape(last, 429, "rate_limited");
      expect(Number(last.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(last.headers.get("RateLimit-Limit")).toBe("3");
      expect(last.headers.get("RateLimit-Remaining")).toBe("0");
    } finally {
      await limited.dispose();
    }
  });

  test("X-Forwarded-For does not dodge the quota unless COLONY_TRUST_PROXY is set", async () => {
    const limited = await startTestColony({ COLONY_RATE_LIMIT: "2" });
    try {
      const codes = [];
      for (let i = 0; i < 4; i++) {
        codes.push((await limited.fetch("/healthz", { headers: { "X-Forwarded-For": `203.0.113.${i}` } })).status);
      }
      expect(codes).toEqual([200, 200, 429, 429]);
    } finally {
      await limited.dispose();
    }
    const trusting = await startTestColony({ COLONY_RATE_LIMIT: "2", COLONY_TRUST_PROXY: "1" });
    try {
      const codes = [];
      for (let i = 0; i < 4; i++) {
        codes.push((await trusting.fetch("/healthz", { headers: { "X-Forwarded-For": `203.0.113.${i}` } })).status);
      }
      expect(codes).toEqual([200, 200, 200, 200]);
    } finally {
      await trusting.dispose();
    }
  });
});

describe("RateLimit headers of routes with their own quota", () => {
  test("413, malformed JSON and a too-deep body on /v1/trails show the publish quota, on /v1/drafts the draft quota", async () => {
    const limited = await startTestColony({ COLONY_RATE_LIMIT: "1000", COLONY_PUBLISH_LIMIT: "7", COLONY_DRAFT_LIMIT: "9" });
    try {
      const bodies: [string, string, number][] = [
        ["over 64 KB", JSON.stringify({ pad: "x".repeat(70_000) }), 413],
        ["not JSON", "{not json", 400],
        ["too deep", "[".repeat(100) + "]".repeat(100), 400],
        ["not a trail", "{}", 400],
      ];
      for (const [path, limit] of [
        ["/v1/trails", "7"],
        ["/v1/drafts", "9"],
        ["/v1/drafts/no-such-draft/publish", "7"],
        // The router serves these paths with a trailing slash too (the general quota showed there).
        ["/v1/trails/", "7"],
        ["/v1/drafts/", "9"],
        ["/v1/drafts/no-such-draft/publish/", "7"],
      ] as const) {
        for (const [what, body, status] of bodies) {
          if (path.includes("/publish") && what === "not a trail") continue; // publishing a draft reads no body
          const res = await limited.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body });
          expect({ path, what, status: res.status, limit: res.headers.get("RateLimit-Limit") }).toEqual({ path, what, status, limit });
          expect(Number(res.headers.get("RateLimit-Remaining"))).toBe(Number(limit)); // a refused body uses nothing
        }
      }
    } finally {
      await limited.dispose();
    }
  });
});

describe("process", () => {
  test("a bad configuration value exits 2 naming the variable", async () => {
    const p = spawnColony(["serve"], { COLONY_PORT: "eighty" });
    expect(await p.exited).toBe(2);
    const err = await new Response(p.stderr).text();
    expect(err).toContain("COLONY_PORT");
    expect(err).toContain("whole number");
  });

  test("version and help", async () => {
    const v = spawnColony(["version"], {});
    expect(await v.exited).toBe(0);
    expect((await new Response(v.stdout).text()).trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const h = spawnColony(["--help"], {});
    expect(await h.exited).toBe(0);
    const help = await new Response(h.stdout).text();
    for (const name of ["COLONY_PORT", "COLONY_DATA_DIR", "COLONY_ADMIN_TOKEN", "COLONY_MODEL_DIR"]) expect(help).toContain(name);
    const bad = spawnColony(["frobnicate"], {});
    expect(await bad.exited).toBe(2);
  });

  test("SIGTERM: stops cleanly with exit 0 and one line of JSON log per request", async () => {
    const port = await freePort();
    const dataDir = tempDir();
    const p = spawnColony(["serve"], { COLONY_PORT: String(port), COLONY_DATA_DIR: dataDir, COLONY_LOG_LEVEL: "info" });
    await waitFor(`http://127.0.0.1:${port}/readyz`);
    await fetch(`http://127.0.0.1:${port}/v1/trails/not-a-real-id/x`, { headers: { Authorization: "Bearer secret-token-value" } });
    p.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    const lines = (await new Response(p.stderr).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const r of requests) expect(Object.keys(r)).toEqual(expect.arrayContaining(["method", "route", "status", "ms"]));
    const all = JSON.stringify(lines);
    expect(all).not.toContain("secret-token-value");
    expect(all).not.toContain("not-a-real-id");
    expect(lines.some((l) => l.msg === "colony stopped")).toBe(true);
  });
});

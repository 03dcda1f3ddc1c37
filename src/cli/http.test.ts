import { describe, expect, spyOn, test } from "bun:test";
import { ConfigError } from "../config";
import { clientTarget, printJson, request, retryAfterSeconds, UnreachableError } from "./http";

describe("request: a colony that does not answer", () => {
  test("no answer within the limit is a timeout, not a colony that cannot be reached", async () => {
    // A colony that accepts the connection and never answers.
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (req) => new Promise(() => void req) });
    const url = `http://127.0.0.1:${server.port}`;
    try {
      const err = (await request({ url, shown: url, agent: null }, "GET", "/readyz", undefined, 300).catch((e) => e)) as UnreachableError;
      expect(err).toBeInstanceOf(UnreachableError);
      // Before: "cannot reach the colony at …: The operation timed out. (set COLONY_URL)", printed as "colony: unreachable: …"
      expect(err.kind).toBe("timeout");
      expect(err.message).toBe(`the colony at ${url} did not answer within 0.3 s`);
    } finally {
      server.stop(true);
    }
  });

  test("a refused connection stays unreachable", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const url = `http://127.0.0.1:${server.port}`;
    server.stop(true);
    const err = (await request({ url, shown: url, agent: null }, "GET", "/readyz").catch((e) => e)) as UnreachableError;
    expect(err.kind).toBe("unreachable");
    expect(err.message).toStartWith(`cannot reach the colony at ${url}: `);
  });
});

describe("a COLONY_URL with a user and password (Basic auth to a colony behind a proxy)", () => {
  // They were printed wherever the URL was: "cannot reach the colony at https://ci:s3cret@…",
  // `colony status`, and the header line of every `colony export` bundle (a file people share).
  test("requests send them; messages and status show the URL without them", async () => {
    let authorization: string | null = null;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => {
        authorization = req.headers.get("authorization");
        return Response.json({ ok: true });
      },
    });
    try {
      const target = clientTarget({ COLONY_URL: `http://ci:s3cret-pass@127.0.0.1:${server.port}/` });
      expect(target.shown).toBe(`http://127.0.0.1:${server.port}`);
      expect((await request(target, "GET", "/readyz")).status).toBe(200);
      expect(authorization as string | null).toBe(`Basic ${btoa("ci:s3cret-pass")}`);
    } finally {
      server.stop(true);
    }
    const gone = clientTarget({ COLONY_URL: `http://ci:s3cret-pass@127.0.0.1:${server.port}` });
    const err = (await request(gone, "GET", "/readyz").catch((e) => e)) as UnreachableError;
    expect(err.message).toStartWith(`cannot reach the colony at http://127.0.0.1:${server.port}: `);
    expect(err.message).not.toContain("s3cret");
  });

  test("a COLONY_URL that is refused is echoed without them", () => {
    let thrown: unknown;
    try {
      clientTarget({ COLONY_URL: "ftp://ci:s3cret-pass@colony.example" });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toContain("ftp://<credentials>@colony.example");
    expect((thrown as Error).message).not.toContain("s3cret");
    // A password with a `/` (not percent-encoded) does not parse either: it was echoed whole.
    const slash = (() => {
      try {
        clientTarget({ COLONY_URL: "https://ci:s3cret/pass@colony.example" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(slash).toBeInstanceOf(ConfigError);
    expect(slash!.message).toContain("https://<credentials>@colony.example");
    expect(slash!.message).not.toContain("s3cret");
  });
});

describe("Retry-After (RFC 9110 §10.2.3)", () => {
  test("delta-seconds, an HTTP date, or nothing readable", () => {
    const now = Date.parse("2026-11-27T12:00:00Z");
    expect(retryAfterSeconds("60", now)).toBe(60);
    expect(retryAfterSeconds(" 0 ", now)).toBe(0);
    expect(retryAfterSeconds("Fri, 27 Nov 2026 12:00:30 GMT", now)).toBe(30);
    expect(retryAfterSeconds("Fri, 27 Nov 2026 11:00:00 GMT", now)).toBe(0);
    for (const bad of [null, "", "soon", "-5", "1e308", "NaN", "9".repeat(400)]) expect(retryAfterSeconds(bad, now)).toBeNull();
  });
});

// --json escaped DEL and the C1 controls only: a bidi override (U+202E) in another agent's trail
// showed a command reversed in the terminal, zero-width and tag characters hid text, U+2028 broke
// the one line scripts read. They are escaped as a bundle escapes them; parsed, the same value.
describe("printJson (--json)", () => {
  test("characters a person cannot see are written as \\u escapes of the same JSON", () => {
    const value = { summary: "run \u202ehs.llatsni\u202c safely\u200b\u{e0041}\u2028next \u009b31m\u007f" };
    const written: string[] = [];
    const write = spyOn(process.stdout, "write").mockImplementation((chunk: any) => {
      written.push(String(chunk));
      return true;
    });
    try {
      printJson(value);
    } finally {
      write.mockRestore();
    }
    const line = written.join("");
    expect(line).not.toMatch(/[\p{Cf}\u2028\u2029\u007f-\u009f]/u);
    expect(line).toContain("run \\u202ehs.llatsni\\u202c safely\\u200b\\udb40\\udc41\\u2028next \\u009b31m\\u007f");
    expect(line.endsWith("\n")).toBe(true);
    expect(line.trimEnd().includes("\n")).toBe(false);
    expect(JSON.parse(line)).toEqual(value);
  });
});

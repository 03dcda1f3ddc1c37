import { describe, expect, test } from "bun:test";
import { request, UnreachableError } from "./http";

describe("request: a colony that does not answer", () => {
  test("no answer within the limit is a timeout, not a colony that cannot be reached", async () => {
    // A colony that accepts the connection and never answers.
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (req) => new Promise(() => void req) });
    const url = `http://127.0.0.1:${server.port}`;
    try {
      const err = (await request({ url, agent: null }, "GET", "/readyz", undefined, 300).catch((e) => e)) as UnreachableError;
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
    const err = (await request({ url, agent: null }, "GET", "/readyz").catch((e) => e)) as UnreachableError;
    expect(err.kind).toBe("unreachable");
    expect(err.message).toStartWith(`cannot reach the colony at ${url}: `);
  });
});

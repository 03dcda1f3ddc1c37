import { describe, expect, test } from "bun:test";
import { createLogger } from "../log";
import { serviceErrorAsJsonRpc } from "../mcp/jsonrpc-errors";
import { errorResponse, serverFallbacks } from "./errors";

// A server whose fetch throws past every layer, as the colony's did for a Host that does not
// parse (session 17's mcp17). Bun's default under `bun test` (NODE_ENV=test) is its development
// page: 500 text/html with the server's folder and the source lines around the throw (without
// these options the tests below get that page, and bun test reports the throw as the test's own).
async function answerOfThrowingServer(fallbacks: object) {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      throw new Error("secret-ish internal detail at line 42");
    },
    ...fallbacks,
  });
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/search`);
    return { status: res.status, type: res.headers.get("content-type") ?? "", body: await res.text() };
  } finally {
    await server.stop(true);
  }
}

describe("serverFallbacks: an exception past every layer", () => {
  test("REST: 500 in the spec's error shape, the exception's text logged, not sent", async () => {
    const lines: string[] = [];
    const answer = await answerOfThrowingServer(
      serverFallbacks(
        createLogger("error", (l) => lines.push(l)),
        errorResponse,
      ),
    );
    expect(answer.status).toBe(500);
    expect(answer.type).toStartWith("application/json");
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "internal" } });
    expect(answer.body).not.toContain("secret-ish");
    expect(lines.join("")).toContain("secret-ish internal detail");
  });

  test("MCP: a JSON-RPC error object", async () => {
    const answer = await answerOfThrowingServer(serverFallbacks(createLogger("silent"), serviceErrorAsJsonRpc));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { data: { code: "internal" } } });
    expect(answer.body).not.toContain("secret-ish");
  });
});

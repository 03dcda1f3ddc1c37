// The hosted /mcp under one address's slow calls (session 18, http18b): each address has at most
// COLONY_MCP_MAX_CONCURRENT POSTs in flight; one more is 503, JSON-RPC -32017 `busy`, at once, and
// other addresses are served meanwhile (the per-address quota bounds how many POSTs an address
// starts a minute, not how many it holds). The same rule as `colony mcp --http` and stdio
// (src/mcp/in-flight.ts), whose one client is the process's.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestColony, TEST_REPLICAS, type TestColony } from "./support/colony";
import { connectHttp, expectOrdinarySearchServed } from "./support/mcp";

let colony: TestColony;
/** Searches that reached the service and wait for `release`. */
let held = 0;
let release!: () => void;

/** A test colony whose searches wait in the service until `release()` (the replicas lane runs two, each its own count). */
async function holdingColony(env: Record<string, string>) {
  const started = await startTestColony({ COLONY_TRUST_PROXY: "1", COLONY_RATE_LIMIT: "100000", ...env });
  held = 0;
  const gate = new Promise<void>((resolve) => (release = resolve));
  for (const replica of started.replicas) {
    const search = replica.service.search;
    const original = search.search.bind(search);
    search.search = (async (...args: Parameters<typeof original>) => {
      held++;
      await gate;
      return original(...args);
    }) as typeof search.search;
  }
  return started;
}

beforeAll(async () => {
  colony = await holdingColony({ COLONY_MCP_MAX_CONCURRENT: "2" });
});
afterAll(async () => {
  release?.();
  await colony?.dispose();
});

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const search = (id: number, from: string, c = colony) =>
  fetch(`${c.url}/mcp`, {
    method: "POST",
    headers: { ...HEADERS, "X-Forwarded-For": from },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" } },
    }),
  });

test.skipIf(TEST_REPLICAS > 1)(
  "one address past its limit of calls in flight is refused at once; another address is served meanwhile",
  async () => {
    const first = [search(1, "203.0.113.7"), search(2, "203.0.113.7")];
    while (held < 2) await Bun.sleep(10);
    // Before: every call of the address ran (the third was held too, and no refusal came).
    const third = await Promise.race([search(3, "203.0.113.7"), Bun.sleep(3000).then(() => null)]);
    expect(held).toBe(2);
    expect(third?.status).toBe(503);
    expect(third!.headers.get("retry-after")).toBe("1");
    const body = (await third!.json()) as any;
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32017, data: { code: "busy", max_concurrent: 2 } } });
    expect(body.error.message).toContain("this address has 2 MCP requests in flight");

    // The SDK client of the same address is told why; another address's client is served.
    await expect(connectHttp(`${colony.url}/mcp`, { "X-Forwarded-For": "203.0.113.7" })).rejects.toThrow(/-32017/);
    const other = await connectHttp(`${colony.url}/mcp`, { "X-Forwarded-For": "198.51.100.9" });
    expect((await other.listTools()).tools.length).toBeGreaterThan(0);

    release();
    expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
    // The places are free again: the same address's client calls and is answered.
    const again = await connectHttp(`${colony.url}/mcp`, { "X-Forwarded-For": "203.0.113.7" });
    await expectOrdinarySearchServed(again);
    await Promise.all([other.close(), again.close()]);
  },
);

// Per address alone, many addresses each under their cap together held as many POSTs (a server and
// a search each, up to the 9 s deadline) as they liked: a botnet, or one client rotating addresses.
test.skipIf(TEST_REPLICAS > 1)(
  "all addresses together past COLONY_MCP_MAX_CONCURRENT_TOTAL are refused at once (raw HTTP and the SDK client); the places free once answered",
  async () => {
    release(); // the first test's colony lets its searches go
    const wide = await holdingColony({ COLONY_MCP_MAX_CONCURRENT: "2", COLONY_MCP_MAX_CONCURRENT_TOTAL: "3" });
    try {
      // Three addresses, each under its cap of 2, fill the colony's 3 places.
      const first = [search(1, "203.0.113.1", wide), search(2, "203.0.113.2", wide), search(3, "203.0.113.3", wide)];
      while (held < 3) await Bun.sleep(10);
      const fourth = await Promise.race([search(4, "203.0.113.4", wide), Bun.sleep(3000).then(() => null)]);
      expect(held).toBe(3);
      expect(fourth?.status).toBe(503);
      expect(fourth!.headers.get("retry-after")).toBe("1");
      const body = (await fourth!.json()) as any;
      expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32017, data: { code: "busy", max_total: 3 } } });
      expect(body.error.message).toContain("this colony is handling 3 MCP requests in flight from all addresses together");
      expect(body.error.message).toContain("COLONY_MCP_MAX_CONCURRENT_TOTAL");
      // An address with a place of its own left is refused too: every place is taken.
      expect((await search(5, "203.0.113.1", wide)).status).toBe(503);
      await expect(connectHttp(`${wide.url}/mcp`, { "X-Forwarded-For": "198.51.100.20" })).rejects.toThrow(/-32017/);

      release();
      expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200, 200]);
      const client = await connectHttp(`${wide.url}/mcp`, { "X-Forwarded-For": "198.51.100.20" });
      await expectOrdinarySearchServed(client);
      await client.close();
    } finally {
      await wide.dispose();
    }
  },
);

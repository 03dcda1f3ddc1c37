// `colony mcp` over stdio when the client closes stdin right after writing its requests (issue 15
// item 16): the calls still running are answered before the process exits. A real colony sits
// behind a proxy that holds each answer for a second, so the calls are surely in flight when
// stdin ends.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestColony, type TestColony } from "./support/colony";
import { jsonRpcLine, slowColony, spawnStdioMcp } from "./support/mcp";
import { agent, json, sampleTrail } from "./support/trails";

const HOLD_MS = 1000;
let colony: TestColony;
let slow: ReturnType<typeof Bun.serve>;
let trailId: string;

beforeAll(async () => {
  colony = await startTestColony();
  const res = await colony.fetch("/v1/trails", json(sampleTrail(), agent("author-agent-01")));
  trailId = ((await res.json()) as { trail_id: string }).trail_id;
  await colony.service.worker!.drain();
  slow = slowColony(colony.url, HOLD_MS, "after");
});
afterAll(async () => {
  await slow?.stop(true);
  await colony?.dispose();
});

const line = jsonRpcLine;

test("requests written just before stdin closes are all answered, then the process exits 0", async () => {
  const proc = spawnStdioMcp({ COLONY_URL: `http://127.0.0.1:${slow.port}`, COLONY_AGENT_ID: "drain-agent-01" });
  proc.stdin.write(
    line({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "drain-test", version: "1" } },
    }) +
      line({ jsonrpc: "2.0", method: "notifications/initialized" }) +
      line({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "colony_search", arguments: { error: "ModuleNotFoundError: No module named 'yaml'" } },
      }) +
      line({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "colony_report", arguments: { trail_id: trailId, outcome: "worked" } },
      }),
  );
  await proc.stdin.end(); // closed at once: both tool calls are waiting on the slow colony
  const started = Date.now();
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const answers = stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const byId = new Map(answers.map((a) => [a.id, a]));
  expect([...byId.keys()].sort()).toEqual([1, 2, 3]);
  const search = byId.get(2).result;
  expect(search.isError).toBeUndefined();
  expect(search.structuredContent.trails[0].trail_id).toBe(trailId);
  const report = byId.get(3).result;
  expect(report.isError).toBeUndefined();
  expect(report.structuredContent.trail_id).toBe(trailId);
  expect(code).toBe(0);
  expect(stderr).toContain("colony mcp stopping");
  expect(Date.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 100); // it waited for them
}, 60_000);

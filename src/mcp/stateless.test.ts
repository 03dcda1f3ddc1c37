import { describe, expect, test } from "bun:test";
import type { ColonyClient } from "./colony-client";
import { hostedToolConfig } from "./config";
import { HOSTED_MCP_DEADLINE_MS, handleStatelessPost } from "./stateless";
import { createToolServer } from "./tool-server";

/** A colony client whose searches never end, keeping the signal of each call. */
function neverAnswering() {
  const signals: AbortSignal[] = [];
  const client: ColonyClient = {
    target: "this colony",
    forCall(signal) {
      signals.push(signal);
      return client;
    },
    search: () => new Promise(() => {}),
    report: () => new Promise(() => {}),
    createDraft: () => new Promise(() => {}),
    publish: () => new Promise(() => {}),
    trailStatus: () => new Promise(() => {}),
    draftStatus: () => new Promise(() => {}),
  };
  return { client, signals };
}

const post = (body: unknown) =>
  new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });

describe("handleStatelessPost: the deadline of a POST", () => {
  test("a call that never ends is answered with -32016 at the deadline, and its signal is aborted", async () => {
    // Before: the POST never settled (the class of the batch-cancellation hang), holding the
    // server, its handlers and the call's work for as long as the client waited.
    const { client, signals } = neverAnswering();
    const body = {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "colony_search", arguments: { error: "TypeError: x is undefined" } },
    };
    // The deadline is 300 ms; a POST that never settled would run into the test's own timeout. No
    // tighter wall-clock bound: the suite's four lanes can delay a timer by most of a second.
    const res = await handleStatelessPost(createToolServer(client, hostedToolConfig({})), post(body), body, undefined, 300);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32016, data: { code: "unavailable" } } });
    await Bun.sleep(10);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
  }, 10_000);

  test("the hosted deadline ends before the colony's HTTP server resets a slow answer (Bun's 10 s idle timeout)", () => {
    expect(HOSTED_MCP_DEADLINE_MS).toBeLessThan(10_000);
  });
});

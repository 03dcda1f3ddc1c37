import { expect, test } from "bun:test";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { DrainingTransport } from "./stdio";

/** A transport whose incoming messages the test delivers by hand, recording what is sent. */
function fakeInner() {
  const sent: JSONRPCMessage[] = [];
  const inner: Transport = { start: async () => {}, close: async () => {}, send: async (m) => void sent.push(m) };
  return { inner, sent, receive: (m: JSONRPCMessage) => inner.onmessage!(m) };
}

test("the drain waits for every request read to be answered", async () => {
  const { inner, receive } = fakeInner();
  const t = new DrainingTransport(inner);
  t.onmessage = () => {};
  receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} });
  receive({ jsonrpc: "2.0", id: "b", method: "tools/list" });
  receive({ jsonrpc: "2.0", method: "notifications/initialized" }); // a notification is never answered
  expect(t.inFlight).toBe(2);
  const drained = t.drained(5000);
  await t.send({ jsonrpc: "2.0", id: 1, result: {} });
  expect(t.inFlight).toBe(1);
  await t.send({ jsonrpc: "2.0", id: "b", error: { code: -32601, message: "no" } });
  expect(await drained).toBe(true);
});

test("the drain is bounded: a call that never answers is given up after maxMs", async () => {
  const { inner, receive } = fakeInner();
  const t = new DrainingTransport(inner);
  t.onmessage = () => {};
  receive({ jsonrpc: "2.0", id: 7, method: "tools/call", params: {} });
  const started = performance.now();
  expect(await t.drained(50)).toBe(false);
  expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  expect(t.inFlight).toBe(1);
});

test("a request the client cancelled is not waited for: the SDK never answers it", async () => {
  const { inner, receive } = fakeInner();
  const t = new DrainingTransport(inner);
  t.onmessage = () => {};
  receive({ jsonrpc: "2.0", id: 4, method: "tools/call", params: {} });
  receive({ jsonrpc: "2.0", id: 5, method: "tools/call", params: {} });
  receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "4" } }); // another id: a string
  expect(t.inFlight).toBe(2);
  receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 4 } });
  expect(t.inFlight).toBe(1);
  const drained = t.drained(5000);
  receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5, reason: "stopped" } });
  expect(await drained).toBe(true);
});

test("a session initializes once: another initialize, in flight or after a result, is refused; one after a refused initialize is served", async () => {
  const { inner, sent, receive } = fakeInner();
  const t = new DrainingTransport(inner);
  const served: unknown[] = [];
  t.onmessage = (m) => void served.push((m as { id?: unknown }).id);
  const initialize = (id: number) => receive({ jsonrpc: "2.0", id, method: "initialize", params: {} });
  initialize(1);
  initialize(2); // while 1 is answered
  await t.send({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "bad params" } });
  initialize(3); // the first was refused: the handshake is not done
  await t.send({ jsonrpc: "2.0", id: 3, result: {} });
  initialize(4);
  receive({ jsonrpc: "2.0", id: 1, method: "ping" }); // the id of the refused initialize, reused later
  await t.send({ jsonrpc: "2.0", id: 1, result: {} });
  expect(served).toEqual([1, 3, 1]);
  expect(sent.filter((m) => "error" in m && m.error.code === -32600).map((m) => (m as { id: number }).id)).toEqual([2, 4]);
});

test("an initialize in flight holds no place of the cap: with a cap of 1, a call read with the handshake is served", async () => {
  const { inner, sent, receive } = fakeInner();
  const t = new DrainingTransport(inner, null, 1);
  const served: unknown[] = [];
  t.onmessage = (m) => void served.push((m as { id?: unknown }).id);
  receive({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} });
  receive({ jsonrpc: "2.0", method: "notifications/initialized" });
  receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} });
  expect(served).toEqual([0, undefined, 1]);
  expect(sent.filter((m) => "error" in m)).toEqual([]);
  expect(t.inFlight).toBe(2);
});

test("requests over the cap are refused with -32017 and their id; a ping passes, and an answer or a cancellation frees a place", async () => {
  const { inner, sent, receive } = fakeInner();
  const t = new DrainingTransport(inner, null, 2);
  const served: unknown[] = [];
  t.onmessage = (m) => void served.push((m as { id?: unknown }).id);
  receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} });
  receive({ jsonrpc: "2.0", id: 2, method: "tools/call", params: {} });
  receive({ jsonrpc: "2.0", id: 3, method: "tools/call", params: {} });
  receive({ jsonrpc: "2.0", id: 4, method: "ping" });
  await t.send({ jsonrpc: "2.0", id: 4, result: {} });
  await t.send({ jsonrpc: "2.0", id: 1, result: {} });
  receive({ jsonrpc: "2.0", id: 5, method: "tools/call", params: {} });
  receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
  receive({ jsonrpc: "2.0", id: 6, method: "tools/call", params: {} });
  expect(served).toEqual([1, 2, 4, 5, undefined, 6]);
  const refused = sent.filter((m) => "error" in m) as { id: number; error: { code: number; data: unknown } }[];
  expect(refused.map((m) => [m.id, m.error.code, m.error.data])).toEqual([[3, -32017, { code: "busy", max_concurrent: 2 }]]);
  expect(t.inFlight).toBe(2);
});

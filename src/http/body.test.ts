import { describe, expect, test } from "bun:test";
import { MAX_BODY_BYTES, MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody, readBodyLimited } from "./body";

const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request("http://localhost/x", { method: "POST", body, headers });

test("reads a body up to the limit", async () => {
  const bytes = await readBodyLimited(post("x".repeat(MAX_BODY_BYTES)));
  expect(bytes?.byteLength).toBe(MAX_BODY_BYTES);
});

test("a declared Content-Length over the limit is refused before reading", async () => {
  await expect(readBodyLimited(post("{}", { "content-length": String(MAX_BODY_BYTES + 1) }))).rejects.toMatchObject({
    status: 413,
    code: "too_large",
  });
});

test("a streamed body without Content-Length is counted as it arrives", async () => {
  const chunk = new Uint8Array(16 * 1024);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent++ < 10) c.enqueue(chunk);
      else c.close();
    },
  });
  await expect(readBodyLimited(post(stream))).rejects.toMatchObject({ status: 413, code: "too_large" });
  expect(sent).toBeLessThanOrEqual(6); // stopped soon after the limit, not at the end
});

test("a body that breaks off mid-stream (client gone) is a 400, not an internal error", async () => {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent++ < 2) c.enqueue(new Uint8Array(100));
      else c.error(new Error("The connection was closed."));
    },
  });
  await expect(readBodyLimited(post(stream))).rejects.toMatchObject({ status: 400, code: "invalid_request" });
});

describe("JSON nesting depth", () => {
  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

  test("counted by brackets outside strings only", () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(`{"a":[{"b":{}}]}`, 4)).toBe(false);
    expect(nestsDeeperThan(`{"a":[{"b":{"c":[]}}]}`, 4)).toBe(true);
    // Brackets and escaped quotes inside strings are text, not nesting.
    expect(nestsDeeperThan(JSON.stringify({ s: '[[[[{{{{\\"[[[[' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(["\\", "[[["]), 1)).toBe(false);
  });

  test("25,000 levels: 400 invalid_request before JSON.parse recurses", () => {
    expect(() => parseJsonBody(nested(25_000))).toThrow(expect.objectContaining({ status: 400, code: "invalid_request" }));
    expect(parseJsonBody(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`)).toEqual({ a: expect.any(Array) });
  });
});

import { expect, test } from "bun:test";
import { MAX_BODY_BYTES, readBodyLimited } from "./body";

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

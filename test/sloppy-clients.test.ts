// What a sloppy third-party client sends and what it gets back (session 18, http18b): refusals it
// can act on, that quote nothing it sent raw, in the shape of the door it used.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestColony, type TestColony } from "./support/colony";
import { agent, json, sampleTrail } from "./support/trails";

let colony: TestColony;

beforeAll(async () => {
  colony = await startTestColony({ COLONY_RATE_LIMIT: "100000" });
});
afterAll(() => colony.dispose());

// The refusal quoted the client's solution_id raw: a zero-width space or a bidi override in it made
// the message read as other text than was sent (a right-to-left override reverses what follows).
test("a solution_id naming another trail is quoted with its invisible characters escaped", async () => {
  const published = await colony.fetch(
    "/v1/trails",
    json(sampleTrail({ error: "sloppy-clients: quoted solution id" }), agent("agent-sloppy")),
  );
  expect(published.status).toBe(202);
  const id = ((await published.json()) as any).trail_id as string;
  const sent = "other\u200b\u202etrail\u2066";
  const report = () =>
    colony.fetch(
      `/v1/trails/${id}/outcomes`,
      json({ protocol_version: "1.0", outcome: "worked", solution_id: sent }, agent("agent-sloppy")),
    );
  let res = await report();
  // Published is queued: 404 until the worker indexed it.
  for (let i = 0; i < 100 && res.status === 404; i++) {
    await Bun.sleep(50);
    res = await report();
  }
  expect(res.status).toBe(400);
  const text = await res.text();
  expect(text).not.toMatch(/[\u200b\u202e\u2066]/);
  const detail = (JSON.parse(text) as any).error.details[0];
  expect(detail.path).toBe("/solution_id");
  expect(detail.message).toStartWith('names "other\\u200b\\u202etrail\\u2066", but the report is for trail');
});

// `?limit=５` was "must be a whole number" and nothing more: to a person or a model the 5 looks
// right. The hint names the ASCII number it reads as, not the characters sent.
test("a number in the query that reads as one is told what differs and what to send", async () => {
  for (const [q, message] of [
    [
      "?limit=%EF%BC%95",
      "must be a whole number (the value sent reads as 5 but is written with other characters than ASCII digits, or invisible ones: send 5 in ASCII digits)",
    ],
    [
      "?limit=1%E2%80%8B2",
      "must be a whole number (the value sent reads as 12 but is written with other characters than ASCII digits, or invisible ones: send 12 in ASCII digits)",
    ],
    ["?limit=%D9%A3", "must be a whole number"], // Arabic-Indic 3: no hint (NFKC keeps it)
    ["?limit=1.5", "must be a whole number"],
  ]) {
    const res = await colony.fetch(`/v1/feed${q}`);
    const body = (await res.json()) as any;
    expect({ q, status: res.status, details: body.error.details }).toEqual({ q, status: 400, details: [{ path: "/limit", message }] });
  }
  const res = await colony.fetch(
    "/v1/search",
    json({ protocol_version: "1.0", query: "ENOENT no such file", limit: "5" }, agent("agent-sloppy")),
  );
  expect(res.status).toBe(400);
  expect(((await res.json()) as any).error.details).toEqual([
    { path: "/limit", message: "must be a whole number (the value sent is the text 5: send the number 5, without quotes)" },
  ]);
});

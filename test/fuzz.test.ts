// Hostile input, short run of the fuzzer in test/support/fuzz.ts (the full run, 100,000 requests,
// is bench/fuzz.bench.ts): the built binary as its own process, every route, seeded.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { ColonyProcess, UNLIMITED_ENV } from "./support/colony-process";
import { tempDir } from "./support/colony";
import { afterFuzzHealth, errorShapeProblem, rawRequest, runFuzz } from "./support/fuzz";

let colony: ColonyProcess;
const dataDir = tempDir("colony-fuzz-test-");

beforeAll(async () => {
  colony = await ColonyProcess.create({ dataDir, env: { ...UNLIMITED_ENV, COLONY_ADMIN_TOKEN: "fuzz-operator-token-1234" } });
  await colony.start();
}, 60_000);

afterAll(async () => {
  await colony.stop("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
});

test("5,000 hostile requests: no 5xx, the contract's error shape, RateLimit headers, no crash, store intact", async () => {
  const r = await runFuzz(colony, { requests: 5000, seed: 8, concurrency: 16 });
  expect(r.requests).toBe(5000);
  expect(r.serverErrors).toEqual([]);
  expect(r.badShapes).toEqual([]);
  expect(r.missingRateLimit).toEqual([]);
  expect(r.failedExpectations).toEqual([]);
  expect(r.transportFailures).toEqual([]);
  // The fuzz reached the real paths too, not only the validators.
  expect(r.byStatus["202"] ?? 0).toBeGreaterThan(0);
  expect(r.byStatus["200"] ?? 0).toBeGreaterThan(0);
  expect(r.byStatus["413"] ?? 0).toBeGreaterThan(0);
  expect(colony.stderr).not.toContain('"level":"error"');
  expect(await afterFuzzHealth(colony, dataDir)).toEqual([]);
}, 90_000);

test("a short Host header routes normally (Elysia's standardHostname assumed ≥ 4 characters)", async () => {
  const body = JSON.stringify({ query: "socket timeout", limit: 3 });
  for (const host of ["x", "a:1", "localhost"]) {
    const req = `POST /v1/search HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const res = await rawRequest(colony.port, [new TextEncoder().encode(req)]);
    expect(res?.status).toBe(200);
  }
});

test("a client that stops sending mid-body gets a 400 and no error is logged", async () => {
  const req = `POST /v1/trails HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"protocol_version":`;
  await rawRequest(colony.port, [new TextEncoder().encode(req)], 0, 200);
  await Bun.sleep(200);
  expect(colony.stderr).not.toContain('"level":"error"');
  expect((await colony.fetch("/healthz")).status).toBe(200);
});

test("the error-shape check itself rejects what the contract does not allow", () => {
  expect(errorShapeProblem('{"error":{"code":"not_found","message":"no"}}')).toBeNull();
  expect(errorShapeProblem('{"error":{"code":"internal","message":"x"}}')).not.toBeNull();
  expect(errorShapeProblem('{"error":{"code":"not_found","message":"x","stack":"…"}}')).not.toBeNull();
  expect(errorShapeProblem('{"error":"not_found"}')).not.toBeNull();
  expect(errorShapeProblem('{"error":{"code":"invalid_trail","message":"x","details":[{"path":"bad","message":"m"}]}}')).not.toBeNull();
  expect(errorShapeProblem("Internal Server Error")).not.toBeNull();
});

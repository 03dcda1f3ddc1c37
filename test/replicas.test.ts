// Two colonies on one PostgreSQL database behind a round-robin proxy (docs/scale-out.md): every
// request may land on either replica, so what one replica wrote must be visible through the other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadConfig } from "../src/config";
import { type RunningColony, startColony } from "../src/serve";
import { tempDir } from "./support/colony";
import { type PostgresServer, postgresUnavailable, startPostgres } from "./support/postgres";
import { type RoundRobinProxy, startRoundRobinProxy } from "./support/round-robin-proxy";
import { agent, json, sampleTrail } from "./support/trails";

const unavailable = postgresUnavailable();
if (unavailable) console.warn(`multi-replica tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)("two replicas on one PostgreSQL database behind a proxy", () => {
  let server: PostgresServer;
  let proxy: RoundRobinProxy;
  const replicas: RunningColony[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    server = await startPostgres();
    const url = await server.createDatabase();
    for (let i = 0; i < 2; i++) {
      const dir = tempDir("colony-replica-");
      dirs.push(dir);
      const config = loadConfig({
        HOME: process.env.HOME,
        COLONY_PORT: "0",
        COLONY_LOG_LEVEL: "silent",
        COLONY_DATABASE_URL: url,
        COLONY_DATA_DIR: dir,
      });
      replicas.push(await startColony(config));
    }
    proxy = startRoundRobinProxy(replicas.map((r) => r.url));
  });

  afterAll(async () => {
    proxy?.stop();
    for (const r of replicas) await r.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await server?.stop();
  });

  const viaProxy = (path: string, init?: RequestInit) => fetch(proxy.url + path, init);

  /** Polls the trail's status through the proxy (so through both replicas) until it is indexed. */
  async function untilIndexed(trailId: string, timeoutMs = 30_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await viaProxy(`/v1/trails/${trailId}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      if (body.status === "indexed") return body;
      if (Date.now() > deadline) throw new Error(`trail ${trailId} still ${body.status} after ${timeoutMs} ms`);
      await Bun.sleep(50);
    }
  }

  test("a trail published through the proxy is read back, looked up and found by search on both replicas", async () => {
    const error = "psycopg2.OperationalError: could not connect to server: Connection refused (replica test)";
    const published = await viaProxy("/v1/trails", json(sampleTrail({ error }), agent("agent-replica-1")));
    expect(published.status).toBe(202);
    const { trail_id } = (await published.json()) as any;
    // Read-your-writes: the status read right after the 202 lands on the other replica.
    const first = await viaProxy(`/v1/trails/${trail_id}`);
    expect(first.status).toBe(200);
    const status = await untilIndexed(trail_id);

    const before = [...proxy.sent];
    for (let i = 0; i < 2; i++) {
      const look = await viaProxy(`/v1/trails/by-fingerprint/${status.fingerprint}`);
      expect(look.status).toBe(200);
      expect(((await look.json()) as any).results.map((r: any) => r.trail_id)).toContain(trail_id);
    }
    // Search may lag the index by the vector feed's catch-up on the replica that did not embed it.
    const deadline = Date.now() + 1_000;
    const answeredBy = new Set<number>();
    while (answeredBy.size < 2) {
      const index = proxy.sent.reduce((a, b) => a + b, 0) % 2;
      const res = await viaProxy("/v1/search", json({ protocol_version: "1.0", query: error }));
      expect(res.status).toBe(200);
      const ids = ((await res.json()) as any).results.map((r: any) => r.trail_id);
      if (ids.includes(trail_id)) answeredBy.add(index);
      else if (Date.now() > deadline) throw new Error(`replica ${index} does not find the trail by search after 1 s`);
      else await Bun.sleep(20);
    }
    expect(proxy.sent[0]! - before[0]!).toBeGreaterThan(0);
    expect(proxy.sent[1]! - before[1]!).toBeGreaterThan(0);
  });
});

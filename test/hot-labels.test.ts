// GET /v1/stats `hot` ranks labels by how many different clients searched them, not by how often:
// one address's hourly share of labelled searches put any made-up token at the top of every
// reader's stats. A real colony over loopback HTTP, clients told apart by a trusted proxy's
// X-Forwarded-For, on SQLite, on PostgreSQL, and as two replicas sharing one PostgreSQL database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RunningColony } from "../src/serve";
import { HOT_LABELS_PER_CLIENT_PER_HOUR } from "../src/service/quotas";
import { startQuietColony, tempDir } from "./support/colony";
import { type PostgresServer, postgresUnavailable, startPostgres } from "./support/postgres";
import { json } from "./support/trails";

/** Where requests go: one colony, or replicas taken in turn. */
type Send = (path: string, init?: RequestInit) => Promise<Response>;

const search = (send: Send, errorType: string, address: string) =>
  send("/v1/search", json({ query: `${errorType}: nothing stored about it`, error_type: errorType }, { "X-Forwarded-For": address }));

type Hot = { label: string; searches: number; clients: number }[];

const hot = async (send: Send) => ((await (await send("/v1/stats")).json()) as { hot: Hot }).hot;

/** One address's whole hourly share for a made-up token; a real error from several addresses. */
async function floodAndRealError(send: Send): Promise<void> {
  for (let i = 0; i < HOT_LABELS_PER_CLIENT_PER_HOUR; i++) {
    expect((await search(send, "BuyCheapTokensAtShopExample", "198.51.100.10")).status).toBe(200);
  }
  for (const address of ["198.51.100.21", "198.51.100.22", "2001:db8:5:6::1"]) {
    expect((await search(send, "ModuleNotFoundError", address)).status).toBe(200);
  }
  // Addresses of one IPv6 /64 are one client: a second made-up token from four of them.
  for (const address of ["2001:db8:7:8::1", "2001:db8:7:8::2", "2001:db8:7:8:a::3", "2001:db8:7:8:ffff::4"]) {
    expect((await search(send, "AnotherMadeUpToken", address)).status).toBe(200);
  }
}

function expectRankedByClients(list: Hot, searches = 3): void {
  // The label three addresses searched is at the top, each address counted once; tokens from fewer
  // than HOT_LABEL_MIN_CLIENTS (3) addresses are not shown at all.
  expect(list[0]).toEqual({ label: "ModuleNotFoundError", searches, clients: 3 });
  expect(list.map((h) => h.label)).not.toContain("BuyCheapTokensAtShopExample");
  expect(list.map((h) => h.label)).not.toContain("AnotherMadeUpToken");
}

describe("hot labels on SQLite", () => {
  let colony: RunningColony;
  beforeAll(async () => {
    colony = await startQuietColony({ COLONY_DATA_DIR: tempDir(), COLONY_TRUST_PROXY: "1" });
  });
  afterAll(() => colony?.stop());

  test("one address's 100 searches for a made-up token do not top a label several addresses searched", async () => {
    const send: Send = (path, init) => fetch(colony.url + path, init);
    await floodAndRealError(send);
    expectRankedByClients(await hot(send));
  });

  test("a colony whose agents all search from one address still sees its error types, by searches", async () => {
    const local = await startQuietColony({ COLONY_DATA_DIR: tempDir() });
    try {
      const send: Send = (path, init) => fetch(local.url + path, init);
      for (const errorType of ["ECONNREFUSED", "ModuleNotFoundError", "ECONNREFUSED", "ECONNREFUSED", "ModuleNotFoundError", "E0382"]) {
        expect((await search(send, errorType, "ignored: no trusted proxy")).status).toBe(200);
      }
      const list = await hot(send);
      expect(list.filter((h) => h.label.startsWith("E") || h.label.startsWith("Module"))).toEqual([
        { label: "ECONNREFUSED", searches: 3, clients: 1 },
        { label: "ModuleNotFoundError", searches: 2, clients: 1 },
        { label: "E0382", searches: 1, clients: 1 },
      ]);
    } finally {
      await local.stop();
    }
  });
});

const unavailable = postgresUnavailable();
if (unavailable) console.warn(`hot labels on PostgreSQL skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)("hot labels on PostgreSQL", () => {
  let server: PostgresServer;
  const colonies: RunningColony[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    for (const c of colonies) await c.stop();
    await server?.stop();
  });

  const start = async (url: string) => {
    const c = await startQuietColony({ COLONY_DATA_DIR: tempDir(), COLONY_DATABASE_URL: url, COLONY_TRUST_PROXY: "1" });
    colonies.push(c);
    return c;
  };

  test("one address's 100 searches for a made-up token do not top a label several addresses searched", async () => {
    const colony = await start(await server.createDatabase());
    const send: Send = (path, init) => fetch(colony.url + path, init);
    await floodAndRealError(send);
    expectRankedByClients(await hot(send));
  });

  test("two replicas on one database share the counts: requests alternate, each address still counts once", async () => {
    const url = await server.createDatabase();
    const replicas = [await start(url), await start(url)];
    let turn = 0;
    const send: Send = (path, init) => fetch(replicas[turn++ % 2]!.url + path, init);
    await floodAndRealError(send);
    // The three addresses search again, each on both replicas: still three clients.
    for (const address of ["198.51.100.21", "198.51.100.22", "2001:db8:5:6::2", "198.51.100.21", "198.51.100.22", "2001:db8:5:6::3"]) {
      expect((await search(send, "ModuleNotFoundError", address)).status).toBe(200);
    }
    for (const replica of replicas) expectRankedByClients(await hot((path, init) => fetch(replica.url + path, init)), 9);
  });
});

// The operator series (migration 8): written as things happen, and filled from older rows when a
// colony from before them is upgraded, so its console charts are not empty after the upgrade.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_FILE } from "../src/store/sqlite/database";
import { startTestColony, tempDir } from "./support/colony";
import { rollBackSchema } from "./support/sqlite-schema";
import { agent, json, sampleTrail } from "./support/trails";

const TOKEN = "series-test-operator-token";
const auth = { authorization: `Bearer ${TOKEN}` };

async function totals(fetcher: (path: string, init?: RequestInit) => Promise<Response>): Promise<Record<string, number>> {
  const body = (await (await fetcher("/v1/admin/series?hours=3", { headers: auth })).json()) as any;
  const out: Record<string, number> = {};
  for (const name of body.series as string[]) out[name] = body.hours.reduce((s: number, h: any) => s + h[name], 0);
  return out;
}

test("an upgraded colony's series are filled from its trails, outcomes and search events", async () => {
  const dataDir = tempDir();
  try {
    const first = await startTestColony({ COLONY_DATA_DIR: dataDir, COLONY_ADMIN_TOKEN: TOKEN });
    const ids: string[] = [];
    for (const error of ["ModuleNotFoundError: No module named 'yaml'", "Error: listen EADDRINUSE: address already in use :::3000"]) {
      const res = await first.fetch("/v1/trails", json(sampleTrail({ error }), agent("author-agent-1")));
      ids.push(((await res.json()) as any).trail_id);
    }
    await first.service.worker!.drain();
    expect(
      (await first.fetch(`/v1/trails/${ids[0]}/outcomes`, json({ protocol_version: "1.0", outcome: "worked" }, agent("other-agent-2"))))
        .status,
    ).toBe(202);
    expect((await first.fetch("/v1/search", json({ query: "No module named yaml" }))).status).toBe(200);
    const live = await totals(first.fetch);
    expect([live.publishes, live.indexed, live.outcomes, live.searches]).toEqual([2, 2, 1, 1]);
    await first.stop();

    // Back to schema 7: no series table.
    const db = new Database(join(dataDir, DATABASE_FILE));
    rollBackSchema(db, 7);
    db.close();

    const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir, COLONY_ADMIN_TOKEN: TOKEN });
    try {
      expect(await totals(upgraded.fetch)).toEqual(live);
    } finally {
      await upgraded.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("hours given more than once is 400 naming it, not the last one read", async () => {
  const colony = await startTestColony({ COLONY_ADMIN_TOKEN: TOKEN });
  try {
    const res = await colony.fetch("/v1/admin/series?hours=48&hours=2", { headers: auth });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.details).toEqual([{ path: "/hours", message: "is given 2 times; give it once" }]);
    expect((await colony.fetch("/v1/admin/series?hours=2", { headers: auth })).status).toBe(200);
  } finally {
    await colony.dispose();
  }
});

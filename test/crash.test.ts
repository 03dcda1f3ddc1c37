// Acknowledged writes survive kill -9: a burst of publishes, SIGKILL mid-burst, restart.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { freePort, spawnColony, tempDir, waitFor } from "./support/colony";
import { json, sampleTrail } from "./support/trails";

test("every 202 survives SIGKILL mid-burst and reaches a final state exactly once", async () => {
  const dataDir = tempDir("colony-crash-");
  const port = await freePort();
  const env = { COLONY_PORT: String(port), COLONY_DATA_DIR: dataDir, COLONY_PUBLISH_LIMIT: "100000", COLONY_RATE_LIMIT: "100000" };
  const base = `http://127.0.0.1:${port}`;

  let proc = spawnColony(["serve"], env);
  await waitFor(`${base}/readyz`);
  const acknowledged: string[] = [];
  let sent = 0;
  const burst = async (worker: number) => {
    for (let i = 0; ; i++) {
      sent++;
      try {
        const trail = sampleTrail({ error: `RuntimeError: crash burst worker ${worker} item ${i}`, commands: [`echo fix ${worker}-${i}`] });
        const res = await fetch(`${base}/v1/trails`, json(trail));
        if (res.status !== 202) throw new Error(`unexpected ${res.status}`);
        acknowledged.push(((await res.json()) as any).trail_id);
      } catch {
        return; // the server died under us: stop this client
      }
    }
  };
  const clients = Array.from({ length: 8 }, (_, w) => burst(w));
  while (acknowledged.length < 150) await Bun.sleep(5);
  proc.kill("SIGKILL");
  await proc.exited;
  await Promise.all(clients);
  expect(acknowledged.length).toBeGreaterThanOrEqual(150);

  proc = spawnColony(["serve"], env);
  try {
    await waitFor(`${base}/readyz`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = (await (await fetch(`${base}/readyz`)).json()) as any;
      if (ready.queue_depth === 0) break;
      if (Date.now() > deadline) throw new Error(`queue did not drain: ${ready.queue_depth}`);
      await Bun.sleep(50);
    }
    for (const id of acknowledged) {
      const status = (await (await fetch(`${base}/v1/trails/${id}`)).json()) as any;
      expect(["indexed", "merged", "rejected"]).toContain(status.status);
    }
  } finally {
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }

  const db = new Database(join(dataDir, "colony.db"), { readonly: true });
  db.loadExtension(getLoadablePath());
  const indexed = (db.query("SELECT count(*) AS n FROM trails WHERE status = 'indexed'").get() as any).n;
  const vectors = (db.query("SELECT count(*) AS n FROM vec_float").get() as any).n;
  const laid = (db.query("SELECT count(*) AS n FROM events WHERE kind = 'laid'").get() as any).n;
  const stored = (db.query("SELECT count(*) AS n FROM trails").get() as any).n;
  expect((db.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
  db.close();
  expect(stored).toBeGreaterThanOrEqual(acknowledged.length); // a write may land without its 202 reaching us
  expect(stored).toBeLessThanOrEqual(sent);
  expect(vectors).toBe(indexed); // none indexed twice, none indexed without its vector
  expect(laid).toBe(indexed);
}, 120_000);

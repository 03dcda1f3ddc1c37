// Numbers that break the service (issue 15 item 4): every numeric field has a documented maximum,
// and no stored value (even one an older version let in) may make a later request fail.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { EFFORT_LIMITS } from "../src/core/trail";
import { startTestColony, TEST_BACKEND, tempDir, type TestColony } from "./support/colony";
import { agent, agentAt, json, sampleTrail } from "./support/trails";

const raw = (body: string, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body,
});

const withEffort = (effort: string) => {
  const text = JSON.stringify(sampleTrail({ error: "ValueError: numbers case" }));
  return text.replace(/"effort":\{[^}]*\}/, `"effort":${effort}`);
};

describe("numeric fields have sane maxima (400 invalid_trail with the field's pointer)", () => {
  let colony: TestColony;
  beforeAll(async () => {
    colony = await startTestColony();
  });
  afterAll(() => colony.dispose());

  const cases: [string, string, string][] = [
    ["tokens_spent 9.2e18", `{"tokens_spent":9.2e18}`, "/effort/tokens_spent"],
    ["tokens_spent 1e300", `{"tokens_spent":1e300}`, "/effort/tokens_spent"],
    ["tokens_spent 1e400 (Infinity once parsed)", `{"tokens_spent":1e400}`, "/effort/tokens_spent"],
    ["tokens_spent -1e400", `{"tokens_spent":-1e400}`, "/effort/tokens_spent"],
    ["tokens_spent just over", `{"tokens_spent":${EFFORT_LIMITS.tokens_spent + 1}}`, "/effort/tokens_spent"],
    ["failed_attempts 1e20", `{"failed_attempts":1e20}`, "/effort/failed_attempts"],
    ["failed_attempts just over", `{"failed_attempts":${EFFORT_LIMITS.failed_attempts + 1}}`, "/effort/failed_attempts"],
    ["duration_s 1e300", `{"duration_s":1e300}`, "/effort/duration_s"],
    ["duration_s just over", `{"duration_s":${EFFORT_LIMITS.duration_s + 1}}`, "/effort/duration_s"],
    ["tokens_spent as the string 1e400", `{"tokens_spent":"1e400"}`, "/effort/tokens_spent"],
  ];
  for (const [name, effort, pointer] of cases) {
    test(name, async () => {
      const res = await colony.fetch("/v1/trails", raw(withEffort(effort)));
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("invalid_trail");
      expect(body.error.details.map((d: any) => d.path)).toContain(pointer);
    });
  }

  test("the maxima themselves are accepted", async () => {
    const effort = JSON.stringify(EFFORT_LIMITS);
    const res = await colony.fetch("/v1/trails", raw(withEffort(effort)));
    expect(res.status).toBe(202);
  });

  test("search limit and min_strength out of range, also as 1e400", async () => {
    for (const body of [
      `{"query":"x","limit":1e400}`,
      `{"query":"x","limit":11}`,
      `{"query":"x","min_strength":1e400}`,
      `{"query":"x","min_strength":-1e-400}`.replace("-1e-400", "-1e-300"),
    ]) {
      const res = await colony.fetch("/v1/search", raw(body));
      expect(res.status).toBe(400);
    }
  });

  test("feed and activity limits far out of range", async () => {
    for (const path of [
      "/v1/feed?limit=1e400",
      "/v1/feed?limit=99999999999999999999999",
      "/v1/activity?limit=1e3",
      "/v1/activity?limit=-1",
    ]) {
      const res = await colony.fetch(path);
      expect(res.status).toBe(400);
    }
  });
});

describe("aggregates never overflow", () => {
  test("reports on a trail at the maximum, many times, keep /v1/stats exact and answering", async () => {
    const colony = await startTestColony({ COLONY_TRUST_PROXY: "1" });
    try {
      const t = sampleTrail({ error: "ValueError: maximum effort" });
      t.effort = { tokens_spent: EFFORT_LIMITS.tokens_spent };
      const id = ((await (await colony.fetch("/v1/trails", json(t, agent("agent-number-author")))).json()) as any).trail_id;
      await colony.service.worker!.drain();
      for (let i = 0; i < 5; i++) {
        const res = await colony.fetch(
          `/v1/trails/${id}/outcomes`,
          json({ protocol_version: "1.0", outcome: "worked" }, agentAt(`agent-number-${i}xx`)),
        );
        expect(res.status).toBe(202);
      }
      const stats = await colony.fetch("/v1/stats");
      expect(stats.status).toBe(200);
      expect(((await stats.json()) as any).tokens_saved_24h).toBe(5 * EFFORT_LIMITS.tokens_spent);
    } finally {
      await colony.dispose();
    }
  });

  // An older version's SQLite file: PostgreSQL colonies have no such past.
  test.skipIf(TEST_BACKEND === "postgres")(
    "huge values written straight into the database by an older version: stats and reports still answer",
    async () => {
      const dataDir = tempDir();
      let colony = await startTestColony({ COLONY_DATA_DIR: dataDir });
      const ids: string[] = [];
      try {
        for (const e of ["ValueError: stored huge one", "ValueError: stored huge two"]) {
          const res = await colony.fetch("/v1/trails", json(sampleTrail({ error: e }), agent("agent-number-author")));
          ids.push(((await res.json()) as any).trail_id);
        }
        await colony.service.worker!.drain();
        await colony.stop();

        // What an older version (no bounds, plain sums) could leave behind.
        const db = new Database(join(dataDir, "colony.db"));
        const hour = Math.floor(Date.now() / 3600_000);
        db.query("UPDATE trails SET content = json_set(content, '$.effort.tokens_spent', 9.2e18), tokens_spent = 9.2e18 WHERE id = ?").run(
          ids[0]!,
        );
        db.query("UPDATE trails SET content = json_set(content, '$.effort.tokens_spent', 1e300), tokens_spent = 1e300 WHERE id = ?").run(
          ids[1]!,
        );
        db.query("INSERT OR REPLACE INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (?, 1, 9200000000000000000)").run(hour);
        db.query("INSERT OR REPLACE INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (?, 1, 9200000000000000000)").run(hour - 1);
        db.query("INSERT OR REPLACE INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (?, 9223372036854775807, 1)").run(hour - 2);
        db.close();

        colony = await startTestColony({ COLONY_DATA_DIR: dataDir });
        const before = await colony.fetch("/v1/stats");
        expect(before.status).toBe(200);
        const stats = (await before.json()) as any;
        expect(Number.isSafeInteger(stats.tokens_saved_24h)).toBe(true);
        expect(Number.isSafeInteger(stats.outcomes_24h)).toBe(true);
        for (const id of ids) {
          for (const who of ["agent-number-a1", "agent-number-b2"]) {
            const res = await colony.fetch(`/v1/trails/${id}/outcomes`, json({ protocol_version: "1.0", outcome: "worked" }, agent(who)));
            expect(res.status).toBe(202);
          }
          expect((await colony.fetch(`/v1/trails/${id}`)).status).toBe(200);
        }
        const after = await colony.fetch("/v1/stats");
        expect(after.status).toBe(200);
        expect(Number.isSafeInteger(((await after.json()) as any).tokens_saved_24h)).toBe(true);
        expect((await colony.fetch("/v1/feed")).status).toBe(200);
      } finally {
        await colony.dispose();
        const { rmSync } = await import("node:fs");
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});

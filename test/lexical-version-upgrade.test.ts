// The lexical index version at start (docs/architecture.md, "The lexical index version"): a colony
// whose lexical index was built by other tokens (here the stemming experiment's) is unready while
// /readyz says so, rebuilds the index at start from its indexed trails, is ready after, and search
// then ranks as an index built by the current tokens does. Runs on SQLite, and on PostgreSQL (one
// or two replicas) with COLONY_TEST_BACKEND=postgres|replicas.
import { expect, test } from "bun:test";
import { lexicalIndexVersion, setLexicalStems } from "../src/core/lexical";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import { startColony } from "../src/serve";
import { LEXICAL_REBUILD_KEY, LEXICAL_VERSION_KEY } from "../src/service/lexical-rebuild";
import { backendEnv, startTestColony, tempDir } from "./support/colony";
import { json, sampleTrail } from "./support/trails";

const errors = [
  "Error: connect ECONNREFUSED 127.0.0.1:5432 while connecting to the database",
  "ModuleNotFoundError: No module named 'requests_toolbelt'",
  "TypeError: Cannot read properties of undefined (reading 'mapStateToProps')",
  "fatal: unable to access repository: SSL certificate problem: unable to get local issuer certificate",
];

test("an index built by other tokens: /readyz names the rebuild, the colony rebuilds it at start, then search finds by the current tokens", async () => {
  const dataDir = tempDir("colony-lexical-version-");
  const first = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect((await first.fetch("/readyz")).status).toBe(200);
    // The trails are indexed by enrichment with the stemming experiment's tokens, as such a colony records.
    setLexicalStems(true);
    try {
      for (const error of errors) expect((await first.fetch("/v1/trails", json(sampleTrail({ error })))).status).toBe(202);
      await first.service.worker!.drain();
      await first.subsystems.store!.kv.set(LEXICAL_VERSION_KEY, lexicalIndexVersion());
    } finally {
      setLexicalStems(false);
    }
    expect(await first.query("SELECT term FROM lexical_terms WHERE term IN ('certif', 'properti') AND docs > 0 ORDER BY term")).toEqual([
      { term: "certif" },
      { term: "properti" },
    ]);
    // This process's tokens are not the index's: not ready, and /readyz says why.
    const res = await first.fetch("/readyz");
    expect(res.status).toBe(503);
    const body = (await res.json()) as any;
    expect(body.checks.lexical.ok).toBe(false);
    expect(body.checks.lexical.detail).toContain("the lexical index is being rebuilt for new tokens");
    expect(body.checks.kv.ok).toBe(true);
  } finally {
    await first.stop();
  }

  const upgraded = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    const runs = await Promise.all(upgraded.replicas.map((r) => r.service.lexicalRebuilding));
    expect(runs.reduce((n, r) => n + (r?.trails ?? 0), 0)).toBe(errors.length);
    expect(await upgraded.subsystems.store!.kv.get(LEXICAL_VERSION_KEY)).toBe(lexicalIndexVersion());
    const ready = await upgraded.fetch("/readyz");
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as any).checks.lexical.ok).toBe(true);
    // No stem token is left ("certif" of "certificate", which the old index held).
    expect(await upgraded.query("SELECT term FROM lexical_terms WHERE term IN ('certif', 'properti') AND docs > 0")).toEqual([]);
    const found = (await (await upgraded.fetch("/v1/search", json({ query: errors[1], limit: 3 }))).json()) as any;
    expect(found.results[0].trail.problem.error).toBe(errors[1]);
  } finally {
    await upgraded.stop();
  }
});

test("a resumed rebuild whose earlier count includes trails removed since reports no more done than in all (progress log lines)", async () => {
  const dataDir = tempDir("colony-lexical-resume-");
  const token = "operator-token-for-the-resume-test";
  const first = await startTestColony({ COLONY_DATA_DIR: dataDir, COLONY_ADMIN_TOKEN: token });
  const ids: string[] = [];
  try {
    for (const error of [
      ...errors,
      "ENOSPC: no space left on device, write",
      "panic: runtime error: index out of range [3] with length 3",
    ]) {
      const res = await first.fetch("/v1/trails", json(sampleTrail({ error })));
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as any).trail_id);
    }
    await first.service.worker!.drain();
    const seqs = (await first.query("SELECT seq FROM trails WHERE status = 'indexed' ORDER BY seq")).map((r) => Number(r.seq));
    expect(seqs.length).toBe(6);
    // A rebuild to the current tokens stopped after three trails (as a crash leaves it) ...
    await first.subsystems.store!.kv.set(LEXICAL_VERSION_KEY, "tokens of another release");
    await first.subsystems.store!.kv.set(LEXICAL_REBUILD_KEY, JSON.stringify({ version: lexicalIndexVersion(), after: seqs[2], done: 3 }));
    // ... and two of those three removed since (by another replica, still serving).
    for (const id of ids.slice(0, 2)) {
      const res = await first.fetch(`/v1/trails/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBeLessThan(300);
    }
  } finally {
    await first.stop();
  }

  const lines: Record<string, any>[] = [];
  const logger = createLogger("info", (line) => lines.push(JSON.parse(line)));
  const env = { ...(await backendEnv(dataDir)), COLONY_DATA_DIR: dataDir, COLONY_PORT: "0", HOME: process.env.HOME };
  const resumed = await startColony(loadConfig(env), { logger });
  try {
    const run = await resumed.service.lexicalRebuilding;
    expect(run).toMatchObject({ trails: 3, current: true, started: false });
    const progress = lines.filter((l) => l.msg.startsWith("rebuilding the lexical index for the current tokens"));
    expect(progress.length).toBeGreaterThan(0);
    // 4 trails indexed, 3 done before: the line counted 1 to do and then did 3 ("3/1", 300%) before.
    for (const line of progress) expect(line.done).toBeLessThanOrEqual(line.total);
    expect(progress.at(-1)).toMatchObject({ msg: "rebuilding the lexical index for the current tokens: done", done: 3, total: 3 });
  } finally {
    await resumed.stop();
  }
});

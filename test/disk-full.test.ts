// A full disk, for real (issue 15 item 9): the colony's data directory is a small tmpfs, filled to
// the last block by a filler file. Writes that cannot be stored answer 503 unavailable with
// Retry-After (never 500), a search still answers, /readyz names the failing check, and once the
// filler is deleted the colony recovers by itself with nothing acknowledged lost.
//
// Mounting a tmpfs needs root (the sandbox and CI run as root). Where mount(8) is refused the
// test is skipped with a note; the mapping of SQLite's full condition itself is also covered
// without a mount in src/store/sqlite/store.test.ts ("a full database").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestColony, type TestColony } from "./support/colony";
import { fillFilesystem, mountTmpfs } from "./support/filesystem";
import { json, sampleTrail } from "./support/trails";

const ADMIN = "disk-full-operator-token";

const mountPoint = mkdtempSync(join(tmpdir(), "colony-full-"));
const mounted = mountTmpfs(mountPoint, "24m");
if (!mounted) console.warn("disk-full.test.ts: mount -t tmpfs was refused (not root?); the real full-disk test is skipped");

describe.skipIf(!mounted)("a full disk", () => {
  let colony: TestColony;
  let filler = "";
  /** Every trail a 202 acknowledged. */
  const acknowledged: string[] = [];
  let indexed = "";

  const publish = (i: number) =>
    colony.fetch("/v1/trails", json(sampleTrail({ error: `OSError: disk full case ${i}`, commands: [`pip install full==${i}`] })));
  const report = (id: string) =>
    colony.fetch(
      `/v1/trails/${id}/outcomes`,
      json({ protocol_version: "1.0", outcome: "worked" }, { "X-Colony-Agent": "agent-full-0001" }),
    );
  const remove = (id: string) => colony.fetch(`/v1/trails/${id}`, { method: "DELETE", headers: { Authorization: `Bearer ${ADMIN}` } });
  const search = () => colony.fetch("/v1/search", json({ query: "OSError: disk full case 1" }));
  const mcpReport = (id: string) =>
    colony.fetch(
      "/mcp",
      json(
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "colony_report", arguments: { trail_id: id, outcome: "worked" } },
        },
        { accept: "application/json, text/event-stream", "X-Colony-Agent": "agent-full-0002" },
      ),
    );

  beforeAll(async () => {
    colony = await startTestColony({ COLONY_DATA_DIR: join(mountPoint, "data"), COLONY_ADMIN_TOKEN: ADMIN });
    for (let i = 0; i < 6; i++) {
      const res = await publish(i);
      expect(res.status).toBe(202);
      acknowledged.push(((await res.json()) as { trail_id: string }).trail_id);
    }
    await colony.service.worker!.drain();
    indexed = acknowledged[1]!;
    // Fold the WAL into the main file and truncate it, so the next write needs new blocks.
    colony.subsystems.db!.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    filler = fillFilesystem(mountPoint);
  }, 120_000);

  afterAll(async () => {
    await colony?.stop();
    // Lazy: bun:sqlite keeps a closed connection's files open until its cached statements are
    // collected, so the mount is detached now and freed when the last of them closes.
    spawnSync("umount", ["-l", mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  const expectUnavailable = async (res: Response) => {
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unavailable");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.headers.get("ratelimit-limit")).not.toBeNull();
  };

  test("while full: writes answer 503 unavailable with Retry-After, reads and search answer, /readyz names the check", async () => {
    await expectUnavailable(await publish(100));
    await expectUnavailable(await report(indexed));
    await expectUnavailable(await remove(indexed));
    await expectUnavailable(await colony.fetch("/v1/drafts", json(sampleTrail({ error: "OSError: draft on a full disk" }))));

    // A search reads; its event is a write the full disk cannot take, and is dropped.
    const found = await search();
    expect(found.status).toBe(200);
    expect(((await found.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
    expect((await colony.fetch(`/v1/trails/${indexed}`)).status).toBe(200);

    const ready = await colony.fetch("/readyz");
    expect(ready.status).toBe(503);
    const readiness = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean; detail?: string }> };
    expect(readiness.status).toBe("unavailable");
    expect(readiness.checks.kv!.ok).toBe(false);
    expect(readiness.checks.kv!.detail).toMatch(/full/);
    expect(readiness.checks.embedding!.ok).toBe(true);

    // The hosted MCP tool tells the model to retry later rather than reporting an internal error.
    const answer = (await (await mcpReport(indexed)).json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0]!.text).toMatch(/unavailable/);
  });

  test("once space returns: ready again by itself, writes succeed, nothing acknowledged is lost", async () => {
    rmSync(filler);
    expect((await colony.fetch("/readyz")).status).toBe(200);
    expect((await report(indexed)).status).toBe(202);
    const late = await publish(200);
    expect(late.status).toBe(202);
    acknowledged.push(((await late.json()) as { trail_id: string }).trail_id);
    await colony.service.worker!.drain();
    expect((await remove(acknowledged[0]!)).status).toBe(200);

    // After a restart on the same directory every acknowledged trail is there.
    await colony.stop();
    colony = await startTestColony({ COLONY_DATA_DIR: join(mountPoint, "data"), COLONY_ADMIN_TOKEN: ADMIN });
    const statuses = await Promise.all(
      acknowledged.map(async (id) => ((await (await colony.fetch(`/v1/trails/${id}`)).json()) as { status: string }).status),
    );
    expect(statuses).toEqual(["removed", ...acknowledged.slice(1).map(() => "indexed")]);
  }, 60_000);
});

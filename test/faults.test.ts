// Faults the operator must fix, met by the real process (the built binary): a damaged database
// file and a port already taken each stop the start with one plain line and exit code 2.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, cpSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ColonyProcess } from "./support/colony-process";
import { startTestColony, TEST_BACKEND, tempDir } from "./support/colony";
import { json, sampleTrail } from "./support/trails";

/** Starts a process expected to fail at start; its exit code and stderr. */
async function failedStart(proc: ColonyProcess): Promise<{ exitCode: number | null; stderr: string }> {
  await expect(proc.start(60_000)).rejects.toThrow(/exited with/);
  const { exitCode } = await proc.stop();
  return { exitCode, stderr: proc.stderr };
}

function overwrite(file: string, offset: number, bytes: Uint8Array): void {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

// SQLite's own file: PostgreSQL keeps its data itself (a damaged data directory is its to report).
describe.skipIf(TEST_BACKEND === "postgres")("a damaged database file", () => {
  let sound: string;
  // Made in beforeAll: the describe's body runs even where it is skipped (the PostgreSQL passes),
  // and its afterAll then does not, so a directory made here stayed behind.
  let cacheDir: string;
  beforeAll(async () => {
    cacheDir = tempDir("colony-cache-");
    sound = tempDir();
    const colony = await startTestColony({ COLONY_DATA_DIR: sound });
    for (let i = 0; i < 20; i++) {
      await colony.fetch(
        "/v1/trails",
        json(sampleTrail({ error: `ValueError: damaged file case ${i}`, commands: [`pip install d==${i}`] })),
      );
    }
    await colony.stop(); // folds the WAL into colony.db
  });
  afterAll(() => {
    rmSync(sound, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  const damages: [string, (file: string) => void, RegExp][] = [
    ["a header overwritten", (f) => overwrite(f, 0, new TextEncoder().encode("this is no database at all")), /file header check/],
    // Pages 3 to 6 overwritten with a fixed pattern: the header is intact, the b-trees are not.
    ["interior pages overwritten", (f) => overwrite(f, 2 * 4096, new Uint8Array(4 * 4096).fill(0xa5)), /SQLite's quick check/],
  ];
  for (const [name, damage, check] of damages) {
    test(`${name}: exit 2, one line naming the file, the check and the way out; the file is left as it was`, async () => {
      const dataDir = tempDir();
      try {
        cpSync(sound, dataDir, { recursive: true });
        const file = join(dataDir, "colony.db");
        damage(file);
        const before = readFileSync(file);
        const { exitCode, stderr } = await failedStart(await ColonyProcess.create({ dataDir, cacheDir }));
        expect(exitCode).toBe(2);
        const lines = stderr.trim().split("\n");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(file);
        expect(lines[0]).toMatch(check);
        expect(lines[0]).toContain("colony restore");
        expect(stderr).not.toMatch(/\n\s+at |SQLiteError/); // no stack trace
        expect(readFileSync(file).equals(before)).toBe(true);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }

  test("the sound file it was made from starts (so the cases above fail for the damage alone)", async () => {
    const dataDir = tempDir();
    try {
      cpSync(sound, dataDir, { recursive: true });
      const proc = await ColonyProcess.create({ dataDir, cacheDir });
      await proc.start(60_000);
      expect((await proc.stop()).exitCode).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

test("a port already taken: exit 2 with one line naming the port", async () => {
  const squatter = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("someone else", { status: 503 }) });
  const dataDir = tempDir();
  try {
    const proc = await ColonyProcess.create({ dataDir, port: squatter.port });
    const { exitCode, stderr } = await failedStart(proc);
    expect(exitCode).toBe(2);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`port ${squatter.port}`);
    expect(lines[0]).toContain("in use");
    expect(stderr).not.toMatch(/\n\s+at /);
  } finally {
    await squatter.stop(true);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

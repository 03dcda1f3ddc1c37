// The test harness deletes what it makes: a colony process's native cache (~70 MB each) was left
// in the temporary directory by every test run until the disk filled.
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_DIR } from "./support/paths";

test("a cache directory made for a colony process is deleted when the test process exits", async () => {
  const child = Bun.spawn(
    [
      join(REPO_DIR, "node_modules/.bin/bun"),
      "-e",
      `const { ColonyProcess } = await import(${JSON.stringify(join(REPO_DIR, "test/support/colony-process.ts"))});
       const p = await ColonyProcess.create({ dataDir: "/nonexistent", mode: "source" });
       console.log(p.env.COLONY_CACHE_DIR);`,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const out = (await new Response(child.stdout).text()).trim();
  expect(await child.exited).toBe(0);
  expect(out).toContain("colony-cache-");
  expect(existsSync(out)).toBe(false);
});

/**
 * Runs `source` as a test file under `bun test` (a run of its own, with test/preload.ts as the
 * project configures it) and returns the path it printed as `PATH=…`.
 */
async function pathPrintedByTestRun(source: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "colony-harness-"));
  try {
    const file = join(dir, "prints-path.test.ts");
    writeFileSync(file, source);
    const child = Bun.spawn([join(REPO_DIR, "node_modules/.bin/bun"), "test", file], { cwd: REPO_DIR, stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
    expect(await child.exited).toBe(0);
    return /PATH=(\S+)/.exec(out + err)?.[1] ?? "";
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("under bun test too: a run's cache directories are gone when the run ends", async () => {
  // bun test runs no "exit" listener: the directories stayed (464 of them, ~70 MB each, after a
  // day of suite runs) until test/preload.ts ran the cleanup from a global afterAll.
  const cache = await pathPrintedByTestRun(
    `import { test } from "bun:test";
     const { ColonyProcess } = await import(${JSON.stringify(join(REPO_DIR, "test/support/colony-process.ts"))});
     test("makes a cache directory", async () => {
       const p = await ColonyProcess.create({ dataDir: "/nonexistent", mode: "source" });
       console.log("PATH=" + p.env.COLONY_CACHE_DIR);
     });`,
  );
  expect(cache).toContain("colony-cache-");
  expect(existsSync(cache)).toBe(false);
});

test("a temporary directory a test made and kept is gone when the run ends", async () => {
  const made = await pathPrintedByTestRun(
    `import { test } from "bun:test";
     import { writeFileSync } from "node:fs";
     const { tempDir } = await import(${JSON.stringify(join(REPO_DIR, "test/support/colony.ts"))});
     test("makes a directory and does not delete it", () => {
       const made = tempDir("colony-kept-");
       writeFileSync(made + "/data", "x");
       console.log("PATH=" + made);
     });`,
  );
  expect(made).toContain("colony-kept-");
  expect(existsSync(made)).toBe(false);
});

// The test harness deletes what it makes: a colony process's native cache (~70 MB each) was left
// in the temporary directory by every test run until the disk filled.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
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

// Starts real colonies for tests: in-process on a loopback port, or as a separate process.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { startColony, type RunningColony } from "../../src/serve";
import { REPO_DIR } from "./paths";

export interface TestColony extends RunningColony {
  dataDir: string;
  /** Stops the colony and deletes its data directory. */
  dispose(): Promise<void>;
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

export function tempDir(prefix = "colony-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestColony(env: Record<string, string> = {}): Promise<TestColony> {
  const dataDir = env.COLONY_DATA_DIR ?? tempDir();
  const config = loadConfig({
    HOME: process.env.HOME,
    COLONY_PORT: "0",
    COLONY_LOG_LEVEL: "silent",
    ...env,
    COLONY_DATA_DIR: dataDir,
  });
  const colony = await startColony(config);
  return {
    ...colony,
    dataDir,
    fetch: (path, init) => fetch(colony.url + path, init),
    async dispose() {
      await colony.stop();
      if (!env.COLONY_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Spawns `bun src/main.ts …` as its own process. */
export function spawnColony(args: string[], env: Record<string, string>) {
  return Bun.spawn([join(REPO_DIR, "node_modules/.bin/bun"), join(REPO_DIR, "src/main.ts"), ...args], {
    cwd: REPO_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", COLONY_LOG_LEVEL: "silent", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
}

export async function waitFor(url: string, status = 200, timeoutMs = 15_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status === status) return res;
      last = res.status;
    } catch (err) {
      last = err;
    }
    await Bun.sleep(50);
  }
  throw new Error(`${url} did not answer ${status} in ${timeoutMs} ms (last: ${String(last)})`);
}

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  await s.stop(true);
  return port;
}

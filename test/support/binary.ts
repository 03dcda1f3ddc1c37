// Builds (when stale) and runs the single binary, dist/colony, the way a user would: from an
// empty directory, with no bun, node or node_modules reachable. Used by test/binary.test.ts and
// bench/startup.bench.ts.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO_DIR } from "./paths";

export const BINARY = join(REPO_DIR, "dist/colony");

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/** True when dist/colony is older than anything it is built from. */
export function binaryIsStale(binary = BINARY): boolean {
  if (!existsSync(binary)) return true;
  const inputs = ["src", "tools/build.ts", "models/default", "package.json", "package-lock.json"];
  const newest = Math.max(...inputs.map((p) => newestMtime(join(REPO_DIR, p))));
  return statSync(binary).mtimeMs < newest;
}

/** Runs `bun tools/build.ts` with the given arguments; throws with its output when it fails. */
export function runBuild(args: string[] = []): void {
  const r = Bun.spawnSync([process.execPath, join(REPO_DIR, "tools/build.ts"), ...args], {
    cwd: REPO_DIR,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`tools/build.ts failed:\n${r.stdout.toString()}${r.stderr.toString()}`);
}

/**
 * dist/colony, built first when missing or stale. tools/test.sh runs several test processes side
 * by side, and more than one may find the binary stale: one builds it while the others wait, then
 * find it fresh, instead of each building a copy (5.5 s a build here).
 */
export function ensureBinary(): string {
  if (!binaryIsStale()) return BINARY;
  withLock(`${BINARY}.lock`, () => {
    if (binaryIsStale()) runBuild();
  });
  return BINARY;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Runs `fn` holding a lock between processes: a directory holding the owner's PID, put in place
 * with one rename (so it never exists without its owner). A lock whose owner is gone (a test
 * process killed mid-build) is taken over. Two takers racing can both get it; builds are atomic
 * (tools/build.ts renames the finished binary into place), so that costs a second build, no more.
 */
function withLock(lock: string, fn: () => void): void {
  mkdirSync(dirname(lock), { recursive: true });
  const mine = `${lock}.${process.pid}`;
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    rmSync(mine, { recursive: true, force: true });
    mkdirSync(mine);
    writeFileSync(join(mine, "pid"), String(process.pid));
    try {
      renameSync(mine, lock);
      break;
    } catch {
      rmSync(mine, { recursive: true, force: true });
    }
    let owner = 0;
    try {
      owner = Number(readFileSync(join(lock, "pid"), "utf8"));
    } catch {
      continue; // released meanwhile
    }
    if (!processAlive(owner) || Date.now() > deadline) rmSync(lock, { recursive: true, force: true });
    else Bun.sleepSync(200);
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A copy of the binary alone in a fresh temporary directory (nothing else reachable from there). */
export function isolatedCopy(binary = BINARY): { dir: string; exe: string } {
  const dir = mkdtempSync(join(tmpdir(), "colony-bin-"));
  const exe = join(dir, "colony");
  copyFileSync(binary, exe);
  return { dir, exe };
}

export { freePort } from "./ports";

/**
 * Environment for the binary: only what it needs, PATH empty (so no bun or node can be found;
 * /usr/bin/node exists on some machines) and HOME inside the sandbox.
 */
export function sandboxEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: "", HOME: join(dir, "home"), COLONY_LOG_LEVEL: "warn", ...extra };
}

/** Polls url until it answers 200; returns the response and how long it took. */
export async function pollUntilOk(url: string, timeoutMs: number, intervalMs = 5): Promise<{ res: Response; ms: number }> {
  const t0 = performance.now();
  let last: unknown = "no answer";
  while (performance.now() - t0 < timeoutMs) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return { res, ms: performance.now() - t0 };
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = err;
    }
    await Bun.sleep(intervalMs);
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms: ${String(last)}`);
}

/** Resident set size of a running process in bytes (Linux /proc). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

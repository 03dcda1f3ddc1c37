// A colony as its own OS process (the built binary by default, or `bun src/main.ts`), so that a
// crash, a SIGKILL or a SIGTERM is real and visible. Used by the crash harness, the fuzzer and
// the soak benchmark.
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { ensureBinary, freePort } from "./binary";
import { tempDir } from "./colony";
import { REPO_DIR } from "./paths";
import { atRunEnd } from "./run-end";

/** Quotas and queue bound out of the way: harnesses measure robustness, not the limiter. */
export const UNLIMITED_ENV = {
  COLONY_RATE_LIMIT: "100000000",
  COLONY_PUBLISH_LIMIT: "100000000",
  COLONY_DRAFT_LIMIT: "100000000",
  COLONY_MAX_QUEUE: "100000000",
};

export interface ColonyProcessOptions {
  dataDir: string;
  /** Extraction cache of the binary's natives; share one across restarts to start fast. */
  cacheDir?: string;
  port?: number;
  env?: Record<string, string>;
  /** "binary" (dist/colony, rebuilt when stale) or "source" (bun src/main.ts). */
  mode?: "binary" | "source";
}

/**
 * Cache directories made here (not given by the caller), deleted when the test process exits: a
 * colony restarted by a test reuses its cache, so they outlive any one start. Each holds the
 * extracted natives (~70 MB); left behind, a day of test runs filled the disk.
 */
const madeCacheDirs = new Set<string>();
atRunEnd(() => {
  for (const dir of madeCacheDirs) rmSync(dir, { recursive: true, force: true });
});

export class ColonyProcess {
  private proc: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  private stderrText = "";
  private stderrDone: Promise<void> = Promise.resolve();
  readonly base: string;

  private constructor(
    readonly port: number,
    private readonly command: string[],
    private readonly env: Record<string, string>,
  ) {
    this.base = `http://127.0.0.1:${port}`;
  }

  static async create(opts: ColonyProcessOptions): Promise<ColonyProcess> {
    const port = opts.port ?? (await freePort());
    // A given cache directory is left for the colony to create (its permissions are tested).
    let cacheDir = opts.cacheDir;
    if (cacheDir === undefined) {
      cacheDir = tempDir("colony-cache-");
      madeCacheDirs.add(cacheDir);
    }
    const command =
      (opts.mode ?? "binary") === "binary"
        ? [ensureBinary(), "serve"]
        : [join(REPO_DIR, "node_modules/.bin/bun"), join(REPO_DIR, "src/main.ts"), "serve"];
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      COLONY_HOST: "127.0.0.1",
      COLONY_LOG_LEVEL: "warn",
      COLONY_CACHE_DIR: cacheDir,
      ...opts.env,
      COLONY_PORT: String(port),
      COLONY_DATA_DIR: opts.dataDir,
    };
    return new ColonyProcess(port, command, env);
  }

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  /** Everything the current and previous runs wrote to stderr. */
  get stderr(): string {
    return this.stderrText;
  }

  /** Starts the process and waits until /readyz answers 200. */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.proc && this.proc.exitCode === null && !this.proc.killed) throw new Error("already running");
    const proc = Bun.spawn(this.command, { cwd: REPO_DIR, env: this.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.proc = proc;
    this.stderrDone = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stderr) this.stderrText += decoder.decode(chunk, { stream: true });
    })().catch(() => {});
    void (async () => {
      for await (const _ of proc.stdout) {
      }
    })().catch(() => {});
    const deadline = Date.now() + timeoutMs;
    let last = "no answer";
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`colony exited with ${proc.exitCode} during start:\n${this.stderrText.slice(-4000)}`);
      try {
        const res = await fetch(`${this.base}/readyz`);
        if (res.status === 200) return;
        last = `${res.status} ${await res.text()}`;
      } catch (err) {
        last = String(err);
      }
      await Bun.sleep(20);
    }
    throw new Error(`colony not ready in ${timeoutMs} ms: ${last}\n${this.stderrText.slice(-4000)}`);
  }

  /** True while the process has not exited. */
  get alive(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Sends a signal and waits for the exit; returns the exit code (null when killed by a signal). */
  async stop(signal: "SIGKILL" | "SIGTERM" = "SIGTERM"): Promise<{ exitCode: number | null; signal: string | null }> {
    const proc = this.proc;
    if (!proc) return { exitCode: null, signal: null };
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await proc.exited;
    await this.stderrDone;
    return { exitCode: proc.exitCode, signal: proc.signalCode === null ? null : String(proc.signalCode) };
  }

  /** Sends a signal without waiting. */
  signal(signal: "SIGKILL" | "SIGTERM"): void {
    this.proc?.kill(signal);
  }

  get exited(): Promise<number> {
    return this.proc ? this.proc.exited : Promise.resolve(0);
  }

  fetch(path: string, init?: RequestInit): Promise<Response> {
    return fetch(this.base + path, init);
  }
}

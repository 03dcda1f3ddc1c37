// A throwaway PostgreSQL server for tests and benchmarks, from Debian's postgresql-15 packages
// (`make test` installs them when missing and it may). PostgreSQL refuses to run as root, so when
// the tests run as root the server runs as the `postgres` user (or `nobody`) through setpriv,
// which execs in place: the PID we hold is the server's own, and stopping it is a plain signal.
//
// One initdb per machine makes a template data directory (~1 s); each server copies it (~0.1 s).
// A server hands out fresh databases, so the test files of one suite can share one server.
// Servers' data directories live in memory (/dev/shm) when it has room: on a disk mounted with
// `discard` (this project's VMs), deleting the ~0.7 GB a PostgreSQL pass leaves once it has been
// written back took 70–80 s, longer than a hook may take.
import type { Subprocess } from "bun";
import { SQL } from "bun";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { errorMessage } from "../../src/core/error-message.ts";
import { freePort } from "./ports";
import { atRunEnd } from "./run-end";

export interface PostgresServer {
  /** Connection URL of the server's default database (`postgres`). */
  readonly url: string;
  readonly port: number;
  /** A fresh, empty database on this server; its URL. */
  createDatabase(name?: string): Promise<string>;
  /** SIGKILL (a crash) or a fast shutdown; the data directory is deleted. */
  stop(opts?: { kill?: boolean }): Promise<void>;
  /**
   * Takes the server away, keeping its data directory: a fast shutdown (open connections are cut,
   * as an operator's restart does) or an immediate one (the server dies, crash recovery at the next
   * start). Connections are refused until `resume`.
   */
  pause(opts?: { mode?: "fast" | "immediate" }): Promise<void>;
  /** Starts the server again on the same data directory and port; resolves once it accepts connections. */
  resume(): Promise<void>;
  /**
   * SIGSTOP to the postmaster and every backend (a server that hangs: connections stay open,
   * nothing answers), or SIGCONT to all of them again.
   */
  freeze(): void;
  thaw(): void;
}

export interface StandbyServer extends PostgresServer {
  /** Ends recovery (`pg_promote`): the standby becomes a primary that takes writes. */
  promote(): Promise<void>;
}

interface Toolchain {
  bin: string;
  /** The user the server runs as, when the tests run as root. */
  runAs: { uid: number; gid: number; name: string } | null;
}

const SEARCH_DIRS = ["/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"];

/** Why PostgreSQL tests cannot run here, or null when they can. */
export function postgresUnavailable(): string | null {
  try {
    toolchain();
    return null;
  } catch (err) {
    return errorMessage(err);
  }
}

let cachedToolchain: Toolchain | null = null;

function toolchain(): Toolchain {
  if (cachedToolchain) return cachedToolchain;
  const dirs = [process.env.COLONY_TEST_PG_BIN, ...SEARCH_DIRS].filter((d): d is string => !!d);
  const bin = dirs.find((d) => existsSync(join(d, "postgres")) && existsSync(join(d, "initdb")));
  if (!bin)
    throw new Error(`no PostgreSQL server binaries (looked in ${dirs.join(", ")}; install postgresql-15 or set COLONY_TEST_PG_BIN)`);
  let runAs: Toolchain["runAs"] = null;
  if (userInfo().uid === 0) {
    runAs = lookupUser("postgres") ?? lookupUser("nobody");
    if (!runAs) throw new Error("running as root, and neither a postgres nor a nobody user exists to run the server as");
    if (!Bun.which("setpriv")) throw new Error("running as root, and setpriv (util-linux) is missing to drop privileges");
  }
  cachedToolchain = { bin, runAs };
  return cachedToolchain;
}

function lookupUser(name: string): Toolchain["runAs"] {
  const r = Bun.spawnSync(["id", "-u", name]);
  const g = Bun.spawnSync(["id", "-g", name]);
  if (r.exitCode !== 0 || g.exitCode !== 0) return null;
  return { uid: Number(r.stdout.toString().trim()), gid: Number(g.stdout.toString().trim()), name };
}

/** The command, run as the server's user when we are root. */
function asServerUser(tc: Toolchain, argv: string[]): string[] {
  if (!tc.runAs) return argv;
  return ["setpriv", `--reuid=${tc.runAs.uid}`, `--regid=${tc.runAs.gid}`, "--clear-groups", "--", ...argv];
}

function giveToServerUser(tc: Toolchain, path: string): void {
  if (tc.runAs) chownSync(path, tc.runAs.uid, tc.runAs.gid);
}

function chownTree(tc: Toolchain, path: string): void {
  if (!tc.runAs) return;
  const r = Bun.spawnSync(["chown", "-R", `${tc.runAs.uid}:${tc.runAs.gid}`, path]);
  if (r.exitCode !== 0) throw new Error(`chown ${path} failed: ${r.stderr.toString()}`);
}

/** A template data directory, made once per machine and user (initdb takes about a second). */
function templateDir(tc: Toolchain): string {
  const version = Bun.spawnSync([join(tc.bin, "postgres"), "--version"])
    .stdout.toString()
    .trim()
    .replace(/\W+/g, "_");
  const root = join(tmpdir(), `colony-pg-template-${version}-${tc.runAs?.name ?? userInfo().username}`);
  if (existsSync(join(root, "PG_VERSION"))) return root;
  const staging = mkdtempSync(join(tmpdir(), "colony-pg-initdb-"));
  giveToServerUser(tc, staging);
  const data = join(staging, "data");
  const init = Bun.spawnSync(
    asServerUser(tc, [join(tc.bin, "initdb"), "-D", data, "-U", "colony", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]),
    { stdout: "pipe", stderr: "pipe" },
  );
  if (init.exitCode !== 0) throw new Error(`initdb failed: ${init.stderr.toString()}`);
  try {
    renameSync(data, root); // atomic: a concurrent maker loses the race harmlessly
  } catch {
    if (!existsSync(join(root, "PG_VERSION"))) throw new Error(`could not place the PostgreSQL template at ${root}`);
  }
  rmSync(staging, { recursive: true, force: true });
  return root;
}

/** The file in a server's directory naming the test process that started it. */
const OWNER_FILE = "owner.pid";

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Stops and deletes the servers of test processes that died without stopping them (SIGKILL, a
 * timeout: no exit handler runs). Each left a postmaster running and ~0.7 GB on disk; a day of
 * interrupted runs filled the disk. A directory without an owner file is being made right now, or
 * is not ours: left alone. The postmaster is signalled only if it still runs on that directory.
 */
export function reapOrphanedServers(): string[] {
  const reaped: string[] = [];
  const entries = [...new Set([tmpdir(), SERVER_ROOT])].flatMap((root) => readdirSync(root).map((name) => [root, name] as const));
  for (const [root, name] of entries) {
    if (!name.startsWith("colony-pg-") || name.startsWith("colony-pg-template-") || name.startsWith("colony-pg-initdb-")) continue;
    const base = join(root, name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(base, OWNER_FILE), "utf8").trim());
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || processAlive(owner)) continue;
    const data = join(base, "data");
    try {
      const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      const cmdline = readFileSync(`/proc/${postmaster}/cmdline`, "utf8");
      if (cmdline.includes("postgres") && cmdline.includes(data)) {
        process.kill(postmaster, "SIGQUIT"); // immediate shutdown: it is throwaway data
        const deadline = Date.now() + 5_000;
        while (processAlive(postmaster) && Date.now() < deadline) Bun.sleepSync(20);
      }
    } catch {
      // no postmaster.pid, or that process is gone: nothing runs there
    }
    rmSync(base, { recursive: true, force: true });
    reaped.push(base);
  }
  return reaped;
}

/** Running servers and their directories: killed and deleted when the test process exits. */
const liveServers = new Set<Subprocess>();
const liveDirs = new Set<string>();
atRunEnd(() => {
  for (const p of liveServers) p.kill("SIGKILL");
  for (const base of liveDirs) rmSync(base, { recursive: true, force: true });
});

export interface StartOptions {
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string | number>;
}

/**
 * Starts a server on a free loopback port. Durability settings are relaxed (fsync off): the tests
 * kill Colony replicas, never the test server's host, so a crash of PostgreSQL itself is not tested.
 */
export async function startPostgres(opts: StartOptions = {}): Promise<PostgresServer> {
  const tc = toolchain();
  const template = templateDir(tc);
  reapOrphanedServers();
  const base = newServerDir();
  const data = join(base, "data");
  const copy = Bun.spawnSync(["cp", "-a", template, data]);
  if (copy.exitCode !== 0) throw new Error(`copying the PostgreSQL template failed: ${copy.stderr.toString()}`);
  return runServer(tc, base, opts);
}

/**
 * Starts a streaming standby of `primary` (pg_basebackup -R: a base backup that follows the
 * primary's WAL; the template's pg_hba.conf lets loopback replication in). With `synchronous`, the
 * primary is then told to wait for it at every commit (synchronous_standby_names = '*'), so a
 * commit the primary acknowledged is on the standby too.
 */
export async function startStandby(primary: PostgresServer, opts: StartOptions & { synchronous?: boolean } = {}): Promise<StandbyServer> {
  const tc = toolchain();
  const base = newServerDir();
  const data = join(base, "data");
  chownTree(tc, base);
  const backup = Bun.spawnSync(
    asServerUser(tc, [
      join(tc.bin, "pg_basebackup"),
      ...["-h", "127.0.0.1", "-p", String(primary.port), "-U", "colony", "-D", data],
      ...["-R", "-X", "stream", "-c", "fast", "--no-sync"],
    ]),
    { stdout: "pipe", stderr: "pipe" },
  );
  if (backup.exitCode !== 0) throw new Error(`pg_basebackup failed: ${backup.stderr.toString()}`);
  const server = await runServer(tc, base, opts);
  if (opts.synchronous) {
    const admin = new SQL(primary.url, { max: 1 });
    try {
      await admin`ALTER SYSTEM SET synchronous_standby_names = '*'`;
      await admin`SELECT pg_reload_conf()`;
      // Synchronous once the standby streams and the primary has read the setting.
      const deadline = performance.now() + 10_000;
      while ((await admin`SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'`).length === 0) {
        if (performance.now() > deadline) throw new Error("the standby did not become synchronous within 10 s");
        await Bun.sleep(20);
      }
    } finally {
      await admin.close();
    }
  }
  return {
    ...server,
    async promote() {
      const admin = new SQL(server.url, { max: 1 });
      try {
        const [{ promoted }] = await admin`SELECT pg_promote(true, 30) AS promoted`;
        if (!promoted) throw new Error("the standby was not promoted within 30 s");
      } finally {
        await admin.close();
      }
    },
  };
}

/**
 * Where servers' data directories go: COLONY_TEST_PG_DIR, else /dev/shm when it is a writable
 * directory with 4 GiB free (a container's default 64 MB is not), else the temporary directory.
 */
export const SERVER_ROOT = ((): string => {
  if (process.env.COLONY_TEST_PG_DIR) return process.env.COLONY_TEST_PG_DIR;
  try {
    const shm = statfsSync("/dev/shm");
    if (shm.bavail * shm.bsize >= 4 * 2 ** 30) {
      rmSync(mkdtempSync(join("/dev/shm", "colony-probe-")), { recursive: true });
      return "/dev/shm";
    }
  } catch {
    // no /dev/shm, or not writable here
  }
  return tmpdir();
})();

/** A directory for one server, named for reapOrphanedServers (owner file) and deleted at exit. */
function newServerDir(): string {
  const base = mkdtempSync(join(SERVER_ROOT, "colony-pg-"));
  writeFileSync(join(base, OWNER_FILE), String(process.pid));
  liveDirs.add(base);
  return base;
}

/** Runs the server on `base`/data (made by the caller) on a free port. */
async function runServer(tc: Toolchain, base: string, opts: StartOptions): Promise<PostgresServer> {
  const data = join(base, "data");
  const socketDir = join(base, "sock");
  mkdirSync(socketDir);
  chownTree(tc, base);
  const port = await freePort();
  const settings: Record<string, string | number> = {
    listen_addresses: "127.0.0.1",
    port,
    unix_socket_directories: socketDir,
    fsync: "off",
    synchronous_commit: "off",
    full_page_writes: "off",
    max_connections: 300,
    shared_buffers: "128MB",
    // The default lets pg_wal grow to 1 GB per server; tests and benches need little of it.
    max_wal_size: "128MB",
    min_wal_size: "32MB",
    // Parallel queries' shared memory in the data directory (pg_dynshmem), deleted with it: the
    // default (POSIX segments in /dev/shm) left 1–2 MB of memory behind per server killed at exit.
    dynamic_shared_memory_type: "mmap",
    ...opts.settings,
  };
  const argv = [join(tc.bin, "postgres"), "-D", data, ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
  const url = `postgres://colony@127.0.0.1:${port}/postgres`;
  let proc: Subprocess<"ignore", "ignore", "pipe">;
  /** Starts the server process on the data directory and waits until it accepts connections. */
  async function launch(): Promise<void> {
    const started = Bun.spawn(asServerUser(tc, argv), { stdout: "ignore", stderr: "pipe" });
    proc = started;
    liveServers.add(started);
    let stderr = "";
    void (async () => {
      for await (const chunk of started.stderr) stderr += new TextDecoder().decode(chunk);
    })();
    await waitReady(url, started, () => stderr);
  }
  /** Ends the server process, keeping its data directory. */
  async function halt(signal: "SIGKILL" | "SIGINT" | "SIGQUIT"): Promise<void> {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill(signal);
      await proc.exited;
    }
    liveServers.delete(proc);
  }
  /** Sends `signal` to the postmaster and its children (backends, background workers). */
  function signalAll(signal: "SIGSTOP" | "SIGCONT"): void {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const children = Bun.spawnSync(["pgrep", "-P", String(proc.pid)])
      .stdout.toString()
      .split("\n")
      .filter(Boolean)
      .map(Number);
    for (const pid of [proc.pid, ...children]) {
      try {
        process.kill(pid, signal);
      } catch {
        // a backend that ended meanwhile
      }
    }
  }
  await launch();
  let counter = 0;

  return {
    url,
    port,
    async createDatabase(name = `colony_${process.pid}_${++counter}_${Date.now().toString(36)}`) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const admin = new SQL(url, { max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE ${name}`);
      } finally {
        await admin.close();
      }
      return `postgres://colony@127.0.0.1:${port}/${name}`;
    },
    async stop({ kill = false } = {}) {
      signalAll("SIGCONT"); // a frozen server does not shut down
      await halt(kill ? "SIGKILL" : "SIGINT"); // SIGINT: PostgreSQL's fast shutdown
      rmSync(base, { recursive: true, force: true });
      liveDirs.delete(base);
    },
    async pause({ mode = "fast" } = {}) {
      await halt(mode === "fast" ? "SIGINT" : "SIGQUIT"); // SIGQUIT: immediate shutdown
    },
    async resume() {
      if (proc.exitCode === null && proc.signalCode === null) throw new Error("the server is running");
      await launch();
    },
    freeze() {
      signalAll("SIGSTOP");
    },
    thaw() {
      signalAll("SIGCONT");
    },
  };
}

async function waitReady(url: string, proc: Subprocess, stderr: () => string): Promise<void> {
  const deadline = performance.now() + 30_000;
  let lastError = "";
  while (performance.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`PostgreSQL exited during start (${proc.exitCode ?? proc.signalCode}): ${stderr().slice(-2000)}`);
    }
    const sql = new SQL(url, { max: 1, connectionTimeout: 2 });
    try {
      await sql`select 1`;
      return;
    } catch (err) {
      lastError = errorMessage(err);
    } finally {
      await sql.close().catch(() => {});
    }
    await Bun.sleep(50);
  }
  proc.kill("SIGKILL");
  throw new Error(`PostgreSQL did not accept connections within 30 s: ${lastError}; ${stderr().slice(-2000)}`);
}

/** Rows of a Bun.SQL result with int8 and numeric columns as numbers, as bun:sqlite gives them. */
export function plainRows(result: { columns?: { name: string; type: number }[] | null } & Iterable<Record<string, unknown>>): any[] {
  const INT8 = 20;
  const NUMERIC = 1700;
  const numeric = new Set((result.columns ?? []).filter((c) => c.type === INT8 || c.type === NUMERIC).map((c) => c.name));
  return [...result].map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, numeric.has(k) && v !== null ? Number(v) : v])));
}

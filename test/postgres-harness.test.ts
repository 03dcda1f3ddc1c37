// The throwaway PostgreSQL server the PostgreSQL tests run against: it starts from a clean
// machine state, never as root, and hands out separate databases.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, readdirSync, readFileSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "./support/paths";
import { type PostgresServer, postgresUnavailable, reapOrphanedServers, SERVER_ROOT, startPostgres } from "./support/postgres";

const unavailable = postgresUnavailable();
if (unavailable) console.warn(`PostgreSQL tests skipped: ${unavailable}`);

/** A process that started a test server and waits forever; its server's directory and postmaster. */
async function processWithServer() {
  const child = Bun.spawn(
    [
      join(REPO_DIR, "node_modules/.bin/bun"),
      "-e",
      `const { startPostgres } = await import(${JSON.stringify(join(REPO_DIR, "test/support/postgres.ts"))});
       const s = await startPostgres(); console.log(s.port); await new Promise(() => {});`,
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const { value } = await child.stdout.getReader().read();
  expect(Number(new TextDecoder().decode(value).trim())).toBeGreaterThan(0);
  const base = readdirSync(SERVER_ROOT)
    .map((n) => join(SERVER_ROOT, n))
    .find(
      (d) =>
        d.includes("colony-pg-") && existsSync(join(d, "owner.pid")) && readFileSync(join(d, "owner.pid"), "utf8") === String(child.pid),
    );
  expect(base).toBeDefined();
  const postmaster = Number(readFileSync(join(base!, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  return { child, base: base!, postmaster };
}

describe.skipIf(unavailable !== null)("test PostgreSQL server", () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("runs as a non-root user and answers on loopback", async () => {
    const sql = new SQL(server.url, { max: 1 });
    try {
      const [{ pid, version }] = await sql`select pg_backend_pid() as pid, current_setting('server_version_num')::int as version`;
      expect(version).toBeGreaterThanOrEqual(150000);
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      expect(uid).toBeDefined();
      expect(Number(uid)).not.toBe(0);
    } finally {
      await sql.close();
    }
  });

  test("a server whose test process was killed is stopped and deleted by the next start", async () => {
    // A test process SIGKILLed (a timeout, an interrupted run) runs no exit handler: its server
    // kept running and its directory stayed, ~0.7 GB each, until the disk filled.
    const { child, base, postmaster } = await processWithServer();
    child.kill("SIGKILL");
    await child.exited;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive(postmaster)).toBe(true); // orphaned, still running

    expect(reapOrphanedServers()).toContain(base);
    expect(existsSync(base)).toBe(false);
    expect(alive(postmaster)).toBe(false);
    // the running server of this (live) process is left alone
    const sql = new SQL(server.url, { max: 1 });
    try {
      expect((await sql`select 1 as one`)[0].one).toBe(1);
    } finally {
      await sql.close();
    }
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`a test process ended by ${signal} (a cancelled CI job, Ctrl-C) stops and deletes its server itself`, async () => {
      // It ran no exit handler on a signal: its server kept running until the next run reaped it
      // (bench/postgres.bench.ts, stopped from outside, left one running).
      const { child, base, postmaster } = await processWithServer();
      child.kill(signal);
      await child.exited;
      const deadline = Date.now() + 5_000;
      const alive = () => {
        try {
          process.kill(postmaster, 0);
          return true;
        } catch {
          return false;
        }
      };
      while (alive() && Date.now() < deadline) await Bun.sleep(20);
      expect(alive()).toBe(false);
      expect(existsSync(base)).toBe(false);
    });
  }

  test("keeps its data in memory when /dev/shm has room, so deleting it at the end of a run is quick", async () => {
    // On a disk mounted with `discard`, deleting the ~0.7 GB of a PostgreSQL pass once written
    // back took 70-80 s at the run's end: the last test file's hook timed out (60 s).
    const shm = (() => {
      try {
        const s = statfsSync("/dev/shm");
        return s.bavail * s.bsize;
      } catch {
        return 0;
      }
    })();
    if (process.env.COLONY_TEST_PG_DIR) expect(SERVER_ROOT).toBe(process.env.COLONY_TEST_PG_DIR);
    else if (shm >= 4 * 2 ** 30) expect(SERVER_ROOT).toBe("/dev/shm");
    const sql = new SQL(server.url, { max: 1 });
    try {
      const [{ dir }] = await sql`select current_setting('data_directory') as dir`;
      expect(dir.startsWith(`${SERVER_ROOT}/colony-pg-`)).toBe(true);
    } finally {
      await sql.close();
    }
  });

  test("a server killed at the end of a run leaves no shared memory segment behind", async () => {
    // With PostgreSQL's default dynamic shared memory (POSIX segments in /dev/shm), each server
    // killed at exit left its segments there: 44 MB of memory after a day of runs.
    const segments = () => (existsSync("/dev/shm") ? readdirSync("/dev/shm").filter((n) => n.startsWith("PostgreSQL.")) : []);
    const before = new Set(segments());
    const killed = await startPostgres();
    const sql = new SQL(killed.url, { max: 1 });
    try {
      expect((await sql`select 1 as one`)[0].one).toBe(1);
    } finally {
      await sql.close();
    }
    await killed.stop({ kill: true });
    expect(segments().filter((n) => !before.has(n))).toEqual([]);
  });

  test("hands out separate, empty databases", async () => {
    const a = new SQL(await server.createDatabase(), { max: 1 });
    const b = new SQL(await server.createDatabase(), { max: 1 });
    try {
      await a`create table t (x int)`;
      await a`insert into t values (1)`;
      const [{ n }] = await b`select count(*)::int as n from pg_tables where schemaname = 'public'`;
      expect(n).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("round-robin test proxy", () => {
  test("alternates requests between upstreams and appends X-Forwarded-For", async () => {
    const upstream = (name: string) =>
      Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: (req) => Response.json({ name, xff: req.headers.get("x-forwarded-for") }),
      });
    const a = upstream("a");
    const b = upstream("b");
    const { startRoundRobinProxy } = await import("./support/round-robin-proxy");
    const proxy = startRoundRobinProxy([`http://127.0.0.1:${a.port}`, `http://127.0.0.1:${b.port}`]);
    try {
      const names: string[] = [];
      for (let i = 0; i < 4; i++) {
        const body = (await (await fetch(`${proxy.url}/x`, { headers: { "x-forwarded-for": "203.0.113.9" } })).json()) as {
          name: string;
          xff: string;
        };
        names.push(body.name);
        expect(body.xff).toBe("203.0.113.9, 127.0.0.1");
      }
      expect(names).toEqual(["a", "b", "a", "b"]);
      expect(proxy.sent).toEqual([2, 2]);
    } finally {
      proxy.stop();
      a.stop(true);
      b.stop(true);
    }
  });
});

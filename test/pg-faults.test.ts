// Faults of a colony on PostgreSQL, met by real replicas and a real server (docs/scale-out.md
// "Faults"): the server going away under two running replicas and coming back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { fingerprint, NORMALIZER_VERSION, type NormalizerVersion } from "../src/core/fingerprint";
import type { RunningColony } from "../src/serve";
import { spawnColony, startQuietColony, tempDir } from "./support/colony";
import { ColonyProcess, UNLIMITED_ENV } from "./support/colony-process";
import { type PostgresServer, plainRows, postgresUnavailable, startPostgres } from "./support/postgres";
import { answered, expectUnavailable, publish, statusOf, until } from "./support/faults";
import { agent, json, sampleTrail } from "./support/trails";
import { LEADER_NAMESPACE, PgJobClaims, taskKey } from "../src/store/postgres/seams";
import { SQL } from "bun";

/** Inserts `n` copies of a stored trail (new ids and merge keys), to give background work its size. */
async function copyTrail(db: SQL, trailId: string, n: number): Promise<void> {
  const columns = plainRows(
    await db`SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'trails' AND column_name NOT IN ('seq', 'id', 'merge_key')`,
  ).map((r) => `"${r.c}"`);
  await db.unsafe(
    `INSERT INTO trails (id, merge_key, ${columns.join(", ")})
     SELECT gen_random_uuid()::text, md5(random()::text), ${columns.join(", ")} FROM trails, generate_series(1, ${n}) WHERE id = $1`,
    [trailId],
  );
}

/** The backend holding a maintenance task's lead: pg_try_advisory_lock(namespace, key) shows as classid, objid (objsubid 2). */
async function leaderOf(db: SQL, task: string): Promise<{ pid: number; client_port: number } | undefined> {
  const rows = plainRows(
    await db`SELECT l.pid, a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted AND l.classid = ${LEADER_NAMESPACE}
        AND l.objid = ${taskKey(task) >>> 0}`,
  );
  return rows[0] as { pid: number; client_port: number } | undefined;
}

const why = postgresUnavailable();
if (why) console.warn(`PostgreSQL fault tests skipped: ${why}`);

function startReplica(url: string, dirs: string[], env: Record<string, string> = {}): Promise<RunningColony> {
  const dir = tempDir("colony-pgfault-");
  dirs.push(dir);
  return startQuietColony({ ...env, COLONY_DATABASE_URL: url, COLONY_DATA_DIR: dir });
}

describe.skipIf(why !== null)("PostgreSQL faults", () => {
  let server: PostgresServer;
  const replicas: RunningColony[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    // Commits acknowledged only once in the WAL, as in production: an immediate shutdown (a
    // crash) must not take acknowledged writes with it.
    server = await startPostgres({ settings: { synchronous_commit: "on" } });
  });

  afterAll(async () => {
    for (const r of replicas) await r.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await server?.stop();
  });

  for (const mode of ["fast", "immediate"] as const) {
    test(`the server stops (${mode} shutdown) under two replicas: 503 unavailable with Retry-After, /healthz answers; back by themselves, nothing acknowledged lost`, async () => {
      const url = await server.createDatabase();
      const a = await startReplica(url, dirs);
      replicas.push(a);
      const b = await startReplica(url, dirs);
      replicas.push(b);

      const acknowledged: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await publish(i % 2 ? b.url : a.url, `ConnectionResetError: [Errno 104] fault case ${i} before the outage`);
        expect(res.status).toBe(202);
        acknowledged.push(((await res.json()) as any).trail_id);
      }
      const draft = await fetch(`${a.url}/v1/drafts`, json(sampleTrail({ error: "OSError: draft made before the outage 77" })));
      expect(draft.status).toBe(201);
      const { draft_id } = (await draft.json()) as any;

      // Right after the publishes: the workers may be mid-batch. A fast shutdown ends the
      // connections with a notice; an immediate one is a crash (recovery at the next start).
      await server.pause({ mode });
      for (const r of [a, b]) {
        await expectUnavailable(await answered(publish(r.url, "BrokenPipeError: published during the outage")), "publish");
        const report = json({ protocol_version: "1.0", outcome: "worked" }, agent("agent-fault-2"));
        await expectUnavailable(await answered(fetch(`${r.url}/v1/trails/${acknowledged[0]}/outcomes`, report)), "outcome report");
        await expectUnavailable(await answered(fetch(`${r.url}/v1/drafts/${draft_id}/publish`, { method: "POST" })), "draft approval");
        await expectUnavailable(await answered(fetch(`${r.url}/v1/trails/${acknowledged[1]}`)), "status read");
        const unseen = fingerprint("NameError: name 'never_published_fault' is not defined");
        await expectUnavailable(await answered(fetch(`${r.url}/v1/trails/by-fingerprint/${unseen}`)), "lookup");
        const search = json({ protocol_version: "1.0", query: "ConnectionResetError fault case" });
        await expectUnavailable(await answered(fetch(`${r.url}/v1/search`, search)), "search");

        const ready = await answered(fetch(`${r.url}/readyz`));
        expect(ready.status).toBe(503);
        const readiness = (await ready.json()) as any;
        expect(readiness).toMatchObject({ status: "unavailable", backend: "postgres", checks: { kv: { ok: false } } });
        expect(readiness.checks.kv.detail).toContain("PostgreSQL");
        const health = await answered(fetch(`${r.url}/healthz`));
        expect(health.status).toBe(200);
        expect(((await health.json()) as any).backend).toBe("postgres");
      }

      const resumed = performance.now();
      await server.resume();
      for (const r of [a, b]) {
        await until("ready again", 10_000, async () => ((await fetch(`${r.url}/readyz`)).status === 200 ? true : undefined));
      }
      const readyAfterMs = performance.now() - resumed;
      console.log(`${mode}: ready ${readyAfterMs.toFixed(0)} ms after the server accepted connections again`);

      // Every trail acknowledged before the outage is indexed, each once, well within the 60 s lease:
      // a replica whose batch failed with the connections takes its own jobs again at once.
      for (const id of acknowledged)
        await until(`trail ${id} indexed`, 20_000, async () => ((await statusOf(a.url, id)) === "indexed" ? true : undefined));
      const check = new SQL(url, { max: 1 });
      try {
        const laid = plainRows(await check`SELECT trail_id, count(*) AS n FROM events WHERE kind = 'laid' GROUP BY trail_id`);
        expect(laid.filter((r) => acknowledged.includes(r.trail_id)).map((r) => r.n)).toEqual(acknowledged.map(() => 1));
        expect(plainRows(await check`SELECT count(*) AS n FROM jobs`)).toEqual([{ n: 0 }]);
      } finally {
        await check.close();
      }

      // The LISTEN connections are back: a lookup miss a caches ends once b indexes the trail, and
      // a finds it by search. From here a indexes nothing: what it learns of b's work came through the feeds.
      await a.service.worker!.stop();
      const error = "psycopg2.errors.AdminShutdown: terminating connection due to administrator command (after the outage)";
      const fp = fingerprint(error);
      expect((await fetch(`${a.url}/v1/trails/by-fingerprint/${fp}`)).status).toBe(404);
      expect((await fetch(`${a.url}/v1/trails/by-fingerprint/${fp}`)).status).toBe(404); // from a's cache
      const published = await publish(b.url, error, "agent-fault-3");
      expect(published.status).toBe(202);
      const { trail_id } = (await published.json()) as any;
      await until("indexed on b", 20_000, async () => ((await statusOf(b.url, trail_id)) === "indexed" ? true : undefined));
      await until("a's cached miss ends", 1_000, async () =>
        (await fetch(`${a.url}/v1/trails/by-fingerprint/${fp}`)).status === 200 ? true : undefined,
      );
      const found = await fetch(`${a.url}/v1/search`, json({ protocol_version: "1.0", query: error }));
      expect(((await found.json()) as any).results.map((r: any) => r.trail_id)).toContain(trail_id);

      // The writes refused during the outage go through now.
      const report = json({ protocol_version: "1.0", outcome: "worked" }, agent("agent-fault-2"));
      expect((await fetch(`${a.url}/v1/trails/${acknowledged[0]}/outcomes`, report)).status).toBe(202);
      expect((await fetch(`${b.url}/v1/drafts/${draft_id}/publish`, { method: "POST" })).status).toBeLessThan(300);
      for (const r of [a, b]) await r.stop();
    }, 90_000);
  }

  // Before, these started like a server not reachable yet: listening, unready, retrying every 5 s
  // for ever, the reason only in the log and /readyz.
  test("a COLONY_DATABASE_URL whose role or database the server does not have: exit 2 at start, one line naming it", async () => {
    const url = new URL(await server.createDatabase());
    for (const [change, reason] of [
      [(u: URL) => (u.username = "no_such_role"), 'role "no_such_role" does not exist'],
      [(u: URL) => (u.pathname = "/no_such_database"), 'database "no_such_database" does not exist'],
    ] as const) {
      const wrong = new URL(url);
      change(wrong);
      const p = spawnColony(["serve"], { COLONY_PORT: "0", COLONY_DATA_DIR: tempDir(), COLONY_DATABASE_URL: wrong.toString() });
      const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
      expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
      const description = `${wrong.username}@127.0.0.1:${server.port}${wrong.pathname}`;
      expect(stderr.trim()).toBe(
        `colony: COLONY_DATABASE_URL (${description}) is refused by the PostgreSQL server: ${reason}; ` +
          "fix the user, password or database name in COLONY_DATABASE_URL, or create them on the server",
      );
    }
  });

  test("a colony started while the server is down serves /healthz and 503s, keeps trying, and becomes ready when the server appears", async () => {
    const url = await server.createDatabase();
    await server.pause();
    let resumed = false;
    try {
      const colony = await startReplica(url, dirs);
      replicas.push(colony);
      const health = await answered(fetch(`${colony.url}/healthz`));
      expect(health.status).toBe(200);
      expect(((await health.json()) as any).backend).toBe("postgres");
      const ready = await answered(fetch(`${colony.url}/readyz`));
      expect(ready.status).toBe(503);
      const readiness = (await ready.json()) as any;
      expect(readiness).toMatchObject({ status: "unavailable", backend: "postgres", checks: { kv: { ok: false } } });
      expect(readiness.checks.kv.detail).toContain("PostgreSQL did not open");
      await expectUnavailable(await answered(publish(colony.url, "TimeoutError: published before the database started")), "publish");
      const search = json({ protocol_version: "1.0", query: "TimeoutError" });
      await expectUnavailable(await answered(fetch(`${colony.url}/v1/search`, search)), "search");
      const fp = fingerprint("TimeoutError: published before the database started");
      await expectUnavailable(await answered(fetch(`${colony.url}/v1/trails/by-fingerprint/${fp}`)), "lookup");
      await Bun.sleep(1_500); // a few attempts fail meanwhile (backoff from 0.25 s)

      await server.resume();
      resumed = true;
      const since = performance.now();
      await until("ready once the server is up", 15_000, async () =>
        (await fetch(`${colony.url}/readyz`)).status === 200 ? true : undefined,
      );
      console.log(`ready ${(performance.now() - since).toFixed(0)} ms after the server accepted connections`);
      const res = await publish(colony.url, "TimeoutError: published once the database started");
      expect(res.status).toBe(202);
      const { trail_id } = (await res.json()) as any;
      await until("indexed", 20_000, async () => ((await statusOf(colony.url, trail_id)) === "indexed" ? true : undefined));
    } finally {
      if (!resumed) await server.resume();
    }
  }, 60_000);
});

describe.skipIf(why !== null)("job leases", () => {
  let server: PostgresServer;
  const dirs: string[] = [];
  let colony: RunningColony | null = null;

  beforeAll(async () => {
    server = await startPostgres();
  });

  afterAll(async () => {
    await colony?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await server?.stop();
  });

  test("a batch slower than the lease keeps its jobs: the worker renews their leases while it works", async () => {
    // Leases of 1 s; the real model, slowed to 3 s per call, makes the batch outlast three leases.
    // Before renewal, another replica's claim took the jobs after 1 s and enriched them a second time.
    const url = await server.createDatabase();
    colony = await startReplica(url, dirs, { COLONY_JOB_LEASE_MS: "1000" });
    const embedder = colony.subsystems.embedder!;
    const embed = embedder.embed.bind(embedder);
    embedder.embed = async (texts) => {
      await Bun.sleep(3_000);
      return embed(texts);
    };
    const db = new SQL(url, { max: 2 });
    const other = new PgJobClaims(db, 1_000);
    try {
      const res = await publish(colony.url, "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379 (lease test)");
      const ids = [((await res.json()) as any).trail_id as string];
      await until("the worker holds the job", 10_000, async () => {
        const rows = plainRows(await db`SELECT count(*) AS n FROM jobs WHERE leased_by IS NOT NULL AND leased_until > ${Date.now()}`);
        return rows[0].n === 1 ? true : undefined;
      });
      const stolen: number[] = [];
      const watchUntil = performance.now() + 2_500; // 2.5 leases into the batch
      while (performance.now() < watchUntil) {
        for (const j of await other.claim(10)) stolen.push(j.trailSeq);
        await Bun.sleep(100);
      }
      expect(stolen).toEqual([]);
      await until("indexed", 20_000, async () => {
        const states = await Promise.all(ids.map((id) => statusOf(colony!.url, id)));
        return states.every((s) => s === "indexed") ? true : undefined;
      });
      const laid = plainRows(await db`SELECT count(*) AS n FROM events WHERE kind = 'laid' AND trail_id = ANY(${ids}::text[])`);
      expect(laid).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe.skipIf(why !== null)("a replica killed with SIGKILL while another runs", () => {
  let server: PostgresServer;
  const procs: ColonyProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  });

  afterAll(async () => {
    for (const p of procs) await p.stop("SIGKILL");
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await server?.stop();
  });

  async function replica(url: string, env: Record<string, string> = {}): Promise<ColonyProcess> {
    const dir = tempDir("colony-pgkill-");
    dirs.push(dir);
    const proc = await ColonyProcess.create({
      dataDir: dir,
      mode: "source",
      env: { ...UNLIMITED_ENV, COLONY_LOG_LEVEL: "error", COLONY_DATABASE_URL: url, ...env },
    });
    procs.push(proc);
    await proc.start(60_000);
    return proc;
  }

  test("mid-enrichment: the other replica takes its jobs once the lease runs out; every acknowledged trail is indexed exactly once", async () => {
    const url = await server.createDatabase();
    const lease = { COLONY_JOB_LEASE_MS: "2000" };
    const [a, b] = await Promise.all([replica(url, lease), replica(url, lease)]);
    const db = new SQL(url, { max: 2 });
    try {
      const heldBy = async (pid: number) =>
        plainRows(await db`SELECT trail_seq FROM jobs WHERE leased_by LIKE ${`%:${pid}:%`} AND leased_until > ${Date.now()}`).map(
          (r) => r.trail_seq as number,
        );
      // Publishes through a, a few at a time, while the test watches for a moment a holds jobs.
      const acknowledged: string[] = [];
      let next = 0;
      const publisher = async () => {
        while (next < 120 && a.alive) {
          const i = next++;
          const res = await publish(a.base, `sqlalchemy.exc.OperationalError: (psycopg2) lost connection ${i} during the kill test`).catch(
            () => null,
          );
          if (res?.status === 202) acknowledged.push(((await res.json()) as any).trail_id);
        }
      };
      const publishing = Promise.all([publisher(), publisher(), publisher(), publisher()]);
      let held: number[] = [];
      const deadline = performance.now() + 30_000;
      await until("20 publishes acknowledged", 30_000, async () => (acknowledged.length >= 20 ? true : undefined));
      while (held.length === 0) {
        if (performance.now() > deadline) throw new Error("replica a never held a job");
        await Bun.sleep(Math.random() * 40);
        process.kill(a.pid!, "SIGSTOP"); // frozen: what it holds now, it holds when killed
        held = await heldBy(a.pid!);
        if (held.length === 0) process.kill(a.pid!, "SIGCONT");
      }
      const killedAt = performance.now();
      await a.stop("SIGKILL");
      await publishing;
      console.log(`killed a holding ${held.length} jobs; ${acknowledged.length} publishes acknowledged`);

      await until("b finishes a's jobs", 30_000, async () => {
        const [{ n }] = plainRows(await db`SELECT count(*) AS n FROM jobs WHERE trail_seq = ANY(${held}::bigint[])`);
        return n === 0 ? true : undefined;
      });
      console.log(`b finished the killed replica's jobs ${(performance.now() - killedAt).toFixed(0)} ms after the kill (lease 2 s)`);
      await until("every acknowledged trail indexed", 30_000, async () => {
        const rows = plainRows(await db`SELECT count(*) AS n FROM trails WHERE id = ANY(${acknowledged}::text[]) AND status = 'indexed'`);
        return rows[0].n === acknowledged.length ? true : undefined;
      });
      const laid = plainRows(
        await db`SELECT trail_id, count(*) AS n FROM events WHERE kind = 'laid' AND trail_id = ANY(${acknowledged}::text[]) GROUP BY trail_id`,
      );
      expect(laid.length).toBe(acknowledged.length);
      expect(laid.filter((r) => r.n !== 1)).toEqual([]);
      expect(plainRows(await db`SELECT count(*) AS n FROM jobs`)).toEqual([{ n: 0 }]);
      expect((await b.fetch("/readyz")).status).toBe(200);
    } finally {
      await db.close();
    }
  }, 90_000);

  test("leader handover: the replica re-embedding as leader is killed; the other takes the lead and finishes", async () => {
    const url = await server.createDatabase();
    const first = await replica(url);
    const res = await publish(first.base, "ssl.SSLError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed (leader test)");
    const { trail_id } = (await res.json()) as any;
    await until("indexed", 20_000, async () => ((await statusOf(first.base, trail_id)) === "indexed" ? true : undefined));
    await first.stop();
    const db = new SQL(url, { max: 2 });
    try {
      // Many indexed trails (copies of that one) and a pending re-embedding, as after a model change.
      await copyTrail(db, trail_id, 3000);
      await db`INSERT INTO kv (key, value) VALUES ('vectors.reindex_pending', '1') ON CONFLICT (key) DO UPDATE SET value = '1'`;
      const holder = () => leaderOf(db, "reindex");
      const a = await replica(url);
      const leader = await until("a leads the re-embedding", 20_000, holder);
      const b = await replica(url);
      expect((await holder())?.pid).toBe(leader.pid); // b asked, and waits
      const killedAt = performance.now();
      await a.stop("SIGKILL");
      const next = await until("b takes the lead", 20_000, async () => {
        const h = await holder();
        return h && h.pid !== leader.pid ? h : undefined;
      });
      const tookOverMs = performance.now() - killedAt;
      await until("the re-embedding finished", 60_000, async () => {
        const pending = await db`SELECT 1 FROM kv WHERE key = 'vectors.reindex_pending'`;
        return pending.length === 0 ? true : undefined;
      });
      console.log(
        `b (backend ${next.pid}) took the lead ${tookOverMs.toFixed(0)} ms after the leader was killed; done ${(performance.now() - killedAt).toFixed(0)} ms after`,
      );
      expect(plainRows(await db`SELECT count(*) AS n FROM vectors`)).toEqual([{ n: 3001 }]);
      expect((await b.fetch("/readyz")).status).toBe(200);
    } finally {
      await db.close();
    }
  }, 120_000);

  test("leader handover: the replica re-fingerprinting as leader is killed; the other takes over and finishes", async () => {
    // A rolling upgrade to a release with a new normalizer: the first new replica leads the
    // re-fingerprinting and is killed; one started meanwhile had asked and been refused. It used to
    // give up for good (only a restart resumed the work); now it asks again and finishes.
    const url = await server.createDatabase();
    const error = "psycopg2.OperationalError: could not connect to server: Connection refused (re-fingerprint handover)";
    const first = await replica(url);
    const { trail_id } = (await (await publish(first.base, error)).json()) as any;
    await until("indexed", 20_000, async () => ((await statusOf(first.base, trail_id)) === "indexed" ? true : undefined));
    await first.stop();
    const db = new SQL(url, { max: 2 });
    try {
      // Many trails (copies of that one) left by the previous release's normalizer.
      const older = (NORMALIZER_VERSION - 1) as NormalizerVersion;
      // As many as keep the leader busy well past the kill (each also gets the older versions' aliases).
      await copyTrail(db, trail_id, 6_000);
      await db`UPDATE trails SET normalizer_version = ${older}, fingerprint = ${fingerprint(error, older)}`;
      const leftBehind = async () =>
        plainRows(await db`SELECT count(*) AS n FROM trails WHERE normalizer_version < ${NORMALIZER_VERSION}`)[0].n;
      const holder = () => leaderOf(db, "refingerprint");
      const a = await replica(url);
      const leader = await until("a leads the re-fingerprinting", 20_000, holder);
      const b = await replica(url);
      expect((await holder())?.pid).toBe(leader.pid); // b asked and was refused
      await a.stop("SIGKILL");
      const remaining = await leftBehind();
      expect(remaining).toBeGreaterThan(0); // killed midway
      const killedAt = performance.now();
      // A bound for a hang, not a speed: 6,000 trails took b 11 s on an idle machine and over 60 s
      // with the suite's lanes side by side and other work on the same 2 cores.
      await until("b takes over and finishes", 100_000, async () => ((await leftBehind()) === 0 ? true : undefined));
      console.log(
        `b finished the re-fingerprinting (${remaining} trails left by the killed leader) ${(performance.now() - killedAt).toFixed(0)} ms after the kill`,
      );
      expect(plainRows(await db`SELECT count(*) AS n FROM trails WHERE fingerprint <> ${fingerprint(error)}`)).toEqual([{ n: 0 }]);
      const answer = await b.fetch(`/v1/trails/by-fingerprint/${fingerprint(error, older)}`);
      expect(answer.status).toBe(200); // the old fingerprint resolves through its alias
      await answer.body?.cancel();
    } finally {
      await db.close();
    }
  }, 150_000);
});

// PostgreSQL failover (docs/scale-out.md "High availability"): a colony on a two-host URL
// (primary, standby; target_session_attrs=read-write) under a steady stream of publishes; the
// primary is killed (immediate shutdown) and the standby promoted. Per round:
//   - ready_ms: from pg_promote() returning to the colony's /readyz answering 200 (polled every 10 ms);
//   - acknowledged: publishes answered 202 before the crash; lost: those the new primary does not
//     have (GET /v1/trails/{id} 404), with synchronous replication (synchronous_standby_names='*')
//     and with asynchronous replication;
//   - refused: publishes answered 503 unavailable between the crash and the colony being ready
//     (none may be 500).
// Servers are throwaway (test/support/postgres.ts; fsync off, synchronous_commit on).
// Sizes: BENCH_FAILOVER_ROUNDS (per mode, default 5; --quick 2), BENCH_FAILOVER_CLIENTS
// (concurrent publishers, default 4). Run: node_modules/.bin/bun bench/pg-failover.bench.ts [--quick]
import { loadavg } from "node:os";
import { postgresUnavailable, startPostgres, startStandby } from "../test/support/postgres";
import { sampleTrail } from "../test/support/trails";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { f1, Figures, log, QUICK, summarize } from "./lib/report";

const ROUNDS = Number(process.env.BENCH_FAILOVER_ROUNDS ?? (QUICK ? "2" : "5"));
const CLIENTS = Number(process.env.BENCH_FAILOVER_CLIENTS ?? "4");
/** Publishing before the crash. */
const BEFORE_MS = 1_500;

const why = postgresUnavailable();
if (why) {
  log(`pg-failover: skipped (${why})`);
  process.exit(0);
}

interface Round {
  ready_ms: number;
  acknowledged: number;
  lost: number;
  refused: number;
  other_errors: number;
}

async function round(synchronous: boolean, n: number): Promise<Round> {
  const primary = await startPostgres({ settings: { synchronous_commit: "on" } });
  const dir = benchDir("colony-failover-");
  try {
    const database = new URL(await primary.createDatabase()).pathname;
    const standby = await startStandby(primary, { synchronous, settings: { synchronous_commit: "on" } });
    try {
      const url = `postgres://colony@127.0.0.1:${primary.port},127.0.0.1:${standby.port}${database}?target_session_attrs=read-write`;
      const colony = await inProcessColony(dir, { COLONY_DATABASE_URL: url });
      try {
        const acknowledged: string[] = [];
        let crashed = false;
        let stop = false;
        let refused = 0;
        let otherErrors = 0;
        let i = 0;
        const publisher = async (c: number) => {
          while (!stop) {
            const error = `ConnectionResetError: failover round ${synchronous ? "s" : "a"}${n} client ${c} publish ${i++}`;
            const res = await fetch(`${colony.url}/v1/trails`, {
              method: "POST",
              headers: { "Content-Type": "application/json", "X-Colony-Agent": `failover-${c}` },
              body: JSON.stringify(sampleTrail({ error, commands: [`pip install failover-fix==${i}`] })),
            }).catch(() => null);
            if (res?.status === 202) {
              const { trail_id } = (await res.json()) as { trail_id: string };
              if (!crashed) acknowledged.push(trail_id);
            } else if (res?.status === 503) {
              refused++;
              await res.text();
              await Bun.sleep(5);
            } else {
              otherErrors++;
              await res?.text();
            }
          }
        };
        const publishers = Array.from({ length: CLIENTS }, (_, c) => publisher(c));
        await Bun.sleep(BEFORE_MS);
        // Anything answered 202 after this point may have been committed after the crash began:
        // only what was acknowledged before it is counted.
        crashed = true;
        await primary.pause({ mode: "immediate" });
        await Bun.sleep(200);
        await standby.promote();
        const promoted = performance.now();
        while ((await fetch(`${colony.url}/readyz`)).status !== 200) {
          if (performance.now() - promoted > 30_000) throw new Error("not ready within 30 s of the promotion");
          await Bun.sleep(10);
        }
        const readyMs = performance.now() - promoted;
        stop = true;
        await Promise.all(publishers);
        let lost = 0;
        for (const id of acknowledged) if ((await fetch(`${colony.url}/v1/trails/${id}`)).status === 404) lost++;
        return { ready_ms: readyMs, acknowledged: acknowledged.length, lost, refused, other_errors: otherErrors };
      } finally {
        await colony.stop();
      }
    } finally {
      await standby.stop();
    }
  } finally {
    await primary.stop();
    removeDir(dir);
  }
}

const figures = new Figures("pg-failover");
log(
  `pg-failover: ${ROUNDS} rounds per mode, ${CLIENTS} publishers; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
for (const synchronous of [true, false]) {
  const mode = synchronous ? "synchronous" : "asynchronous";
  const rounds: Round[] = [];
  for (let n = 0; n < ROUNDS; n++) {
    const r = await round(synchronous, n);
    rounds.push(r);
    log(
      `  ${mode} round ${n + 1}: ready ${f1(r.ready_ms)} ms after pg_promote; acknowledged ${r.acknowledged}, lost ${r.lost}; ` +
        `503 meanwhile ${r.refused}, other answers ${r.other_errors}`,
    );
  }
  const ready = summarize(rounds.map((r) => r.ready_ms));
  const acknowledged = rounds.reduce((s, r) => s + r.acknowledged, 0);
  const lost = rounds.reduce((s, r) => s + r.lost, 0);
  log(
    `${mode}: promote -> ready p50 ${f1(ready.p50)} ms, max ${f1(ready.max)} ms; lost ${lost} of ${acknowledged} acknowledged; ` +
      `non-503 failures ${rounds.reduce((s, r) => s + r.other_errors, 0)}`,
  );
  figures.set(mode, { rounds, ready_ms: ready, acknowledged, lost });
}
figures.set("load_average_end", loadavg());
figures.write();

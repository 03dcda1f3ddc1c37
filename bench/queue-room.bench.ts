// What counting the publishes in flight costs a publish on PostgreSQL (bench/RESULTS.md, session 17):
// the queue part of a publish's transaction as the store runs it, then the trail's and job's insert,
// with the jobs counted alone (before: `JobQueue.depth`) and with the publishes in flight
// (`JobQueue.depthForInsert`), far from COLONY_MAX_QUEUE and within 64 of it (publishes take
// turns). A throwaway server (test/support/postgres.ts) with durable commits (fsync,
// synchronous_commit and full_page_writes on: the tests' servers have them off, and then taking
// turns costs no disk flush). N clients, each a loop of one transaction at a time on a pool of 32,
// for BENCH_QUEUE_ROOM_SECONDS (default 3; --quick 1); the kinds alternate for
// BENCH_QUEUE_ROOM_ROUNDS rounds (default 3; --quick 1), the median shown; clients per run
// BENCH_QUEUE_ROOM_CLIENTS (default 1,8,16). 1,000 jobs wait throughout (deleted as they come).
//   node_modules/.bin/bun bench/run.ts --only queue-room [--quick]
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { openPostgresStore } from "../src/store/postgres/store";
import type { Transaction } from "../src/store/ports";
import { postgresUnavailable, startPostgres } from "../test/support/postgres";
import { queuedTrailRow } from "../test/support/trails";
import { closedLoopRounds } from "./lib/closed-loop";
import { Figures, log, QUICK } from "./lib/report";

const SECONDS = Number(process.env.BENCH_QUEUE_ROOM_SECONDS ?? (QUICK ? 1 : 3));
const ROUNDS = Number(process.env.BENCH_QUEUE_ROOM_ROUNDS ?? (QUICK ? 1 : 3));
const CLIENTS = (process.env.BENCH_QUEUE_ROOM_CLIENTS ?? "1,8,16").split(",").map(Number);
const WAITING = 1000;
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const unavailable = postgresUnavailable();
if (unavailable) {
  log(`queue-room benchmark skipped: ${unavailable}`);
  process.exit(0);
}

const server = await startPostgres({ settings: { fsync: "on", synchronous_commit: "on", full_page_writes: "on" } });
const store = await openPostgresStore({ url: await server.createDatabase(), poolSize: 32 });
const trail = { environment: { os: "linux", runtime: { name: "python" } } } as any;
let n = 0;
const newTrail = () => queuedTrailRow(++n, trail, "bench");

type Count = (tx: Transaction) => Promise<number>;
const kinds: Record<string, Count> = {
  "jobs counted alone (before)": (tx) => tx.jobs.depth(),
  "with publishes in flight, far from the limit": (tx) => tx.jobs.depthForInsert(1_000_000),
  "with publishes in flight, within 64 of it (turns)": (tx) => tx.jobs.depthForInsert(WAITING + 10),
};

try {
  for (let i = 0; i < WAITING; i++) await store.trails.insertQueued(newTrail());
  const figures = new Figures("queue-room");
  log(`PostgreSQL, durable commits, ${WAITING} jobs waiting; ${cpus().length} cores (${cpus()[0]?.model}), load ${loadavg()}`);
  const loops = Object.fromEntries(
    Object.entries(kinds).map(([name, count]) => [
      name,
      {
        timed: () =>
          store.transaction(async (tx) => {
            await count(tx);
            return (await tx.trails.insertQueued(newTrail())).seq;
          }),
        // The queue stays at WAITING.
        after: async (_client: number, seq: number) => {
          await store.trails.delete(seq);
        },
      },
    ]),
  );
  await closedLoopRounds({ clients: CLIENTS, rounds: ROUNDS, seconds: SECONDS, kinds: loops, unit: "publishes", figures });
  figures.write();
} finally {
  await store.close();
  await server.stop();
}

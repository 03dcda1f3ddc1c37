// What holding an address's uncounted reports to the day's bound costs a report on PostgreSQL
// (bench/RESULTS.md, session 18): an uncounted report's transaction as reportOutcome runs it (the
// trail held FOR KEY SHARE, the address's uncounted reports counted, the agent and the hourly
// counters touched, the report inserted), through the store's ports, so the same script measures
// the code it is run with (before: one count; after, below the bound: a count, the address's
// advisory lock, a second count). A throwaway server (test/support/postgres.ts) with durable
// commits. N clients, each a loop of one transaction at a time on a pool of 32, for
// BENCH_REPORT_BOUND_SECONDS (default 3; --quick 1); the kinds alternate for
// BENCH_REPORT_BOUND_ROUNDS rounds (default 3; --quick 1), the median shown; clients per run
// BENCH_REPORT_BOUND_CLIENTS (default 1,8,16). Kinds: every client reporting from an address of its
// own (no two reports wait for each other), and every client from one address (below the bound
// they take turns), each address with 100 uncounted reports kept today (deleted as they come, so
// the count stays there).
//   node_modules/.bin/bun bench/run.ts --only report-bound [--quick]
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { UNCOUNTED_KEPT_PER_CLIENT_PER_DAY, utcDayStart } from "../src/core/outcome-counting";
import { openPostgresStore } from "../src/store/postgres/store";
import { postgresUnavailable, startPostgres } from "../test/support/postgres";
import { queuedTrailRow } from "../test/support/trails";
import { closedLoopRounds } from "./lib/closed-loop";
import { Figures, log, QUICK } from "./lib/report";

const SECONDS = Number(process.env.BENCH_REPORT_BOUND_SECONDS ?? (QUICK ? 1 : 3));
const ROUNDS = Number(process.env.BENCH_REPORT_BOUND_ROUNDS ?? (QUICK ? 1 : 3));
const CLIENTS = (process.env.BENCH_REPORT_BOUND_CLIENTS ?? "1,8,16").split(",").map(Number);
const KEPT = 100;
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const unavailable = postgresUnavailable();
if (unavailable) {
  log(`report-bound benchmark skipped: ${unavailable}`);
  process.exit(0);
}

const server = await startPostgres({ settings: { fsync: "on", synchronous_commit: "on", full_page_writes: "on" } });
const store = await openPostgresStore({ url: await server.createDatabase(), poolSize: 32 });
const trail = { environment: { os: "linux", runtime: { name: "python" } } } as any;
const { seq } = await store.trails.insertQueued(queuedTrailRow(1, trail, "bench"));
await store.sql`UPDATE trails SET status = 'indexed' WHERE seq = ${seq}`;
await store.sql`DELETE FROM jobs`;

const addressOf: Record<string, (client: number) => string> = {
  "an address each": (client) => `bench-address-${client}`,
  "one address": () => "bench-address-shared",
};
const addresses = [...new Set([...Array(Math.max(...CLIENTS)).keys()].flatMap((c) => Object.values(addressOf).map((of) => of(c))))];
const now = Date.now();
for (const address of addresses) {
  await store.sql`INSERT INTO outcomes (trail_seq, agent, client, outcome, counted, notes, model, at, content_rules_version)
    SELECT ${seq}, 'bench-kept', ${address}, 'not_applicable', false, NULL, NULL, ${now}, 0 FROM generate_series(1, ${KEPT})`;
}

try {
  const figures = new Figures("report-bound");
  log(
    `PostgreSQL, durable commits, ${KEPT} uncounted reports kept per address; ${cpus().length} cores (${cpus()[0]?.model}), load ${loadavg()}`,
  );
  const kinds = Object.fromEntries(
    Object.entries(addressOf).map(([name, of]) => [
      name,
      {
        timed: async (client: number) => {
          const address = of(client);
          const agent = `bench-agent-${client}`;
          const at = Date.now();
          await store.transaction(async (tx) => {
            await tx.outcomes.holdTrail(seq, false);
            const kept = await tx.outcomes.uncountedForClientSince(address, utcDayStart(at), UNCOUNTED_KEPT_PER_CLIENT_PER_DAY);
            if (kept >= UNCOUNTED_KEPT_PER_CLIENT_PER_DAY) throw new Error("past the bound: the bench measures reports below it");
            await tx.stats.touchAgent(agent, at);
            await tx.stats.addOutcome(at, 0);
            await tx.stats.bump("outcomes", at);
            await tx.outcomes.insert({
              trailSeq: seq,
              agent,
              client: address,
              outcome: "not_applicable",
              counted: false,
              notes: null,
              model: null,
              at,
              contentRulesVersion: 0,
            });
          });
        },
        // The address stays at KEPT.
        after: async (client: number) => {
          await store.sql`DELETE FROM outcomes WHERE agent = ${`bench-agent-${client}`}`;
        },
      },
    ]),
  );
  await closedLoopRounds({ clients: CLIENTS, rounds: ROUNDS, seconds: SECONDS, kinds, unit: "reports", figures });
  figures.write();
} finally {
  await store.close();
  await server.stop();
}

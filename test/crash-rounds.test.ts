// Crash safety, short run of the harness in test/support/crash-harness.ts (the full run is
// bench/crash.bench.ts): the built binary under a mixed workload from concurrent clients, killed
// with SIGKILL at seeded random moments and restarted on the same data directory; then SIGTERM in
// the middle of a burst.
import { expect, test } from "bun:test";
import { UNCOUNTED_KEPT_PER_CLIENT_PER_DAY } from "../src/core/outcome-counting";
import { runCrashHarness, sigtermBurst } from "./support/crash-harness";

test("3 rounds of SIGKILL under a mixed workload lose nothing acknowledged and keep the store consistent", async () => {
  const report = await runCrashHarness({ rounds: 3, seed: 42, clients: 6, minRunMs: 400, maxRunMs: 1500 });
  expect(report.lost).toEqual([]);
  expect(report.violations).toEqual([]);
  // The workload really ran: every kind of write was acknowledged before some kill.
  expect(report.acknowledged.publishes).toBeGreaterThan(50);
  expect(report.acknowledged.outcomes).toBeGreaterThan(0);
  expect(report.acknowledged.drafts).toBeGreaterThan(0);
  expect(report.acknowledged.draftPublishes + report.acknowledged.discards).toBeGreaterThan(0);
  expect(report.final.indexed).toBeGreaterThan(0);
}, 60_000);

// All the harness's clients share one address, whose uncounted reports are stored up to a daily
// bound and answered the same past it (docs/ranking-and-strength.md): acknowledged is not stored
// there. The harness took every acknowledged report for stored, and failed under load (regression).
test("past the address's daily bound of uncounted reports, what the colony stores is still all it must keep", async () => {
  const report = await runCrashHarness({
    rounds: 2,
    seed: 7,
    clients: 6,
    minRunMs: 3000,
    maxRunMs: 3500,
    killAfterUncountedOver: UNCOUNTED_KEPT_PER_CLIENT_PER_DAY,
  });
  expect(report.uncountedOutcomes).toBeGreaterThan(UNCOUNTED_KEPT_PER_CLIENT_PER_DAY);
  expect(report.lost).toEqual([]);
  expect(report.violations).toEqual([]);
}, 120_000);

test("SIGTERM mid-burst: requests sent before the signal all get proper answers, exit 0, the queue resumes", async () => {
  const r = await sigtermBurst({ clients: 16, seed: 7, burstMs: 600, minStarted: 51 });
  expect(r.exitCode).toBe(0);
  expect(r.improper).toEqual([]);
  expect(r.startedBefore).toBeGreaterThan(50);
  expect(r.failedBefore).toBe(0);
  expect(r.answeredBefore).toBe(r.startedBefore);
  expect(r.acknowledged).toBeGreaterThan(0);
  expect(r.finalAfterRestart).toBe(r.acknowledged);
}, 60_000);

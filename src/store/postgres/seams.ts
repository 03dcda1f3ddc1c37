// The seams (../seams.ts) of replicas sharing one PostgreSQL database, where they must be shared:
// enrichment jobs are claimed with FOR UPDATE SKIP LOCKED under a lease (a replica that dies
// mid-job loses nothing: the lease runs out and another replica takes the job), and periodic
// maintenance runs on one replica at a time under a session advisory lock (released by the server
// when the holder's connection ends, so a dead leader is replaced at the next round).
// Quotas and the fingerprint feed stay per process for now (docs/scale-out.md says what that means).
import type { SQL } from "bun";
import { randomUUID } from "node:crypto";
import { LocalChangeFeed, InMemoryQuotaCounters } from "../single-process";
import type { ClaimedJob, JobClaims, Leadership, Seams } from "../seams";
import { unavailable } from "./failures";
import { num } from "./repositories";

/** How long a claimed job stays this worker's without being finished or released. */
export const JOB_LEASE_MS = 60_000;

export class PgJobClaims implements JobClaims {
  /** Names this process in the jobs it holds (for the operator reading the table). */
  readonly owner = randomUUID();

  constructor(
    private readonly sql: SQL,
    private readonly now: () => number = Date.now,
    private readonly leaseMs = JOB_LEASE_MS,
  ) {}

  /** Oldest waiting jobs nobody holds (or whose holder's lease ran out), each to one worker only. */
  async claim(limit: number): Promise<ClaimedJob[]> {
    const now = this.now();
    const rows = await this.sql`
      UPDATE jobs SET leased_until = ${now + this.leaseMs}, leased_by = ${this.owner}
      WHERE trail_seq IN (
        SELECT trail_seq FROM jobs WHERE leased_until IS NULL OR leased_until < ${now}
        ORDER BY trail_seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
      )
      RETURNING trail_seq, attempts`.catch(unavailable);
    return rows
      .map((r: any) => ({ trailSeq: num(r.trail_seq), attempts: r.attempts }))
      .sort((a: ClaimedJob, b: ClaimedJob) => a.trailSeq - b.trailSeq);
  }

  async release(trailSeqs: number[]): Promise<void> {
    if (trailSeqs.length === 0) return;
    await this.sql`UPDATE jobs SET leased_until = NULL, leased_by = NULL
      WHERE trail_seq = ANY(${trailSeqs}::bigint[]) AND leased_by = ${this.owner}`.catch(unavailable);
  }
}

/** Advisory lock keys per task name: a stable 32-bit hash under one 32-bit namespace. */
const LEADER_NAMESPACE = 0x636f6c6e;
function taskKey(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h, 31) + name.charCodeAt(i)) | 0;
  return h;
}

export class AdvisoryLockLeadership implements Leadership {
  constructor(private readonly sql: SQL) {}

  async run(name: string, task: () => Promise<void>): Promise<boolean> {
    const conn = await this.sql.reserve().catch(unavailable);
    try {
      const [{ locked }] = await conn`SELECT pg_try_advisory_lock(${LEADER_NAMESPACE}, ${taskKey(name)}) AS locked`;
      if (!locked) return false;
      try {
        await task();
        return true;
      } finally {
        await conn`SELECT pg_advisory_unlock(${LEADER_NAMESPACE}, ${taskKey(name)})`.catch(() => {});
      }
    } finally {
      // A connection cut meanwhile must not become an unhandled rejection.
      await Promise.resolve()
        .then(() => conn.release())
        .catch(() => {});
    }
  }
}

/** The seams of a replica on a shared PostgreSQL database. */
export function postgresSeams(sql: SQL, now: () => number = Date.now): Seams {
  return {
    quotas: new InMemoryQuotaCounters(now),
    fingerprints: new LocalChangeFeed(),
    // The vector index follows the table by its own change feed (vectors.ts): nothing to relay.
    vectors: new LocalChangeFeed(),
    jobClaims: new PgJobClaims(sql, now),
    leadership: new AdvisoryLockLeadership(sql),
  };
}

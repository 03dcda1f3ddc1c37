// The seams (../seams.ts) of replicas sharing one PostgreSQL database, where they must be shared:
// enrichment jobs are claimed with FOR UPDATE SKIP LOCKED under a lease (a replica that dies
// mid-job loses nothing: the lease runs out and another replica takes the job), and periodic
// maintenance runs on one replica at a time under a session advisory lock (released by the server
// when the holder's connection ends, so a dead leader is replaced at the next round).
// Quota windows are counter rows every replica counts in, so a client's quota is the same whichever
// replica it reaches. Fingerprint changes reach every replica by NOTIFY (./fingerprint-feed.ts).
import type { SQL } from "bun";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { LocalChangeFeed, InMemoryQuotaCounters } from "../single-process";
import type { ClaimedJob, FingerprintChanges, JobClaims, Leadership, QuotaCounters, QuotaDecision, QuotaWindow, Seams } from "../seams";
import { unavailable } from "./failures";
import { num } from "./repositories";

/** How long a claimed job stays this worker's without being finished or released (COLONY_JOB_LEASE_MS). */
export const JOB_LEASE_MS = 60_000;

/**
 * How often an idle worker looks for jobs nobody told it of (queued on another replica, or left
 * by a replica that died, once their lease ran out): half the lease, within 0.25 to 5 s.
 */
export const jobPollMs = (leaseMs: number) => Math.min(5_000, Math.max(250, Math.floor(leaseMs / 2)));

export class PgJobClaims implements JobClaims {
  /** Names this process in the jobs it holds (host, process id, a random part), for the operator reading the table. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly pollMs: number;

  constructor(
    private readonly sql: SQL,
    private readonly now: () => number = Date.now,
    private readonly leaseMs = JOB_LEASE_MS,
  ) {
    this.pollMs = jobPollMs(leaseMs);
  }

  /**
   * Oldest waiting jobs nobody holds (or whose holder's lease ran out), each to one worker only.
   * Jobs still leased to this owner are taken again too: its one worker claims only when it holds
   * nothing in flight, so such a job is one whose release failed (the database went away mid-batch),
   * and waiting out the lease would only delay it.
   */
  async claim(limit: number): Promise<ClaimedJob[]> {
    const now = this.now();
    const rows = await this.sql`
      UPDATE jobs SET leased_until = ${now + this.leaseMs}, leased_by = ${this.owner}
      WHERE trail_seq IN (
        SELECT trail_seq FROM jobs WHERE leased_until IS NULL OR leased_until < ${now} OR leased_by = ${this.owner}
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
export const LEADER_NAMESPACE = 0x636f6c6e;
export function taskKey(name: string): number {
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

/**
 * Fixed windows aligned to the window length (every replica agrees where a window starts without
 * asking), one counter row per quota, key and window. A use is counted by one upsert that only
 * increments below the limit, so concurrent replicas never count past it and the RateLimit
 * headers are exact. Should the database not answer, a replica counts in its own memory meanwhile
 * rather than refuse every request (its health endpoints included): the quotas are then per
 * replica until the database is back.
 */
export class PgQuotaCounters implements QuotaCounters {
  private readonly local: InMemoryQuotaCounters;

  constructor(
    private readonly sql: SQL,
    private readonly now: () => number = Date.now,
  ) {
    this.local = new InMemoryQuotaCounters(now);
  }

  window(quota: string, limit: number, windowMs: number): QuotaWindow {
    const { sql, now } = this;
    const fallback = this.local.window(quota, limit, windowMs);
    const decision = (used: number, start: number, t: number, allowed: boolean): QuotaDecision => ({
      allowed,
      limit,
      remaining: Math.max(0, limit - used),
      reset: Math.max(1, Math.ceil((start + windowMs - t) / 1000)),
    });
    return {
      limit,
      async take(key) {
        const t = now();
        const start = t - (t % windowMs);
        try {
          const rows = await sql`
            INSERT INTO quota_windows (quota, key, window_start, window_end, used)
            VALUES (${quota}, ${key}, ${start}, ${start + windowMs}, ${limit > 0 ? 1 : 0})
            ON CONFLICT (quota, key, window_start) DO UPDATE SET used = quota_windows.used + 1
              WHERE quota_windows.used < ${limit}
            RETURNING used`;
          // No row: the window is used up (the update's condition failed), nothing was counted.
          if (rows.length === 0 || limit <= 0) return decision(limit, start, t, false);
          return decision(rows[0].used, start, t, true);
        } catch {
          return fallback.take(key);
        }
      },
      async peek(key) {
        const t = now();
        const start = t - (t % windowMs);
        try {
          const rows = await sql`SELECT used FROM quota_windows
            WHERE quota = ${quota} AND key = ${key} AND window_start = ${start}`;
          const used = rows.length ? Number(rows[0].used) : 0;
          return decision(used, start, t, used < limit);
        } catch {
          return fallback.peek(key);
        }
      },
    };
  }

  async purgeExpired(): Promise<number> {
    const rows = await this.sql`DELETE FROM quota_windows WHERE window_end <= ${this.now()} RETURNING 1`.catch(unavailable);
    return rows.length;
  }
}

/** The seams of a replica on a shared PostgreSQL database. */
export function postgresSeams(sql: SQL, fingerprints: FingerprintChanges, now: () => number = Date.now, jobLeaseMs = JOB_LEASE_MS): Seams {
  return {
    quotas: new PgQuotaCounters(sql, now),
    fingerprints,
    // The vector index follows the table by its own change feed (vectors.ts): nothing to relay.
    vectors: new LocalChangeFeed(),
    jobClaims: new PgJobClaims(sql, now, jobLeaseMs),
    leadership: new AdvisoryLockLeadership(sql),
  };
}

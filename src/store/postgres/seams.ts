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
import { type FixedWindowLimiter, InMemoryQuotaCounters, LocalChangeFeed } from "../single-process";
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
  /** A third of the lease: two renewals can be late (a slow statement, a busy event loop) before it runs out. */
  readonly renewEveryMs: number;

  /**
   * Leases are granted, renewed and judged run out by the database server's clock (the statement's
   * start, in ms since the epoch: one instant for every row a statement touches), never this
   * replica's: a replica whose clock runs ahead would take jobs still leased to another, and one
   * whose clock runs behind would wait on leases that ran out and grant leases already over.
   */
  constructor(
    private readonly sql: SQL,
    private readonly leaseMs = JOB_LEASE_MS,
  ) {
    this.pollMs = jobPollMs(leaseMs);
    this.renewEveryMs = Math.max(100, Math.floor(leaseMs / 3));
  }

  /**
   * Oldest waiting jobs nobody holds (or whose holder's lease ran out), each to one worker only.
   * Jobs still leased to this owner are taken again too: its one worker claims only when it holds
   * nothing in flight, so such a job is one whose release failed (the database went away mid-batch),
   * and waiting out the lease would only delay it.
   */
  async claim(limit: number): Promise<ClaimedJob[]> {
    const rows = await this.sql`
      UPDATE jobs SET leased_until = (extract(epoch FROM statement_timestamp()) * 1000)::bigint + ${this.leaseMs}::bigint, leased_by = ${this.owner}
      WHERE trail_seq IN (
        SELECT trail_seq FROM jobs
        WHERE leased_until IS NULL OR leased_until < (extract(epoch FROM statement_timestamp()) * 1000)::bigint OR leased_by = ${this.owner}
        ORDER BY trail_seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
      )
      RETURNING trail_seq, attempts`.catch(unavailable);
    return rows
      .map((r: any) => ({ trailSeq: num(r.trail_seq), attempts: r.attempts }))
      .sort((a: ClaimedJob, b: ClaimedJob) => a.trailSeq - b.trailSeq);
  }

  /** A job finished meanwhile is gone, and one released or taken over is another's: neither is touched. */
  async renew(trailSeqs: number[]): Promise<void> {
    if (trailSeqs.length === 0) return;
    await this.sql`UPDATE jobs SET leased_until = (extract(epoch FROM statement_timestamp()) * 1000)::bigint + ${this.leaseMs}::bigint
      WHERE trail_seq = ANY(${trailSeqs}::bigint[]) AND leased_by = ${this.owner}`.catch(unavailable);
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

/** One quota as a replica counts it: its limit, window length, and the counters used while the database does not answer. */
interface QuotaSpec {
  quota: string;
  limit: number;
  windowMs: number;
  fallback: FixedWindowLimiter;
}

/** What a statement did to one row: the window's count after it, and how many of the uses asked it counted. */
interface Grant {
  used: number;
  granted: number;
}

/** A use waiting for the statement that counts it. */
interface WaitingUse {
  /** When it arrived: its window and its `reset`. */
  t: number;
  resolve(decision: QuotaDecision): void;
}

/** The uses of one quota, key and window waiting for the next statement, in arrival order. */
interface PendingRow {
  spec: QuotaSpec;
  key: string;
  start: number;
  uses: WaitingUse[];
}

/** How long a quota statement may go unanswered before the next is sent beside it (ms). */
export const QUOTA_STALL_MS = 1_000;
/** How long after its end (by the database's clock) a quota window is kept for replicas whose clocks run behind. */
export const QUOTA_PURGE_GRACE_MS = 10 * 60_000;

const rowId = (quota: string, key: string, start: number) => `${quota}\u0000${key}\u0000${start}`;

/**
 * Fixed windows aligned to the window length (every replica agrees where a window starts without
 * asking), one counter row per quota, key and window.
 *
 * Uses are counted in groups, as a database commits in groups: a use that arrives while no quota
 * statement is in flight is sent at once; uses arriving while one is in flight wait and go together
 * in the next (every quota, key and window in one upsert). For each row the database grants
 * min(asked, limit - used) under the row lock and returns the new `used` and how many it granted,
 * so the i-th waiting use of a row gets exactly the count it would have had were the uses sent one
 * by one: concurrent replicas never count past the limit and the RateLimit headers stay exact. A
 * busy replica thus pays one round trip per group instead of one per request.
 *
 * Should the database not answer, a replica counts in its own memory meanwhile rather than refuse
 * every request (its health endpoints included): the quotas are then per replica until the
 * database is back.
 */
export class PgQuotaCounters implements QuotaCounters {
  private readonly local: InMemoryQuotaCounters;
  /** Uses waiting for the next statement, by quota, key and window. */
  private pending = new Map<string, PendingRow>();
  /** A statement is in flight (or about to be sent): new uses wait for the next. */
  private sending = false;

  constructor(
    private readonly sql: SQL,
    private readonly now: () => number = Date.now,
    private readonly stallMs = QUOTA_STALL_MS,
  ) {
    this.local = new InMemoryQuotaCounters(now);
  }

  window(quota: string, limit: number, windowMs: number): QuotaWindow {
    const spec: QuotaSpec = { quota, limit, windowMs, fallback: this.local.window(quota, limit, windowMs) };
    const { sql, now } = this;
    return {
      limit,
      take: (key) => this.take(spec, key),
      async peek(key) {
        const t = now();
        const start = t - (t % windowMs);
        try {
          const rows = await sql`SELECT used FROM quota_windows
            WHERE quota = ${quota} AND key = ${key} AND window_start = ${start}`;
          const used = rows.length ? Number(rows[0].used) : 0;
          return decision(spec, used, t, used < limit);
        } catch {
          return spec.fallback.peek(key);
        }
      },
    };
  }

  private take(spec: QuotaSpec, key: string): Promise<QuotaDecision> {
    const t = this.now();
    const start = t - (t % spec.windowMs);
    const id = rowId(spec.quota, key, start);
    let row = this.pending.get(id);
    if (!row) {
      row = { spec, key, start, uses: [] };
      this.pending.set(id, row);
    }
    const uses = row.uses;
    const taken = new Promise<QuotaDecision>((resolve) => uses.push({ t, resolve }));
    if (!this.sending) {
      this.sending = true;
      // Uses arriving in the same turn of the event loop still join: no wait a client would notice.
      queueMicrotask(() => void this.send());
    }
    return taken;
  }

  /**
   * Sends every pending use in one statement, then the uses that arrived meanwhile, until none
   * wait. A statement still unanswered after `stallMs` (its connection stalled, or it waits for a
   * row lock) no longer holds up the next: the two then run side by side, each exact on its own.
   */
  private async send(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const batch = this.pending;
        this.pending = new Map();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const stalled = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.stallMs)));
        await Promise.race([this.count(batch), stalled]).finally(() => clearTimeout(timer));
      }
    } finally {
      this.sending = false;
    }
  }

  private async count(batch: Map<string, PendingRow>): Promise<void> {
    const rows = [...batch.values()];
    let counted: Map<PendingRow, Grant>;
    try {
      counted = rows.length === 1 ? await this.countOne(rows[0]!) : await this.countMany(rows);
    } catch {
      for (const row of rows) for (const use of row.uses) use.resolve(row.spec.fallback.take(row.key));
      return;
    }
    for (const row of rows) {
      const { spec, uses } = row;
      // No row back: the window was used up before, so every use is refused.
      const { used, granted } = counted.get(row) ?? { used: spec.limit, granted: 0 };
      // As if one by one: the first `granted` uses counted used - granted + 1 ... used, the rest refused.
      uses.forEach((use, i) =>
        use.resolve(
          i < granted ? decision(spec, used - granted + i + 1, use.t, true) : decision(spec, Math.max(used, spec.limit), use.t, false),
        ),
      );
    }
  }

  // The two statements below grant alike (the same ON CONFLICT clause). The one-row form is the
  // usual one (a quiet replica, or one busy client) and costs about 50 µs of CPU, client and
  // server, where the unnest form costs about 120 µs for one or two rows, 12 µs more per row
  // beyond (measured on the 2-core dev box). Each row asks for `asked` uses: a new window is granted
  // min(asked, limit), an existing one min(asked, limit - used) under its row lock; a used-up
  // window is not written again (no row comes back, nothing was granted).

  private async countOne(row: PendingRow): Promise<Map<PendingRow, Grant>> {
    const { spec, key, start } = row;
    const [counted] = await this.sql`
      INSERT INTO quota_windows AS w (quota, key, window_start, window_end, used, granted, quota_limit)
      VALUES (${spec.quota}, ${key}, ${start}, ${start + spec.windowMs},
        greatest(0, least(${row.uses.length}::int, ${spec.limit}::int)),
        greatest(0, least(${row.uses.length}::int, ${spec.limit}::int)), ${spec.limit}::int)
      ON CONFLICT (quota, key, window_start) DO UPDATE SET
        used = w.used + least(excluded.used, excluded.quota_limit - w.used),
        granted = least(excluded.used, excluded.quota_limit - w.used),
        quota_limit = excluded.quota_limit
      WHERE w.used < excluded.quota_limit
      RETURNING w.used, w.granted`;
    return new Map(counted ? [[row, { used: Number(counted.used), granted: Number(counted.granted) }]] : []);
  }

  private async countMany(rows: PendingRow[]): Promise<Map<PendingRow, Grant>> {
    // Rows in one order on every replica, so two statements lock shared rows in the same order
    // (they could deadlock otherwise).
    rows.sort((a, b) => compare(a.spec.quota, b.spec.quota) || compare(a.key, b.key) || a.start - b.start);
    const counted = await this.sql`
      INSERT INTO quota_windows AS w (quota, key, window_start, window_end, used, granted, quota_limit)
      SELECT u.quota, u.key, u.window_start, u.window_end,
        greatest(0, least(u.asked, u.quota_limit)), greatest(0, least(u.asked, u.quota_limit)), u.quota_limit
      FROM unnest(${rows.map((r) => r.spec.quota)}::text[], ${rows.map((r) => r.key)}::text[],
        ${rows.map((r) => r.start)}::bigint[], ${rows.map((r) => r.start + r.spec.windowMs)}::bigint[],
        ${rows.map((r) => r.uses.length)}::int[], ${rows.map((r) => r.spec.limit)}::int[])
        WITH ORDINALITY AS u(quota, key, window_start, window_end, asked, quota_limit, i)
      ORDER BY u.i
      ON CONFLICT (quota, key, window_start) DO UPDATE SET
        used = w.used + least(excluded.used, excluded.quota_limit - w.used),
        granted = least(excluded.used, excluded.quota_limit - w.used),
        quota_limit = excluded.quota_limit
      WHERE w.used < excluded.quota_limit
      RETURNING w.quota, w.key, w.window_start, w.used, w.granted`;
    const byId = new Map(rows.map((r) => [rowId(r.spec.quota, r.key, r.start), r]));
    const grants = new Map<PendingRow, Grant>();
    for (const c of counted) {
      const row = byId.get(rowId(c.quota, c.key, Number(c.window_start)));
      if (row) grants.set(row, { used: Number(c.used), granted: Number(c.granted) });
    }
    return grants;
  }

  /**
   * Deletes windows that ended QUOTA_PURGE_GRACE_MS ago by the database's clock. Not by the
   * maintenance leader's own: a leader whose clock ran ahead deleted windows the other replicas
   * were still counting in, which gave their clients a fresh quota; the grace keeps the window a
   * replica running a few minutes behind still counts in.
   */
  async purgeExpired(): Promise<number> {
    const rows = await this.sql`
      DELETE FROM quota_windows
      WHERE window_end <= (extract(epoch FROM statement_timestamp()) * 1000)::bigint - ${QUOTA_PURGE_GRACE_MS}
      RETURNING 1`.catch(unavailable);
    return rows.length;
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The decision a use or a look gets, with the state the RateLimit headers show. */
function decision(spec: QuotaSpec, used: number, t: number, allowed: boolean): QuotaDecision {
  const start = t - (t % spec.windowMs);
  return {
    allowed,
    limit: spec.limit,
    remaining: Math.max(0, spec.limit - used),
    reset: Math.max(1, Math.ceil((start + spec.windowMs - t) / 1000)),
  };
}

/** The seams of a replica on a shared PostgreSQL database. */
export function postgresSeams(sql: SQL, fingerprints: FingerprintChanges, now: () => number = Date.now, jobLeaseMs = JOB_LEASE_MS): Seams {
  return {
    quotas: new PgQuotaCounters(sql, now),
    fingerprints,
    // The vector index follows the table by its own change feed (vectors.ts): nothing to relay.
    vectors: new LocalChangeFeed(),
    // Leases go by the database's clock, not `now` (a replica's own clock may be skewed).
    jobClaims: new PgJobClaims(sql, jobLeaseMs),
    leadership: new AdvisoryLockLeadership(sql),
  };
}

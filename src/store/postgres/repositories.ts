// The smaller repositories on PostgreSQL: key-value, job queue, outcomes, merge credits,
// tombstones, events, activity aggregates, search counters and drafts. Each takes the query handle
// it runs on: the pool outside a transaction, the transaction's connection inside one. Every
// method is one statement, so a write outside a transaction is atomic on its own.
import type { SQL } from "bun";
import type {
  DraftRecord,
  DraftRepository,
  EventLog,
  EventRecord,
  FingerprintAliasRepository,
  HotLabelRule,
  JobQueue,
  KeyValueStore,
  MergeCreditLedger,
  OutcomeRecord,
  StoredNotes,
  OutcomeRepository,
  SearchCounter,
  SeriesName,
  SeriesPoint,
  StatsRepository,
  TombstoneRepository,
} from "../ports";

/** int8 and numeric come back from Bun.SQL as strings: every stored integer fits a double. */
export const num = (v: unknown): number => (typeof v === "number" ? v : Number(v));
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

const HOUR_MS = 3600_000;

/** A whole number from 0 to MAX_SAFE_INTEGER (JSON clients read larger integers inexactly). */
const clampCount = (n: number) =>
  Number.isFinite(n) ? Math.min(Math.max(Math.round(n), 0), Number.MAX_SAFE_INTEGER) : n > 0 ? Number.MAX_SAFE_INTEGER : 0;

export class PgKeyValueStore implements KeyValueStore {
  constructor(private readonly sql: SQL) {}

  async get(key: string): Promise<string | null> {
    const [row] = await this.sql`SELECT value FROM kv WHERE key = ${key}`;
    return row?.value ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    await this.sql`INSERT INTO kv (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }

  async setIfAbsent(key: string, value: string): Promise<string> {
    // DO UPDATE with the row's own value (not DO NOTHING) so RETURNING gives the winner's value;
    // the conflicting insert waits for a concurrent one to commit first.
    const [row] = await this.sql`INSERT INTO kv (key, value) VALUES (${key}, ${value})
      ON CONFLICT (key) DO UPDATE SET value = kv.value RETURNING value`;
    return row.value;
  }

  async delete(key: string): Promise<void> {
    await this.sql`DELETE FROM kv WHERE key = ${key}`;
  }
}

export class PgJobQueue implements JobQueue {
  constructor(private readonly sql: SQL) {}

  async next(limit: number) {
    const rows = await this.sql`SELECT trail_seq, attempts FROM jobs ORDER BY trail_seq ASC LIMIT ${limit}`;
    return rows.map((r: any) => ({ trailSeq: num(r.trail_seq), attempts: r.attempts }));
  }

  async recordFailure(trailSeq: number, error: string): Promise<void> {
    await this.sql`UPDATE jobs SET attempts = attempts + 1, last_error = ${error.slice(0, 500)} WHERE trail_seq = ${trailSeq}`;
  }

  async remove(trailSeq: number): Promise<void> {
    await this.sql`DELETE FROM jobs WHERE trail_seq = ${trailSeq}`;
  }

  async depth(): Promise<number> {
    const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM jobs`;
    queueSeen.jobs = n;
    return n;
  }

  /**
   * Every publish holds QUEUE_INSERTS in shared mode from here to its commit (shared: publishes
   * never wait for one another for it), then counts the other holders, then the jobs, in that order
   * and in separate statements. Of two publishes in flight together, the one that locked later
   * counts the other: as a holder while it holds, or its job once committed (a commit is visible
   * before its locks are released, and the jobs are counted by a later statement, so a later
   * snapshot). So the count never misses a job that may be stored, and a publish stored only below
   * the limit keeps the queue within it. The count may be high, never low: a publish counted twice
   * (committed, its lock not yet released), or one in flight that will be refused.
   *
   * Near the limit, those high counts could refuse every publish of a burst, or all of them for as
   * long as more publishes than the queue has room for keep arriving (each counting the others in
   * flight): there publishes take turns instead (QUEUE_TURNS, exclusive, held to the commit, taken
   * before QUEUE_INSERTS), so only one of them is in flight at a time. Far from it they do not wait
   * for one another. Which of the two is judged from the latest counts this process made (a publish
   * counts the queue before it takes its quota, just before): a stale judgement can only make the
   * count err high in a burst, never miss a job. A replica of an earlier release takes neither lock.
   */
  async depthForInsert(limit: number): Promise<number> {
    if (queueSeen.jobs + queueSeen.others + 1 + QUEUE_TURNS_WITHIN > limit) {
      // A queue its committed jobs already fill refuses at once, without waiting for a turn: in a
      // burst near the limit the publishes to be refused queued behind the ones stored, one at a
      // time, and on a loaded machine the last ones ran into the database deadline (503
      // unavailable instead of busy; test/lifecycle.test.ts's burst of 12 on a pool of 2).
      const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM jobs`;
      queueSeen.jobs = n;
      if (n >= limit) return n;
      await this.sql`SELECT pg_advisory_xact_lock(${QUEUE_TURNS})`;
    }
    await this.sql`SELECT pg_advisory_xact_lock_shared(${QUEUE_INSERTS})`;
    const [{ others }] = await this.sql.unsafe(HOLDERS_SQL);
    const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM jobs`;
    queueSeen.jobs = n;
    queueSeen.others = others;
    return n + others;
  }
}

/** The advisory lock key publishes in flight hold shared ("colque" in ASCII, beside the other keys). */
const QUEUE_INSERTS = 0x636f6c717565;
/** The advisory lock key publishes near the queue limit take turns on ("coltrn"). */
const QUEUE_TURNS = 0x636f6c74726e;
/**
 * Publishes take turns once the waiting jobs and the publishes in flight come within this many of
 * COLONY_MAX_QUEUE: more than the publishes that can be in flight at once on most clusters (one
 * per pooled connection on every replica, 10 by default each).
 */
export const QUEUE_TURNS_WITHIN = 64;
/** The advisory lock namespace an address's uncounted reports take turns in ("colu"; the key is the address pseudonym's hash). */
const UNCOUNTED_TURNS = 0x636f6c75;
/** The latest counts of the queue this process made: where depthForInsert judges whether to take turns. */
const queueSeen = { jobs: 0, others: 0 };
/** The other transactions holding QUEUE_INSERTS. */
const HOLDERS_SQL = `SELECT count(*)::int AS others FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted
  AND pid <> pg_backend_pid() AND classid = ${Math.floor(QUEUE_INSERTS / 2 ** 32)} AND objid = ${QUEUE_INSERTS % 2 ** 32}`;

export class PgOutcomeRepository implements OutcomeRepository {
  constructor(private readonly sql: SQL) {}

  async insert(o: OutcomeRecord): Promise<void> {
    await this.sql`INSERT INTO outcomes (trail_seq, agent, client, outcome, counted, notes, model, at, content_rules_version)
      VALUES (${o.trailSeq}, ${o.agent}, ${o.client}, ${o.outcome}, ${o.counted}, ${o.notes}, ${o.model}, ${o.at}, ${o.contentRulesVersion ?? 0})`;
  }

  async notesCheckedBefore(version: number, afterId: number, limit: number): Promise<StoredNotes[]> {
    const rows = await this.sql`SELECT id, trail_seq, notes, content_rules_version FROM outcomes
      WHERE notes IS NOT NULL AND content_rules_version < ${version} AND id > ${afterId} ORDER BY id LIMIT ${limit}`;
    return rows.map((r: any) => ({
      id: num(r.id),
      trailSeq: num(r.trail_seq),
      notes: r.notes,
      contentRulesVersion: r.content_rules_version,
    }));
  }

  async hasNotesCheckedBefore(version: number): Promise<boolean> {
    const rows = await this.sql`SELECT 1 FROM outcomes WHERE notes IS NOT NULL AND content_rules_version < ${version} LIMIT 1`;
    return rows.length > 0;
  }

  async rescreenNotes(id: number, r: { wasVersion: number; notes: string | null; contentRulesVersion: number }): Promise<boolean> {
    const rows = await this.sql`UPDATE outcomes SET notes = ${r.notes}, content_rules_version = ${r.contentRulesVersion}
      WHERE id = ${id} AND content_rules_version = ${r.wasVersion} RETURNING id`;
    return rows.length > 0;
  }

  async latestWithNotes(trailSeqs: number[], perTrail: number): Promise<OutcomeRecord[]> {
    if (trailSeqs.length === 0) return [];
    // One indexed read of `perTrail` rows per trail: ranking every note of the page's trails (a
    // window over all of them) cost a feed page 0.3 s once one trail held 200,000 notes.
    const rows = await this.sql`
      SELECT o.trail_seq, o.agent, o.client, o.outcome, o.counted, o.notes, o.model, o.at
      FROM (SELECT DISTINCT unnest(${trailSeqs}::bigint[]) AS seq) s
      CROSS JOIN LATERAL (
        SELECT id, trail_seq, agent, client, outcome, counted, notes, model, at FROM outcomes
        WHERE trail_seq = s.seq AND notes IS NOT NULL ORDER BY at DESC, id DESC LIMIT ${perTrail}
      ) o
      ORDER BY o.trail_seq, o.at DESC, o.id DESC`;
    return rows.map(outcomeFromRow);
  }

  async holdTrail(trailSeq: number, judging: boolean): Promise<boolean> {
    const [row] = judging
      ? await this.sql`SELECT status FROM trails WHERE seq = ${trailSeq} FOR UPDATE`
      : await this.sql`SELECT status FROM trails WHERE seq = ${trailSeq} FOR KEY SHARE`;
    return row?.status === "indexed";
  }

  async countedSince(trailSeq: number, agent: string, since: number): Promise<boolean> {
    const rows = await this.sql`SELECT 1 FROM outcomes
      WHERE trail_seq = ${trailSeq} AND agent = ${agent} AND counted AND at >= ${since} LIMIT 1`;
    return rows.length > 0;
  }

  async forTrail(trailSeq: number, limit: number): Promise<OutcomeRecord[]> {
    const rows = await this.sql`SELECT trail_seq, agent, client, outcome, counted, notes, model, at FROM outcomes
      WHERE trail_seq = ${trailSeq} ORDER BY at DESC, id DESC LIMIT ${limit}`;
    return rows.map(outcomeFromRow);
  }

  async countedForClientSince(trailSeq: number, client: string, since: number): Promise<number> {
    const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM outcomes
      WHERE trail_seq = ${trailSeq} AND client = ${client} AND counted AND at >= ${since}`;
    return n;
  }

  /**
   * Below the bound, the address's uncounted reports take turns (an advisory lock on the address,
   * exclusive, held to the commit) and the count is made again after the lock, in its own
   * statement: a later snapshot, so it sees the reports committed by those before. Without it,
   * reports in flight together each counted the others' rows as absent, and all were kept (8 of 8
   * past a bound of 200 with one left). At most `atMost` reports of an address a day take turns:
   * past the bound the first count refuses without the lock. A replica of an earlier release takes
   * no lock and can pass the bound by its own reports in flight.
   */
  async uncountedForClientSince(client: string, since: number, atMost: number): Promise<number> {
    const count = async () => {
      const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM outcomes
        WHERE client = ${client} AND NOT counted AND at >= ${since} LIMIT ${atMost}) AS recent`;
      return n as number;
    };
    const committed = await count();
    if (committed >= atMost) return committed;
    await this.sql`SELECT pg_advisory_xact_lock(${UNCOUNTED_TURNS}::int, hashtext(${client}))`;
    return count();
  }
}

export class PgMergeCreditLedger implements MergeCreditLedger {
  constructor(private readonly sql: SQL) {}

  async grant(trailSeq: number, agent: string, client: string, day: string): Promise<boolean> {
    // Either unique key (agent, or client, per trail and day) refuses the row.
    const r = await this.sql`INSERT INTO merge_credits (trail_seq, agent, client, day)
      VALUES (${trailSeq}, ${agent}, ${client}, ${day}) ON CONFLICT DO NOTHING`;
    return r.count === 1;
  }

  async earnedSince(trailSeq: number, agent: string, client: string, day: string): Promise<{ byAgent: boolean; byClient: number }> {
    // Both keys are indexed: the primary key (trail_seq, agent, day) and merge_credits_by_client.
    const [row] = await this.sql`SELECT
        EXISTS (SELECT 1 FROM merge_credits WHERE trail_seq = ${trailSeq} AND agent = ${agent} AND day >= ${day}) AS by_agent,
        (SELECT count(*)::int FROM merge_credits WHERE trail_seq = ${trailSeq} AND client = ${client} AND day >= ${day}) AS by_client`;
    return { byAgent: row.by_agent === true, byClient: Number(row.by_client) };
  }
}

export class PgFingerprintAliasRepository implements FingerprintAliasRepository {
  constructor(private readonly sql: SQL) {}

  async add(oldFp: string, newFp: string, at: number): Promise<void> {
    await this.sql`INSERT INTO fingerprint_aliases (old_fp, new_fp, created_at) VALUES (${oldFp}, ${newFp}, ${at}) ON CONFLICT DO NOTHING`;
  }

  async addAll(pairs: readonly (readonly [string, string])[], at: number): Promise<void> {
    if (pairs.length === 0) return;
    const olds = pairs.map(([oldFp]) => oldFp);
    const news = pairs.map(([, newFp]) => newFp);
    await this.sql`INSERT INTO fingerprint_aliases (old_fp, new_fp, created_at)
      SELECT old_fp, new_fp, ${at} FROM unnest(${olds}::text[], ${news}::text[]) AS a(old_fp, new_fp) ON CONFLICT DO NOTHING`;
  }

  async resolve(oldFp: string): Promise<string[]> {
    const rows = await this.sql`SELECT new_fp FROM fingerprint_aliases WHERE old_fp = ${oldFp} ORDER BY new_fp`;
    return rows.map((r: any) => r.new_fp);
  }

  async purgeBefore(at: number): Promise<number> {
    return (await this.sql`DELETE FROM fingerprint_aliases WHERE created_at < ${at}`).count;
  }
}

export class PgTombstoneRepository implements TombstoneRepository {
  constructor(private readonly sql: SQL) {}

  async count(): Promise<number> {
    const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM tombstones`;
    return n;
  }

  async add(trailId: string, contentHash: string, at: number, mergeKey: string | null = null): Promise<void> {
    await this.sql`INSERT INTO tombstones (trail_id, content_hash, removed_at, merge_key)
      VALUES (${trailId}, ${contentHash}, ${at}, ${mergeKey}) ON CONFLICT DO NOTHING`;
  }

  async hasMergeKey(mergeKey: string): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM tombstones WHERE merge_key = ${mergeKey} LIMIT 1`).length > 0;
  }

  async has(trailId: string): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM tombstones WHERE trail_id = ${trailId}`).length > 0;
  }

  async hasContent(contentHash: string): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM tombstones WHERE content_hash = ${contentHash} LIMIT 1`).length > 0;
  }

  async purgeBefore(at: number): Promise<number> {
    return (await this.sql`DELETE FROM tombstones WHERE removed_at < ${at}`).count;
  }
}

export class PgEventLog implements EventLog {
  constructor(private readonly sql: SQL) {}

  async append(e: EventRecord): Promise<void> {
    await this.sql`INSERT INTO events (kind, agent, trail_id, text, at) VALUES (${e.kind}, ${e.agent}, ${e.trailId}, ${e.text}, ${e.at})`;
  }

  async recent(limit: number): Promise<EventRecord[]> {
    const rows = await this.sql`SELECT kind, agent, trail_id, text, at FROM events ORDER BY id DESC LIMIT ${limit}`;
    return rows.map(toEvent);
  }

  async forTrail(trailId: string, limit: number): Promise<EventRecord[]> {
    const rows = await this
      .sql`SELECT kind, agent, trail_id, text, at FROM events WHERE trail_id = ${trailId} ORDER BY id DESC LIMIT ${limit}`;
    return rows.map(toEvent);
  }

  async purgeSearchesBefore(before: number, batch: number): Promise<number> {
    const r = await this.sql`DELETE FROM events WHERE id IN (
      SELECT id FROM events WHERE kind = 'search' AND at < ${before} ORDER BY at LIMIT ${batch})`;
    return r.count;
  }

  async forgetTrail(trailId: string): Promise<void> {
    await this.sql`DELETE FROM events WHERE trail_id = ${trailId} AND kind <> 'search'`;
    await this.sql`UPDATE events SET trail_id = NULL WHERE trail_id = ${trailId}`;
  }

  async forgetMergeCredit(intoTrailId: string, agent: string, at: number): Promise<void> {
    await this.sql`DELETE FROM events WHERE trail_id = ${intoTrailId} AND kind = 'reinforced' AND agent = ${agent} AND at = ${at}`;
  }
}

const toEvent = (r: any): EventRecord => ({ kind: r.kind, agent: r.agent, trailId: r.trail_id, text: r.text, at: num(r.at) });

/**
 * How many rows each hour's counter is spread over (migration 13). One row an hour was one row
 * lock that every replica's searching or reporting transaction queued on until it committed, WAL
 * flush included: with durable commits that capped the whole cluster at one flush per count
 * (bench/RESULTS.md, session 13). Each transaction adds to the slot of its connection's server
 * process (pg_backend_pid() % COUNTER_SLOTS) in the counter's slot table (COUNTER_SLOT_TABLES): a
 * connection never waits on itself, and connections opened together (a replica's pool) usually
 * have consecutive process ids, so they spread over the slots. The counter tables themselves keep
 * the previous release's one row per key and hour (and its keys), so a replica of that release,
 * still running during a rolling upgrade, keeps counting into them. Reads sum a key's row and its
 * slot rows; the hourly maintenance folds finished hours' slot rows into the key's row
 * (foldHoursBefore). Exact: a count is in the same transaction as what it counts, committed or not
 * with it.
 */
export const COUNTER_SLOTS = 16;

/** Each hourly counter table, its slot table (migration 13) and the columns both share. */
export const COUNTER_SLOT_TABLES: Record<string, { slots: string; columns: readonly string[] }> = {
  series_hourly: { slots: "series_hourly_slots", columns: ["hour", "name", "value"] },
  search_hourly: { slots: "search_hourly_slots", columns: ["hour", "label", "n", "clients"] },
  stats_hourly: { slots: "stats_hourly_slots", columns: ["hour", "outcomes", "tokens_saved"] },
};

/**
 * A counter table's rows and its slot rows, as one row source named like the table (for a FROM
 * clause; a key may appear several times: sum by key). For the copy and for tests reading what
 * was counted.
 */
export function countedRows(table: keyof typeof COUNTER_SLOT_TABLES): string {
  const { slots, columns } = COUNTER_SLOT_TABLES[table]!;
  const list = columns.join(", ");
  return `(SELECT ${list} FROM ${table} UNION ALL SELECT ${list} FROM ${slots}) AS ${table}`;
}

/**
 * How long after its end (by the database's clock) an hour's counters stay spread over slots: the
 * hour a replica whose clock runs a few minutes behind still counts in is not folded under it.
 */
export const FOLD_GRACE_MS = 10 * 60_000;

export class PgStatsRepository implements StatsRepository {
  constructor(private readonly sql: SQL) {}

  async touchAgent(agent: string, at: number): Promise<void> {
    await this.sql`INSERT INTO agent_activity (agent, at) VALUES (${agent}, ${at})
      ON CONFLICT (agent) DO UPDATE SET at = greatest(agent_activity.at, excluded.at)`;
  }

  /**
   * Adds to the hour's bucket (this connection's slot of it), saturating at MAX_SAFE_INTEGER (as the
   * SQLite adapter does); since() sums the bucket and its slots and clamps the sum.
   */
  async addOutcome(at: number, tokensSaved: number): Promise<void> {
    const max = Number.MAX_SAFE_INTEGER;
    await this.sql`
      INSERT INTO stats_hourly_slots (hour, slot, outcomes, tokens_saved)
      VALUES (${Math.floor(at / HOUR_MS)}, pg_backend_pid() % ${COUNTER_SLOTS}::int, 1, ${clampCount(tokensSaved)})
      ON CONFLICT (hour, slot) DO UPDATE SET
        outcomes = least(stats_hourly_slots.outcomes + 1, ${max}::bigint),
        tokens_saved = CASE WHEN stats_hourly_slots.tokens_saved > ${max}::bigint - excluded.tokens_saved THEN ${max}::bigint
                            ELSE stats_hourly_slots.tokens_saved + excluded.tokens_saved END`;
  }

  /** Outcomes and tokens: whole hourly buckets from the one containing `at`; agents: exact. */
  async since(at: number) {
    const hour = Math.floor(at / HOUR_MS);
    const [row] = await this.sql`WITH buckets AS (
        SELECT outcomes, tokens_saved FROM stats_hourly WHERE hour >= ${hour}
        UNION ALL SELECT outcomes, tokens_saved FROM stats_hourly_slots WHERE hour >= ${hour})
      SELECT (SELECT coalesce(sum(outcomes), 0)::float8 FROM buckets) AS o,
        (SELECT coalesce(sum(tokens_saved), 0)::float8 FROM buckets) AS t,
        (SELECT count(*)::int FROM agent_activity WHERE at >= ${at}) AS agents`;
    return { outcomes: clampCount(row.o), tokensSaved: clampCount(row.t), agents: row.agents };
  }

  /**
   * Counted when asked (an index-only scan of the indexed trails): a counter row updated by every
   * verdict and removal would be one hot row that transactions on all replicas queue for.
   */
  async trailsIndexed(): Promise<number> {
    const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM trails WHERE status = 'indexed'`;
    return n;
  }

  async bump(name: SeriesName, at: number, by = 1): Promise<void> {
    await this
      .sql`INSERT INTO series_hourly_slots (hour, name, slot, value) VALUES (${Math.floor(at / HOUR_MS)}, ${name}, pg_backend_pid() % ${COUNTER_SLOTS}::int, ${by})
      ON CONFLICT (hour, name, slot) DO UPDATE SET value = series_hourly_slots.value + excluded.value`;
  }

  /**
   * A peak stays in the counter table's one row (as the previous release writes it): a maximum
   * cannot be split into slots that sum. series() adds a name's slot rows to it, and a peaked
   * series has none (no series is both bumped and peaked). Each replica samples its queue once a
   * minute, so the row is not contended.
   */
  async peak(name: SeriesName, at: number, value: number): Promise<void> {
    await this.sql`INSERT INTO series_hourly (hour, name, value) VALUES (${Math.floor(at / HOUR_MS)}, ${name}, ${value})
      ON CONFLICT (hour, name) DO UPDATE SET value = greatest(series_hourly.value, excluded.value)`;
  }

  async series(since: number): Promise<SeriesPoint[]> {
    const hour = Math.floor(since / HOUR_MS);
    const rows = await this.sql`SELECT hour, name, sum(value)::bigint AS value FROM (
        SELECT hour, name, value FROM series_hourly WHERE hour >= ${hour}
        UNION ALL SELECT hour, name, value FROM series_hourly_slots WHERE hour >= ${hour}) AS points
      GROUP BY hour, name ORDER BY hour, name`;
    return rows.map((r: any) => ({ hour: num(r.hour) * HOUR_MS, name: r.name, value: num(r.value) }));
  }

  async purgeSeriesBefore(before: number): Promise<void> {
    const hour = Math.floor(before / HOUR_MS);
    await this.sql`WITH slots AS (DELETE FROM series_hourly_slots WHERE hour < ${hour})
      DELETE FROM series_hourly WHERE hour < ${hour}`;
  }

  /**
   * Moves the slot rows of the hours before `before` into the counter tables' one row per key
   * (the maintenance leader, hourly, for the hours already over): a finished hour is then read as
   * one row per key again, and only the current hour (and a late write into a past one: a client's
   * move takes it off its earlier hour) has slot rows. Each table in one statement: a count moves
   * whole or not at all, and a read (one statement, one snapshot) sees it in the slot rows or in
   * the key's row, never both or neither; a write into a slot row being folded waits for the fold,
   * then finds the row gone and adds a new one, folded next time. A replica of the previous release
   * (a rolling upgrade) adds to the same key rows the fold adds to: each waits for the other's row
   * lock, and neither loses a count.
   *
   * Only hours over FOLD_GRACE_MS ago by the database's clock are folded, whatever `before` says: a
   * counting statement writes its own hour's slot row and takes the client off an earlier hour's,
   * and when both were being folded (a leader whose clock ran ahead, a replica whose clock ran
   * behind) the fold and the count locked the two rows in opposite orders and PostgreSQL aborted
   * one of them as a deadlock (a failed search, or a failed maintenance run). A count holding one
   * folded hour's slot row waits on nothing the fold holds (its other rows are in hours not
   * folded; it reads the key rows without locking them). The previous release's count writes key
   * rows the same way (its own hour's and the earlier hour's), so the same grace keeps it to one
   * folded row.
   */
  async foldHoursBefore(before: number): Promise<number> {
    const [{ graceHour }] = await this.sql`SELECT (((extract(epoch FROM statement_timestamp()) * 1000)::bigint
      - ${FOLD_GRACE_MS}::bigint) / ${HOUR_MS}::bigint)::float8 AS "graceHour"`;
    const hour = Math.min(Math.floor(before / HOUR_MS), graceHour);
    const max = Number.MAX_SAFE_INTEGER;
    const series = await this.sql`WITH gone AS (
        DELETE FROM series_hourly_slots WHERE hour < ${hour} RETURNING hour, name, value)
      INSERT INTO series_hourly (hour, name, value) SELECT hour, name, sum(value) FROM gone GROUP BY hour, name
      ON CONFLICT (hour, name) DO UPDATE SET value = series_hourly.value + excluded.value
      RETURNING (SELECT count(*) FROM gone)::int AS n`;
    const stats = await this.sql`WITH gone AS (
        DELETE FROM stats_hourly_slots WHERE hour < ${hour} RETURNING hour, outcomes, tokens_saved)
      INSERT INTO stats_hourly (hour, outcomes, tokens_saved)
      SELECT hour, least(sum(outcomes), ${max}::bigint), least(sum(tokens_saved), ${max}::bigint) FROM gone GROUP BY hour
      ON CONFLICT (hour) DO UPDATE SET
        outcomes = least(stats_hourly.outcomes + excluded.outcomes, ${max}::bigint),
        tokens_saved = least(stats_hourly.tokens_saved + excluded.tokens_saved, ${max}::bigint)
      RETURNING (SELECT count(*) FROM gone)::int AS n`;
    const labels = await this.sql`WITH gone AS (
        DELETE FROM search_hourly_slots WHERE hour < ${hour} RETURNING hour, label, n, clients)
      INSERT INTO search_hourly (hour, label, n, clients) SELECT hour, label, sum(n), sum(clients) FROM gone GROUP BY hour, label
      ON CONFLICT (hour, label) DO UPDATE SET n = search_hourly.n + excluded.n, clients = search_hourly.clients + excluded.clients
      RETURNING (SELECT count(*) FROM gone)::int AS n`;
    return [series, stats, labels].reduce((total, rows: any[]) => total + (rows[0]?.n ?? 0), 0);
  }

  async purgeBefore(before: number): Promise<void> {
    const hour = Math.floor(before / HOUR_MS);
    await this.sql`WITH s AS (DELETE FROM stats_hourly WHERE hour < ${hour}),
      ss AS (DELETE FROM stats_hourly_slots WHERE hour < ${hour}),
      a AS (DELETE FROM agent_activity WHERE at < ${before}),
      c AS (DELETE FROM search_clients WHERE hour < ${hour}),
      ls AS (DELETE FROM search_hourly_slots WHERE hour < ${hour})
      DELETE FROM search_hourly WHERE hour < ${hour}`;
  }
}

export class PgSearchCounter implements SearchCounter {
  constructor(private readonly sql: SQL) {}

  /**
   * One statement, so a search still costs one round trip: the client's row moves to this hour
   * (returned when it is new to the label or was last counted in an earlier hour, with that hour
   * as prev_hour), the earlier hour loses the client and this one gains it. The row lock on the
   * client's row orders concurrent searches of one client on every replica; a search that finds
   * the row already at this hour moves nothing.
   *
   * A label's hour is spread over slots as the stats are (COUNTER_SLOTS): this connection's slot
   * row gains the search, and the earlier hour loses the client in this connection's slot row too,
   * which may go below zero while the hour's sum (its search_hourly row and slot rows), the count
   * read, stays the distinct clients; the fold adds the slot rows, negative ones included, to the
   * hour's row. The loss is taken only while the earlier hour's sum has a client to lose (rows from
   * before clients were counted, migration 10, may not), as the unslotted update's `clients > 0`
   * did. A replica of the previous release (a rolling upgrade) takes the loss off the hour's
   * search_hourly row only, while that row has a client: a client it moves off an hour counted only
   * in slot rows stays counted there too (one client too many in the windows holding both hours).
   */
  async add(label: string, client: string, at: number): Promise<void> {
    const hour = Math.floor(at / HOUR_MS);
    const l = label.slice(0, 200);
    await this.sql`WITH moved AS (
        INSERT INTO search_clients (label, client, hour) VALUES (${l}, ${client}, ${hour})
        ON CONFLICT (label, client) DO UPDATE SET prev_hour = search_clients.hour, hour = excluded.hour
          WHERE search_clients.hour < excluded.hour
        RETURNING prev_hour
      ), earlier AS (
        INSERT INTO search_hourly_slots (hour, label, slot, n, clients)
        SELECT moved.prev_hour, ${l}, pg_backend_pid() % ${COUNTER_SLOTS}::int, 0, -1 FROM moved
        WHERE coalesce((SELECT sum(s.clients) FROM search_hourly s WHERE s.hour = moved.prev_hour AND s.label = ${l}), 0)
            + coalesce((SELECT sum(s.clients) FROM search_hourly_slots s WHERE s.hour = moved.prev_hour AND s.label = ${l}), 0) > 0
        ON CONFLICT (hour, label, slot) DO UPDATE SET clients = search_hourly_slots.clients - 1
      )
      INSERT INTO search_hourly_slots (hour, label, slot, n, clients)
      VALUES (${hour}, ${l}, pg_backend_pid() % ${COUNTER_SLOTS}::int, 1, (SELECT count(*)::int FROM moved))
      ON CONFLICT (hour, label, slot) DO UPDATE SET n = search_hourly_slots.n + 1, clients = search_hourly_slots.clients + excluded.clients`;
  }

  async top(since: number, limit: number, rule: HotLabelRule) {
    const rows = await this.sql`WITH labels AS MATERIALIZED (
        SELECT label, sum(clients)::int AS clients, sum(n)::bigint AS searches FROM (
          SELECT label, n, clients FROM search_hourly WHERE hour >= ${Math.floor(since / HOUR_MS)}
          UNION ALL SELECT label, n, clients FROM search_hourly_slots WHERE hour >= ${Math.floor(since / HOUR_MS)}) AS counted
        GROUP BY label)
      SELECT label, clients, searches FROM labels
      WHERE clients > 0 AND (clients >= least(${Math.max(1, rule.minClients)}::int, (SELECT max(clients) FROM labels))
                             OR label = ANY(${[...rule.anyClients]}::text[]))
      ORDER BY clients DESC, searches DESC, label ASC LIMIT ${limit}`;
    return rows.map((r: any) => ({ label: r.label, clients: r.clients, searches: num(r.searches) }));
  }
}

export class PgDraftRepository implements DraftRepository {
  constructor(private readonly sql: SQL) {}

  async insert(d: DraftRecord): Promise<void> {
    await this.sql`INSERT INTO drafts (token_hash, state, trail, fingerprint, redactions, risk, author, created_at, expires_at, trail_id)
      VALUES (${d.tokenHash}, ${d.state}, ${JSON.stringify(d.trail)}, ${d.fingerprint}, ${JSON.stringify(d.redactions)},
              ${JSON.stringify(d.risk)}, ${d.author}, ${d.createdAt}, ${d.expiresAt}, ${d.trailId})`;
  }

  async byHash(tokenHash: string): Promise<DraftRecord | null> {
    const [r] = await this.sql`SELECT * FROM drafts WHERE token_hash = ${tokenHash}`;
    if (!r) return null;
    return {
      tokenHash: r.token_hash,
      state: r.state,
      trail: JSON.parse(r.trail),
      fingerprint: r.fingerprint,
      redactions: JSON.parse(r.redactions),
      risk: JSON.parse(r.risk),
      author: r.author,
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
      trailId: r.trail_id,
    };
  }

  /** pending → published, once: the row lock makes a concurrent publish on another replica see `published`. */
  async markPublished(tokenHash: string, trailId: string): Promise<boolean> {
    const r = await this
      .sql`UPDATE drafts SET state = 'published', trail_id = ${trailId}, trail = '{}', fingerprint = '', redactions = '{}', risk = '{}', author = ''
           WHERE token_hash = ${tokenHash} AND state = 'pending'`;
    return r.count === 1;
  }

  async markDiscarded(tokenHash: string): Promise<boolean> {
    // The payload and author go, as in markPublished (DraftRepository).
    const r = await this
      .sql`UPDATE drafts SET state = 'discarded', trail = '{}', fingerprint = '', redactions = '{}', risk = '{}', author = ''
      WHERE token_hash = ${tokenHash} AND state = 'pending'`;
    return r.count === 1;
  }

  async purge(now: number, finishedBefore: number): Promise<number> {
    const r = await this
      .sql`DELETE FROM drafts WHERE (state = 'pending' AND expires_at <= ${now}) OR (state <> 'pending' AND created_at < ${finishedBefore})`;
    return r.count;
  }
}

/** An outcome report as the outcomes table stores it. */
function outcomeFromRow(r: any): OutcomeRecord {
  return {
    trailSeq: num(r.trail_seq),
    agent: r.agent,
    client: r.client,
    outcome: r.outcome,
    counted: r.counted,
    notes: r.notes,
    model: r.model,
    at: num(r.at),
  };
}

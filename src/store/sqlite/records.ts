// The smaller repositories: the job queue, outcomes, merge credits, tombstones and events.
import type { Database } from "bun:sqlite";
import type {
  EventLog,
  EventRecord,
  JobQueue,
  MergeCreditLedger,
  OutcomeRecord,
  OutcomeRepository,
  StatsRepository,
  TombstoneRepository,
} from "../ports";

export class SqliteJobQueue implements JobQueue {
  constructor(private readonly db: Database) {}

  next(limit: number) {
    return this.db
      .query<{ trailSeq: number; attempts: number }, [number]>(
        "SELECT trail_seq AS trailSeq, attempts FROM jobs ORDER BY trail_seq ASC LIMIT ?",
      )
      .all(limit);
  }

  recordFailure(trailSeq: number, error: string): void {
    this.db.query("UPDATE jobs SET attempts = attempts + 1, last_error = ? WHERE trail_seq = ?").run(error.slice(0, 500), trailSeq);
  }

  remove(trailSeq: number): void {
    this.db.query("DELETE FROM jobs WHERE trail_seq = ?").run(trailSeq);
  }

  depth(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM jobs").get()!.n;
  }
}

export class SqliteOutcomeRepository implements OutcomeRepository {
  constructor(private readonly db: Database) {}

  insert(o: OutcomeRecord): void {
    this.db
      .query("INSERT INTO outcomes (trail_seq, agent, outcome, counted, notes, model, at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(o.trailSeq, o.agent, o.outcome, o.counted ? 1 : 0, o.notes, o.model, o.at);
  }

  latestWithNotes(trailSeqs: number[], perTrail: number): OutcomeRecord[] {
    if (trailSeqs.length === 0) return [];
    const rows = this.db
      .query<any, number[]>(
        `SELECT * FROM (
           SELECT trail_seq, agent, outcome, counted, notes, model, at,
                  row_number() OVER (PARTITION BY trail_seq ORDER BY at DESC, id DESC) AS n
           FROM outcomes WHERE notes IS NOT NULL AND trail_seq IN (${trailSeqs.map(() => "?").join(",")})
         ) WHERE n <= ? ORDER BY trail_seq, at DESC`,
      )
      .all(...trailSeqs, perTrail);
    return rows.map((r) => ({
      trailSeq: r.trail_seq,
      agent: r.agent,
      outcome: r.outcome,
      counted: r.counted === 1,
      notes: r.notes,
      model: r.model,
      at: r.at,
    }));
  }

  countedSince(trailSeq: number, agent: string, since: number): boolean {
    return (
      this.db
        .query("SELECT 1 FROM outcomes WHERE trail_seq = ? AND agent = ? AND counted = 1 AND at >= ? LIMIT 1")
        .get(trailSeq, agent, since) !== null
    );
  }
}

export class SqliteMergeCreditLedger implements MergeCreditLedger {
  constructor(private readonly db: Database) {}

  grant(trailSeq: number, agent: string, day: string): boolean {
    return (
      this.db.query("INSERT INTO merge_credits (trail_seq, agent, day) VALUES (?, ?, ?) ON CONFLICT DO NOTHING").run(trailSeq, agent, day)
        .changes === 1
    );
  }
}

export class SqliteTombstoneRepository implements TombstoneRepository {
  constructor(private readonly db: Database) {}

  add(trailId: string, contentHash: string, at: number): void {
    this.db
      .query("INSERT INTO tombstones (trail_id, content_hash, removed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
      .run(trailId, contentHash, at);
  }

  has(trailId: string): boolean {
    return this.db.query("SELECT 1 FROM tombstones WHERE trail_id = ?").get(trailId) !== null;
  }

  hasContent(contentHash: string): boolean {
    return this.db.query("SELECT 1 FROM tombstones WHERE content_hash = ? LIMIT 1").get(contentHash) !== null;
  }

  purgeBefore(at: number): number {
    return this.db.query("DELETE FROM tombstones WHERE removed_at < ?").run(at).changes;
  }
}

export class SqliteEventLog implements EventLog {
  constructor(private readonly db: Database) {}

  append(e: EventRecord): void {
    this.db
      .query("INSERT INTO events (kind, agent, trail_id, text, at) VALUES (?, ?, ?, ?, ?)")
      .run(e.kind, e.agent, e.trailId, e.text, e.at);
  }

  recent(limit: number): EventRecord[] {
    return this.db
      .query<EventRecord, [number]>("SELECT kind, agent, trail_id AS trailId, text, at FROM events ORDER BY id DESC LIMIT ?")
      .all(limit);
  }
}

const HOUR_MS = 3600_000;

export class SqliteStatsRepository implements StatsRepository {
  constructor(private readonly db: Database) {}

  touchAgent(agent: string, at: number): void {
    this.db
      .query(
        `INSERT INTO agent_activity (agent, at) VALUES (?, ?)
         ON CONFLICT (agent) DO UPDATE SET at = max(at, excluded.at)`,
      )
      .run(agent, at);
  }

  addOutcome(at: number, tokensSaved: number): void {
    this.db
      .query(
        `INSERT INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (?, 1, ?)
         ON CONFLICT (hour) DO UPDATE SET outcomes = outcomes + 1, tokens_saved = tokens_saved + excluded.tokens_saved`,
      )
      .run(Math.floor(at / HOUR_MS), Math.round(tokensSaved));
  }

  /** Outcomes and tokens: whole hourly buckets from the one containing `at`; agents: exact. */
  since(at: number) {
    const hour = Math.floor(at / HOUR_MS);
    const totals = this.db
      .query<{ o: number | null; t: number | null }, [number]>(
        "SELECT sum(outcomes) AS o, sum(tokens_saved) AS t FROM stats_hourly WHERE hour >= ?",
      )
      .get(hour)!;
    const agents = this.db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM agent_activity WHERE at >= ?").get(at)!.n;
    return { outcomes: totals.o ?? 0, tokensSaved: totals.t ?? 0, agents };
  }

  trailsIndexed(): number {
    return this.db.query<{ value: number }, []>("SELECT value FROM counters WHERE name = 'trails_indexed'").get()?.value ?? 0;
  }

  /** Drops buckets older than `before` (they no longer count for anything). */
  purgeBefore(before: number): void {
    const hour = Math.floor(before / HOUR_MS);
    this.db.query("DELETE FROM stats_hourly WHERE hour < ?").run(hour);
    this.db.query("DELETE FROM agent_activity WHERE at < ?").run(before);
    this.db.query("DELETE FROM search_hourly WHERE hour < ?").run(hour);
  }
}

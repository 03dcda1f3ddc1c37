// The smaller repositories: the job queue, outcomes, merge credits, tombstones and events.
import type { Database } from "bun:sqlite";
import type {
  EventLog,
  EventRecord,
  JobQueue,
  MergeCreditLedger,
  OutcomeRecord,
  OutcomeRepository,
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
    this.db
      .query("UPDATE jobs SET attempts = attempts + 1, last_error = ? WHERE trail_seq = ?")
      .run(error.slice(0, 500), trailSeq);
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
      this.db
        .query("INSERT INTO merge_credits (trail_seq, agent, day) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
        .run(trailSeq, agent, day).changes === 1
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
}

// The smaller repositories: the job queue, outcomes, merge credits, tombstones and events.
import type { Database } from "bun:sqlite";
import type {
  EventLog,
  EventRecord,
  JobQueue,
  MergeCreditLedger,
  OutcomeRecord,
  StoredNotes,
  OutcomeRepository,
  SeriesName,
  SeriesPoint,
  StatsRepository,
  TombstoneRepository,
  FingerprintAliasRepository,
} from "../ports";

export class SqliteJobQueue implements JobQueue {
  constructor(private readonly db: Database) {}

  async next(limit: number) {
    return this.db
      .query<{ trailSeq: number; attempts: number }, [number]>(
        "SELECT trail_seq AS trailSeq, attempts FROM jobs ORDER BY trail_seq ASC LIMIT ?",
      )
      .all(limit);
  }

  async recordFailure(trailSeq: number, error: string): Promise<void> {
    this.db.query("UPDATE jobs SET attempts = attempts + 1, last_error = ? WHERE trail_seq = ?").run(error.slice(0, 500), trailSeq);
  }

  async remove(trailSeq: number): Promise<void> {
    this.db.query("DELETE FROM jobs WHERE trail_seq = ?").run(trailSeq);
  }

  async depth(): Promise<number> {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM jobs").get()!.n;
  }

  /** No other transaction is in flight while this one runs. */
  depthForInsert(_limit: number): Promise<number> {
    return this.depth();
  }
}

/** An outcomes row (the columns both readers select) as the port's record. */
function outcomeFromRow(r: any): OutcomeRecord {
  return {
    trailSeq: r.trail_seq,
    agent: r.agent,
    client: r.client,
    outcome: r.outcome,
    counted: r.counted === 1,
    notes: r.notes,
    model: r.model,
    at: r.at,
  };
}

export class SqliteOutcomeRepository implements OutcomeRepository {
  constructor(private readonly db: Database) {}

  async insert(o: OutcomeRecord): Promise<void> {
    this.db
      .query(
        "INSERT INTO outcomes (trail_seq, agent, client, outcome, counted, notes, model, at, content_rules_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(o.trailSeq, o.agent, o.client, o.outcome, o.counted ? 1 : 0, o.notes, o.model, o.at, o.contentRulesVersion ?? 0);
  }

  async notesCheckedBefore(version: number, afterId: number, limit: number): Promise<StoredNotes[]> {
    return this.db
      .query<{ id: number; trail_seq: number; notes: string; content_rules_version: number }, [number, number, number]>(
        `SELECT id, trail_seq, notes, content_rules_version FROM outcomes
         WHERE notes IS NOT NULL AND content_rules_version < ? AND id > ? ORDER BY id LIMIT ?`,
      )
      .all(version, afterId, limit)
      .map((r) => ({ id: r.id, trailSeq: r.trail_seq, notes: r.notes, contentRulesVersion: r.content_rules_version }));
  }

  async hasNotesCheckedBefore(version: number): Promise<boolean> {
    // Without ORDER BY id the planner takes the notes' version index, not a walk of every report.
    return (
      this.db
        .query<{ one: number }, [number]>("SELECT 1 AS one FROM outcomes WHERE notes IS NOT NULL AND content_rules_version < ? LIMIT 1")
        .get(version) !== null
    );
  }

  async rescreenNotes(id: number, r: { wasVersion: number; notes: string | null; contentRulesVersion: number }): Promise<boolean> {
    return (
      this.db
        .query("UPDATE outcomes SET notes = ?, content_rules_version = ? WHERE id = ? AND content_rules_version = ?")
        .run(r.notes, r.contentRulesVersion, id, r.wasVersion).changes > 0
    );
  }

  async latestWithNotes(trailSeqs: number[], perTrail: number): Promise<OutcomeRecord[]> {
    // One indexed read of `perTrail` rows per trail: ranking every note of the page's trails (a
    // window over all of them) cost a feed page 0.4 s once one trail held 200,000 notes.
    const latest = this.db.query<any, [number, number]>(
      // The notes index, also when a trail holds many more reports without notes than with.
      `SELECT trail_seq, agent, client, outcome, counted, notes, model, at FROM outcomes INDEXED BY outcomes_with_notes
       WHERE trail_seq = ? AND notes IS NOT NULL ORDER BY at DESC, id DESC LIMIT ?`,
    );
    return [...new Set(trailSeqs)]
      .sort((a, b) => a - b)
      .flatMap((seq) => latest.all(seq, perTrail))
      .map(outcomeFromRow);
  }

  async forTrail(trailSeq: number, limit: number): Promise<OutcomeRecord[]> {
    const rows = this.db
      .query<any, [number, number]>(
        "SELECT trail_seq, agent, client, outcome, counted, notes, model, at FROM outcomes WHERE trail_seq = ? ORDER BY at DESC, id DESC LIMIT ?",
      )
      .all(trailSeq, limit);
    return rows.map(outcomeFromRow);
  }

  /** Transactions run one at a time on SQLite (a writer holds the store's mutex): nothing to hold. */
  async holdTrail(trailSeq: number, _judging: boolean): Promise<boolean> {
    return this.db.query<{ status: string }, [number]>("SELECT status FROM trails WHERE seq = ?").get(trailSeq)?.status === "indexed";
  }

  async countedSince(trailSeq: number, agent: string, since: number): Promise<boolean> {
    return (
      this.db
        .query("SELECT 1 FROM outcomes WHERE trail_seq = ? AND agent = ? AND counted = 1 AND at >= ? LIMIT 1")
        .get(trailSeq, agent, since) !== null
    );
  }

  async countedForClientSince(trailSeq: number, client: string, since: number): Promise<number> {
    return this.db
      .query<{ n: number }, [number, string, number]>(
        "SELECT count(*) AS n FROM outcomes WHERE trail_seq = ? AND client = ? AND counted = 1 AND at >= ?",
      )
      .get(trailSeq, client, since)!.n;
  }

  async uncountedForClientSince(client: string, since: number, atMost: number): Promise<number> {
    return this.db
      .query<{ n: number }, [string, number, number]>(
        "SELECT count(*) AS n FROM (SELECT 1 FROM outcomes WHERE client = ? AND counted = 0 AND at >= ? LIMIT ?)",
      )
      .get(client, since, atMost)!.n;
  }
}

export class SqliteMergeCreditLedger implements MergeCreditLedger {
  constructor(private readonly db: Database) {}

  async grant(trailSeq: number, agent: string, client: string, day: string): Promise<boolean> {
    // Either unique key (agent, or client, per trail and day) refuses the row.
    return (
      this.db
        .query("INSERT INTO merge_credits (trail_seq, agent, client, day) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .run(trailSeq, agent, client, day).changes === 1
    );
  }

  async earnedSince(trailSeq: number, agent: string, client: string, day: string): Promise<{ byAgent: boolean; byClient: number }> {
    // Both keys are indexed: the primary key (trail_seq, agent, day) and merge_credits_by_client.
    const byAgent = this.db
      .query("SELECT 1 FROM merge_credits WHERE trail_seq = ? AND agent = ? AND day >= ? LIMIT 1")
      .get(trailSeq, agent, day);
    const byClient = this.db
      .query<{ n: number }, [number, string, string]>(
        "SELECT count(*) AS n FROM merge_credits WHERE trail_seq = ? AND client = ? AND day >= ?",
      )
      .get(trailSeq, client, day)!.n;
    return { byAgent: byAgent !== null, byClient };
  }
}

export class SqliteTombstoneRepository implements TombstoneRepository {
  constructor(private readonly db: Database) {}

  async count(): Promise<number> {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM tombstones").get()!.n;
  }

  async add(trailId: string, contentHash: string, at: number, mergeKey: string | null = null): Promise<void> {
    this.db
      .query("INSERT INTO tombstones (trail_id, content_hash, removed_at, merge_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .run(trailId, contentHash, at, mergeKey);
  }

  async hasMergeKey(mergeKey: string): Promise<boolean> {
    return this.db.query("SELECT 1 FROM tombstones WHERE merge_key = ? LIMIT 1").get(mergeKey) !== null;
  }

  async has(trailId: string): Promise<boolean> {
    return this.db.query("SELECT 1 FROM tombstones WHERE trail_id = ?").get(trailId) !== null;
  }

  async hasContent(contentHash: string): Promise<boolean> {
    return this.db.query("SELECT 1 FROM tombstones WHERE content_hash = ? LIMIT 1").get(contentHash) !== null;
  }

  async purgeBefore(at: number): Promise<number> {
    return this.db.query("DELETE FROM tombstones WHERE removed_at < ?").run(at).changes;
  }
}

export class SqliteFingerprintAliasRepository implements FingerprintAliasRepository {
  constructor(private readonly db: Database) {}

  async add(oldFp: string, newFp: string, at: number): Promise<void> {
    this.db
      .query("INSERT INTO fingerprint_aliases (old_fp, new_fp, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
      .run(oldFp, newFp, at);
  }

  async addAll(pairs: readonly (readonly [string, string])[], at: number): Promise<void> {
    const insert = this.db.query("INSERT INTO fingerprint_aliases (old_fp, new_fp, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING");
    for (const [oldFp, newFp] of pairs) insert.run(oldFp, newFp, at);
  }

  async resolve(oldFp: string): Promise<string[]> {
    return this.db
      .query<{ new_fp: string }, [string]>("SELECT new_fp FROM fingerprint_aliases WHERE old_fp = ? ORDER BY new_fp")
      .all(oldFp)
      .map((r) => r.new_fp);
  }

  async purgeBefore(at: number): Promise<number> {
    return this.db.query("DELETE FROM fingerprint_aliases WHERE created_at < ?").run(at).changes;
  }
}

export class SqliteEventLog implements EventLog {
  constructor(private readonly db: Database) {}

  async append(e: EventRecord): Promise<void> {
    this.db
      .query("INSERT INTO events (kind, agent, trail_id, text, at) VALUES (?, ?, ?, ?, ?)")
      .run(e.kind, e.agent, e.trailId, e.text, e.at);
  }

  async recent(limit: number): Promise<EventRecord[]> {
    return this.db
      .query<EventRecord, [number]>("SELECT kind, agent, trail_id AS trailId, text, at FROM events ORDER BY id DESC LIMIT ?")
      .all(limit);
  }

  async forTrail(trailId: string, limit: number): Promise<EventRecord[]> {
    return this.db
      .query<EventRecord, [string, number]>(
        "SELECT kind, agent, trail_id AS trailId, text, at FROM events WHERE trail_id = ? ORDER BY id DESC LIMIT ?",
      )
      .all(trailId, limit);
  }

  async purgeSearchesBefore(before: number, batch: number): Promise<number> {
    return this.db
      .query(
        `DELETE FROM events WHERE id IN (
           SELECT id FROM events WHERE kind = 'search' AND at < ? ORDER BY at LIMIT ?)`,
      )
      .run(before, batch).changes;
  }

  async forgetTrail(trailId: string): Promise<void> {
    this.db.query("DELETE FROM events WHERE trail_id = ? AND kind <> 'search'").run(trailId);
    this.db.query("UPDATE events SET trail_id = NULL WHERE trail_id = ?").run(trailId);
  }

  async forgetMergeCredit(intoTrailId: string, agent: string, at: number): Promise<void> {
    this.db.query("DELETE FROM events WHERE trail_id = ? AND kind = 'reinforced' AND agent = ? AND at = ?").run(intoTrailId, agent, at);
  }
}

const HOUR_MS = 3600_000;

/** A whole number from 0 to MAX_SAFE_INTEGER (JSON clients read larger integers inexactly). */
const clampCount = (n: number) =>
  Number.isFinite(n) ? Math.min(Math.max(Math.round(n), 0), Number.MAX_SAFE_INTEGER) : n > 0 ? Number.MAX_SAFE_INTEGER : 0;

export class SqliteStatsRepository implements StatsRepository {
  constructor(private readonly db: Database) {}

  async touchAgent(agent: string, at: number): Promise<void> {
    this.db
      .query(
        `INSERT INTO agent_activity (agent, at) VALUES (?, ?)
         ON CONFLICT (agent) DO UPDATE SET at = max(at, excluded.at)`,
      )
      .run(agent, at);
  }

  /**
   * Adds to the hour's bucket, saturating at MAX_SAFE_INTEGER: a 64-bit overflow would turn the
   * sum into a REAL the STRICT column refuses, failing every later report in that hour.
   */
  async addOutcome(at: number, tokensSaved: number): Promise<void> {
    this.db
      .query(
        `INSERT INTO stats_hourly (hour, outcomes, tokens_saved) VALUES (?1, 1, ?2)
         ON CONFLICT (hour) DO UPDATE SET
           outcomes = CASE WHEN outcomes >= ?3 THEN ?3 ELSE outcomes + 1 END,
           tokens_saved = CASE WHEN tokens_saved > ?3 - excluded.tokens_saved THEN ?3 ELSE tokens_saved + excluded.tokens_saved END`,
      )
      .run(Math.floor(at / HOUR_MS), clampCount(tokensSaved), Number.MAX_SAFE_INTEGER);
  }

  /** Outcomes and tokens: whole hourly buckets from the one containing `at`; agents: exact. */
  async since(at: number) {
    const hour = Math.floor(at / HOUR_MS);
    // total() sums in floating point: sum() raises "integer overflow" on values an older version
    // stored, and that failed /v1/stats until the bucket aged out.
    const totals = this.db
      .query<{ o: number; t: number }, [number]>("SELECT total(outcomes) AS o, total(tokens_saved) AS t FROM stats_hourly WHERE hour >= ?")
      .get(hour)!;
    const agents = this.db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM agent_activity WHERE at >= ?").get(at)!.n;
    return { outcomes: clampCount(totals.o), tokensSaved: clampCount(totals.t), agents };
  }

  async trailsIndexed(): Promise<number> {
    return this.db.query<{ value: number }, []>("SELECT value FROM counters WHERE name = 'trails_indexed'").get()?.value ?? 0;
  }

  async bump(name: SeriesName, at: number, by = 1): Promise<void> {
    this.db
      .query(
        "INSERT INTO series_hourly (hour, name, value) VALUES (?, ?, ?) ON CONFLICT (hour, name) DO UPDATE SET value = value + excluded.value",
      )
      .run(Math.floor(at / HOUR_MS), name, by);
  }

  async peak(name: SeriesName, at: number, value: number): Promise<void> {
    this.db
      .query(
        "INSERT INTO series_hourly (hour, name, value) VALUES (?, ?, ?) ON CONFLICT (hour, name) DO UPDATE SET value = max(value, excluded.value)",
      )
      .run(Math.floor(at / HOUR_MS), name, value);
  }

  async series(since: number): Promise<SeriesPoint[]> {
    return this.db
      .query<{ hour: number; name: SeriesName; value: number }, [number]>(
        "SELECT hour, name, value FROM series_hourly WHERE hour >= ? ORDER BY hour, name",
      )
      .all(Math.floor(since / HOUR_MS))
      .map((r) => ({ hour: r.hour * HOUR_MS, name: r.name, value: r.value }));
  }

  async purgeSeriesBefore(before: number): Promise<void> {
    this.db.query("DELETE FROM series_hourly WHERE hour < ?").run(Math.floor(before / HOUR_MS));
  }

  /** Drops buckets older than `before` (they no longer count for anything). */
  async purgeBefore(before: number): Promise<void> {
    const hour = Math.floor(before / HOUR_MS);
    this.db.query("DELETE FROM stats_hourly WHERE hour < ?").run(hour);
    this.db.query("DELETE FROM agent_activity WHERE at < ?").run(before);
    this.db.query("DELETE FROM search_hourly WHERE hour < ?").run(hour);
    this.db.query("DELETE FROM search_clients WHERE hour < ?").run(hour);
  }
}

import type { Database, Statement } from "bun:sqlite";
import { runtimeColumn } from "../../core/overlap";
import { REINFORCED_AHEAD_AT_MOST_MS } from "../ports";
import type {
  FeedOptions,
  NewTrail,
  OutcomeCounts,
  RankingFacts,
  Refingerprint,
  Rescreen,
  TrailRecord,
  TrailRepository,
  TrailStatus,
  Verdict,
} from "../ports";

interface Row {
  seq: number;
  id: string;
  status: TrailStatus;
  fingerprint: string;
  error_type: string | null;
  content: string;
  content_hash: string;
  author: string;
  client: string | null;
  created_at: number;
  indexed_at: number | null;
  category: string | null;
  quality: number | null;
  risk: string | null;
  worked: number;
  partially_worked: number;
  failed: number;
  strength: number | null;
  merged_into: string | null;
  reasons: string | null;
  merge_key: string | null;
  reinforced_at: number | null;
  normalizer_version: number;
  content_rules_version: number;
}

interface CountRow {
  worked: number;
  partially_worked: number;
  failed: number;
  quality: number | null;
}

function toRecord(r: Row): TrailRecord {
  return {
    seq: r.seq,
    id: r.id,
    status: r.status,
    fingerprint: r.fingerprint,
    errorType: r.error_type,
    trail: JSON.parse(r.content),
    contentHash: r.content_hash,
    author: r.author,
    client: r.client ?? null,
    createdAt: r.created_at,
    indexedAt: r.indexed_at,
    category: r.category,
    quality: r.quality,
    risk: r.risk === null ? null : JSON.parse(r.risk),
    counts: { worked: r.worked, partially_worked: r.partially_worked, failed: r.failed },
    strength: r.strength,
    mergedInto: r.merged_into,
    reasons: r.reasons === null ? null : JSON.parse(r.reasons),
    mergeKey: r.merge_key,
    reinforcedAt: r.reinforced_at,
    normalizerVersion: r.normalizer_version,
    contentRulesVersion: r.content_rules_version,
  };
}

export class SqliteTrailRepository implements TrailRepository {
  private readonly insertTrail;
  private readonly insertJob;
  private readonly byIdStmt;
  private readonly bySeqStmt;
  private readonly byFingerprintStmt;
  private readonly byMergeKeyStmt;
  private readonly countStmts: Record<keyof OutcomeCounts, Statement<CountRow, [number | null, number]>>;
  private readonly setStrengthStmt;

  constructor(private readonly db: Database) {
    this.insertTrail = db.query<Row, any[]>(
      `INSERT INTO trails (id, status, fingerprint, normalizer_version, content_rules_version, error_type, content, content_hash, author,
         client, created_at, runtime, tokens_spent)
       VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    );
    this.insertJob = db.query("INSERT INTO jobs (trail_seq, enqueued_at) VALUES (?, ?)");
    this.byIdStmt = db.query<Row, [string]>("SELECT * FROM trails WHERE id = ?");
    this.bySeqStmt = db.query<Row, [number]>("SELECT * FROM trails WHERE seq = ?");
    this.byFingerprintStmt = db.query<Row, [string, number]>(
      `SELECT * FROM trails WHERE fingerprint = ? AND status = 'indexed'
       ORDER BY strength DESC, seq ASC LIMIT ?`,
    );
    this.byMergeKeyStmt = db.query<Row, [string]>(
      "SELECT * FROM trails WHERE merge_key = ? AND status = 'indexed' ORDER BY seq ASC LIMIT 1",
    );
    // One statement per column: the column name cannot be a bound parameter. A reinforcement is
    // stamped no earlier than the feed's head (src/store/ports.ts countOutcome).
    const count = (column: keyof OutcomeCounts) =>
      db.query<CountRow, [number | null, number]>(
        `UPDATE trails SET ${column} = ${column} + 1,
           reinforced_at = CASE WHEN ?1 IS NULL THEN reinforced_at
             ELSE max(?1, min(coalesce((SELECT reinforced_at + 1 FROM trails WHERE status = 'indexed'
                                        ORDER BY reinforced_at DESC, seq DESC LIMIT 1), ?1),
                              ?1 + ${REINFORCED_AHEAD_AT_MOST_MS})) END
         WHERE seq = ?2
         RETURNING worked, partially_worked, failed, quality`,
      );
    this.countStmts = { worked: count("worked"), partially_worked: count("partially_worked"), failed: count("failed") };
    this.setStrengthStmt = db.query("UPDATE trails SET strength = ? WHERE seq = ?");
  }

  async insertQueued(t: NewTrail): Promise<TrailRecord> {
    return this.db.transaction(() => {
      const row = this.insertTrail.get(
        t.id,
        t.fingerprint,
        t.normalizerVersion,
        t.contentRulesVersion,
        t.errorType,
        JSON.stringify(t.trail),
        t.contentHash,
        t.author,
        t.client,
        t.createdAt,
        runtimeColumn(t.trail.environment.runtime.name),
        t.trail.effort?.tokens_spent ?? null,
      )!;
      this.insertJob.run(row.seq, t.createdAt);
      return toRecord(row);
    })();
  }

  async byId(id: string): Promise<TrailRecord | null> {
    const r = this.byIdStmt.get(id);
    return r ? toRecord(r) : null;
  }

  async bySeq(seq: number): Promise<TrailRecord | null> {
    const r = this.bySeqStmt.get(seq);
    return r ? toRecord(r) : null;
  }

  async bySeqs(seqs: number[]): Promise<TrailRecord[]> {
    if (seqs.length === 0) return [];
    const rows = this.db.query<Row, number[]>(`SELECT * FROM trails WHERE seq IN (${seqs.map(() => "?").join(",")})`).all(...seqs);
    return rows.map(toRecord);
  }

  async rankingFacts(seqs: number[], opts: { environment: boolean }): Promise<RankingFacts[]> {
    if (seqs.length === 0) return [];
    // json_extract returns the environment object as JSON text: SQLite reads it out of the stored
    // trail far faster than parsing every whole trail in JavaScript.
    // Without the environment, the index trails_ranking answers alone (the planner would read the
    // table by rowid).
    const [environment, source] = opts.environment
      ? ["json_extract(content, '$.environment')", "trails"]
      : ["NULL", "trails INDEXED BY trails_ranking"];
    return this.db
      .query<{ seq: number; status: TrailStatus; strength: number | null; environment: string | null }, number[]>(
        `SELECT seq, status, strength, ${environment} AS environment
         FROM ${source} WHERE seq IN (${seqs.map(() => "?").join(",")})`,
      )
      .all(...seqs)
      .map((r) => ({ ...r, environment: r.environment === null ? null : JSON.parse(r.environment) }));
  }

  async indexedByFingerprint(fingerprint: string, limit: number): Promise<TrailRecord[]> {
    return this.byFingerprintStmt.all(fingerprint, limit).map(toRecord);
  }

  async indexedByMergeKey(mergeKey: string): Promise<TrailRecord | null> {
    const r = this.byMergeKeyStmt.get(mergeKey);
    return r ? toRecord(r) : null;
  }

  async indexedAfter(afterSeq: number, limit: number): Promise<TrailRecord[]> {
    return this.db
      .query<Row, [number, number]>("SELECT * FROM trails WHERE status = 'indexed' AND seq > ? ORDER BY seq LIMIT ?")
      .all(afterSeq, limit)
      .map(toRecord);
  }

  // No ORDER BY: the planner then takes the version index instead of walking every row by seq
  // (150 ms at 50,000 trails when nothing is left, on every start).
  async anyFingerprintedBefore(version: number): Promise<boolean> {
    return this.db.query("SELECT 1 FROM trails WHERE normalizer_version < ? LIMIT 1").get(version) !== null;
  }

  async anyCheckedBefore(version: number): Promise<boolean> {
    return this.db.query("SELECT 1 FROM trails WHERE content_rules_version < ? AND status <> 'queued' LIMIT 1").get(version) !== null;
  }

  async fingerprintedBefore(version: number, afterSeq: number, limit: number): Promise<TrailRecord[]> {
    return this.db
      .query<Row, [number, number, number]>("SELECT * FROM trails WHERE normalizer_version < ? AND seq > ? ORDER BY seq LIMIT ?")
      .all(version, afterSeq, limit)
      .map(toRecord);
  }

  async refingerprint(seq: number, r: Refingerprint): Promise<void> {
    this.db
      .query("UPDATE trails SET fingerprint = ?, normalizer_version = ?, merge_key = coalesce(?, merge_key) WHERE seq = ?")
      .run(r.fingerprint, r.normalizerVersion, r.mergeKey, seq);
  }

  async checkedBefore(version: number, afterSeq: number, limit: number): Promise<TrailRecord[]> {
    return this.db
      .query<Row, [number, number, number]>(
        "SELECT * FROM trails WHERE content_rules_version < ? AND seq > ? AND status <> 'queued' ORDER BY seq LIMIT ?",
      )
      .all(version, afterSeq, limit)
      .map(toRecord);
  }

  async rescreen(seq: number, r: Rescreen): Promise<boolean> {
    const rejected = r.rejectedFor !== undefined;
    const changes = this.db
      .query(
        `UPDATE trails SET content = ?, content_hash = ?, error_type = ?, runtime = ?, content_rules_version = ?,
           risk = coalesce(?, risk), status = coalesce(?, status), reasons = coalesce(?, reasons)
         WHERE seq = ? AND status = ? AND content_rules_version = ?`,
      )
      .run(
        JSON.stringify(r.trail),
        r.contentHash,
        r.errorType,
        runtimeColumn(r.trail.environment.runtime.name),
        r.contentRulesVersion,
        r.risk === undefined ? null : JSON.stringify(r.risk),
        rejected ? "rejected" : null,
        rejected ? JSON.stringify(r.rejectedFor) : null,
        seq,
        r.was.status,
        r.was.contentRulesVersion,
      ).changes;
    if (changes === 1 && rejected && r.was.status === "indexed") this.bumpIndexed(-1);
    return changes === 1;
  }

  async applyVerdict(seq: number, v: Verdict): Promise<boolean> {
    const content = JSON.stringify(v.trail);
    let changes: number;
    if (v.status === "indexed") {
      changes = this.db
        .query(
          `UPDATE trails SET status = 'indexed', content = ?, category = ?, quality = ?, risk = ?, strength = ?,
             merge_key = ?, indexed_at = ?, reinforced_at = ?, content_rules_version = ? WHERE seq = ? AND status = 'queued'`,
        )
        .run(
          content,
          v.category,
          v.quality,
          JSON.stringify(v.risk),
          v.strength,
          v.mergeKey,
          v.at,
          v.at,
          v.contentRulesVersion,
          seq,
        ).changes;
      if (changes === 1) this.bumpIndexed(1);
    } else if (v.status === "merged") {
      changes = this.db
        .query(
          "UPDATE trails SET status = 'merged', content = ?, merged_into = ?, indexed_at = ?, content_rules_version = ? WHERE seq = ? AND status = 'queued'",
        )
        .run(content, v.mergedInto, v.at, v.contentRulesVersion, seq).changes;
    } else {
      changes = this.db
        .query(
          "UPDATE trails SET status = 'rejected', content = ?, reasons = ?, indexed_at = ?, content_rules_version = ? WHERE seq = ? AND status = 'queued'",
        )
        .run(content, JSON.stringify(v.reasons), v.at, v.contentRulesVersion, seq).changes;
    }
    return changes === 1;
  }

  async countOutcome(
    seq: number,
    outcome: keyof OutcomeCounts,
    reinforcedAt: number | null,
  ): Promise<{ counts: OutcomeCounts; quality: number | null } | null> {
    const row = this.countStmts[outcome].get(reinforcedAt, seq);
    return row
      ? { counts: { worked: row.worked, partially_worked: row.partially_worked, failed: row.failed }, quality: row.quality }
      : null;
  }

  async setStrength(seq: number, strength: number): Promise<void> {
    this.setStrengthStmt.run(strength, seq);
  }

  async holdIndexed(seqs: number[]): Promise<Set<number>> {
    if (seqs.length === 0) return new Set();
    const rows = this.db
      .query<{ seq: number }, number[]>(`SELECT seq FROM trails WHERE status = 'indexed' AND seq IN (${seqs.map(() => "?").join(",")})`)
      .all(...seqs);
    return new Set(rows.map((r) => r.seq));
  }

  /** Nothing to hold: SQLite's writers run one at a time. */
  async holdMergeKeys(_mergeKeys: string[]): Promise<void> {}

  async delete(seq: number): Promise<TrailRecord | null> {
    const removed = this.db.query<Row, [number]>("DELETE FROM trails WHERE seq = ? RETURNING *").get(seq);
    if (removed?.status === "indexed") this.bumpIndexed(-1);
    return removed ? toRecord(removed) : null;
  }

  /** The running count behind stats.trails, kept in the caller's transaction. */
  private bumpIndexed(by: number): void {
    this.db.query("UPDATE counters SET value = value + ? WHERE name = 'trails_indexed'").run(by);
  }

  async countByStatus(): Promise<Record<TrailStatus, number>> {
    const counts: Record<TrailStatus, number> = { queued: 0, indexed: 0, merged: 0, rejected: 0 };
    const rows = this.db.query<{ status: TrailStatus; n: number }, []>("SELECT status, count(*) AS n FROM trails GROUP BY status").all();
    for (const r of rows) counts[r.status] = r.n;
    return counts;
  }

  async feed(opts: FeedOptions): Promise<TrailRecord[]> {
    const where = ["status = 'indexed'"];
    const args: (string | number)[] = [];
    if (opts.category) {
      where.push("category = ?");
      args.push(opts.category);
    }
    if (opts.runtimes?.length) {
      // IN keeps to the (runtime, reinforced_at, seq) index: SQLite reads each name's rows in order
      // into a top-N sorter and stops each at the limit (0.03 ms a page with 180,000 matches among
      // 300,000 trails, against 0.013 ms for one name)
      where.push(`runtime IN (${opts.runtimes.map(() => "?").join(", ")})`);
      args.push(...opts.runtimes.map((r) => r.toLowerCase()));
    }
    if (opts.after) {
      // A row value, so SQLite seeks into the (reinforced_at, seq) index instead of scanning it.
      where.push("(reinforced_at, seq) < (?, ?)");
      args.push(opts.after.reinforcedAt, opts.after.seq);
    }
    args.push(opts.limit);
    return this.db
      .query<Row, (string | number)[]>(`SELECT * FROM trails WHERE ${where.join(" AND ")} ORDER BY reinforced_at DESC, seq DESC LIMIT ?`)
      .all(...args)
      .map(toRecord);
  }
}

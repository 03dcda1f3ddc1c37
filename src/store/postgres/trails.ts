import type { SQL } from "bun";
import { runtimeColumn } from "../../core/overlap";
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
import { REINFORCED_AHEAD_AT_MOST_MS } from "../ports";
import { num, numOrNull } from "./repositories";

function toRecord(r: any): TrailRecord {
  return {
    seq: num(r.seq),
    id: r.id,
    status: r.status,
    fingerprint: r.fingerprint,
    errorType: r.error_type,
    trail: JSON.parse(r.content),
    contentHash: r.content_hash,
    author: r.author,
    client: r.client ?? null,
    createdAt: num(r.created_at),
    indexedAt: numOrNull(r.indexed_at),
    category: r.category,
    quality: r.quality,
    risk: r.risk === null ? null : JSON.parse(r.risk),
    counts: { worked: r.worked, partially_worked: r.partially_worked, failed: r.failed },
    strength: r.strength,
    mergedInto: r.merged_into,
    reasons: r.reasons === null ? null : JSON.parse(r.reasons),
    mergeKey: r.merge_key,
    reinforcedAt: numOrNull(r.reinforced_at),
    normalizerVersion: r.normalizer_version,
    contentRulesVersion: r.content_rules_version,
  };
}

/** Advisory lock namespace of merge keys (two-key form: apart from the lexical writers' one-key lock). */
const MERGE_KEY_LOCKS = 0x636f6d6b;

// The columns a record needs (runtime and tokens_spent are for filters and migration only).
const COLUMNS = `seq, id, status, fingerprint, error_type, content, content_hash, author, client, created_at, indexed_at, category,
  quality, risk, worked, partially_worked, failed, strength, merged_into, reasons, merge_key, reinforced_at, normalizer_version,
  content_rules_version`;

export class PgTrailRepository implements TrailRepository {
  constructor(private readonly sql: SQL) {}

  /** The trail and its job in one statement (atomic on its own, also outside a transaction). */
  async insertQueued(t: NewTrail): Promise<TrailRecord> {
    const [row] = await this.sql`
      WITH t AS (
        INSERT INTO trails (id, status, fingerprint, normalizer_version, content_rules_version, error_type, content, content_hash, author,
                            client, created_at, runtime, tokens_spent)
        VALUES (${t.id}, 'queued', ${t.fingerprint}, ${t.normalizerVersion}, ${t.contentRulesVersion}, ${t.errorType}, ${JSON.stringify(t.trail)}, ${t.contentHash}, ${t.author}, ${t.client},
                ${t.createdAt}, ${runtimeColumn(t.trail.environment.runtime.name)}, ${t.trail.effort?.tokens_spent ?? null})
        RETURNING *
      ), j AS (
        INSERT INTO jobs (trail_seq, enqueued_at) SELECT seq, ${t.createdAt} FROM t
      )
      SELECT * FROM t`;
    return toRecord(row);
  }

  async byId(id: string): Promise<TrailRecord | null> {
    const [r] = await this.sql.unsafe(`SELECT ${COLUMNS} FROM trails WHERE id = $1`, [id]);
    return r ? toRecord(r) : null;
  }

  async bySeq(seq: number): Promise<TrailRecord | null> {
    const [r] = await this.sql.unsafe(`SELECT ${COLUMNS} FROM trails WHERE seq = $1`, [seq]);
    return r ? toRecord(r) : null;
  }

  async bySeqs(seqs: number[]): Promise<TrailRecord[]> {
    if (seqs.length === 0) return [];
    return (await this.sql.unsafe(`SELECT ${COLUMNS} FROM trails WHERE seq = ANY($1::bigint[])`, [seqs])).map(toRecord);
  }

  async rankingFacts(seqs: number[], opts: { environment: boolean }): Promise<RankingFacts[]> {
    if (seqs.length === 0) return [];
    // json (not jsonb) extraction: the server parses only up to what it needs, and sends the
    // environment object as text for one small JSON.parse.
    const rows = opts.environment
      ? await this.sql`SELECT seq, status, strength, (content::json -> 'environment')::text AS environment
          FROM trails WHERE seq = ANY(${seqs}::bigint[])`
      : await this.sql`SELECT seq, status, strength FROM trails WHERE seq = ANY(${seqs}::bigint[])`;
    return rows.map((r: any) => ({
      seq: num(r.seq),
      status: r.status,
      strength: r.strength,
      environment: r.environment == null ? null : JSON.parse(r.environment),
    }));
  }

  async indexedByFingerprint(fingerprint: string, limit: number): Promise<TrailRecord[]> {
    const rows = await this.sql.unsafe(
      `SELECT ${COLUMNS} FROM trails WHERE fingerprint = $1 AND status = 'indexed' ORDER BY strength DESC, seq ASC LIMIT $2`,
      [fingerprint, limit],
    );
    return rows.map(toRecord);
  }

  /**
   * Locked against deletion (FOR KEY SHARE): a removal of the trail found waits for the merge into
   * it, and a lookup meeting a removal in progress waits for it and finds nothing. Without it the
   * merge credit's row met a trail deleted meanwhile, and the batch failed.
   */
  async indexedByMergeKey(mergeKey: string): Promise<TrailRecord | null> {
    const [r] = await this.sql.unsafe(
      `SELECT ${COLUMNS} FROM trails WHERE merge_key = $1 AND status = 'indexed' ORDER BY seq ASC LIMIT 1 FOR KEY SHARE`,
      [mergeKey],
    );
    return r ? toRecord(r) : null;
  }

  async holdIndexed(seqs: number[]): Promise<Set<number>> {
    if (seqs.length === 0) return new Set();
    const rows = await this.sql`SELECT seq FROM trails WHERE seq = ANY(${seqs}::bigint[]) AND status = 'indexed'
      ORDER BY seq FOR KEY SHARE`;
    return new Set(rows.map((r: any) => num(r.seq)));
  }

  async holdMergeKeys(mergeKeys: string[]): Promise<void> {
    if (mergeKeys.length === 0) return;
    // Sorted in a subquery, locked row by row in that order (the same order in every transaction).
    await this.sql`SELECT pg_advisory_xact_lock(${MERGE_KEY_LOCKS}::int, k) FROM (
        SELECT DISTINCT hashtext(m) AS k FROM unnest(${mergeKeys}::text[]) m ORDER BY k) keys`;
  }

  async indexedAfter(afterSeq: number, limit: number): Promise<TrailRecord[]> {
    const rows = await this.sql.unsafe(`SELECT ${COLUMNS} FROM trails WHERE status = 'indexed' AND seq > $1 ORDER BY seq LIMIT $2`, [
      afterSeq,
      limit,
    ]);
    return rows.map(toRecord);
  }

  async anyFingerprintedBefore(version: number): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM trails WHERE normalizer_version < ${version} LIMIT 1`).length > 0;
  }

  async anyCheckedBefore(version: number): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM trails WHERE content_rules_version < ${version} AND status <> 'queued' LIMIT 1`).length > 0;
  }

  async fingerprintedBefore(version: number, afterSeq: number, limit: number): Promise<TrailRecord[]> {
    const rows = await this.sql.unsafe(`SELECT ${COLUMNS} FROM trails WHERE normalizer_version < $1 AND seq > $2 ORDER BY seq LIMIT $3`, [
      version,
      afterSeq,
      limit,
    ]);
    return rows.map(toRecord);
  }

  /**
   * Merge keys are unique among indexed trails here (a database constraint, so two replicas never
   * index the same trail twice). A newer normalizer may give two stored trails one merge key:
   * the later one keeps its old key rather than fail the whole re-fingerprinting.
   */
  async refingerprint(seq: number, r: Refingerprint): Promise<void> {
    await this.sql`UPDATE trails t SET fingerprint = ${r.fingerprint}, normalizer_version = ${r.normalizerVersion},
        merge_key = CASE
          WHEN ${r.mergeKey}::text IS NULL THEN t.merge_key
          WHEN t.status = 'indexed' AND EXISTS (
            SELECT 1 FROM trails o WHERE o.merge_key = ${r.mergeKey} AND o.status = 'indexed' AND o.seq <> t.seq) THEN t.merge_key
          ELSE ${r.mergeKey} END
      WHERE seq = ${seq}`;
  }

  async checkedBefore(version: number, afterSeq: number, limit: number): Promise<TrailRecord[]> {
    const rows = await this.sql.unsafe(
      `SELECT ${COLUMNS} FROM trails WHERE content_rules_version < $1 AND seq > $2 AND status <> 'queued' ORDER BY seq LIMIT $3`,
      [version, afterSeq, limit],
    );
    return rows.map(toRecord);
  }

  async rescreen(seq: number, r: Rescreen): Promise<boolean> {
    const rejected = r.rejectedFor !== undefined;
    const rows = await this.sql`UPDATE trails SET content = ${JSON.stringify(r.trail)}, content_hash = ${r.contentHash},
        error_type = ${r.errorType}, runtime = ${runtimeColumn(r.trail.environment.runtime.name)},
        content_rules_version = ${r.contentRulesVersion},
        risk = coalesce(${r.risk === undefined ? null : JSON.stringify(r.risk)}::text, risk),
        status = coalesce(${rejected ? "rejected" : null}::text, status),
        reasons = coalesce(${rejected ? JSON.stringify(r.rejectedFor) : null}::text, reasons)
      WHERE seq = ${seq} AND status = ${r.was.status} AND content_rules_version = ${r.was.contentRulesVersion} RETURNING seq`;
    return rows.count === 1;
  }

  async countByStatus(): Promise<Record<TrailStatus, number>> {
    const counts: Record<TrailStatus, number> = { queued: 0, indexed: 0, merged: 0, rejected: 0 };
    const rows = await this.sql`SELECT status, count(*)::int AS n FROM trails GROUP BY status`;
    for (const r of rows) counts[r.status as TrailStatus] = r.n;
    return counts;
  }

  async applyVerdict(seq: number, v: Verdict): Promise<boolean> {
    const content = JSON.stringify(v.trail);
    let rows: { count: number };
    if (v.status === "indexed") {
      rows = await this.sql`UPDATE trails SET status = 'indexed', content = ${content}, category = ${v.category},
          quality = ${v.quality}, risk = ${JSON.stringify(v.risk)}, strength = ${v.strength}, merge_key = ${v.mergeKey},
          indexed_at = ${v.at}, reinforced_at = ${v.at}, content_rules_version = ${v.contentRulesVersion}
        WHERE seq = ${seq} AND status = 'queued' RETURNING seq`;
    } else if (v.status === "merged") {
      rows = await this.sql`UPDATE trails SET status = 'merged', content = ${content}, merged_into = ${v.mergedInto}, indexed_at = ${v.at},
          content_rules_version = ${v.contentRulesVersion}
        WHERE seq = ${seq} AND status = 'queued' RETURNING seq`;
    } else {
      rows = await this.sql`UPDATE trails SET status = 'rejected', content = ${content}, reasons = ${JSON.stringify(v.reasons)},
        indexed_at = ${v.at}, content_rules_version = ${v.contentRulesVersion} WHERE seq = ${seq} AND status = 'queued' RETURNING seq`;
    }
    return rows.count === 1;
  }

  async countOutcome(
    seq: number,
    outcome: keyof OutcomeCounts,
    reinforcedAt: number | null,
  ): Promise<{ counts: OutcomeCounts; quality: number | null } | null> {
    // One statement per column (a column name cannot be a parameter); the increment happens in
    // the database, so concurrent reports on any replica all count. A reinforcement is stamped no
    // earlier than the feed's head (src/store/ports.ts countOutcome), whatever the replica's clock.
    const [row] = await this.sql.unsafe(
      `UPDATE trails SET ${outcome} = ${outcome} + 1,
         reinforced_at = CASE WHEN $1::bigint IS NULL THEN reinforced_at
           ELSE greatest($1::bigint, least(coalesce((SELECT max(reinforced_at) + 1 FROM trails WHERE status = 'indexed'), $1::bigint),
                                           $1::bigint + ${REINFORCED_AHEAD_AT_MOST_MS})) END
       WHERE seq = $2
       RETURNING worked, partially_worked, failed, quality`,
      [reinforcedAt, seq],
    );
    return row
      ? { counts: { worked: row.worked, partially_worked: row.partially_worked, failed: row.failed }, quality: row.quality }
      : null;
  }

  async setStrength(seq: number, strength: number): Promise<void> {
    await this.sql`UPDATE trails SET strength = ${strength} WHERE seq = ${seq}`;
  }

  /** Waits for a transaction holding the row (a worker applying its verdict), then deletes the row as that one left it. */
  async delete(seq: number): Promise<TrailRecord | null> {
    const [r] = await this.sql.unsafe(`DELETE FROM trails WHERE seq = $1 RETURNING ${COLUMNS}`, [seq]);
    return r ? toRecord(r) : null;
  }

  async feed(opts: FeedOptions): Promise<TrailRecord[]> {
    const where = ["status = 'indexed'"];
    const args: (string | number | string[])[] = [];
    const param = (v: string | number | string[]) => {
      args.push(v);
      return `$${args.length}`;
    };
    if (opts.category) where.push(`category = ${param(opts.category)}`);
    if (opts.runtimes?.length) where.push(`runtime = ANY(${param(opts.runtimes.map((r) => r.toLowerCase()))}::text[])`);
    // A row comparison, so PostgreSQL seeks into the (reinforced_at, seq) index.
    if (opts.after) where.push(`(reinforced_at, seq) < (${param(opts.after.reinforcedAt)}::bigint, ${param(opts.after.seq)}::bigint)`);
    const limit = param(opts.limit);
    const rows = await this.sql.unsafe(
      `SELECT ${COLUMNS} FROM trails WHERE ${where.join(" AND ")} ORDER BY reinforced_at DESC, seq DESC LIMIT ${limit}`,
      args,
    );
    return rows.map(toRecord);
  }
}

import type { Database } from "bun:sqlite";
import type { DraftRecord, DraftRepository } from "../ports";

interface Row {
  token_hash: string;
  state: DraftRecord["state"];
  trail: string;
  fingerprint: string;
  redactions: string;
  risk: string;
  author: string;
  created_at: number;
  expires_at: number;
  trail_id: string | null;
}

/** A finished draft keeps its state and trail id only (see DraftRepository.markPublished). */
export const DROP_PAYLOAD = "trail = '{}', fingerprint = '', redactions = '{}', risk = '{}', author = ''";

export class SqliteDraftRepository implements DraftRepository {
  constructor(private readonly db: Database) {}

  async insert(d: DraftRecord): Promise<void> {
    this.db
      .query(
        `INSERT INTO drafts (token_hash, state, trail, fingerprint, redactions, risk, author, created_at, expires_at, trail_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        d.tokenHash,
        d.state,
        JSON.stringify(d.trail),
        d.fingerprint,
        JSON.stringify(d.redactions),
        JSON.stringify(d.risk),
        d.author,
        d.createdAt,
        d.expiresAt,
        d.trailId,
      );
  }

  async byHash(tokenHash: string): Promise<DraftRecord | null> {
    const r = this.db.query<Row, [string]>("SELECT * FROM drafts WHERE token_hash = ?").get(tokenHash);
    if (!r) return null;
    return {
      tokenHash: r.token_hash,
      state: r.state,
      trail: JSON.parse(r.trail),
      fingerprint: r.fingerprint,
      redactions: JSON.parse(r.redactions),
      risk: JSON.parse(r.risk),
      author: r.author,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      trailId: r.trail_id,
    };
  }

  async markPublished(tokenHash: string, trailId: string): Promise<boolean> {
    return (
      this.db
        .query(`UPDATE drafts SET state = 'published', trail_id = ?, ${DROP_PAYLOAD} WHERE token_hash = ? AND state = 'pending'`)
        .run(trailId, tokenHash).changes === 1
    );
  }

  async markDiscarded(tokenHash: string): Promise<boolean> {
    return (
      this.db.query(`UPDATE drafts SET state = 'discarded', ${DROP_PAYLOAD} WHERE token_hash = ? AND state = 'pending'`).run(tokenHash)
        .changes === 1
    );
  }

  async purge(now: number, finishedBefore: number): Promise<number> {
    return this.db
      .query("DELETE FROM drafts WHERE (state = 'pending' AND expires_at <= ?) OR (state != 'pending' AND created_at < ?)")
      .run(now, finishedBefore).changes;
  }
}

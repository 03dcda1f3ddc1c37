import type { Database } from "bun:sqlite";
import { FIELD_WEIGHTS } from "../../core/bm25";
import { documentTerms, ftsMatch, selectQueryTerms } from "../../core/lexical";
import type { LexicalDoc, LexicalHit, LexicalIndex, SearchCounter } from "../ports";

export class SqliteLexicalIndex implements LexicalIndex {
  private readonly del;
  private readonly ins;
  private readonly termUp;
  private readonly termDown;
  private readonly docsBy;
  private readonly totalDocs;

  constructor(private readonly db: Database) {
    this.del = db.query("DELETE FROM lexical WHERE rowid = ?");
    this.ins = db.query("INSERT INTO lexical (rowid, error, body) VALUES (?, ?, ?)");
    this.termUp = db.query("INSERT INTO lexical_terms (term, docs) VALUES (?, 1) ON CONFLICT (term) DO UPDATE SET docs = docs + 1");
    this.termDown = db.query("UPDATE lexical_terms SET docs = docs - 1 WHERE term = ?");
    this.docsBy = db.query("UPDATE counters SET value = value + ? WHERE name = 'lexical_docs'");
    this.totalDocs = db.query<{ value: number }, []>("SELECT value FROM counters WHERE name = 'lexical_docs'");
  }

  async add(id: number, doc: LexicalDoc): Promise<void> {
    this.db.transaction(() => {
      this.ins.run(id, doc.error, doc.body);
      for (const term of documentTerms(doc.error, doc.body)) this.termUp.run(term);
      this.docsBy.run(1);
    })();
  }

  async remove(id: number, doc: LexicalDoc): Promise<void> {
    this.db.transaction(() => {
      if (this.del.run(id).changes === 0) return;
      for (const term of documentTerms(doc.error, doc.body)) this.termDown.run(term);
      this.docsBy.run(-1);
    })();
  }

  async search(tokens: string[], k: number): Promise<LexicalHit[]> {
    const distinct = [...new Set(tokens)].slice(0, 256);
    if (distinct.length === 0) return [];
    const rows = this.db
      .query<{ term: string; docs: number }, string[]>(
        `SELECT term, docs FROM lexical_terms WHERE term IN (${distinct.map(() => "?").join(",")})`,
      )
      .all(...distinct);
    const total = this.totalDocs.get()?.value ?? 0;
    const match = ftsMatch(selectQueryTerms(distinct, new Map(rows.map((r) => [r.term, r.docs])), total));
    if (!match) return [];
    return this.db
      .query<{ id: number; rank: number }, [string, number]>(
        // Ties by lower id, as the PostgreSQL store orders them (core/bm25.ts bestScored).
        `SELECT rowid AS id, bm25(lexical, ${FIELD_WEIGHTS.error}, ${FIELD_WEIGHTS.body}) AS rank
         FROM lexical WHERE lexical MATCH ? ORDER BY rank, rowid LIMIT ?`,
      )
      .all(match, k)
      .map((r) => ({ id: r.id, score: -r.rank }));
  }
}

const HOUR_MS = 3600_000;

export class SqliteSearchCounter implements SearchCounter {
  constructor(private readonly db: Database) {}

  async add(label: string, at: number): Promise<void> {
    this.db
      .query(
        `INSERT INTO search_hourly (hour, label, n) VALUES (?, ?, 1)
         ON CONFLICT (hour, label) DO UPDATE SET n = n + 1`,
      )
      .run(Math.floor(at / HOUR_MS), label.slice(0, 200));
  }

  async top(since: number, limit: number) {
    return this.db
      .query<{ label: string; searches: number }, [number, number]>(
        `SELECT label, sum(n) AS searches FROM search_hourly WHERE hour >= ?
         GROUP BY label ORDER BY searches DESC, label ASC LIMIT ?`,
      )
      .all(Math.floor(since / HOUR_MS), limit);
  }
}

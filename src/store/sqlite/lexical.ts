import type { Database } from "bun:sqlite";
import type { LexicalHit, LexicalIndex, SearchCounter } from "../ports";

/** BM25 column weights: the error line counts twice the explanation and fix. */
const ERROR_WEIGHT = 2.0;
const BODY_WEIGHT = 1.0;

export class SqliteLexicalIndex implements LexicalIndex {
  private readonly del;
  private readonly ins;
  private readonly find;

  constructor(private readonly db: Database) {
    this.del = db.query("DELETE FROM lexical WHERE rowid = ?");
    this.ins = db.query("INSERT INTO lexical (rowid, error, body) VALUES (?, ?, ?)");
    this.find = db.query<{ id: number; rank: number }, [string, number]>(
      `SELECT rowid AS id, bm25(lexical, ${ERROR_WEIGHT}, ${BODY_WEIGHT}) AS rank
       FROM lexical WHERE lexical MATCH ? ORDER BY rank LIMIT ?`,
    );
  }

  upsert(id: number, doc: { error: string; body: string }): void {
    this.db.transaction(() => {
      this.del.run(id);
      this.ins.run(id, doc.error, doc.body);
    })();
  }

  remove(id: number): void {
    this.del.run(id);
  }

  search(match: string, k: number): LexicalHit[] {
    return this.find.all(match, k).map((r) => ({ id: r.id, score: -r.rank }));
  }
}

const HOUR_MS = 3600_000;

export class SqliteSearchCounter implements SearchCounter {
  constructor(private readonly db: Database) {}

  add(label: string, at: number): void {
    this.db
      .query(
        `INSERT INTO search_hourly (hour, label, n) VALUES (?, ?, 1)
         ON CONFLICT (hour, label) DO UPDATE SET n = n + 1`,
      )
      .run(Math.floor(at / HOUR_MS), label.slice(0, 200));
  }

  top(since: number, limit: number) {
    return this.db
      .query<{ label: string; searches: number }, [number, number]>(
        `SELECT label, sum(n) AS searches FROM search_hourly WHERE hour >= ?
         GROUP BY label ORDER BY searches DESC, label ASC LIMIT ?`,
      )
      .all(Math.floor(since / HOUR_MS), limit);
  }
}

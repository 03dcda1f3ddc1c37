import type { Database } from "bun:sqlite";
import { FIELD_WEIGHTS } from "../../core/bm25";
import { documentTerms, ftsMatch, selectQueryTerms } from "../../core/lexical";
import type { HotLabelRule, LexicalDoc, LexicalHit, LexicalIndex, SearchCounter } from "../ports";

export class SqliteLexicalIndex implements LexicalIndex {
  private readonly del;
  private readonly ins;
  private readonly termUp;
  private readonly termDown;
  private readonly docsBy;
  private readonly totalDocs;
  private readonly held;

  constructor(private readonly db: Database) {
    this.del = db.query("DELETE FROM lexical WHERE rowid = ?");
    this.ins = db.query("INSERT INTO lexical (rowid, error, body) VALUES (?, ?, ?)");
    this.termUp = db.query("INSERT INTO lexical_terms (term, docs) VALUES (?, 1) ON CONFLICT (term) DO UPDATE SET docs = docs + 1");
    this.termDown = db.query("UPDATE lexical_terms SET docs = docs - 1 WHERE term = ?");
    this.docsBy = db.query("UPDATE counters SET value = value + ? WHERE name = 'lexical_docs'");
    this.totalDocs = db.query<{ value: number }, []>("SELECT value FROM counters WHERE name = 'lexical_docs'");
    this.held = db.query<{ id: number }, [number]>("SELECT id FROM lexical_docsize WHERE id = ?");
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

  async addMissing(entries: { id: number; doc: LexicalDoc }[]): Promise<number> {
    let added = 0;
    this.db.transaction(() => {
      for (const { id, doc } of entries) {
        if (this.held.get(id)) continue;
        this.ins.run(id, doc.error, doc.body);
        for (const term of documentTerms(doc.error, doc.body)) this.termUp.run(term);
        added++;
      }
      this.docsBy.run(added);
    })();
    return added;
  }

  async clear(): Promise<void> {
    this.db.transaction(() => {
      this.db.run("INSERT INTO lexical (lexical) VALUES ('delete-all')");
      this.db.run("DELETE FROM lexical_terms");
      this.db.run("UPDATE counters SET value = 0 WHERE name = 'lexical_docs'");
    })();
  }

  async holdWriters(): Promise<void> {
    // The store's transactions already run one at a time.
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

  async add(label: string, client: string, at: number): Promise<void> {
    const hour = Math.floor(at / HOUR_MS);
    const l = label.slice(0, 200);
    // The client's latest search of the label moves to this hour: a row back when it is new to
    // the label (prev_hour null) or was last counted in an earlier hour (prev_hour that hour).
    const moved = this.db
      .query<{ prev_hour: number | null }, [string, string, number]>(
        `INSERT INTO search_clients (label, client, hour) VALUES (?1, ?2, ?3)
         ON CONFLICT (label, client) DO UPDATE SET prev_hour = hour, hour = excluded.hour WHERE hour < excluded.hour
         RETURNING prev_hour`,
      )
      .get(l, client, hour);
    if (moved?.prev_hour != null) {
      this.db.query("UPDATE search_hourly SET clients = clients - 1 WHERE hour = ? AND label = ? AND clients > 0").run(moved.prev_hour, l);
    }
    this.db
      .query(
        `INSERT INTO search_hourly (hour, label, n, clients) VALUES (?, ?, 1, ?)
         ON CONFLICT (hour, label) DO UPDATE SET n = n + 1, clients = clients + excluded.clients`,
      )
      .run(hour, l, moved ? 1 : 0);
  }

  async top(since: number, limit: number, rule: HotLabelRule) {
    const any = rule.anyClients.map(() => "?").join(", ") || "NULL";
    return this.db
      .query<{ label: string; clients: number; searches: number }, (string | number)[]>(
        `WITH labels AS MATERIALIZED (
           SELECT label, sum(clients) AS clients, sum(n) AS searches FROM search_hourly WHERE hour >= ? GROUP BY label)
         SELECT label, clients, searches FROM labels
         WHERE clients > 0 AND (clients >= min(?, (SELECT max(clients) FROM labels)) OR label IN (${any}))
         ORDER BY clients DESC, searches DESC, label ASC LIMIT ?`,
      )
      .all(Math.floor(since / HOUR_MS), Math.max(1, rule.minClients), ...rule.anyClients, limit);
  }
}

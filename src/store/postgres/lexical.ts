// Lexical search on PostgreSQL full-text search. The documents arrive pre-tokenized by
// core/lexical.ts; the adapter writes them as a tsvector literal itself (positions, the error line
// weighted A and the explanation and fix B), so a token such as err_require_esm stays one lexeme.
// A query keeps only its rarest terms (core/lexical.ts selectQueryTerms, from the term statistics
// kept beside the index): an OR of every term would rank most of the corpus.
import type { SQL } from "bun";
import { documentTerms, selectQueryTerms } from "../../core/lexical";
import type { LexicalDoc, LexicalHit, LexicalIndex } from "../ports";
import { num } from "./repositories";

/**
 * ts_rank weights for {D, C, B, A}: the error line (A) counts twice the explanation and fix (B),
 * as the SQLite path's BM25 column weights do.
 */
const RANK_WEIGHTS = "{0, 0, 0.5, 1.0}";
/** ts_rank normalization 1: divides by 1 + log(document length), as BM25 discounts long documents. */
const RANK_NORMALIZATION = 1;
/** tsvector positions stop at 16,383. */
const MAX_POSITION = 16_383;
const SAFE_TOKEN = /^[\p{L}\p{N}_]+$/u;
/**
 * Held (per transaction) by every writer of the index: a term's row is shared by every document
 * with it, and two transactions indexing several documents would otherwise lock term rows in
 * crossing orders and deadlock.
 */
const LEXICAL_WRITERS = 0x636f6c6c6578;

/** A tsvector literal for the two fields: each token with its positions and weight. */
export function tsvectorLiteral(doc: LexicalDoc): string {
  const positions = new Map<string, string[]>();
  let at = 0;
  for (const [text, weight] of [
    [doc.error, "A"],
    [doc.body, "B"],
  ] as const) {
    for (const token of text.split(" ")) {
      if (!token || !SAFE_TOKEN.test(token)) continue;
      at = Math.min(at + 1, MAX_POSITION);
      let list = positions.get(token);
      if (!list) positions.set(token, (list = []));
      if (list.length < 256) list.push(`${at}${weight}`);
    }
  }
  return [...positions].map(([token, list]) => `'${token}':${list.join(",")}`).join(" ");
}

export class PgLexicalIndex implements LexicalIndex {
  /** `inTransaction`: `sql` is a transaction's connection; otherwise each write opens its own. */
  constructor(
    private readonly sql: SQL,
    private readonly inTransaction: boolean,
  ) {}

  /** Runs `fn` in a transaction holding the writers' lock (the caller's, or one of its own). */
  private write(fn: (sql: SQL) => Promise<unknown>): Promise<void> {
    const run = async (sql: SQL) => {
      await sql`SELECT pg_advisory_xact_lock(${LEXICAL_WRITERS})`;
      await fn(sql);
    };
    return this.inTransaction ? run(this.sql) : this.sql.begin(run).then(() => {});
  }

  async add(id: number, doc: LexicalDoc): Promise<void> {
    const terms = documentTerms(doc.error, doc.body).filter((t) => SAFE_TOKEN.test(t));
    await this.write(
      (sql) => sql`
      WITH l AS (
        INSERT INTO lexical (id, doc) VALUES (${id}, ${tsvectorLiteral(doc)}::tsvector)
        ON CONFLICT (id) DO NOTHING RETURNING id
      )
      INSERT INTO lexical_terms (term, docs) SELECT term, 1 FROM unnest(${terms}::text[]) AS term WHERE EXISTS (SELECT 1 FROM l)
      ON CONFLICT (term) DO UPDATE SET docs = lexical_terms.docs + 1`,
    );
  }

  /**
   * Many documents in one statement (a copy between stores): the same rows and term statistics as
   * `add` for each, with each term's count raised once for the lot instead of once per document.
   */
  async addMany(entries: { id: number; doc: LexicalDoc }[]): Promise<void> {
    if (entries.length === 0) return;
    const termIds: number[] = [];
    const terms: string[] = [];
    for (const { id, doc } of entries) {
      for (const term of documentTerms(doc.error, doc.body)) {
        if (!SAFE_TOKEN.test(term)) continue;
        termIds.push(id);
        terms.push(term);
      }
    }
    await this.write(
      (sql) => sql`
      WITH l AS (
        INSERT INTO lexical (id, doc)
        SELECT id, doc::tsvector FROM unnest(${entries.map((e) => e.id)}::bigint[], ${entries.map((e) => tsvectorLiteral(e.doc))}::text[]) AS d(id, doc)
        ON CONFLICT (id) DO NOTHING RETURNING id
      )
      INSERT INTO lexical_terms (term, docs)
      SELECT p.term, count(*) FROM unnest(${termIds}::bigint[], ${terms}::text[]) AS p(id, term)
      WHERE p.id IN (SELECT id FROM l) GROUP BY p.term
      ON CONFLICT (term) DO UPDATE SET docs = lexical_terms.docs + excluded.docs`,
    );
  }

  async remove(id: number, doc: LexicalDoc): Promise<void> {
    const terms = documentTerms(doc.error, doc.body).filter((t) => SAFE_TOKEN.test(t));
    await this.write(
      (sql) => sql`
      WITH l AS (DELETE FROM lexical WHERE id = ${id} RETURNING id)
      UPDATE lexical_terms SET docs = docs - 1 WHERE term = ANY(${terms}::text[]) AND EXISTS (SELECT 1 FROM l)`,
    );
  }

  /**
   * Documents in the index, for the common-term cut-off: the planner's estimate once the table is
   * large (exact enough for a 2% threshold, and free), an exact count while it is small.
   */
  private async totalDocs(): Promise<number> {
    const [{ estimate }] = await this.sql`SELECT reltuples::float8 AS estimate FROM pg_class WHERE oid = 'lexical'::regclass`;
    if (estimate >= 10_000) return estimate;
    const [{ n }] = await this.sql`SELECT count(*)::int AS n FROM lexical`;
    return n;
  }

  async search(tokens: string[], k: number): Promise<LexicalHit[]> {
    const distinct = [...new Set(tokens)].filter((t) => SAFE_TOKEN.test(t)).slice(0, 256);
    if (distinct.length === 0 || k <= 0) return [];
    const rows = await this.sql`SELECT term, docs FROM lexical_terms WHERE term = ANY(${distinct}::text[])`;
    if (rows.length === 0) return [];
    const total = await this.totalDocs();
    const chosen = selectQueryTerms(distinct, new Map(rows.map((r: any) => [r.term, r.docs])), total);
    if (chosen.length === 0) return [];
    // A tsquery literal, not to_tsquery(): the terms are already tokens and must not be re-parsed.
    const query = chosen.map((t) => `'${t}'`).join(" | ");
    const hits = await this.sql`
      SELECT id, ts_rank(${RANK_WEIGHTS}::float4[], doc, q, ${RANK_NORMALIZATION}) AS score
      FROM lexical, CAST(${query} AS tsquery) AS q
      WHERE doc @@ q ORDER BY score DESC, id ASC LIMIT ${k}`;
    return hits.map((h: any) => ({ id: num(h.id), score: h.score }));
  }
}

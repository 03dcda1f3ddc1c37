// Lexical search on PostgreSQL full-text search, ranked exactly as the SQLite store ranks it. The
// documents arrive pre-tokenized by core/lexical.ts; the adapter writes them as a tsvector literal
// itself (the error line's tokens first, weighted A, then the explanation and fix, weighted B), so
// a token such as err_require_esm stays one lexeme. A query keeps only its rarest terms
// (core/lexical.ts selectQueryTerms, from the term statistics kept beside the index: an OR of every
// term would rank most of the corpus); the GIN index finds the documents with any of them, and
// each is scored by FTS5's BM25 (core/bm25.ts) in the database, from the document's field-weighted
// count of each term (the `counts` column, term -> count), its token count and the index's totals,
// all kept exact here as FTS5 keeps them. Only the best k leave the server: shipping every match
// (thousands at 100k trails) to score it here cost more than the search's other steps together.
// (ts_rank is not BM25: it has no idf, so a document with one very rare term ranks below documents
// with several common ones; the dev set measured up to 0.09 lower recall with it.)
import type { SQL } from "bun";
import { BM25_B, BM25_K1, bm25Query, FIELD_WEIGHTS, type LexicalTotals } from "../../core/bm25";
import { documentTerms, selectQueryTerms } from "../../core/lexical";
import type { LexicalDoc, LexicalHit, LexicalIndex } from "../ports";
import { num } from "./repositories";

/** tsvector positions stop at 16,383 (a document has at most 2 x 400 tokens, core/lexical.ts). */
const MAX_POSITION = 16_383;
/**
 * PostgreSQL keeps at most 256 positions of a lexeme per document (scores use the `counts` column,
 * which has no such limit; documents indexed before it have the tsvector's counts, migration 5).
 */
const MAX_POSITIONS = 256;
const SAFE_TOKEN = /^[\p{L}\p{N}_]+$/u;
/**
 * Held (per transaction) by every writer of the index: a term's row is shared by every document
 * with it, and two transactions indexing several documents would otherwise lock term rows in
 * crossing orders and deadlock.
 */
const LEXICAL_WRITERS = 0x636f6c6c6578;

/** Tokens of a field, as a tsvector literal may hold them. */
const fieldTokens = (text: string) => text.split(" ").filter((t) => t && SAFE_TOKEN.test(t));

/**
 * Each term's occurrences in the two fields, weighted by field (core/bm25.ts FIELD_WEIGHTS), as
 * FTS5 counts them for bm25(): the `counts` column's JSON object.
 */
export function weightedTermCounts(doc: LexicalDoc): Record<string, number> {
  const counts: Record<string, number> = Object.create(null);
  for (const [text, weight] of [
    [doc.error, FIELD_WEIGHTS.error],
    [doc.body, FIELD_WEIGHTS.body],
  ] as const) {
    for (const token of fieldTokens(text)) counts[token] = (counts[token] ?? 0) + weight;
  }
  return counts;
}

/**
 * A tsvector literal for the two fields: each token with its positions and weight. The error
 * line's tokens take positions 1 to its token count, so a position says which field it is in.
 */
export function tsvectorLiteral(doc: LexicalDoc): string {
  const positions = new Map<string, string[]>();
  let at = 0;
  for (const [text, weight] of [
    [doc.error, "A"],
    [doc.body, "B"],
  ] as const) {
    for (const token of fieldTokens(text)) {
      at = Math.min(at + 1, MAX_POSITION);
      let list = positions.get(token);
      if (!list) positions.set(token, (list = []));
      if (list.length < MAX_POSITIONS) list.push(`${at}${weight}`);
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

  add(id: number, doc: LexicalDoc): Promise<void> {
    return this.addMany([{ id, doc }]);
  }

  /**
   * Documents in one statement (`add` is one; a copy between stores passes a batch): each row with
   * its token counts, the totals, and each term's document count raised once per statement.
   */
  async addMany(entries: { id: number; doc: LexicalDoc }[]): Promise<void> {
    if (entries.length === 0) return;
    const ids: number[] = [];
    const docs: string[] = [];
    const counts: string[] = [];
    const errorTokens: number[] = [];
    const tokens: number[] = [];
    const termIds: number[] = [];
    const terms: string[] = [];
    for (const { id, doc } of entries) {
      const inError = fieldTokens(doc.error).length;
      ids.push(id);
      docs.push(tsvectorLiteral(doc));
      counts.push(JSON.stringify(weightedTermCounts(doc)));
      errorTokens.push(inError);
      tokens.push(inError + fieldTokens(doc.body).length);
      for (const term of documentTerms(doc.error, doc.body)) {
        if (!SAFE_TOKEN.test(term)) continue;
        termIds.push(id);
        terms.push(term);
      }
    }
    await this.write(
      (sql) => sql`
      WITH l AS (
        INSERT INTO lexical (id, doc, counts, error_tokens, tokens)
        SELECT id, doc::tsvector, counts::jsonb, error_tokens, tokens
        FROM unnest(${ids}::bigint[], ${docs}::text[], ${counts}::text[], ${errorTokens}::int[], ${tokens}::int[])
          AS d(id, doc, counts, error_tokens, tokens)
        ON CONFLICT (id) DO NOTHING RETURNING id, tokens
      ), t AS (
        UPDATE lexical_totals SET docs = docs + (SELECT count(*) FROM l), tokens = lexical_totals.tokens + (SELECT sum(tokens) FROM l)
        WHERE EXISTS (SELECT 1 FROM l)
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
      WITH l AS (DELETE FROM lexical WHERE id = ${id} RETURNING tokens),
      t AS (UPDATE lexical_totals SET docs = docs - 1, tokens = lexical_totals.tokens - l.tokens FROM l)
      UPDATE lexical_terms SET docs = docs - 1 WHERE term = ANY(${terms}::text[]) AND EXISTS (SELECT 1 FROM l)`,
    );
  }

  async search(tokens: string[], k: number): Promise<LexicalHit[]> {
    const distinct = [...new Set(tokens)].filter((t) => SAFE_TOKEN.test(t)).slice(0, 256);
    if (distinct.length === 0 || k <= 0) return [];
    // The query's terms with their document counts, and (term null) the index's totals: one round trip.
    const rows = await this.sql`
      SELECT term, docs, NULL::bigint AS tokens FROM lexical_terms WHERE term = ANY(${distinct}::text[])
      UNION ALL SELECT NULL, docs, tokens FROM lexical_totals`;
    const totalsRow = rows.find((r: any) => r.term === null);
    const totals: LexicalTotals = { docs: num(totalsRow.docs), tokens: num(totalsRow.tokens) };
    const docFrequency = new Map<string, number>(rows.filter((r: any) => r.term !== null).map((r: any) => [r.term, num(r.docs)]));
    const chosen = selectQueryTerms(distinct, docFrequency, totals.docs);
    if (chosen.length === 0) return [];
    const query = bm25Query(chosen, docFrequency, totals);
    const scored: [unknown, number][] = await this.sql
      .unsafe(scoringStatement(chosen.length), [
        // A tsquery literal, not to_tsquery(): the terms are already tokens and must not be re-parsed.
        chosen.map((t) => `'${t}'`).join(" | "),
        k,
        BM25_K1 + 1.0,
        BM25_K1,
        1 - BM25_B,
        BM25_B,
        query.avgLength,
        ...chosen.flatMap((term, i) => [term, query.idf[i]]),
      ])
      .values();
    return scored.map(([id, score]) => ({ id: num(id), score }));
  }
}

const statements = new Map<number, string>();

/**
 * The statement scoring the documents with any of `terms` query terms: core/bm25.ts bm25Score
 * written out term by term in the same order of operations, so each score is the same double
 * (the parity test compares them with FTS5's), best first, ties by lower id, as bestScored orders.
 * Parameters: $1 tsquery, $2 k, $3 k1 + 1, $4 k1, $5 1 - b, $6 b, $7 avgdl, then each term and its idf.
 * The inner query (kept apart by OFFSET 0) reads each count from the JSON once per document.
 */
function scoringStatement(terms: number): string {
  let statement = statements.get(terms);
  if (statement) return statement;
  const counts: string[] = [];
  let score = "0::float8";
  for (let i = 0; i < terms; i++) {
    const term = 8 + 2 * i;
    counts.push(`coalesce((counts ->> $${term}::text)::float8, 0) AS f${i}`);
    score = `(${score} + $${term + 1}::float8 * ((f${i} * $3::float8) / (f${i} + $4::float8 * ($5::float8 + ($6::float8 * tokens) / $7::float8))))`;
  }
  statement = `SELECT id, ${score} AS score
    FROM (SELECT id, tokens, ${counts.join(", ")} FROM lexical WHERE doc @@ $1::tsquery OFFSET 0) c
    ORDER BY score DESC, id LIMIT $2`;
  statements.set(terms, statement);
  return statement;
}

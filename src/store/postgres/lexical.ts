// Lexical search on PostgreSQL full-text search, ranked exactly as the SQLite store ranks it. The
// documents arrive pre-tokenized by core/lexical.ts; the adapter writes them as a tsvector literal
// itself (the error line's tokens first, weighted A, then the explanation and fix, weighted B), so
// a token such as err_require_esm stays one lexeme. A query keeps only its rarest terms
// (core/lexical.ts selectQueryTerms, from the term statistics kept beside the index: an OR of every
// term would rank most of the corpus), and every document with any of them is scored by FTS5's
// BM25 (core/bm25.ts) from its field-weighted count of each term, its token count and the
// index's totals, all kept exact here as FTS5 keeps them.
//
// Those documents are thousands at 100,000 trails, and reading each from the table costs more than
// the rest of a search. So rare terms also have postings (term, document, count, token count) in
// lexical_postings, an inverted index read by the term's key alone: a query of rare terms is scored
// from them in the database, and only the best few leave it. A term stops having postings once it is
// in more than POSTINGS_SHARE of the documents (its postings are dropped; it is `postings = false`
// from then on); a query with such a term (few rare words) takes the path through the GIN index and
// the tsvectors, as exact and slower.
// (ts_rank is not BM25: it has no idf, so a document with one very rare term ranks below documents
// with several common ones; the dev set measured up to 0.09 lower recall with it.)
import type { SQL } from "bun";
import { BM25_B, BM25_K1, bestScored, type Bm25Query, bm25Query, bm25Score, FIELD_WEIGHTS, type LexicalTotals } from "../../core/bm25";
import { COMMON_TERM_SHARE, selectQueryTerms } from "../../core/lexical";
import type { LexicalDoc, LexicalHit, LexicalIndex } from "../ports";
import { num } from "./repositories";

/** tsvector positions stop at 16,383 (a document has at most 2 x 400 tokens, core/lexical.ts). */
const MAX_POSITION = 16_383;
/**
 * PostgreSQL keeps at most 256 positions of a lexeme per document: a query term repeated more
 * often in one trail counts 256 here and its full count in FTS5 (a difference seen only then).
 */
const MAX_POSITIONS = 256;
const SAFE_TOKEN = /^[\p{L}\p{N}_]+$/u;
/**
 * Held (per transaction) by every writer of the index: a term's row is shared by every document
 * with it, and two transactions indexing several documents would otherwise lock term rows in
 * crossing orders and deadlock.
 */
const LEXICAL_WRITERS = 0x636f6c6c6578;
/**
 * A term keeps postings while it is in at most this share of the documents (or POSTINGS_MIN_DOCS,
 * whichever is more): the share under which core/lexical.ts calls a term rare. Common terms hold
 * most postings (80% at 100,000 trails) and are not what a query is scored by.
 */
export const POSTINGS_SHARE = COMMON_TERM_SHARE;
export const POSTINGS_MIN_DOCS = 1000;

/** Tokens of a field, as a tsvector literal may hold them. */
const fieldTokens = (text: string) => text.split(" ").filter((t) => t && SAFE_TOKEN.test(t));

/**
 * Each term's occurrences in the two fields, weighted by field (core/bm25.ts FIELD_WEIGHTS), as
 * FTS5 counts them for bm25().
 */
export function weightedTermCounts(doc: LexicalDoc): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [text, weight] of [
    [doc.error, FIELD_WEIGHTS.error],
    [doc.body, FIELD_WEIGHTS.body],
  ] as const) {
    for (const token of fieldTokens(text)) counts.set(token, (counts.get(token) ?? 0) + weight);
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

  async add(id: number, doc: LexicalDoc): Promise<void> {
    await this.addMany([{ id, doc }]);
  }

  /** Documents of ids not in the index yet (addMany's own rule: a held id is left as it is). */
  addMissing(entries: { id: number; doc: LexicalDoc }[]): Promise<number> {
    return this.addMany(entries);
  }

  clear(): Promise<void> {
    return this.write(async (sql) => {
      await sql`DELETE FROM lexical_postings`;
      await sql`DELETE FROM lexical_terms`;
      await sql`DELETE FROM lexical`;
      await sql`UPDATE lexical_totals SET docs = 0, tokens = 0`;
    });
  }

  async holdWriters(): Promise<void> {
    if (!this.inTransaction) throw new Error("holdWriters holds the lock of a transaction: call it on the transaction's index");
    await this.sql`SELECT pg_advisory_xact_lock(${LEXICAL_WRITERS})`;
  }

  /**
   * Documents in one statement (`add` is one; a copy between stores passes a batch): each row with
   * its token counts, the totals, each term's document count raised once per statement, and the
   * postings of the terms that keep them; a term that passes the postings limit here loses its own.
   * An id the index holds already is left as it is. Returns how many were added.
   */
  async addMany(entries: { id: number; doc: LexicalDoc }[]): Promise<number> {
    if (entries.length === 0) return 0;
    const ids: number[] = [];
    const docs: string[] = [];
    const errorTokens: number[] = [];
    const tokens: number[] = [];
    const termIds: number[] = [];
    const terms: string[] = [];
    const termCounts: number[] = [];
    const termTokens: number[] = [];
    for (const { id, doc } of entries) {
      const inError = fieldTokens(doc.error).length;
      const length = inError + fieldTokens(doc.body).length;
      ids.push(id);
      docs.push(tsvectorLiteral(doc));
      errorTokens.push(inError);
      tokens.push(length);
      for (const [term, count] of weightedTermCounts(doc)) {
        termIds.push(id);
        terms.push(term);
        termCounts.push(count);
        termTokens.push(length);
      }
    }
    let added = 0;
    await this.write(async (sql) => {
      const [row] = await sql`
      WITH l AS (
        INSERT INTO lexical (id, doc, error_tokens, tokens)
        SELECT id, doc::tsvector, error_tokens, tokens
        FROM unnest(${ids}::bigint[], ${docs}::text[], ${errorTokens}::int[], ${tokens}::int[]) AS d(id, doc, error_tokens, tokens)
        ON CONFLICT (id) DO NOTHING RETURNING id, tokens
      ), t AS (
        UPDATE lexical_totals SET docs = docs + (SELECT count(*) FROM l), tokens = lexical_totals.tokens + (SELECT sum(tokens) FROM l)
        WHERE EXISTS (SELECT 1 FROM l) RETURNING docs
      ), p AS (
        SELECT * FROM unnest(${termIds}::bigint[], ${terms}::text[], ${termCounts}::real[], ${termTokens}::int[]) AS p(id, term, count, tokens)
        WHERE p.id IN (SELECT id FROM l)
      ), limited AS (
        SELECT greatest(${POSTINGS_SHARE}::float8 * (SELECT docs FROM t), ${POSTINGS_MIN_DOCS}) AS docs
      ), terms AS (
        INSERT INTO lexical_terms (term, docs, postings)
        SELECT term, count(*), count(*) <= (SELECT docs FROM limited) FROM p GROUP BY term
        ON CONFLICT (term) DO UPDATE SET docs = lexical_terms.docs + excluded.docs,
          postings = lexical_terms.postings AND lexical_terms.docs + excluded.docs <= (SELECT docs FROM limited)
        RETURNING term, postings
      ), dropped AS (
        DELETE FROM lexical_postings WHERE term IN (SELECT term FROM terms WHERE NOT postings)
      ), postings AS (
        INSERT INTO lexical_postings (term, id, count, tokens)
        SELECT p.term, p.id, p.count, p.tokens FROM p JOIN terms USING (term) WHERE terms.postings
      )
      SELECT count(*)::int AS added FROM l`;
      added = row.added;
    });
    return added;
  }

  async remove(id: number, doc: LexicalDoc): Promise<void> {
    const terms = [...weightedTermCounts(doc).keys()];
    await this.write(
      (sql) => sql`
      WITH l AS (DELETE FROM lexical WHERE id = ${id} RETURNING tokens),
      t AS (UPDATE lexical_totals SET docs = docs - 1, tokens = lexical_totals.tokens - l.tokens FROM l),
      p AS (DELETE FROM lexical_postings WHERE term = ANY(${terms}::text[]) AND id = ${id})
      UPDATE lexical_terms SET docs = docs - 1 WHERE term = ANY(${terms}::text[]) AND EXISTS (SELECT 1 FROM l)`,
    );
  }

  async search(tokens: string[], k: number): Promise<LexicalHit[]> {
    const distinct = [...new Set(tokens)].filter((t) => SAFE_TOKEN.test(t)).slice(0, 256);
    if (distinct.length === 0 || k <= 0) return [];
    // The query's terms with their document counts, and (term null) the index's totals: one round trip.
    const rows = await this.sql`
      SELECT term, docs, NULL::bigint AS tokens, postings FROM lexical_terms WHERE term = ANY(${distinct}::text[])
      UNION ALL SELECT NULL, docs, tokens, NULL FROM lexical_totals`;
    const totalsRow = rows.find((r: any) => r.term === null);
    const totals: LexicalTotals = { docs: num(totalsRow.docs), tokens: num(totalsRow.tokens) };
    const terms = rows.filter((r: any) => r.term !== null);
    const docFrequency = new Map<string, number>(terms.map((r: any) => [r.term, num(r.docs)]));
    const chosen = selectQueryTerms(distinct, docFrequency, totals.docs);
    if (chosen.length === 0) return [];
    const query = bm25Query(chosen, docFrequency, totals);
    const withPostings = new Set(terms.filter((r: any) => r.postings).map((r: any) => r.term));
    if (chosen.every((t) => withPostings.has(t))) {
      const hits = await this.fromPostings(query, k);
      if (hits) return hits;
    }
    return this.fromDocuments(query, k);
  }

  /**
   * Scores from the postings; null when a term lost them since the statistics were read. The
   * database sums the same terms in the same order as bm25Score, so its order is the final one;
   * each returned document is scored again here from its counts all the same, so the scores are
   * bm25Score's whatever the server's arithmetic, and a few more than k are fetched for that.
   */
  private async fromPostings(query: Bm25Query, k: number): Promise<LexicalHit[] | null> {
    const rows: [unknown, number | null, number[] | null, number[] | null][] = await this.sql`
      WITH q AS (SELECT * FROM unnest(${query.terms}::text[], ${query.idf}::float8[]) WITH ORDINALITY AS q(term, idf, ord)),
      complete AS (SELECT count(*) = ${query.terms.length} AS ok FROM lexical_terms JOIN q USING (term) WHERE postings),
      best AS (
        SELECT p.id, min(p.tokens) AS tokens, array_agg(q.ord::int) AS ords, array_agg(p.count::float8) AS counts,
          sum(q.idf * ((p.count * ${BM25_K1 + 1.0}::float8) / (p.count + ${BM25_K1}::float8 * (${1 - BM25_B}::float8 + (${BM25_B}::float8 * p.tokens) / ${query.avgLength}::float8)))) AS score
        FROM q JOIN lexical_postings p USING (term)
        WHERE (SELECT ok FROM complete)
        GROUP BY p.id ORDER BY score DESC, p.id LIMIT ${k + POSTINGS_MARGIN}
      )
      SELECT NULL AS id, NULL::int AS tokens, NULL::int[] AS ords, NULL::float8[] AS counts WHERE (SELECT ok FROM complete)
      UNION ALL SELECT id, tokens, ords, counts FROM best`.values();
    if (rows.length === 0) return null; // no "complete" row: a term's postings were dropped meanwhile
    const hits: LexicalHit[] = [];
    for (const [id, tokens, ords, counts] of rows) {
      if (id === null) continue;
      const freq = new Array<number>(query.terms.length).fill(0);
      ords!.forEach((ord, i) => {
        freq[ord - 1] = counts![i]!;
      });
      hits.push({ id: num(id), score: bm25Score(query, freq, tokens!) });
    }
    return bestScored(hits, k);
  }

  /** Scores every document with any of the terms, read from the tsvectors (GIN index). */
  private async fromDocuments(query: Bm25Query, k: number): Promise<LexicalHit[]> {
    const chosen = query.terms;
    // A tsquery literal, not to_tsquery(): the terms are already tokens and must not be re-parsed.
    // `found`: the document reduced to the chosen terms (setweight marks them C, ts_filter keeps C).
    const matches: [unknown, number, number, string][] = await this.sql`
      SELECT id, error_tokens, tokens, ts_filter(setweight(doc, 'c', ${chosen}::text[]), '{c}')::text
      FROM lexical WHERE doc @@ CAST(${chosen.map((t) => `'${t}'`).join(" | ")} AS tsquery)`.values();
    const position = new Map(chosen.map((t, i) => [t, i]));
    return bestScored(
      matches.map(([id, errorTokens, tokens, found]) => ({
        id: num(id),
        score: bm25Score(query, weightedCounts(found, position, errorTokens), tokens),
      })),
      k,
    );
  }
}

/** Extra documents read from the postings beyond k, rescored here (see fromPostings). */
const POSTINGS_MARGIN = 10;

/**
 * Each chosen term's occurrences in a reduced document (tsvector text: `'term':3C,41C ...`),
 * weighted by field: positions up to `errorTokens` are the error line's.
 */
export function weightedCounts(found: string, position: Map<string, number>, errorTokens: number): number[] {
  const counts = new Array<number>(position.size).fill(0);
  for (const m of found.matchAll(/'([^']+)':(\S+)/g)) {
    const i = position.get(m[1]!);
    if (i === undefined) continue;
    for (const p of m[2]!.split(",")) counts[i]! += Number.parseInt(p, 10) <= errorTokens ? FIELD_WEIGHTS.error : FIELD_WEIGHTS.body;
  }
  return counts;
}

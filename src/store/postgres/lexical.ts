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
  constructor(private readonly sql: SQL) {}

  async add(id: number, doc: LexicalDoc): Promise<void> {
    // Sorted, so concurrent writers lock term rows in the same order (no deadlock).
    const terms = documentTerms(doc.error, doc.body)
      .filter((t) => SAFE_TOKEN.test(t))
      .sort();
    await this.sql`
      WITH l AS (
        INSERT INTO lexical (id, doc) VALUES (${id}, ${tsvectorLiteral(doc)}::tsvector)
        ON CONFLICT (id) DO NOTHING RETURNING id
      ), t AS (
        INSERT INTO lexical_terms (term, docs) SELECT term, 1 FROM unnest(${terms}::text[]) AS term WHERE EXISTS (SELECT 1 FROM l)
        ON CONFLICT (term) DO UPDATE SET docs = lexical_terms.docs + 1
      )
      UPDATE counters SET value = value + 1 WHERE name = 'lexical_docs' AND EXISTS (SELECT 1 FROM l)`;
  }

  async remove(id: number, doc: LexicalDoc): Promise<void> {
    const terms = documentTerms(doc.error, doc.body)
      .filter((t) => SAFE_TOKEN.test(t))
      .sort();
    await this.sql`
      WITH l AS (DELETE FROM lexical WHERE id = ${id} RETURNING id),
      t AS (
        UPDATE lexical_terms SET docs = docs - 1 WHERE term = ANY(${terms}::text[]) AND EXISTS (SELECT 1 FROM l)
      )
      UPDATE counters SET value = value - 1 WHERE name = 'lexical_docs' AND EXISTS (SELECT 1 FROM l)`;
  }

  async search(tokens: string[], k: number): Promise<LexicalHit[]> {
    const distinct = [...new Set(tokens)].filter((t) => SAFE_TOKEN.test(t)).slice(0, 256);
    if (distinct.length === 0 || k <= 0) return [];
    const rows = await this.sql`
      SELECT term, docs, (SELECT value FROM counters WHERE name = 'lexical_docs') AS total
      FROM lexical_terms WHERE term = ANY(${distinct}::text[])`;
    const total = rows.length ? num(rows[0].total) : 0;
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

// The neighbour-expansion experiment (bench/RESULTS.md, Session 19; issue 16's vocabulary gaps):
// the lexical query also asks for each of its rare words' nearest neighbours in the shipped model's
// word table (tools/model/neighbour-table.ts), each weighted by its cosine times an expansion weight below
// the original words' 1, so that "pushing" finds a trail that says "push" and "postgres" one that says
// "postgresql".
//
// FTS5's bm25() cannot weight a query's terms, so the experiment replaces the colony's lexical search
// by a plain-JS BM25 over the same documents, computed as FTS5 computes it (core/bm25.ts: the
// PostgreSQL store's formula, summed in the same order): the index's own add / remove / addMissing /
// clear keep running, and a copy of each document's weighted term counts is kept beside them. With no
// expansion the copy answers as the index does (checked by bench/neighbour-sweep.ts against the
// shipped search's dump). Bench-only: nothing in src/ changes.
import { readFileSync } from "node:fs";
import { BM25_B, BM25_K1, bestScored, bm25Idf } from "../../src/core/bm25";
import { COMMON_TERM_SHARE, selectQueryTerms } from "../../src/core/lexical";
import { porterStem } from "../../src/core/stem";
import { neighboursByToken, sameKind } from "../../src/embedding/word-neighbours";
import { weightedTermCounts } from "../../src/store/postgres/lexical";
import type { LexicalDoc, LexicalHit, LexicalIndex } from "../../src/store/ports";

/** Which neighbours may expand a word. */
export const NEIGHBOUR_FILTERS = ["all", "form", "other", "kind"] as const;
export type NeighbourFilter = (typeof NEIGHBOUR_FILTERS)[number];

export interface ExpansionSetting {
  /** Neighbours at or above this cosine in the model's word table. */
  minSimilarity: number;
  /** At most this many per query word (the most similar of those the index holds, not too common). */
  perTerm: number;
  /** A neighbour's weight in BM25 is this times its cosine (an original word weighs 1). */
  weight: number;
  /**
   * `all`; `form`: another form of the same word (the same Porter stem, or one word a prefix of the
   * other, 4 letters at least: push/pushing, postgres/postgresql); `other`: the rest (not `form`);
   * `kind`: a neighbour of the same kind (prose word of letters only, or identifier) as the word.
   */
  filter: NeighbourFilter;
  /**
   * `query`: the query's rare words expand; `document`: each document's words that are not common
   * in the index do, as a neighbour's count of weight × cosine × the word's own count (when the
   * document does not have the neighbour itself), so that the query's word matches it.
   */
  side: "query" | "document";
}

export const settingName = (s: ExpansionSetting) =>
  `${s.minSimilarity}/${s.perTerm}/${s.weight}/${s.filter}${s.side === "document" ? "/document" : ""}`;

/**
 * `minSimilarity,perTerm,weight,filter[,side]`, e.g. `0.7,3,0.5,form` or `0.7,3,0.5,form,document`.
 * The coverage setting this experiment measured (`…,coverage`) ships: the model's own table
 * (models/default/neighbours.txt, src/embedding/word-neighbours.ts) is read by every search; to
 * measure without it, point COLONY_MODEL_DIR at a copy of the model without the file and its
 * manifest entry.
 */
export function parseSetting(text: string): ExpansionSetting {
  const [sim, k, w, filter, side, coverage] = text.split(",");
  if (coverage === "coverage") {
    throw new Error("the neighbour coverage ships with the model now (src/embedding/word-neighbours.ts): drop ',coverage'");
  }
  const s = {
    minSimilarity: Number(sim),
    perTerm: Number(k),
    weight: Number(w),
    filter: (filter ?? "all") as NeighbourFilter,
    side: (side || "query") as ExpansionSetting["side"],
  };
  if (
    ![s.minSimilarity, s.perTerm, s.weight].every(Number.isFinite) ||
    !NEIGHBOUR_FILTERS.includes(s.filter) ||
    !["query", "document"].includes(s.side) ||
    coverage !== undefined
  ) {
    throw new Error(
      `an expansion setting is minSimilarity,perTerm,weight,filter (${NEIGHBOUR_FILTERS.join("|")})[,query|document], not ${text}`,
    );
  }
  return s;
}

const PROSE = /^[a-z]+$/;

function sameForm(a: string, b: string): boolean {
  if (PROSE.test(a) && PROSE.test(b) && porterStem(a) === porterStem(b)) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 4 && long.startsWith(short);
}

function passes(filter: NeighbourFilter, word: string, neighbour: string): boolean {
  switch (filter) {
    case "all":
      return true;
    case "form":
      return sameForm(word, neighbour);
    case "other":
      return !sameForm(word, neighbour);
    case "kind":
      return sameKind(word, neighbour);
  }
}

/** The neighbour table, keyed and valued by lexical tokens (the best cosine when two words share one). */
export function loadNeighbourTable(file: string): Map<string, [string, number][]> {
  return neighboursByToken((JSON.parse(readFileSync(file, "utf8")) as { neighbours: Record<string, [string, number][]> }).neighbours);
}

interface Doc {
  counts: Map<string, number>;
  length: number;
}

/** A plain-JS BM25 copy of a lexical index that can weight its query terms (see the file's head). */
export class ExpansionLexical {
  private readonly docs = new Map<number, Doc>();
  private readonly postings = new Map<string, Map<number, number>>();
  /** Each document as the index has it, to expand again when the setting changes. */
  private readonly raw = new Map<number, LexicalDoc>();
  private tokens = 0;
  private current: ExpansionSetting | null = null;
  /** Document frequencies without expansion: which document words are common (document side). */
  private plainDf = new Map<string, number>();

  get setting(): ExpansionSetting | null {
    return this.current;
  }

  /** A new setting; a document-side one (or leaving one) re-indexes the copy's documents. */
  set setting(s: ExpansionSetting | null) {
    const rebuild = s?.side === "document" || this.current?.side === "document";
    this.current = s;
    if (rebuild) this.reindex();
  }

  /** Documents added with a document-side setting since the last re-index (their words' frequencies not known then). */
  private stale = false;

  private reindex(): void {
    this.stale = false;
    const docs = [...this.raw];
    this.docs.clear();
    this.postings.clear();
    this.tokens = 0;
    this.plainDf = new Map();
    for (const [, doc] of docs) for (const t of weightedTermCounts(doc).keys()) this.plainDf.set(t, (this.plainDf.get(t) ?? 0) + 1);
    for (const [id, doc] of docs) this.put(id, doc);
    this.stale = false;
  }

  /** The last query's expansion terms and weights (for a look at what it added). */
  lastExpansion: [string, number][] = [];

  constructor(private readonly table: Map<string, [string, number][]>) {}

  /** Keeps a copy of `index`'s documents and answers its searches. */
  install(index: LexicalIndex): void {
    const add = index.add.bind(index);
    const remove = index.remove.bind(index);
    const addMissing = index.addMissing.bind(index);
    const clear = index.clear.bind(index);
    index.add = async (id, doc) => {
      await add(id, doc);
      this.put(id, doc);
    };
    index.remove = async (id, doc) => {
      await remove(id, doc);
      this.drop(id);
    };
    index.addMissing = async (entries) => {
      const n = await addMissing(entries);
      for (const { id, doc } of entries) if (!this.docs.has(id)) this.put(id, doc);
      return n;
    };
    index.clear = async () => {
      await clear();
      this.docs.clear();
      this.postings.clear();
      this.raw.clear();
      this.tokens = 0;
    };
    index.search = (tokens, k) => Promise.resolve(this.search(tokens, k));
  }

  private put(id: number, doc: LexicalDoc): void {
    this.drop(id);
    this.raw.set(id, doc);
    const counts = weightedTermCounts(doc);
    const s = this.current;
    if (s?.side === "document" && s.weight > 0) {
      this.stale = true;
      // Document frequencies as of the last re-index (the sweep's documents are all in by then).
      const common = this.raw.size * COMMON_TERM_SHARE;
      const added = new Map<string, number>();
      for (const [word, count] of counts) {
        if ((this.plainDf.get(word) ?? 0) > common) continue;
        let taken = 0;
        for (const [n, sim] of this.table.get(word) ?? []) {
          if (taken >= s.perTerm || sim < s.minSimilarity) break;
          if (counts.has(n) || !passes(s.filter, word, n)) continue;
          taken++;
          added.set(n, Math.max(added.get(n) ?? 0, s.weight * sim * count));
        }
      }
      for (const [n, c] of added) counts.set(n, c);
    }
    const length = [doc.error, doc.body].reduce((n, text) => n + text.split(" ").filter(Boolean).length, 0);
    this.docs.set(id, { counts, length });
    this.tokens += length;
    for (const [term, count] of counts) {
      let p = this.postings.get(term);
      if (!p) this.postings.set(term, (p = new Map()));
      p.set(id, count);
    }
  }

  private drop(id: number): void {
    const doc = this.docs.get(id);
    if (!doc) return;
    this.docs.delete(id);
    this.raw.delete(id);
    this.tokens -= doc.length;
    for (const term of doc.counts.keys()) {
      const p = this.postings.get(term)!;
      p.delete(id);
      if (p.size === 0) this.postings.delete(term);
    }
  }

  private df = (term: string) => this.postings.get(term)?.size ?? 0;

  /** The query's terms with their weights: the chosen words at 1, then their neighbours. */
  weightedTerms(tokens: string[]): [string, number][] {
    const distinct = [...new Set(tokens)].slice(0, 256);
    const total = this.docs.size;
    const frequency = new Map(distinct.map((t) => [t, this.df(t)]));
    const terms: [string, number][] = selectQueryTerms(distinct, frequency, total).map((t) => [t, 1]);
    this.lastExpansion = [];
    const s = this.current;
    if (!s || s.side !== "query" || s.weight <= 0 || s.perTerm <= 0) return terms;
    const own = new Set(distinct);
    const common = total * COMMON_TERM_SHARE;
    const added = new Map<string, number>();
    // Every query word not common in the index expands, those it does not hold too: their
    // neighbours are what can close the gap.
    for (const word of distinct) {
      if ((frequency.get(word) ?? 0) > common) continue;
      let taken = 0;
      for (const [n, sim] of this.table.get(word) ?? []) {
        if (taken >= s.perTerm || sim < s.minSimilarity) break;
        if (own.has(n) || !passes(s.filter, word, n)) continue;
        const df = this.df(n);
        if (df === 0 || df > common) continue;
        taken++;
        added.set(n, Math.max(added.get(n) ?? 0, s.weight * sim));
      }
    }
    this.lastExpansion = [...added].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    return [...terms, ...this.lastExpansion];
  }

  search(tokens: string[], k: number): LexicalHit[] {
    if (this.stale) this.reindex();
    const terms = this.weightedTerms(tokens);
    if (terms.length === 0) return [];
    const total = this.docs.size;
    const avgLength = total > 0 ? this.tokens / total : 0;
    const idf = terms.map(([t]) => bm25Idf(total, this.df(t)));
    const ids = new Set<number>();
    for (const [t] of terms) for (const id of this.postings.get(t)?.keys() ?? []) ids.add(id);
    const hits: LexicalHit[] = [];
    for (const id of ids) {
      const doc = this.docs.get(id)!;
      let score = 0.0;
      for (let i = 0; i < terms.length; i++) {
        const f = doc.counts.get(terms[i]![0]) ?? 0;
        const part = idf[i]! * ((f * (BM25_K1 + 1.0)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * doc.length) / avgLength)));
        score += terms[i]![1] === 1 ? part : terms[i]![1] * part;
      }
      hits.push({ id, score });
    }
    return bestScored(hits, k);
  }
}

// Tokens for the lexical (FTS5) index and its queries. Error text is full of identifiers:
// ERR_REQUIRE_ESM, E0382, libGL.so.1, getServerSideProps. Each is kept whole (so an exact
// identifier matches strongly) and also split into its parts (so "require esm" finds it).
// Tokens are [a-z0-9_] only, which also makes FTS5 query syntax in user input inert.

import { ERROR_GLOSSARY_VERSION, glossaryExpansion } from "./error-glossary";
import { porterStem } from "./stem";

/**
 * The version of the tokens the lexical index stores. BUMP THIS whenever a release changes the
 * tokens of any text (the stop words, MAX_TOKENS, MAX_TOKEN_CHARS, the splitting rules, the
 * stems): both stores count each term from a document as tokenized when it is added and removed,
 * so an index built by other tokens would subtract terms it never counted. A database records the
 * version its index was built with, and at start a colony whose index is on another one rebuilds
 * it from the stored trails (src/service/lexical-rebuild.ts, docs/architecture.md). History: 1 =
 * session 12, the first release that records it (databases from before read none and rebuild once).
 */
export const LEXICAL_VERSION = 1;

const WORD = /[\p{L}\p{N}_][\p{L}\p{N}_.-]*[\p{L}\p{N}_]|[\p{L}\p{N}_]/gu;
const MAX_TOKENS = 400;
/**
 * The longest token, in characters: a longer word (a pasted base64 blob, a minified line, a CJK
 * sentence, which has no spaces) is indexed and queried by its first 200 characters. PostgreSQL
 * keeps each term in a B-tree, whose entries hold at most 2,704 bytes: one trail with a longer,
 * incompressible word failed its enrichment batch every time, and the batch was retried forever,
 * so no trail after it was indexed. 200 characters are at most 800 bytes.
 */
export const MAX_TOKEN_CHARS = 200;

const bounded = (token: string) => (token.length > MAX_TOKEN_CHARS ? Array.from(token).slice(0, MAX_TOKEN_CHARS).join("") : token);

/** Words too common in error text to help ranking. */
const STOP = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "by",
  "for",
  "from",
  "has",
  "in",
  "is",
  "it",
  "of",
  "on",
  "or",
  "the",
  "this",
  "to",
  "was",
  "with",
  "not",
  "no",
  "cannot",
  "can",
  "t",
  "s",
]);

const camelParts = (segment: string) =>
  segment
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2") // getServerSideProps
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2") // HTTPServer -> HTTP Server
    .split(" ");

/** Segments between _ . - (each kept), plus their camelCase parts. */
function parts(word: string): string[] {
  const out: string[] = [];
  for (const segment of word.split(/[_.-]+/)) {
    if (!segment) continue;
    out.push(segment.toLowerCase());
    const camel = camelParts(segment);
    if (camel.length > 1) out.push(...camel.map((p) => p.toLowerCase()));
  }
  return out;
}

const clean = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_]+/gu, "_")
    .replace(/^_+|_+$/g, "");

/** A word's tokens: the word whole (unless a lone stop word), then its parts that differ from it. */
export function wordTokens(word: string): string[] {
  const out: string[] = [];
  const whole = clean(word);
  const split = parts(word);
  if (whole && !(split.length === 1 && STOP.has(whole))) out.push(whole);
  if (split.length > 1) for (const p of split) if (p !== whole && !STOP.has(p) && clean(p)) out.push(clean(p));
  return out;
}

/** A word of lowercase ASCII letters and digits is its own only token (the common case, no regex). */
const PLAIN_WORD = /^[a-z0-9]+$/;

// Tokenizing is on every search's path: the query, and the error and root cause of each result
// it rates. Error text repeats its words, so each word's tokens are kept once made. Short words
// only, and the memo is emptied when full, so hostile text cannot grow it.
const MEMO_LIMIT = 50_000;
const MEMO_WORD_LENGTH = 64;
const memo = new Map<string, readonly string[]>();

function memoizedWordTokens(word: string): readonly string[] {
  if (word.length > MEMO_WORD_LENGTH) return wordTokens(word);
  let tokens = memo.get(word);
  if (!tokens) {
    if (memo.size >= MEMO_LIMIT) memo.clear();
    tokens = wordTokens(word);
    memo.set(word, tokens);
  }
  return tokens;
}

/** The tokens of a text, identifiers whole and split, in order, without stop words. */
export function lexicalTokens(text: string): string[] {
  return tokenize(text, false);
}

/**
 * A word written in prose: lowercase letters, or one capital then lowercase, 4 to 64 letters.
 * Only these get a stem token: identifiers (ERR_REQUIRE_ESM, getServerSideProps, libGL), codes
 * (EACCES, E0382) and versions stay as they are written.
 */
const PROSE_WORD = /^[A-Za-z][a-z]{3,63}$/;
const stems = new Map<string, string>();

/** The Porter stem of a prose word when it differs from the word itself, else undefined. */
export function stemToken(word: string): string | undefined {
  if (!PROSE_WORD.test(word) || STOP.has(word.toLowerCase())) return undefined;
  let stem = stems.get(word);
  if (stem === undefined) {
    if (stems.size >= MEMO_LIMIT) stems.clear();
    stem = porterStem(word.toLowerCase());
    stems.set(word, stem);
  }
  return stem === word.toLowerCase() || STOP.has(stem) ? undefined : stem;
}

let indexStems = false;

/**
 * Stem tokens in the lexical index: an experiment, off (bench/RESULTS.md, Session 12: measured on
 * the dev set's tune split, not adopted). Only benches switch it on, in their own process
 * (BENCH_LEXICAL_STEMS=1, bench/lib/colony.ts), before any document is indexed: both stores count
 * each term from the documents as tokenized when added and removed, so a colony that indexed
 * documents one way rebuilds its lexical index at its next start with the other
 * (lexicalIndexVersion).
 */
export function setLexicalStems(on: boolean): void {
  indexStems = on;
}

/**
 * What a database records its lexical index was built with: LEXICAL_VERSION, the stems when on, and
 * the glossary's version when its expansion is in the documents (core/error-glossary.ts).
 */
export const lexicalIndexVersion = (): string =>
  `${LEXICAL_VERSION}${indexStems ? "+stems" : ""}${glossaryExpansion().lexical ? `+glossary${ERROR_GLOSSARY_VERSION}` : ""}`;

/**
 * The tokens the lexical index stores and is queried by: lexicalTokens, and (with the experiment
 * on) after each prose word its stem when it differs ("connections" connect, "authentication"
 * authent), so that another form of the same word still matches. A word then matches its own form
 * twice (word and stem) and another form once (the stem), so exact wording keeps ranking first.
 * At most MAX_TOKENS words, each with its stem.
 */
export function lexicalIndexTokens(text: string): string[] {
  return tokenize(text, indexStems);
}

function tokenize(text: string, withStems: boolean): string[] {
  const out: string[] = [];
  let words = 0;
  for (const m of text.normalize("NFKC").matchAll(WORD)) {
    const word = m[0];
    if (PLAIN_WORD.test(word)) {
      if (STOP.has(word)) continue;
      out.push(bounded(word));
      words++;
    } else {
      for (const t of memoizedWordTokens(word)) {
        if (words >= MAX_TOKENS) break;
        out.push(bounded(t));
        words++;
      }
    }
    if (withStems) {
      const stem = stemToken(word);
      if (stem !== undefined) out.push(stem);
    }
    if (words >= MAX_TOKENS) break;
  }
  return out;
}

/** The text stored in an FTS5 column: its index tokens separated by spaces. */
export const lexicalDocument = (text: string) => lexicalIndexTokens(text).join(" ");

/** The distinct terms of a lexical document (or several). */
export const documentTerms = (...docs: string[]) => [...new Set(docs.join(" ").split(" ").filter(Boolean))];

/** An FTS5 MATCH expression: any of the given tokens, each quoted. */
export function ftsMatch(tokens: string[]): string | null {
  const safe = tokens.filter((t) => /^[\p{L}\p{N}_]+$/u.test(t));
  return safe.length ? safe.map((t) => `"${t}"`).join(" OR ") : null;
}

/** An FTS5 MATCH expression over all of a text's distinct tokens (no frequency filtering). */
export const lexicalQuery = (text: string) => ftsMatch([...new Set(lexicalTokens(text))].slice(0, 64));

/** Terms in more than this share of documents carry almost no BM25 weight but cost a scan. */
export const COMMON_TERM_SHARE = 0.02;
export const MIN_QUERY_TERMS = 3;
export const MAX_QUERY_TERMS = 16;

/**
 * The query terms worth sending to the index: terms present in the index, rarest first; those in
 * more than COMMON_TERM_SHARE of documents are dropped unless fewer than MIN_QUERY_TERMS would
 * remain. This keeps a query's cost proportional to rare postings, not to the corpus.
 */
export function selectQueryTerms(tokens: string[], docFrequency: Map<string, number>, totalDocs: number): string[] {
  const present = [...new Set(tokens)]
    .map((t) => ({ t, df: docFrequency.get(t) ?? 0 }))
    .filter((x) => x.df > 0)
    .sort((a, b) => a.df - b.df || (a.t < b.t ? -1 : 1));
  const rare = present.filter((x) => x.df <= totalDocs * COMMON_TERM_SHARE);
  const chosen = rare.length >= MIN_QUERY_TERMS ? rare : present.slice(0, MIN_QUERY_TERMS);
  return chosen.slice(0, MAX_QUERY_TERMS).map((x) => x.t);
}

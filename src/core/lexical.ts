// Tokens for the lexical (FTS5) index and its queries. Error text is full of identifiers:
// ERR_REQUIRE_ESM, E0382, libGL.so.1, getServerSideProps. Each is kept whole (so an exact
// identifier matches strongly) and also split into its parts (so "require esm" finds it).
// Tokens are [a-z0-9_] only, which also makes FTS5 query syntax in user input inert.

const WORD = /[\p{L}\p{N}_][\p{L}\p{N}_.\-]*[\p{L}\p{N}_]|[\p{L}\p{N}_]/gu;
const MAX_TOKENS = 400;

/** Words too common in error text to help ranking. */
const STOP = new Set([
  "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "in", "is", "it", "of", "on", "or",
  "the", "this", "to", "was", "with", "not", "no", "cannot", "can", "t", "s",
]);

const camelParts = (segment: string) =>
  segment
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2") // getServerSideProps
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2") // HTTPServer -> HTTP Server
    .split(" ");

/** Segments between _ . - (each kept), plus their camelCase parts. */
function parts(word: string): string[] {
  const out: string[] = [];
  for (const segment of word.split(/[_.\-]+/)) {
    if (!segment) continue;
    out.push(segment.toLowerCase());
    const camel = camelParts(segment);
    if (camel.length > 1) out.push(...camel.map((p) => p.toLowerCase()));
  }
  return out;
}

const clean = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}_]+/gu, "_").replace(/^_+|_+$/g, "");

/** The tokens of a text, identifiers whole and split, in order, without stop words. */
export function lexicalTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.normalize("NFKC").matchAll(WORD)) {
    const word = m[0];
    const whole = clean(word);
    const split = parts(word);
    if (whole && !(split.length === 1 && STOP.has(whole))) out.push(whole);
    if (split.length > 1) for (const p of split) if (p !== whole && !STOP.has(p) && clean(p)) out.push(clean(p));
    if (out.length >= MAX_TOKENS) break;
  }
  return out.slice(0, MAX_TOKENS);
}

/** The text stored in an FTS5 column: tokens separated by spaces. */
export const lexicalDocument = (text: string) => lexicalTokens(text).join(" ");

/** An FTS5 MATCH expression: any of the query's distinct tokens, each quoted. */
export function lexicalQuery(text: string): string | null {
  const distinct = [...new Set(lexicalTokens(text))].slice(0, 64);
  return distinct.length ? distinct.map((t) => `"${t}"`).join(" OR ") : null;
}

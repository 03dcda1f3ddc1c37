// Entity tags in conditional request headers (RFC 9110 §8.8.3, §13.1.1, §13.1.2): one reading of
// `If-Match` and `If-None-Match` for every route that answers them.

export interface EntityTag {
  weak: boolean;
  /** The quoted part, quotes included: `"abc"` of `W/"abc"`. */
  opaque: string;
}

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text. A comma is an
// etagc, so a list is read tag by tag, not split on commas. Headers reach us as byte strings
// (obs-text as U+0080-U+00FF).
const TAG = /(W\/)?("[\x21\x23-\x7e\x80-\xff]*")/y;
/** Blanks and commas between list elements; group 1 is set when a comma is among them. */
const SEPARATORS = /[ \t]*(,[ \t,]*)?/y;

/**
 * A conditional header's value: `*`, the list of entity tags it names (empty list elements
 * skipped, as §5.6.1 asks), or null when it is neither (an unquoted tag, an unterminated quote,
 * tags not separated by commas, `*` inside a list, nothing at all).
 */
export function entityTagList(header: string): "*" | EntityTag[] | null {
  const value = header.trim();
  if (value === "*") return "*";
  const tags: EntityTag[] = [];
  SEPARATORS.lastIndex = 0;
  SEPARATORS.exec(value); // leading empty elements
  let at = SEPARATORS.lastIndex;
  while (at < value.length) {
    TAG.lastIndex = at;
    const m = TAG.exec(value);
    if (!m) return null;
    tags.push({ weak: m[1] !== undefined, opaque: m[2]! });
    SEPARATORS.lastIndex = TAG.lastIndex;
    const separator = SEPARATORS.exec(value)!;
    at = SEPARATORS.lastIndex;
    if (at < value.length && separator[1] === undefined) return null; // two tags with no comma between
  }
  return tags.length > 0 ? tags : null;
}

/**
 * Whether an If-Match value names the current representation's strong tag `etag` (`"…"`): `*`, or
 * a list holding it compared strongly (§13.1.1: a weak tag, `W/"…"`, never matches). A malformed
 * value is null: the caller refuses it rather than guess.
 */
export function ifMatchHolds(header: string, etag: string): boolean | null {
  const tags = entityTagList(header);
  if (tags === null) return null;
  return tags === "*" || tags.some((t) => !t.weak && t.opaque === etag);
}

/**
 * Whether an If-None-Match value names `etag` (§13.1.2): `*`, or a list holding it compared
 * weakly (`W/"…"` matches too: a proxy or CDN that compresses an answer weakens its ETag, and a
 * cache may revalidate several stored tags at once). A malformed value names nothing: the
 * representation is sent whole, as without the header.
 */
export function ifNoneMatchNames(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const tags = entityTagList(header);
  if (tags === null) return false;
  const opaque = etag.replace(/^W\//, "");
  return tags === "*" || tags.some((t) => t.opaque === opaque);
}

// The blanks the core trims from every string a client sends, as JSON Schema patterns say them.

/**
 * The characters String.prototype.trim removes (ECMAScript's WhiteSpace and LineTerminator), which
 * the core trims from every string a client sends, ids included: a JSON Schema character class, in
 * `\uXXXX` escapes that ECMA-262, Python and most other regex dialects read alike.
 */
export const TRIMMED_BLANK = "[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]";

/** A JSON Schema pattern for a value the core trims first: `pattern` (anchored ^…$) with those blanks around it. */
export function trimmedPattern(pattern: RegExp): string {
  const body = pattern.source.replace(/^\^/, "").replace(/\$$/, "");
  return `^${TRIMMED_BLANK}*(?:${body})${TRIMMED_BLANK}*$`;
}

/** The pattern a person reads: trimmedPattern's blanks taken off again (`^1\.[0-9]+$`). */
export function patternAsWritten(pattern: string): string {
  const prefix = `^${TRIMMED_BLANK}*(?:`;
  const suffix = `)${TRIMMED_BLANK}*$`;
  return pattern.startsWith(prefix) && pattern.endsWith(suffix) ? `^${pattern.slice(prefix.length, -suffix.length)}$` : pattern;
}

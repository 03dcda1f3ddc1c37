// The query parameters of a request as its URL has them. The router keeps one value of a key
// given more than once (the last), so `?limit=1&limit=50` was read as 50 and
// `?category=dependency&category=runtime` as runtime alone, without a word; here such a key holds
// every value, and the query's schema check (`parseQuery`, src/core/trail.ts) refuses it.

/** The router's query, with each key the URL repeats holding all its values, in order. */
export function queryWithRepeats(request: Request, query: Record<string, unknown>): Record<string, unknown> {
  const url = request.url;
  const at = url.indexOf("?");
  if (at < 0) return query;
  const params = new URLSearchParams(url.slice(at + 1));
  let out: Record<string, unknown> | null = null;
  for (const key of new Set(params.keys())) {
    // Object keys only: "__proto__" would set the prototype (and no schema has it).
    if (key === "__proto__") continue;
    const values = params.getAll(key);
    if (values.length < 2) continue;
    out ??= { ...query };
    out[key] = values;
  }
  return out ?? query;
}

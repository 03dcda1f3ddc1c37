// How the colony reads a name a client writes in a filter or an environment (a runtime, an
// architecture, a package, a feed's category): one rule on every door (GET /v1/feed, POST
// /v1/search, colony_search over MCP) and for the trails it compares them with. Pure.

/** Characters that draw nothing (zero-width space and joiners, soft hyphen, variation selectors, BOM, …). */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * A name as the colony compares it: compatibility forms read as what they stand for (NFKC:
 * fullwidth `ｐｙｔｈｏｎ`, mathematical `𝐩𝐲𝐭𝐡𝐨𝐧`, circled letters), invisible characters dropped,
 * trimmed, in lower case, as the lexical index reads a trail's words (NFKC). Look-alike letters of
 * other scripts (a Cyrillic `о` in `pythоn`) are other letters, as in fingerprints and ids: folding
 * them is for screening text, which flags them, not for matching.
 */
export function foldedName(raw: string): string {
  // ASCII is its own NFKC form and holds no invisible character: most names, read at the old cost.
  if (ASCII.test(raw)) return raw.trim().toLowerCase();
  return raw.normalize("NFKC").replace(INVISIBLE, "").trim().toLowerCase();
}

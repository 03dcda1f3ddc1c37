// How the colony reads a name a client writes in a filter or an environment (a runtime, an
// architecture, a feed's category, colony_search's free-text os): one rule on every door (GET
// /v1/feed, POST /v1/search, colony_search over MCP) and for the trails it compares them with.
// Package names are not such names: no registry folds widths (src/core/overlap.ts). Pure.

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
  const known = folds.get(raw);
  if (known !== undefined) return known;
  const folded = raw.normalize("NFKC").replace(INVISIBLE, "").trim().toLowerCase();
  if (foldsChars + raw.length + folded.length > FOLDS_MAX_CHARS) {
    folds.clear();
    foldsChars = 0;
  }
  folds.set(raw, folded);
  foldsChars += raw.length + folded.length;
  return folded;
}

/**
 * Names already folded. A search compares its runtime and arch with each of up to 60 candidate
 * trails'; a name of 40 × U+FDFA (18-fold under NFKC) costs ~10 µs to fold. Each distinct name is
 * folded once while the memo holds it; bounded by its characters (about 4 MB), cleared when full.
 */
const folds = new Map<string, string>();
let foldsChars = 0;
const FOLDS_MAX_CHARS = 2_000_000;

// Text folding before prompt-injection screening (issue 15 item 7): the same words written with
// look-alike letters, invisible characters, accents or spaced-out letters must read the same to
// the phrase detectors. Used only to screen, never to store or show. Pure: no I/O.
//
// The steps, in order:
// 1. Unicode NFKC: fullwidth forms, mathematical alphanumerics (𝐢𝐠𝐧𝐨𝐫𝐞), ligatures, circled and
//    superscript letters become their plain letters.
// 2. Format and filler characters are removed: \p{Cf} (zero-width space/joiners, word joiner,
//    bidi controls, soft hyphen, tag characters), combining grapheme joiner, variation selectors,
//    Hangul fillers.
// 3. Confusables: letters of other scripts that look like Latin letters become those letters (a
//    compact subset of the Unicode TR39 confusables.txt prototypes for Latin a–z: Cyrillic, Greek,
//    Armenian, Cherokee-free; see CONFUSABLES below), then lower case.
// 4. Diacritics on Latin letters are dropped (é → e, ö → o, ç → c), so phrases of French, German,
//    Spanish or Portuguese match with or without accents; marks on other scripts are kept.
// 5. Letter-spacing is collapsed: runs of three or more single letters separated by spaces, dots,
//    dashes, underscores, stars or bullets ("i g n o r e", "i.g.n.o.r.e") become words; a separator
//    unlike the run's usual one (three spaces between spaced words) is kept as a word break.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.

/**
 * Look-alikes of Latin letters, from Unicode TR39 confusables.txt (the entries whose prototype is a
 * single Latin letter), limited to the scripts attackers use for homoglyph text: Cyrillic, Greek,
 * Armenian and a few Latin extensions (dotless i, script g, long s, small capitals). Fullwidth and
 * mathematical forms are not listed: NFKC folds them first.
 */
const CONFUSABLES: Record<string, string> = {
  // Cyrillic lower case
  а: "a",
  в: "b",
  е: "e",
  ё: "e",
  һ: "h",
  і: "i",
  ї: "i",
  ј: "j",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  ѕ: "s",
  ԁ: "d",
  ԛ: "q",
  ԝ: "w",
  ӏ: "l",
  ɡ: "g",
  ү: "y",
  ь: "b",
  п: "n",
  г: "r",
  // Cyrillic upper case
  А: "A",
  В: "B",
  Е: "E",
  Ё: "E",
  К: "K",
  М: "M",
  Н: "H",
  О: "O",
  Р: "P",
  С: "C",
  Т: "T",
  Х: "X",
  У: "Y",
  І: "I",
  Ї: "I",
  Ј: "J",
  Ѕ: "S",
  Ԁ: "D",
  Ԛ: "Q",
  Ԝ: "W",
  Ӏ: "I",
  Ү: "Y",
  Ь: "b",
  // Greek
  α: "a",
  β: "b",
  ε: "e",
  η: "n",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  γ: "y",
  Α: "A",
  Β: "B",
  Ε: "E",
  Ζ: "Z",
  Η: "H",
  Ι: "I",
  Κ: "K",
  Μ: "M",
  Ν: "N",
  Ο: "O",
  Ρ: "P",
  Τ: "T",
  Υ: "Y",
  Χ: "X",
  ϲ: "c",
  ϳ: "j",
  ϱ: "p",
  ϵ: "e",
  // Armenian
  օ: "o",
  ս: "u",
  ո: "n",
  հ: "h",
  ց: "g",
  զ: "q",
  ա: "w",
  // Latin extensions and IPA
  ı: "i",
  ȷ: "j",
  ɑ: "a",
  ɩ: "i",
  ɪ: "i",
  ɴ: "n",
  ʀ: "r",
  ᴀ: "a",
  ᴄ: "c",
  ᴅ: "d",
  ᴇ: "e",
  ᴏ: "o",
  ᴜ: "u",
  ᴠ: "v",
  ᴡ: "w",
  ᴢ: "z",
  ſ: "s",
  ƅ: "b",
  ɗ: "d",
  ꞵ: "b",
};

/** Every look-alike letter CONFUSABLES folds, for a character class. */
export const LOOKALIKE_LETTERS = Object.keys(CONFUSABLES).join("");
const CONFUSABLE_PATTERN = new RegExp(`[${LOOKALIKE_LETTERS}]`, "gu");
// biome-ignore lint/suspicious/noMisleadingCharacterClass: invisible characters, each removed on its own
const INVISIBLE = /[\p{Cf}\u034f\ufe00-\ufe0f\u115f\u1160\u3164\uffa0\u{e0100}-\u{e01ef}]/gu;
const LATIN_WITH_MARKS = /([A-Za-z])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+/g;

/** The Latin letter a look-alike letter of another script stands for (CONFUSABLES), or undefined. */
export function latinLookalike(ch: string): string | undefined {
  return CONFUSABLES[ch];
}

// biome-ignore lint/suspicious/noMisleadingCharacterClass: invisible characters, each tested on its own
const ONE_INVISIBLE = /^[\p{Cf}\u034f\ufe00-\ufe0f\u115f\u1160\u3164\uffa0\u{e0100}-\u{e01ef}]$/u;

/** Is this one character (code point) one removeInvisible drops? */
export function isInvisible(ch: string): boolean {
  return ONE_INVISIBLE.test(ch);
}

/** The text without invisible characters (format characters, variation selectors, fillers). */
export function removeInvisible(text: string): string {
  return text.replace(INVISIBLE, "");
}

/** The text with each invisible character removeInvisible drops written as <U+XXXX>, so a reader sees it. */
export function showInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`);
}

/** Folds look-alike letters of other scripts onto Latin ones (keeps case; other characters stay). */
export function foldConfusables(text: string): string {
  return text.replace(CONFUSABLE_PATTERN, (c) => CONFUSABLES[c] ?? c);
}

// A single Latin letter between non-letters, repeated: "i g n o r e", "i.g.n.o.r.e", "i-g-n".
const SPACED_RUN = /(?<![\p{L}\p{N}])[a-z](?:[ \t._*·•~-]{1,4}[a-z](?![\p{L}\p{N}])){2,}/gu;

/** Joins spaced-out letters into words; a separator unlike the run's usual one is a word break. */
// Two single letters in a row with a separator: without it there is nothing to collapse (cheap to test).
const MAYBE_SPACED = /(?:^|[^a-z0-9])[a-z][ \t._*~-]{1,4}[a-z](?![a-z0-9])/;

export function collapseLetterSpacing(text: string): string {
  if (!MAYBE_SPACED.test(text)) return text;
  return text.replace(SPACED_RUN, (run) => {
    const separators = run.match(/[^a-z]+/g) ?? [];
    const tally = new Map<string, number>();
    for (const s of separators) tally.set(s, (tally.get(s) ?? 0) + 1);
    let usual = "";
    let most = 0;
    for (const [s, n] of tally) if (n > most) [usual, most] = [s, n];
    return run.replace(/[^a-z]+/g, (s) => (s === usual ? "" : " "));
  });
}

/** NFKC without throwing (lone surrogates are left as they are by String.normalize anyway). */
function nfkc(s: string): string {
  try {
    return s.normalize("NFKC");
  } catch {
    return s;
  }
}

// Plain ASCII is already what steps 1–4 make (NFKC, NFD and NFC change none of it): skip them.
const ASCII_ONLY = /^[\u0000-\u007f]*$/;

/** Steps 1–4: NFKC, invisible characters removed, confusables folded, lower case, no Latin accents. */
export function foldLetters(text: string): string {
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  const visible = nfkc(text).replace(INVISIBLE, "");
  const latin = foldConfusables(visible).toLowerCase();
  return latin
    .normalize("NFD")
    .replace(LATIN_WITH_MARKS, "$1")
    .normalize("NFC")
    .replace(/[\u2018\u2019\u02bc]/g, "'");
}

/**
 * The text as the phrase detectors should read it (steps 1–5 above), single-spaced. Pass text
 * that foldLetters already folded (it is idempotent, so folding twice is only slower).
 */
export function foldForScreening(text: string): string {
  // Spacing is collapsed before runs of spaces are: three spaces between spaced words mark a word break.
  return collapseLetterSpacing(foldLetters(text)).replace(/[ \t\f\v\u00a0]+/g, " ");
}

/** Digits and signs written for the letters they resemble ("1gn0re prev1ous 1nstruct10ns"). */
const DIGIT_LOOKALIKES: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s" };
/**
 * A word that may be letters written as digits: at least two characters, one of them a letter,
 * nothing but letters and look-alike digits ("e0382", "utf8", "x86_64" keep other digits and are
 * left alone), "@" and "$" only between letters.
 */
const LOOKALIKE_WORD = /(?<![a-z0-9@$])(?=[a-z0-9@$]*[a-z])(?=[a-z@$]*[013457])[a-z013457@$]{2,}(?![a-z0-9@$])/g;

/**
 * Folded text (foldForScreening's output) with look-alike digits in words read as letters, or the
 * same string when no word has any. Only for a second reading by the phrase detectors: version
 * strings and codes come out as nonsense words, which match no phrase.
 */
export function foldDigitLookalikes(folded: string): string {
  return folded.replace(LOOKALIKE_WORD, (word) => word.replace(/[013457]|(?<=[a-z])[@$](?=[a-z])/g, (c) => DIGIT_LOOKALIKES[c] ?? c));
}

/** Each run of spaced-out letters in folded text, as its letters alone ("i g n o r e" → "ignore"). */
export function spacedLetterRuns(folded: string): string[] {
  if (!MAYBE_SPACED.test(folded)) return [];
  return (folded.match(SPACED_RUN) ?? []).map((run) => run.replace(/[^a-z]+/g, ""));
}

/**
 * The text with accents dropped from Latin letters but every script kept, lower case: what the
 * detectors of phrases in other languages (Russian, Chinese, Japanese alongside Latin-script ones)
 * read.
 */
export function foldAccents(text: string): string {
  if (ASCII_ONLY.test(text)) return text.toLowerCase().replace(/[ \t\f\v]+/g, " ");
  const visible = nfkc(text).replace(INVISIBLE, "").toLowerCase();
  return visible
    .normalize("NFD")
    .replace(LATIN_WITH_MARKS, "$1")
    .normalize("NFC")
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[ \t\f\v\u00a0]+/g, " ");
}

/**
 * A run of separators between two letters (`-`, `_`, and, since session 13, any other character
 * that is not a letter, digit, mark, blank or apostrophe: `.`, `/`, `\\`, `+`, `:`, `|`, `~`, `*`, …),
 * and a lower-to-upper case change: where one token joins words.
 */
const JOINED_WORDS = /(?<=\p{L})[^\p{L}\p{N}\p{M}\s'\u2019]+(?=\p{L})|(?<=\p{Ll})(?=\p{Lu})/gu;

/**
 * Every token of the text (a run without blanks) that joins words, read apart, each as a sentence
 * of its own: `Ignore-all-previous-instructions`, `ignore_previous_instructions`,
 * `IgnoreAllPreviousInstructions`, `Ignore.all.previous.instructions`, `ignore/all/previous/instructions`
 * and `?q=ignore+all+previous+instructions` read "Ignore all previous instructions"; "" when no
 * token joins words. Only for a second reading by the phrase detectors. Tokens are read one by one,
 * so words of neighbouring tokens never form a phrase (`--ignore-installed previous-instructions`,
 * `--ignore=tests/previous/instructions_test.py`: `=` parts a token);
 * dotted names, hosts, paths and versions read apart spell no phrase (`org.example.rules.Ignore`,
 * `python3.11/site-packages`: digits stay).
 */
export function joinedWordTokens(text: string): string {
  const apart: string[] = [];
  // `=` ends a token too: an option or a key and its value are two things (`--ignore=tests/system/prompts`).
  for (const token of text.match(/[^\s=]+/g) ?? []) {
    JOINED_WORDS.lastIndex = 0;
    if (JOINED_WORDS.test(token)) apart.push(token.replace(JOINED_WORDS, " "));
  }
  JOINED_WORDS.lastIndex = 0;
  return apart.join("\n.\n");
}

/**
 * A command continued on the next line: `\` (sh) before the line break, or `` ` `` (PowerShell) or
 * `^` (cmd) after a blank. A shell reads the lines as one command; so do redaction (redaction.ts
 * normalizedView), risk flags (risk.ts) and prompt-injection screening (injection.ts).
 */
export const LINE_CONTINUATION = String.raw`(?<!\\)\\\r?\n|[ \t][\x60^]\r?\n`;
const CONTINUED_LINE = new RegExp(LINE_CONTINUATION, "g");
const MAY_CONTINUE = /[\\\x60^]\r?\n/;

/**
 * The text with its continued lines joined, as a shell joins them: `\` ⏎ goes (or becomes
 * `joiner`: " " reads `previous\` ⏎ `instructions` as two words, as a person does), `` ` `` ⏎ and
 * `^` ⏎ leave the blank before them. The same string when no line is continued.
 */
export function joinContinuedLines(text: string, joiner = ""): string {
  if (!MAY_CONTINUE.test(text)) return text;
  return text.replace(CONTINUED_LINE, (m) => (m[0] === "\\" ? joiner : m[0]!));
}

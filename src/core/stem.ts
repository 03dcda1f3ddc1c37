// The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), as the reference
// implementation and Snowball's `porter` give it: "connections", "connected" and "connecting" all
// become "connect", "authentication" and "authenticate" "authent". The lexical index adds a word's
// stem beside the word (core/lexical.ts), so an error described with another form of its words
// still meets it. Pure, lowercase ASCII letters only.

const isVowelLetter = (c: string) => c === "a" || c === "e" || c === "i" || c === "o" || c === "u";

/** Whether w[i] is a consonant: not a vowel, and a y only when it follows a vowel or starts the word. */
function consonant(w: string, i: number): boolean {
  const c = w[i]!;
  if (isVowelLetter(c)) return false;
  if (c === "y") return i === 0 || !consonant(w, i - 1);
  return true;
}

/** m, the number of vowel-consonant sequences in w[0, end): [C](VC)^m[V]. */
function measure(w: string, end: number): number {
  let m = 0;
  let i = 0;
  while (i < end && consonant(w, i)) i++;
  while (i < end) {
    while (i < end && !consonant(w, i)) i++;
    if (i >= end) break;
    while (i < end && consonant(w, i)) i++;
    m++;
  }
  return m;
}

const hasVowel = (w: string, end: number) => {
  for (let i = 0; i < end; i++) if (!consonant(w, i)) return true;
  return false;
};

/** *d: w[0, end) ends with a double consonant. */
const doubleConsonant = (w: string, end: number) => end >= 2 && w[end - 1] === w[end - 2] && consonant(w, end - 1);

/** *o: w[0, end) ends consonant-vowel-consonant, the last not w, x or y (hop, not hoop or snow). */
function cvc(w: string, end: number): boolean {
  if (end < 3 || !consonant(w, end - 1) || consonant(w, end - 2) || !consonant(w, end - 3)) return false;
  const c = w[end - 1];
  return c !== "w" && c !== "x" && c !== "y";
}

/** [suffix, replacement] pairs; a step takes the longest suffix the word ends with. */
type Rules = readonly (readonly [string, string])[];

const STEP2: Rules = [
  ["ational", "ate"],
  ["tional", "tion"],
  ["enci", "ence"],
  ["anci", "ance"],
  ["izer", "ize"],
  ["abli", "able"],
  ["alli", "al"],
  ["entli", "ent"],
  ["eli", "e"],
  ["ousli", "ous"],
  ["ization", "ize"],
  ["ation", "ate"],
  ["ator", "ate"],
  ["alism", "al"],
  ["iveness", "ive"],
  ["fulness", "ful"],
  ["ousness", "ous"],
  ["aliti", "al"],
  ["iviti", "ive"],
  ["biliti", "ble"],
];

const STEP3: Rules = [
  ["icate", "ic"],
  ["ative", ""],
  ["alize", "al"],
  ["iciti", "ic"],
  ["ical", "ic"],
  ["ful", ""],
  ["ness", ""],
];

const STEP4 = [
  "al",
  "ance",
  "ence",
  "er",
  "ic",
  "able",
  "ible",
  "ant",
  "ement",
  "ment",
  "ent",
  "ion",
  "ou",
  "ism",
  "ate",
  "iti",
  "ous",
  "ive",
  "ize",
] as const;

const longest = <T extends string>(w: string, suffixes: readonly T[]): T | undefined => {
  let best: T | undefined;
  for (const s of suffixes) if (w.endsWith(s) && (!best || s.length > best.length)) best = s;
  return best;
};

/** Replaces the longest rule suffix of w when the stem before it has measure > min. */
function replaceSuffix(w: string, rules: Rules, min: number): string {
  const hit = longest(
    w,
    rules.map(([s]) => s),
  );
  if (!hit) return w;
  const stem = w.length - hit.length;
  return measure(w, stem) > min ? w.slice(0, stem) + rules.find(([s]) => s === hit)![1] : w;
}

function step1ab(w: string): string {
  if (w.endsWith("sses") || w.endsWith("ies")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss")) w = w.slice(0, -1);

  if (w.endsWith("eed")) return measure(w, w.length - 3) > 0 ? w.slice(0, -1) : w;
  const ending = w.endsWith("ed") ? 2 : w.endsWith("ing") ? 3 : 0;
  if (ending === 0 || !hasVowel(w, w.length - ending)) return w;
  w = w.slice(0, -ending);
  if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) return `${w}e`;
  if (doubleConsonant(w, w.length) && !"lsz".includes(w[w.length - 1]!)) return w.slice(0, -1);
  if (measure(w, w.length) === 1 && cvc(w, w.length)) return `${w}e`;
  return w;
}

const step1c = (w: string) => (w.endsWith("y") && hasVowel(w, w.length - 1) ? `${w.slice(0, -1)}i` : w);

function step4(w: string): string {
  const hit = longest(w, STEP4);
  if (!hit) return w;
  const stem = w.length - hit.length;
  if (measure(w, stem) <= 1) return w;
  if (hit === "ion" && !(w[stem - 1] === "s" || w[stem - 1] === "t")) return w;
  return w.slice(0, stem);
}

function step5(w: string): string {
  if (w.endsWith("e")) {
    const m = measure(w, w.length - 1);
    if (m > 1 || (m === 1 && !cvc(w, w.length - 1))) w = w.slice(0, -1);
  }
  if (w.endsWith("ll") && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}

/** The Porter stem of a lowercase ASCII word; words of one or two letters are their own stem. */
export function porterStem(word: string): string {
  if (word.length <= 2) return word;
  let w = step1ab(word);
  w = step1c(w);
  w = replaceSuffix(w, STEP2, 0);
  w = replaceSuffix(w, STEP3, 0);
  w = step4(w);
  return step5(w);
}

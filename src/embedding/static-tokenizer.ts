// The one tokenizer of the static model. The training pipeline (tools/model/tokenize-corpus.ts)
// runs this same function over the corpus, so training and runtime cannot drift apart.
// Pure: no I/O. Linear time: a single left-to-right scan, no regular expressions on the input.

/** Version of the token rules; recorded in the model's tokenizer.json and checked on load. */
export const TOKENIZER_SPEC = "colony-tok-1";

/** Input characters looked at per text: keeps work bounded on huge pastes. */
export const MAX_INPUT_CHARS = 16_384;

/** A token of the text, and whether it is a part split out of a larger identifier. */
export interface Token {
  text: string;
  part: boolean;
}

const MAX_WHOLE_LEN = 48;
const MAX_NUMBER_LEN = 4;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}
function isLower(c: number): boolean {
  return c >= 97 && c <= 122;
}
// Non-ASCII letters count as word characters; punctuation/space beyond ASCII does not.
function isWordChar(c: number): boolean {
  if (c < 128) return isDigit(c) || isUpper(c) || isLower(c) || c === 95; // '_'
  if (c >= 0x2000 && c <= 0x2bff) return false; // general punctuation, arrows, box drawing
  if (c >= 0x3000 && c <= 0x303f) return false; // CJK punctuation
  if (c === 0xa0 || c === 0xfeff || c === 0xfffd || c === 0xab || c === 0xbb || c === 0xb7) return false;
  return true;
}
// Characters that join word runs into one identifier when they sit between two word chars:
// libGL.so.1, node-gyp, @types/node stays split at '/', but utf-8 stays whole.
function isJoiner(c: number): boolean {
  return c === 46 || c === 45; // '.', '-'
}

/** Redaction placeholders (`<redacted:email>`) carry no meaning about the error: skip them. */
function placeholderEnd(s: string, i: number): number {
  if (!s.startsWith("<redacted", i)) return -1;
  const limit = Math.min(s.length, i + 64);
  for (let j = i + 9; j < limit; j++) {
    if (s.charCodeAt(j) === 62) return j + 1; // '>'
    if (s.charCodeAt(j) === 60) return -1;
  }
  return -1;
}

function isAllDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return s.length > 0;
}
function hasLetter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isUpper(c) || isLower(c) || c >= 128) return true;
  }
  return false;
}

/** Hex blobs, hashes, addresses: long runs with digits and only hex letters, or 0x-prefixed. */
function looksLikeHexBlob(lower: string): boolean {
  if (lower.length >= 3 && lower.startsWith("0x")) return true;
  if (lower.length < 8) return false;
  let digits = 0;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    if (isDigit(c)) digits++;
    else if (!(c >= 97 && c <= 102) && c !== 45) return false;
  }
  return digits > 0;
}

/** Whether a lowercase piece is worth a token: drops long numbers, single letters, blobs. */
function keepPiece(lower: string, whole: boolean): boolean {
  if (lower.length === 0) return false;
  if (isAllDigits(lower)) return whole && lower.length <= MAX_NUMBER_LEN;
  if (!hasLetter(lower)) return whole && lower.length <= MAX_NUMBER_LEN + 2;
  if (lower.length === 1) return whole;
  if (looksLikeHexBlob(lower)) return false;
  return lower.length <= MAX_WHOLE_LEN;
}

/** Splits one segment (no joiners) at camelCase, underscores and letters→digits. */
function splitSegment(seg: string, out: string[]): void {
  let start = 0;
  const push = (end: number) => {
    if (end > start) out.push(seg.slice(start, end));
  };
  for (let i = 0; i < seg.length; i++) {
    const c = seg.charCodeAt(i);
    if (c === 95) {
      push(i);
      start = i + 1;
      continue;
    }
    if (i === start) continue;
    const p = seg.charCodeAt(i - 1);
    const n = i + 1 < seg.length ? seg.charCodeAt(i + 1) : 0;
    // fooBar | HTTPServer -> HTTP Server | python3 -> python 3 (only after 3+ letters: e0382, x86 stay)
    const camel = isUpper(c) && (isLower(p) || (isUpper(p) && isLower(n)));
    const letterDigit = isDigit(c) && !isDigit(p) && i - start >= 3 && p !== 95;
    const digitLetter = !isDigit(c) && isDigit(p) && c !== 95 && hasLetterRun(seg, start, i);
    if (camel || letterDigit || digitLetter) {
      push(i);
      start = i;
    }
  }
  push(seg.length);
}
// Split digits→letters (sha256sum -> sha256 sum) only after a real word, not in codes like e0382x.
function hasLetterRun(seg: string, start: number, end: number): boolean {
  let letters = 0;
  for (let i = start; i < end; i++) if (!isDigit(seg.charCodeAt(i))) letters++;
  return letters >= 3;
}

/** Emits the token for a raw identifier and, when it is compound, its parts. */
function emitWord(raw: string, out: Token[], maxTokens: number): void {
  const lower = raw.toLowerCase();
  const wholeKept = keepPiece(lower, true);
  if (wholeKept) out.push({ text: lower, part: false });
  // Parts: split at joiners, then within each segment at camelCase / '_' / letter-digit.
  const segments: string[] = [];
  let s = 0;
  for (let i = 0; i <= raw.length; i++) {
    if (i === raw.length || isJoiner(raw.charCodeAt(i))) {
      if (i > s) segments.push(raw.slice(s, i));
      s = i + 1;
    }
  }
  const seen = new Set<string>([lower]);
  const addPart = (p: string) => {
    const pl = p.toLowerCase();
    if (seen.has(pl) || out.length >= maxTokens) return;
    seen.add(pl);
    if (keepPiece(pl, false)) out.push({ text: pl, part: true });
  };
  for (const seg of segments) {
    if (segments.length > 1) addPart(seg);
    const pieces: string[] = [];
    splitSegment(seg, pieces);
    if (pieces.length > 1) for (const p of pieces) addPart(p);
  }
}

/**
 * Tokenizes text the way the static model was trained: lowercase identifiers, joined by
 * '.'/'-' when inside one (libGL.so.1, utf-8, python3.11), each compound identifier followed by
 * its parts (ERR_REQUIRE_ESM -> err_require_esm err require esm), redaction placeholders
 * dropped, long numbers and hex blobs dropped, apostrophes inside words removed (don't -> dont).
 */
export function tokenize(text: string, maxTokens = 256): Token[] {
  const out: Token[] = [];
  const s = text.length > MAX_INPUT_CHARS ? text.slice(0, MAX_INPUT_CHARS) : text;
  let i = 0;
  let word = "";
  const flush = () => {
    if (word.length > 0) {
      // A trailing joiner (end of sentence "Python.h.") is not part of the word.
      let w = word;
      while (w.length > 0 && isJoiner(w.charCodeAt(w.length - 1))) w = w.slice(0, -1);
      if (w.length > 0) emitWord(w, out, maxTokens);
      word = "";
    }
  };
  while (i < s.length && out.length < maxTokens) {
    const c = s.charCodeAt(i);
    if (c === 60) {
      const end = placeholderEnd(s, i);
      if (end > 0) {
        flush();
        i = end;
        continue;
      }
    }
    if (isWordChar(c)) {
      // Surrogate halves are both >= 128, so astral characters stay inside the word.
      word += s[i];
      i++;
      continue;
    }
    if (word.length > 0 && i + 1 < s.length && isWordChar(s.charCodeAt(i + 1))) {
      if (isJoiner(c) && !isJoiner(word.charCodeAt(word.length - 1))) {
        word += s[i];
        i++;
        continue;
      }
      if (c === 39 || c === 0x2019) {
        // don't -> dont
        i++;
        continue;
      }
    }
    flush();
    i++;
  }
  flush();
  return out.length > maxTokens ? out.slice(0, maxTokens) : out;
}

/** Space-joined token texts: the form the training corpus is written in. */
export function tokenizeToLine(text: string, maxTokens = 100_000): string {
  return tokenize(text, maxTokens)
    .map((t) => t.text)
    .join(" ");
}

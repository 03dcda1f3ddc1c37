// Redaction: replaces sensitive values with typed placeholders (<redacted:kind>) and counts them
// per kind. Used by publish (first pass), the enrichment worker (second pass), drafts, and the
// local MCP server before anything leaves the machine. Pure: no I/O.
//
// Guarantees: a second pass changes nothing and counts nothing (no rule matches a placeholder or
// what a placeholder leaves around it); only strings change (values, and since session 18 object
// keys), so a JSON document keeps its shape; the input is never mutated.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.
import type { TSchema } from "@sinclair/typebox";
import { codePointLength, type OutcomeReport, OutcomeReport as OutcomeReportSchema, Trail } from "./trail.ts";
import {
  AWS_SECRET_ELSEWHERE,
  bareValueLooksSecret,
  isPlaceholderValue,
  PLACEHOLDER_PREFIX,
  REDACTION_RULES,
  placeholder,
  type RedactionRule,
  secretKindOfName,
  valueRunEnd,
} from "./redaction-rules.ts";
import { isInvisible, LINE_CONTINUATION, LOOKALIKE_LETTERS, latinLookalike } from "./screening-text.ts";

export { REDACTION_RULES, PLACEHOLDER_PREFIX, placeholder } from "./redaction-rules.ts";

export type RedactionCounts = Record<string, number>;

/** Every kind the table can emit (a rule can name a narrower kind from its accept check). */
export const REDACTION_KINDS: readonly string[] = [
  // sensitive_content: a field the first pass cut whole (rejection.ts cutSensitiveContent).
  ...new Set([...REDACTION_RULES.map((r) => r.kind), "secret", "token", "api_key", "sensitive_content"]),
].sort();

/**
 * What a rule reads in place of the real text: the text itself, a copy of the same length (the
 * line leads blanked), or a normalized copy (normalizedView) whose code unit j stands for the
 * real text's units start[j] to end[j].
 */
interface View {
  text: string;
  start?: number[];
  end?: number[];
  /** The results of the rule families' tests on this view (RedactionRule.family), as they are asked. */
  families?: Map<RegExp, boolean>;
  /**
   * A joined view (joinedView): only rules marked `joinable` read it, and a match counts only when
   * it spans one of these view offsets (where pieces were joined); anything else the other views saw.
   */
  joins?: number[];
  /** Of the joins, those of wrapped lines: a match may not run on into a line that starts a token of its own. */
  wraps?: number[];
}

// Each rule's pattern, anchored: does a token of its own start right at a wrapped line?
const stickyPatterns = new WeakMap<RedactionRule, RegExp>();
function startsOwnMatch(rule: RedactionRule, text: string, at: number): boolean {
  let sticky = stickyPatterns.get(rule);
  if (sticky === undefined) {
    sticky = new RegExp(rule.pattern.source, rule.pattern.flags.replace("g", "") + "y");
    stickyPatterns.set(rule, sticky);
  }
  sticky.lastIndex = at;
  return sticky.test(text);
}

/** The first of the sorted offsets greater than `from`, as an index (offsets.length when none). */
function firstAfter(offsets: number[], from: number): number {
  let lo = 0;
  let hi = offsets.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid]! <= from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Does [from, to) of a joined view cross a place where two pieces were joined? */
function spansJoin(joins: number[], from: number, to: number): boolean {
  const i = firstAfter(joins, from);
  return i < joins.length && joins[i]! < to;
}

/** Does [from, to) run on into a wrapped line that starts a match of the rule on its own? */
function runsIntoOwnMatch(rule: RedactionRule, view: View, from: number, to: number): boolean {
  const wraps = view.wraps;
  if (!wraps) return false;
  for (let i = firstAfter(wraps, from); i < wraps.length && wraps[i]! < to; i++)
    if (startsOwnMatch(rule, view.text, wraps[i]!)) return true;
  return false;
}

/** Does the view pass a rule family's test (RedactionRule.family)? Tested once per view. */
function familyPasses(view: View, family: RegExp): boolean {
  let passes = view.families?.get(family);
  if (passes === undefined) {
    passes = family.test(view.text);
    (view.families ??= new Map()).set(family, passes);
  }
  return passes;
}

const VIEW_OPENING_QUOTE = /^(?:\\\\){0,3}\\?["']/;

/**
 * Does a value that valueRunEnd ran on to its closing quote close, in the real text, as it opened?
 * A view reads `&quot;` and `\u0022` as `"`: a value opened by `&quot;` and "closed" by a plain `"`
 * a sentence later is prose (docs/security.md, the benign corpus, session 18).
 */
function closesAsOpened(text: string, view: View, from: number, to: number): boolean {
  const n = VIEW_OPENING_QUOTE.exec(view.text.slice(from, from + 8))?.[0].length;
  if (n === undefined || to - from < 2 * n) return true;
  const opened = text.slice(view.start![from]!, view.end![from + n - 1]!);
  const closed = text.slice(view.start![to - n]!, view.end![to - 1]!);
  return opened === closed;
}

/**
 * Applies one rule to `text`. Matching runs on the view, and each match is cut from `text` at the
 * offsets the view maps it to.
 */
function applyRule(rule: RedactionRule, text: string, view: View, counts: RedactionCounts): string {
  const seen = view.text;
  if (view.joins && !rule.joinable) return text;
  if (rule.family && !familyPasses(view, rule.family)) return text;
  if (rule.hint && !rule.hint.test(seen)) return text;
  const re = rule.pattern;
  re.lastIndex = 0;
  let out: string[] | null = null;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(seen)) !== null) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const span = m.indices?.[rule.group];
    if (!span || m[rule.group] === undefined || span[1] === span[0]) continue;
    if (view.joins && !spansJoin(view.joins, m.index, m.index + m[0].length)) continue;
    if (runsIntoOwnMatch(rule, view, span[0], span[1])) {
      re.lastIndex = m.index + 1;
      continue;
    }
    // Where the value ends is read in the view (session 18): a quote the view decoded (`&quot;`,
    // `\u0022`) opens and closes a value as a quote does.
    const endInView = valueRunEnd(seen, span[0], span[1]);
    if (endInView < 0) {
      re.lastIndex = m.index + 1;
      continue;
    }
    const from = view.start ? view.start[span[0]]! : span[0];
    const to = view.end ? view.end[endInView - 1]! : endInView;
    if (endInView > span[1] && view.start && view.end && !closesAsOpened(text, view, span[0], endInView)) {
      re.lastIndex = m.index + 1;
      continue;
    }
    if (from < last) continue;
    const secret = text.slice(from, to);
    const candidate = seen.slice(span[0], span[1]);
    if (candidate.startsWith(PLACEHOLDER_PREFIX) || secret.startsWith(PLACEHOLDER_PREFIX)) continue;
    let kind = rule.kind;
    if (rule.accept) {
      const verdict = rule.accept(candidate, m, seen);
      if (verdict === false) {
        // A rejected candidate must not hide a real one that starts inside it.
        re.lastIndex = m.index + 1;
        continue;
      }
      if (typeof verdict === "string") kind = verdict;
    }
    // A quoted value keeps its quotes, escaped ones too (JSON inside a JSON string or a command:
    // `\"…\"`), so JSON or code inside the string stays well-formed.
    const q = /^((?:\\\\){0,3}\\?["'])[\s\S]*\1$/.exec(secret)?.[1] ?? "";
    const replacement = rule.replace ? rule.replace(secret) : q + placeholder(kind) + q;
    (out ??= []).push(text.slice(last, from), replacement);
    last = to;
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  re.lastIndex = 0;
  if (out === null) return text;
  out.push(text.slice(last));
  return out.join("");
}

// What may open a line before its content: unified-diff markers (`+`, `-`, ` `), quoting (`>`,
// `|`), bullets and comment leaders (`*`, `#`), quotes and other punctuation. Every rule refuses
// to start a match right after a word-like character (so `x-10.0.0.1` or `a+b@c.io` are not cut
// in the middle), and `+`, `-`, `.` or `:` count as word-like there; on a diff line that would
// hide the value behind the marker. A line also starts after an escaped `\n` or `\r` (a diff or
// log pasted into a JSON string or a command).
const LINE_LEAD = /(^|[\r\n]|\\[nr])([ \t]*[-+>|*#"'`~!,;:.=([{][-+>|*#"'`~!,;:.=([{ \t]*)/g;

/** The text with every line lead blanked (same length), or null when no line has a lead. */
function maskLineLeads(text: string): string | null {
  let changed = false;
  const masked = text.replace(LINE_LEAD, (_all, start: string, lead: string) => {
    changed = true;
    return start + " ".repeat(lead.length);
  });
  return changed ? masked : null;
}

// A secret written so a pattern cannot see it, though a reader (or a shell, a URL parser) does:
// invisible characters inside the name or the token (`pass\u200bword=…`, `gh\u200bp_…`), letters of
// other scripts that look like Latin ones (Cyrillic `р` in `password`, `ghр_`), fullwidth forms
// (`ｐａｓｓｗｏｒｄ=`), percent-encoding (`postgres%3A%2F%2Fapp%3APASS%40db`, `password%3DPASS`, or
// twice: `%253D`), JSON `\u00XX` escapes or HTML character references, terminal colour codes, or a
// command continued over several lines (`docker login \`
// ⏎ `-p …`). The rules also read a normalized copy: invisible characters and ANSI CSI sequences
// dropped, other blanks and line continuations read as a space, fullwidth ASCII, `%XX` (`%25XX`),
// `\u00XX` and `&#NN;`/`&quot;` of printable ASCII decoded, and look-alikes (screening-text.ts, Unicode TR39) and other NFKC
// compatibility forms of ASCII read as ASCII in any run of non-blank characters that also holds an
// ASCII (or fullwidth) letter or digit: a word wholly in Cyrillic or Greek is a word of its language,
// left as it is. What a rule finds there is cut from the real text, the hidden characters with it.
// Terminal colour and cursor codes (ANSI CSI sequences) in pasted terminal output:
// `\x1b[31mpassword=\x1b[0m…` reads as `password=…` on the terminal it came from.
const ANSI_CSI = /^\x1b\[[0-9;?]{0,32}[ -/]{0,2}[@-~]/;
// Compatibility forms NFKC reads as ASCII letters and digits: mathematical alphanumerics (𝐩𝐚𝐬𝐬),
// enclosed (ⓟ), super- and subscripts, letterlike symbols.
const COMPAT_ALNUM = /[\u{1d400}-\u{1d7ff}\u2460-\u24ff\u2070-\u209f\u2100-\u214f]/u;
// JSON `\u0070`-style escapes and HTML character references (`&quot;`, `&#61;`, `&#x3D;`) of
// printable ASCII: JSON or a log rendered into a web page (`{&quot;password&quot;:&quot;…`).
const CHARACTER_REFERENCE = "&(?:#[0-9]{2,3}|#[xX][0-9A-Fa-f]{2}|quot|apos|amp|lt|gt);";
const NAMED_REFERENCES: Record<string, string> = { quot: '"', apos: "'", amp: "&", lt: "<", gt: ">" };
// Every character (or sequence) the view may change: one native scan decides whether a text needs a
// view at all, and finds the places to look at.
const CHANGEABLE = new RegExp(
  String.raw`${LINE_CONTINUATION}|%[0-9A-Fa-f]{2}|\\u00[2-7][0-9A-Fa-f]|${CHARACTER_REFERENCE}|\x1b\[|[\p{Cf}\u034f\ufe00-\ufe0f\u115f\u1160\u3164\uffa0\u{e0100}-\u{e01ef}]|[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\uff01-\uff5e]|[${LOOKALIKE_LETTERS}]|${COMPAT_ALNUM.source}`,
  "gu",
);
// Plain ASCII without `%XX`, escape codes or continued lines needs no view: the cheap test most texts stop at.
const MAY_NEED_VIEW = /[^\x00-\x7f]|%[0-9A-Fa-f]{2}|\x1b\[|[\\\x60^]\r?\n|\\u00|&#|&[a-z]{2,4};/;
const HAS_ALNUM = /[A-Za-z0-9\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;
const BLANK = /\s/;

/** The run of non-blank characters around `at`: [start, end). */
function runAround(text: string, at: number): [number, number] {
  let a = at;
  while (a > 0 && !BLANK.test(text[a - 1]!)) a--;
  let b = at;
  while (b < text.length && !BLANK.test(text[b]!)) b++;
  return [a, b];
}

/** What the view reads for the changeable sequence `m` at `at`: [replacement, length consumed], or null to keep it. */
function normalizedAt(text: string, m: string, at: number, mixedRun: (at: number) => boolean): [string, number] | null {
  if (m.endsWith("\n")) return [" ", m.length]; // a continued line
  const cp = m.codePointAt(0)!;
  if (cp === 0x5c) return [String.fromCharCode(Number.parseInt(m.slice(2), 16)), m.length]; // \u00XX
  if (cp === 0x26) {
    const ref = m.slice(1, -1);
    if (ref in NAMED_REFERENCES) return [NAMED_REFERENCES[ref]!, m.length];
    const code = ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code >= 0x20 && code <= 0x7e ? [String.fromCharCode(code), m.length] : null;
  }
  if (cp === 0x25) {
    // `%XX`, or `%25XX` (encoded twice: a URL inside a query parameter of another).
    const twice = m === "%25" && HEX2.test(text.slice(at + 3, at + 5));
    const byte = Number.parseInt(twice ? text.slice(at + 3, at + 5) : m.slice(1), 16);
    return byte >= 0x20 && byte <= 0x7e ? [String.fromCharCode(byte), twice ? 5 : 3] : null;
  }
  if (cp === 0x1b) {
    const csi = ANSI_CSI.exec(text.slice(at, at + 40));
    return csi ? ["", csi[0].length] : null;
  }
  if (isInvisible(m)) return ["", m.length];
  // Other blanks (no-break, ideographic, line separator) read as the ASCII ones.
  if (BLANK.test(m)) return [cp === 0x2028 || cp === 0x2029 ? "\n" : " ", m.length];
  if (cp >= 0xff01 && cp <= 0xff5e) return [String.fromCharCode(cp - 0xfee0), 1];
  if (!mixedRun(at)) return null;
  const latin = latinLookalike(m);
  if (latin !== undefined) return [latin, m.length];
  const compat = m.normalize("NFKC");
  return compat.length === 1 && compat > " " && compat <= "~" ? [compat, m.length] : null;
}

/** The normalized view of a text, or null when it is the text itself. */
function normalizedView(text: string): View | null {
  if (!MAY_NEED_VIEW.test(text)) return null;
  CHANGEABLE.lastIndex = 0;
  if (!CHANGEABLE.test(text)) return null;
  // Whether the run around a position holds an ASCII (or fullwidth) letter or digit, asked once a run.
  let runEnd = -1;
  let runMixed = false;
  const mixedRun = (at: number) => {
    if (at >= runEnd) {
      const [a, b] = runAround(text, at);
      runEnd = b;
      runMixed = HAS_ALNUM.test(text.slice(a, b));
    }
    return runMixed;
  };
  const edits: { at: number; length: number; to: string }[] = [];
  CHANGEABLE.lastIndex = 0;
  for (let m = CHANGEABLE.exec(text); m !== null; m = CHANGEABLE.exec(text)) {
    const edit = normalizedAt(text, m[0], m.index, mixedRun);
    if (edit === null) continue;
    edits.push({ at: m.index, length: edit[1], to: edit[0] });
    CHANGEABLE.lastIndex = m.index + edit[1];
  }
  if (edits.length === 0) return null;
  // Every edit keeps or shortens the text, so the view is at most as long as it.
  const start = new Array<number>(text.length);
  const end = new Array<number>(text.length);
  const parts: string[] = [];
  let n = 0;
  let from = 0;
  const copy = (a: number, b: number) => {
    parts.push(text.slice(a, b));
    for (let i = a; i < b; i++, n++) {
      start[n] = i;
      end[n] = i + 1;
    }
  };
  for (const e of edits) {
    copy(from, e.at);
    parts.push(e.to);
    for (let k = 0; k < e.to.length; k++, n++) {
      start[n] = e.at;
      end[n] = e.at + e.length;
    }
    from = e.at + e.length;
  }
  copy(from, text.length);
  start.length = n;
  end.length = n;
  return { text: parts.join(""), start, end };
}

// A token split so no pattern sees it whole, though it is one value to whoever reads or runs the
// text: string literals concatenated in code (`"ghp_abc" + "def"`, Python's `"abc"` ⏎ `"def"`,
// PHP's `.`), a long value wrapped onto the next lines (a JWT or key at 64 or 76 columns, on diff
// lines each behind its `+`, after a `\` continuation, in a YAML folded block), or a JSON array of
// chunks (`["ghp_abc", "def"]`). A joined view deletes those separators; only the rules whose match
// is its own evidence (prefixed provider tokens, JWTs, URL passwords: `joinable`) read it, and only
// a match that crosses a join counts, so a value the other views see whole is judged there. What a
// match covers is cut from the real text with the separators inside it: `"ghp_abc" + "def"`
// becomes `"<redacted:github_token>"`.
// Concatenations are read before the text itself: the first piece alone may already pass for a
// (shorter) token (`"sk_live_51Hx…" + "B7nC…"`), and cutting it alone would leave the rest; they
// are one string to the language. Wrapped lines and array chunks are read after it: `<token>` ⏎
// `PATH=/usr/bin` and `["<token>", "next"]` are two values unless nothing else matched. A wrapped
// line whose first piece the text's own reading already cut (`+sk_live_51Hx…` ⏎ `+B7nC…`) loses
// its continuation lines with it (CONTINUED_PLACEHOLDER).
const TOKEN_CHAR = /[A-Za-z0-9_+/=.:@%~-]/;
// Closing quote, then blanks, `+` (JavaScript, Java; a diff's added lines), `.` (PHP), `..` (Lua),
// `||` (SQL), `&` (VB), `-` (a diff's removed lines) or `\` continuations, then the same opening
// quote; with a `,` it is an array of chunks.
const LITERAL_JOIN = /(["'])[ \t\r\n\\+.,&|-]{0,40}\1/g;
const MAY_JOIN = /["'][ \t\r\n\\+.,&|-]{0,40}["']|[A-Za-z0-9_+/=.:@%~-]{16}[ \t]*\\?\r?\n/;
// A wrapped line ends in a token run this long; the line it continues on holds a run of a token's
// characters alone (`=` only as base64 padding: `PATH=/usr/bin` is an assignment), or starts with
// 16 of them mixing letters and digits (`ghp_…` ⏎ `next step: …` are two things).
const WRAPPED_TAIL = 16;
const WRAPPED_LEAD = /^[ \t]*([-+>|#])?[ \t]*(#|\/\/|\*|>|"|')?/;
const WRAPPED_LINE = /[A-Za-z0-9_+/.-]+={0,2}[ \t]*\\?[ \t]*["',;)\]]*[ \t]*(?:\r?\n|$)/y;
const WRAPPED_MIXED_RUN = /(?=[A-Za-z0-9_+/.-]{0,15}[0-9])(?=[A-Za-z0-9_+/.-]{0,15}[A-Za-z])[A-Za-z0-9_+/.-]{16}/y;

interface Cut {
  from: number;
  to: number;
  /** A wrapped line: the line after may start a token of its own. */
  wrap: boolean;
}

/** The concatenations of a text (early), or its wrapped lines and array chunks (late). */
function joinCuts(text: string, early: boolean): Cut[] {
  const cuts: Cut[] = [];
  LITERAL_JOIN.lastIndex = 0;
  for (let m = LITERAL_JOIN.exec(text); m !== null; m = LITERAL_JOIN.exec(text)) {
    const end = m.index + m[0].length;
    // Only between two pieces of a token: `"a" + b` or `"", "` are not joined.
    if (m[0].includes(",") !== early && TOKEN_CHAR.test(text[m.index - 1] ?? "") && TOKEN_CHAR.test(text[end] ?? "")) {
      cuts.push({ from: m.index, to: end, wrap: false });
    } else {
      LITERAL_JOIN.lastIndex = m.index + 1;
    }
  }
  if (early) return cuts;
  const literalCuts = cuts.length;
  let literal = 0;
  let lineStart = 0;
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", nl + 1)) {
    let end = nl;
    if (text[end - 1] === "\r") end--;
    if (text[end - 1] === "\\") end--;
    while (end > lineStart && (text[end - 1] === " " || text[end - 1] === "\t")) end--;
    let tail = 0;
    while (tail < WRAPPED_TAIL && end - tail > lineStart && TOKEN_CHAR.test(text[end - tail - 1]!)) tail++;
    if (tail === WRAPPED_TAIL) {
      // Past the next line's diff marker and comment leader or quote, when this line has the same
      // ones (`+# eyJ…` ⏎ `+# …`), and its indentation.
      const [, marker, leader] = WRAPPED_LEAD.exec(text.slice(lineStart, lineStart + 40))!;
      let next = nl + 1;
      if (marker !== undefined && text[next] === marker) next++;
      while (text[next] === " " || text[next] === "\t") next++;
      if (leader !== undefined && text.startsWith(leader, next)) {
        next += leader.length;
        while (text[next] === " " || text[next] === "\t") next++;
      }
      WRAPPED_LINE.lastIndex = next;
      WRAPPED_MIXED_RUN.lastIndex = next;
      const continues = WRAPPED_LINE.test(text) || WRAPPED_MIXED_RUN.test(text);
      // Not across an array separator already cut (`"abc",` ⏎ `"def"`): the literal cuts are in order.
      while (literal < literalCuts && cuts[literal]!.to <= end) literal++;
      const inside = literal < literalCuts && cuts[literal]!.from < next;
      if (continues && !inside) cuts.push({ from: end, to: next, wrap: true });
    }
    lineStart = nl + 1;
  }
  return cuts.sort((x, y) => x.from - y.from);
}

/** The text with the cuts deleted, each join's view offset noted (its wrapped lines' apart). */
function joinedView(text: string, early: boolean): View | null {
  const cuts = joinCuts(text, early);
  if (cuts.length === 0) return null;
  const start: number[] = [];
  const end: number[] = [];
  const joins: number[] = [];
  const wraps: number[] = [];
  const parts: string[] = [];
  let from = 0;
  const copy = (a: number, b: number) => {
    parts.push(text.slice(a, b));
    for (let i = a; i < b; i++) {
      start.push(i);
      end.push(i + 1);
    }
  };
  for (const cut of cuts) {
    if (cut.from < from) continue;
    copy(from, cut.from);
    joins.push(start.length);
    if (cut.wrap) wraps.push(start.length);
    from = cut.to;
  }
  copy(from, text.length);
  return { text: parts.join(""), start, end, joins, wraps };
}

/** The views every rule reads: the text, its line leads blanked, its normalized copy (and that with its leads blanked). */
function viewsOf(text: string): View[] {
  const views: View[] = [{ text }];
  const masked = maskLineLeads(text);
  if (masked !== null) views.push({ text: masked });
  const normalized = normalizedView(text);
  if (normalized !== null) {
    views.push(normalized);
    const both = maskLineLeads(normalized.text);
    if (both !== null) views.push({ text: both, start: normalized.start, end: normalized.end });
  }
  return views;
}

/** A text's views, the joined ones built when a joinable rule first asks for them. */
interface Views {
  text: string;
  plain: View[];
  joined?: View[];
}

/** A joined view of a normalized view, its offsets mapped through to the real text. */
function throughNormalized(joined: View, normalized: View): View {
  const start = joined.start!.map((i) => normalized.start![i]!);
  const end = joined.end!.map((i) => normalized.end![i - 1]!);
  return { ...joined, start, end };
}

/**
 * The views a rule reads: a joinable rule whose hint a view passes also reads the joined views,
 * early first and late last, of the text and of its normalized copy (a token both split and
 * hidden: `"gh\u200bp_abc" + "def"`). The joined views are looked for once per text, before any
 * hint: almost no text has one, and then the ~100 joinable rules do not test their hints twice
 * (here and in applyRule; bench/RESULTS.md, "Session 15: the session's changes A/B").
 */
function viewsFor(rule: RedactionRule, views: Views): View[] {
  if (!rule.joinable) return views.plain;
  if (views.joined === undefined) views.joined = withJoinedViews(views.plain);
  if (views.joined === views.plain || (rule.hint && !views.plain.some((view) => rule.hint!.test(view.text)))) return views.plain;
  return views.joined;
}

/** The plain views with the joined ones around them; the same array when there are none. */
function withJoinedViews(plain: View[]): View[] {
  const early: View[] = [];
  const late: View[] = [];
  for (const view of plain) {
    // The text itself and its normalized copy; the copies with line leads blanked add nothing to a join.
    if (view !== plain[0] && view.start === undefined) continue;
    if (!MAY_JOIN.test(view.text)) continue;
    const e = joinedView(view.text, true);
    const l = joinedView(view.text, false);
    if (e) early.push(view.start ? throughNormalized(e, view) : e);
    if (l) late.push(view.start ? throughNormalized(l, view) : l);
  }
  return early.length + late.length === 0 ? plain : [...early, ...plain, ...late];
}

/**
 * One pass of the table. Each rule runs on every view of the text, so a value right after a line
 * lead is found exactly as one at the start of a line, and a hidden one as a plain one; what one
 * view's run replaced is a placeholder the next runs skip. The views are recomputed only when a
 * rule changed the text.
 */
function applyTable(text: string, counts: RedactionCounts): string {
  let out = text;
  let views: Views = { text: out, plain: viewsOf(out) };
  for (let r = 0; r < REDACTION_RULES.length; r++) {
    const rule = REDACTION_RULES[r]!;
    const family = rule.family;
    if (family && !views.plain.some((view) => familyPasses(view, family))) {
      // No view can hold any token of the family: skip its rules (they stand together in the table).
      while (REDACTION_RULES[r + 1]?.family === family) r++;
      continue;
    }
    let list = viewsFor(rule, views);
    for (let i = 0; i < list.length; i++) {
      const next = applyRule(rule, out, list[i]!, counts);
      if (next !== out) {
        out = next;
        views = { text: out, plain: viewsOf(out) };
        list = viewsFor(rule, views);
      }
    }
  }
  return redactEncoded(joinContinuedPlaceholders(out), counts);
}

// A token wrapped over lines whose first line alone passed for a whole (shorter) token
// (`+sk_live_51Hx…` ⏎ `+B7nC1kJ5…`): the text's own reading cut the first line, and the rest stands
// alone on the lines after. Up to 64 continuation lines go with the placeholder (counted once, as
// the token): each behind the same diff marker as the placeholder's line, a run of a token's
// characters alone (8 or more, `=` only as padding) mixing letters and digits.
const CONTINUED_PLACEHOLDER =
  /<redacted:([a-z0-9_]{1,40})>((?:[ \t]*\\?\r?\n[ \t]*[-+>|#]?[ \t]*(?:#|\/\/)?[ \t]*[A-Za-z0-9+/_-]{8,256}={0,2}[ \t]*(?=\r?\n|$)){1,64})/g;
const CONTINUATION_LINE = /^[ \t]*([-+>|#])?[ \t]*(?:#|\/\/)?[ \t]*([A-Za-z0-9+/_-]{8,256})={0,2}[ \t]*\r?$/;
const WRAPPABLE_KINDS = new Set(REDACTION_RULES.filter((r) => r.joinable && r.kind !== "password").map((r) => r.kind));

function joinContinuedPlaceholders(text: string): string {
  if (!text.includes(PLACEHOLDER_PREFIX)) return text;
  return text.replace(CONTINUED_PLACEHOLDER, (all: string, kind: string, rest: string, at: number) => {
    if (!WRAPPABLE_KINDS.has(kind)) return all;
    const lineStart = text.lastIndexOf("\n", at - 1) + 1;
    const marker = /^[ \t]*([-+>|#])?/.exec(text.slice(lineStart, at))![1] ?? "";
    // lines[0] ends the placeholder's line (blanks, a `\` continuation); each next one may continue the token.
    const lines = rest.split("\n");
    let taken = 1;
    while (taken < lines.length) {
      const m = CONTINUATION_LINE.exec(lines[taken]!);
      if (!m || (m[1] ?? "") !== marker || !/[0-9]/.test(m[2]!) || !/[A-Za-z]/.test(m[2]!)) break;
      taken++;
    }
    if (taken === 1) return all;
    return (
      placeholder(kind) +
      lines
        .slice(taken)
        .map((line) => `\n${line}`)
        .join("")
    );
  });
}

// Base64 whose decoded text holds a secret: a Kubernetes Secret's `data:` values (`tls.key:
// LS0tLS1CRUdJTi…`, `.dockerconfigjson: eyJhdXRocyI6…`), an encoded `.env`, `echo … | base64 -d`.
// The run is decoded and redacted like any text; when that finds something, the whole run is
// replaced, with the kind found in it (scanners such as trufflehog decode base64 the same way).
// Runs that decode to binary or to text without a secret stay.
// A run may also follow a parameter's `=` (`?t=Z2hw…`, `state=…`: session 18, the `=` read as the
// padding of a run before it hid it), and be URL-safe base64 (`-` and `_` for `+` and `/`, unpadded:
// OAuth `state`, cookies, JWT-like parameters).
const BASE64_RUN =
  /(?:(?<![A-Za-z0-9+/=_-])|(?<=(?:^|[?&;\s"'{,(])[A-Za-z_][A-Za-z0-9_.-]{0,63}=))(?:[A-Za-z0-9+/]{24,16384}={0,2}|[A-Za-z0-9_-]{24,16384})(?![A-Za-z0-9+/=_-])/g;
const PRINTABLE = /^[\t\n\r\x20-\x7e\u00a0-\uffff]*$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });
/** Encodings inside encodings are followed this deep. */
const MAX_DECODE_DEPTH = 2;
let decodeDepth = 0;

function decodedText(run: string): string | null {
  if (run.replace(/=+$/, "").length % 4 === 1) return null;
  // URL-safe base64 read as base64. A long name with `-` or `_` (`my-long-package-name-here`) is
  // decoded too, to bytes that are no UTF-8 text (or text holding no secret), and stays.
  const urlSafe = /[-_]/.test(run);
  let binary: string;
  try {
    binary = atob(urlSafe ? run.replace(/-/g, "+").replace(/_/g, "/") : run);
  } catch {
    return null;
  }
  let text: string;
  try {
    text = utf8.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return null; // binary data, not text
  }
  return PRINTABLE.test(text) ? text : null;
}

function redactEncoded(text: string, counts: RedactionCounts): string {
  if (decodeDepth >= MAX_DECODE_DEPTH || text.length < 24) return text;
  return text.replace(BASE64_RUN, (run) => {
    const decoded = decodedText(run);
    if (decoded === null) return run;
    decodeDepth++;
    let found: RedactionCounts;
    try {
      found = redactText(decoded).counts;
    } finally {
      decodeDepth--;
    }
    const kind = Object.keys(found)[0];
    if (kind === undefined) return run;
    counts[kind] = (counts[kind] ?? 0) + 1;
    return placeholder(kind);
  });
}

// --- Tokens split into shell variables (session 16) ---------------------------------------------
// `T1=ghp_R8kL…; T2=…; curl -H "Authorization: token $T1$T2"`, `export A=sk-proj-… B=…` then
// `"$A$B"`, `"ghp_$REST"`: each half passes alone (too short for its rule, or no prefix), the shell
// joins them where they are used. Every use that joins two or more pieces (variables assigned in the
// same text, or the same list of commands, and literal token characters) is read expanded; when a
// rule that needs no name finds a secret in it (a provider's prefixed token, a JWT: `joinable`
// rules), every assigned value the use read is replaced. Names assigned twice use the last value.
const SHELL_ASSIGNMENT =
  /(?<![A-Za-z0-9_$.-])([A-Za-z_][A-Za-z0-9_]{0,63})=(?:"([^"\n$`\\]{1,512})"|'([^'\n]{1,512})'|([^\s"'`$;&|()<>\\]{1,512}|<redacted:[a-z0-9_]{1,40}>))/g;
const VARIABLE_USE = /(?:[A-Za-z0-9_+/=.~-]*(?:\$\{[A-Za-z_][A-Za-z0-9_]{0,63}\}|\$[A-Za-z_][A-Za-z0-9_]{0,63}))+[A-Za-z0-9_+/=.~-]*/g;
const VARIABLE_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,63})\}|\$([A-Za-z_][A-Za-z0-9_]{0,63})/g;
const MAY_JOIN_VARIABLES = /\$\{?[A-Za-z_]/;
const ADJACENT_REFERENCES = /(?:\$\{[A-Za-z_]\w*\}|\$[A-Za-z_]\w*)\$\{?[A-Za-z_]/;
const PLACEHOLDER_ONLY = /^<redacted:([a-z0-9_]{1,40})>$/;
const JOINED_VARIABLE_KINDS = new Set(REDACTION_RULES.filter((r) => r.joinable && r.kind !== "password").map((r) => r.kind));
let readingVariables = false;
const MAX_JOINED_PIECES = 16;
const MAX_VARIABLE_USES = 64;

function redactVariableJoins(texts: string[], counts: RedactionCounts): string[] {
  if (readingVariables || !texts.some((t) => MAY_JOIN_VARIABLES.test(t))) return texts;
  const values = new Map<string, string>();
  // A quoted value may hold assignments of its own (`x='T1=ghp_…; T2=…; curl … $T1$T2'`, `sh -c "…"`).
  const assignmentsIn = (t: string, depth: number): void => {
    if (!t.includes("=")) return;
    for (const m of t.matchAll(SHELL_ASSIGNMENT)) {
      const quoted = m[2] ?? m[3];
      values.set(m[1]!, quoted ?? m[4]!);
      if (quoted !== undefined && depth < 2) assignmentsIn(quoted, depth + 1);
    }
  };
  for (const t of texts) assignmentsIn(t, 0);
  if (values.size === 0) return texts;
  const secretValues = new Map<string, string>();
  // Bounds for hostile input: a token is joined from a few pieces, and a text reads a few dozen uses.
  const read = new Set<string>();
  for (const t of texts) {
    for (const use of t.matchAll(VARIABLE_USE)) {
      if (read.size >= MAX_VARIABLE_USES) break;
      if (read.has(use[0]) || use[0].split("$").length - 1 > MAX_JOINED_PIECES) continue;
      read.add(use[0]);
      let pieces = 0;
      let valuesRead = 0;
      const used: string[] = [];
      let redactedKind: string | undefined;
      const expanded = use[0].replace(VARIABLE_REFERENCE, (_, braced: string | undefined, bare: string | undefined) => {
        const value = values.get((braced ?? bare)!);
        pieces++;
        if (value === undefined) return "";
        const kind = PLACEHOLDER_ONLY.exec(value)?.[1];
        if (kind !== undefined) {
          if (JOINED_VARIABLE_KINDS.has(kind)) redactedKind = kind;
          return "";
        }
        valuesRead++;
        used.push(value);
        return value;
      });
      // A token already cut where it was assigned (`A=sk-proj-…` long enough alone): what the use
      // glues to it directly (`$A$B`) is its rest.
      if (redactedKind !== undefined && valuesRead > 0 && ADJACENT_REFERENCES.test(use[0])) {
        counts[redactedKind] = (counts[redactedKind] ?? 0) + 1;
        for (const v of used) if (v.length >= 8) secretValues.set(v, redactedKind);
        continue;
      }
      // One variable alone is its own value, already read where it was assigned.
      if (valuesRead === 0 || (pieces < 2 && expanded.length === used[0]!.length) || expanded.length < 16 || expanded.length > 2048)
        continue;
      readingVariables = true;
      let found: RedactionCounts;
      try {
        found = redactText(expanded).counts;
      } finally {
        readingVariables = false;
      }
      const kind = Object.keys(found).find((k) => JOINED_VARIABLE_KINDS.has(k));
      if (kind === undefined) continue;
      counts[kind] = (counts[kind] ?? 0) + 1;
      for (const v of used) secretValues.set(v, kind);
    }
  }
  if (secretValues.size === 0) return texts;
  // Each value where it is assigned (after `=`, `="` or `='`), also inside a quoted command.
  return texts.map((t) => {
    let out = t;
    for (const [value, kind] of secretValues) {
      const at = new RegExp(`(?<==["']?)${value.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(?![A-Za-z0-9_+/=.~-])`, "g");
      out = out.replace(at, placeholder(kind));
    }
    return out;
  });
}

/** Redacts one string; counts say how many values of each kind were replaced. */
// --- Kubernetes Secret manifests (session 18) ---------------------------------------------------
// `kubectl get secret app -o yaml` (or `-o json`, or a manifest in a patch) holds each value of its
// `data:` (base64) or `stringData:` block under a name the secret chose (`admin:`, `root:`,
// `mysql-root:`): no rule saw a secret's name there, and base64 of a plain password decodes to no
// pattern either. In a document whose kind is Secret every value of those blocks is redacted
// (`secret`), references and templates (`{{ .Values.pw | b64enc }}`, `$PW`) kept; a ConfigMap's
// `data:` in another document of the text stays (secretlint's no-k8s-kind-secret flags such files).
const SECRET_KIND = /(?:^[+-]?|[\s,{]|\n[+-])["']?kind["']?[ \t]*:[ \t]*["']?Secret["']?(?![\w-])/;
const DOCUMENT_BREAK = /(?<=\n)(?=[+\- ]?---[ \t]*\r?\n)/;
const DATA_KEY_LINE = /^([+-]?)([ \t]*)(?:-[ \t]+)?(?:data|stringData):[ \t]*\r?$/;
const VALUE_LINE = /^([+-]?)([ \t]*)((?:[\w.-]{1,253}|"[^"\n]{1,253}"|'[^'\n]{1,253}'):[ \t]*)(.*)$/;
const BLOCK_SCALAR = /^[|>][-+]?[0-9]?$/;
const JSON_DATA = /"(?:data|stringData)"[ \t]*:[ \t]*\{([^{}]{0,262144})\}/g;
const JSON_MEMBER = /("(?:[^"\\\n]|\\.){1,253}"[ \t\r\n]*:[ \t\r\n]*")((?:[^"\\\n]|\\.){1,65536})(")/g;
// YAML's flow style on the key's line (`data: {admin: WnE4…, root: "…"}`, session 18): the braces
// hold no braces (a Helm template's `{{ … }}` is no flow mapping), so each match stops at the next brace.
const FLOW_DATA = /(^|\n)([+-]?[ \t]*(?:-[ \t]+)?(?:data|stringData):[ \t]*\{)([^{}]{0,262144})\}/g;

/** Each value of a flow mapping's body (`a: b, "c": 'd'`) through `hide`; commas and colons inside quotes belong to them. */
function hideFlowValues(body: string, hide: (value: string) => string): string {
  let out = "";
  let start = 0;
  let quote = "";
  for (let i = 0; i <= body.length; i++) {
    const c = body[i];
    if (quote) {
      if (c === quote) quote = "";
      else if (c === "\\" && quote === '"') i++;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "," || c === undefined) {
      out += hideFlowMember(body.slice(start, i), hide) + (c ?? "");
      start = i + 1;
    }
  }
  return out;
}

/** One `key: value` of a flow mapping, its value hidden, quotes and blanks kept; anything else as it is. */
function hideFlowMember(member: string, hide: (value: string) => string): string {
  const key = /^[ \t\r\n]*(?:"(?:[^"\\\n]|\\.){1,253}"|'[^'\n]{1,253}'|[^\s"':,][^:\n]{0,252}?)[ \t]*:[ \t\r\n]+/.exec(member);
  if (!key) return member;
  const value = member.slice(key[0].length).trimEnd();
  if (value === "") return member;
  const quoted = value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]);
  const hidden = quoted ? value[0] + hide(value.slice(1, -1)) + value[0] : hide(value);
  return key[0] + hidden + member.slice(key[0].length + value.length);
}

function redactSecretManifests(text: string, counts: RedactionCounts): string {
  if (!text.includes("Secret") || !SECRET_KIND.test(text)) return text;
  const hide = (value: string): string => {
    if (isPlaceholderValue(value) || value.startsWith(PLACEHOLDER_PREFIX)) return value;
    counts.secret = (counts.secret ?? 0) + 1;
    return placeholder("secret");
  };
  return text
    .split(DOCUMENT_BREAK)
    .map((doc) => {
      if (!SECRET_KIND.test(doc)) return doc;
      const jsonDone = doc.replace(JSON_DATA, (block: string) =>
        block.replace(JSON_MEMBER, (_m, head: string, value: string, tail: string) => head + hide(value) + tail),
      );
      const flowDone = jsonDone.replace(
        FLOW_DATA,
        (_m, start: string, head: string, body: string) => `${start}${head}${hideFlowValues(body, hide)}}`,
      );
      const lines = flowDone.split("\n");
      let blockIndent = -1; // the indentation of `data:` while inside its block
      let scalarIndent = -1; // the indentation of a key whose value is a block scalar (`key: |`)
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        const head = DATA_KEY_LINE.exec(line);
        if (head) {
          blockIndent = head[2]!.length;
          scalarIndent = -1;
          continue;
        }
        if (blockIndent < 0) continue;
        const body = /^[+-]/.test(line) ? line.slice(1) : line;
        if (body.trim() === "") continue;
        const indent = /^[ \t]*/.exec(body)![0].length;
        if (indent <= blockIndent) {
          blockIndent = -1;
          scalarIndent = -1;
          continue;
        }
        if (scalarIndent >= 0 && indent > scalarIndent) {
          // A line of a block scalar a rule already cut (`password: <redacted:password>`) is left as it is.
          if (!body.includes(PLACEHOLDER_PREFIX))
            lines[i] = line.slice(0, line.length - body.length + indent) + hide(body.slice(indent).trimEnd());
          continue;
        }
        scalarIndent = -1;
        const m = VALUE_LINE.exec(line);
        const raw = m?.[4]?.trimEnd() ?? "";
        if (!m || raw === "") continue;
        if (BLOCK_SCALAR.test(raw)) {
          scalarIndent = m[2]!.length;
          continue;
        }
        const quoted = /^(["'])(.*)\1$/.exec(raw);
        const value = quoted ? quoted[1] + hide(quoted[2]!) + quoted[1] : hide(raw);
        lines[i] = m[1]! + m[2]! + m[3]! + value + m[4]!.slice(raw.length);
      }
      return lines.join("\n");
    })
    .join("");
}

export function redactText(text: string): { text: string; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  if (typeof text !== "string" || text.length === 0) return { text, counts };
  let out = text;
  // Repeat until nothing changes: a replacement late in the table can expose a value an earlier
  // rule could not see (a host redacted next to an assignment). The result is a fixed point, so
  // a second call changes nothing and counts nothing.
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const before = out;
    out = applyTable(out, counts);
    if (out === before) break;
  }
  out = redactSecretManifests(out, counts);
  return { text: redactVariableJoins([out], counts)[0]!, counts };
}

const MAX_PASSES = 4;

export function mergeCounts(into: RedactionCounts, from: RedactionCounts): RedactionCounts {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
  return into;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

// Object keys are redacted too (session 18): an environment map or a JSON document keyed by a token
// (`{"ghp_…": "repo"}`, `{"DB_PASSWORD=…": 1}`) kept it. A trail's keys are its schema's (unknown ones
// are dropped before), so the keys seen are few: those found clean are remembered (up to
// CLEAN_KEYS_MAX) and cost a lookup. Two keys redacted to the same text keep both values: the later
// key gets ` #2`, ` #3`, ….
const cleanKeys = new Set<string>();
const CLEAN_KEYS_MAX = 4096;

function redactKey(key: string, taken: Record<string, unknown>, counts: RedactionCounts): string {
  if (cleanKeys.has(key)) return key;
  const r = redactText(key);
  if (r.text === key) {
    if (cleanKeys.size < CLEAN_KEYS_MAX) cleanKeys.add(key);
    return key;
  }
  mergeCounts(counts, r.counts);
  let out = r.text;
  for (let n = 2; Object.hasOwn(taken, out); n++) out = `${r.text} #${n}`;
  return out;
}

/**
 * Sets `key` as an own data property. `out[key] = value` would run Object.prototype's `__proto__`
 * setter for a key JSON.parse made own: the key would vanish and the output's prototype change.
 */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/**
 * Redacts every string at any depth of a JSON-like value (arrays and plain objects), object keys
 * included; numbers, booleans, null and non-plain objects are kept as they are. Returns a fresh value.
 */
export function redactDeep<T>(value: T): { value: T; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  let awsKeyId = false;
  const map = (v: unknown, depth: number, text: (s: string) => string): unknown => {
    if (typeof v === "string") return text(v);
    if (depth > 64) return v; // deeper than any protocol object; guards against stack exhaustion
    if (Array.isArray(v)) {
      const items = redactNamedInPrevious(
        v.map((x) => map(x, depth + 1, text)),
        counts,
      );
      // Commands of one list run in one shell: a variable set by one is read by the next.
      if (items.length < 2 || !items.every((x) => typeof x === "string")) return items;
      return redactVariableJoins(items as string[], counts);
    }
    if (isPlainObject(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) setOwn(out, redactKey(k, out, counts), map(x, depth + 1, text));
      return out;
    }
    return v;
  };
  let out = map(value, 0, (s) => {
    const r = redactText(s);
    mergeCounts(counts, r.counts);
    if (r.text.includes(AWS_KEY_ID_PLACEHOLDER)) awsKeyId = true;
    return r.text;
  });
  // An access key id in one field: a bare secret key in another is the other half of the pair.
  if (awsKeyId) out = map(out, 0, (s) => applyRule(AWS_SECRET_ELSEWHERE, s, { text: s }, counts));
  return { value: out as T, counts };
}

const AWS_KEY_ID_PLACEHOLDER = placeholder("aws_access_key");

// A secret's name ending one item of a list and its value alone as the next: commands
// `["export DB_PASSWORD=", "Tr0ub…"]`, steps `["Set API_TOKEN to", "Qx7b…"]` (session 15). The
// value is one word that looks like a secret (6 or more characters with a digit or a symbol, not a
// path or a reference); the name announces a secret as an assignment's name does (secretKindOfName).
const NAME_ENDING_ITEM = /(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,60})["']?(?:[ \t]*[:=]|[ \t]+to:?)[ \t]*$/;
const ONE_WORD = /^[ \t]*(["']?)([^\s"']{1,256})\1[ \t]*$/;

function redactNamedInPrevious(items: unknown[], counts: RedactionCounts): unknown[] {
  for (let i = 0; i + 1 < items.length; i++) {
    const name = typeof items[i] === "string" ? NAME_ENDING_ITEM.exec(items[i] as string)?.[1] : undefined;
    const next = items[i + 1];
    if (name === undefined || typeof next !== "string") continue;
    const kind = secretKindOfName(name);
    const value = ONE_WORD.exec(next)?.[2];
    if (kind === null || value === undefined || value.startsWith(PLACEHOLDER_PREFIX) || isPlaceholderValue(value)) continue;
    // A word of prose after a name (`["Rotate the token:", "done"]`) is not its value.
    if (!bareValueLooksSecret(value)) continue;
    items[i + 1] = next.replace(value, placeholder(kind));
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return items;
}

// --- Keeping a redacted trail inside the schema's length limits --------------------------------

/** Cuts s to max characters (code points) without leaving half a placeholder at the end. */
export function truncateChars(s: string, max: number): string {
  if (s.length <= max || codePointLength(s) <= max) return s;
  let out = "";
  let n = 0;
  for (const ch of s) {
    if (n === max) break;
    out += ch;
    n++;
  }
  return out.replace(/<(?:r(?:e(?:d(?:a(?:c(?:t(?:e(?:d(?::[a-z0-9_]*)?)?)?)?)?)?)?)?)?$/, "").trimEnd();
}

function fitToSchema(schema: TSchema, value: unknown): unknown {
  const s = schema as { type?: string; maxLength?: number; items?: TSchema; properties?: Record<string, TSchema> };
  if (typeof value === "string" && s.type === "string" && s.maxLength !== undefined) {
    return truncateChars(value, s.maxLength);
  }
  if (Array.isArray(value) && s.type === "array" && s.items) return value.map((x) => fitToSchema(s.items!, x));
  if (isPlainObject(value) && s.type === "object" && s.properties) {
    const out: Record<string, unknown> = { ...value };
    for (const [k, sub] of Object.entries(s.properties)) if (k in out) out[k] = fitToSchema(sub, out[k]);
    return out;
  }
  return value;
}

/**
 * redactDeep for a Trail, then every string cut back to its schema limit: a placeholder can be
 * longer than what it replaced (`a@b.co` → `<redacted:email>`), and a redacted trail must still
 * validate. Use this for trails; redactDeep for anything else.
 */
export function redactTrail<T>(trail: T): { value: T; counts: RedactionCounts } {
  const r = redactDeep(trail);
  return { value: fitToSchema(Trail, r.value) as T, counts: r.counts };
}

/**
 * redactDeep for an Outcome Report, every string then cut back to its schema limit as in
 * redactTrail: its notes are kept and shown as feed replies, and its model id in the operator
 * console, so they must hold to the limits they were validated against.
 */
export function redactOutcomeReport(report: OutcomeReport): OutcomeReport {
  return fitToSchema(OutcomeReportSchema, redactDeep(report).value) as OutcomeReport;
}

/** Total number of redactions in a counts map. */
export const countTotal = (counts: RedactionCounts) => Object.values(counts).reduce((a, b) => a + b, 0);

const PLACEHOLDER_PATTERN = /<redacted:([a-z0-9_]{1,40})>/g;
const KNOWN_KINDS = new Set(REDACTION_KINDS);

/**
 * The placeholders of known kinds already present in a JSON-like value, per kind: what an earlier
 * pass removed (an MCP server redacts a trail before it sends it as a draft), which a new pass
 * no longer sees or counts.
 */
export function placeholderCounts(value: unknown): RedactionCounts {
  const counts: RedactionCounts = {};
  const walk = (v: unknown, depth: number): void => {
    if (typeof v === "string") {
      if (!v.includes(PLACEHOLDER_PREFIX)) return;
      for (const m of v.matchAll(PLACEHOLDER_PATTERN)) if (KNOWN_KINDS.has(m[1]!)) counts[m[1]!] = (counts[m[1]!] ?? 0) + 1;
    } else if (depth <= 64 && v !== null && typeof v === "object") {
      for (const x of Array.isArray(v) ? v : Object.values(v)) walk(x, depth + 1);
    }
  };
  walk(value, 0);
  return counts;
}

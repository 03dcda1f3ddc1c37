// Issue 16, session 19: anchoring a report on the tool's own message templates (an experiment;
// bench/RESULTS.md "Session 19: message templates"). The catalog is built from text installed on
// this machine, never from the dev set: the English msgids of gettext catalogs (libc, coreutils,
// bash, git, apt, dpkg, make, PostgreSQL, …), the messages Python's stdlib and site-packages raise
// and node_modules throw (the harvest bench/lib/corpus.ts makes), and the messages of Node's own
// errors (lib/internal/errors.js, embedded in the node binary). A template is its literal words with
// placeholders (%s, {name}, ${expr}) between them. In a report, the template match with the most
// literal words is the error's anchor; the match (with the class before it, a placeholder's word at
// either end) is read in place of the report, and whatever surrounds it (loggers, runners, prose)
// is dropped.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { harvestErrorStrings } from "./corpus";
import { OUT_DIR, REPO_DIR } from "./report";

/** A placeholder in a template, after parsing. */
const HOLE = "\u0000";

/** gettext domains that are no tool's error messages: language and country names, GUI toolkits. */
const NOT_MESSAGES =
  /^(?:iso_|gtk|gdk|glib|at-spi|xkeyboard|shared-mime|gsettings|gstreamer|libhandy|notification|xdg-user|system-config|cups|PackageKit|appstream|libsecret|software-properties|avahi|polkit)/;

function moMessageIds(buf: Buffer): string[] {
  if (buf.length < 28) return [];
  const le = buf.readUInt32LE(0) === 0x950412de;
  if (!le && buf.readUInt32BE(0) !== 0x950412de) return [];
  const rd = (o: number) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const n = rd(8);
  const orig = rd(12);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const len = rd(orig + 8 * i);
    const off = rd(orig + 8 * i + 4);
    if (len === 0 || off + len > buf.length) continue;
    // A msgctxt is "context\x04msgid"; plural forms are NUL-separated.
    for (const msg of buf.toString("utf8", off, off + len).split("\0")) out.push(msg.slice(msg.indexOf("\x04") + 1));
  }
  return out;
}

export interface RawTemplate {
  text: string;
  source: string;
}

/** Every domain's msgids, each domain read from the first locale that has it (msgids are the same in all). */
function gettextTemplates(): RawTemplate[] {
  const root = "/usr/share/locale";
  const seen = new Set<string>();
  const out: RawTemplate[] = [];
  for (const locale of readdirSync(root).sort()) {
    const dir = join(root, locale, "LC_MESSAGES");
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).sort()) {
      if (!file.endsWith(".mo") || seen.has(file) || NOT_MESSAGES.test(file)) continue;
      seen.add(file);
      for (const text of moMessageIds(readFileSync(join(dir, file)))) out.push({ text, source: `gettext:${file.slice(0, -3)}` });
    }
  }
  return out;
}

/** Node's own errors: E('ERR_X', 'message %s', …) in lib/internal/errors.js, embedded in the binary. */
function nodeTemplates(): RawTemplate[] {
  let bin: string;
  try {
    const node = execFileSync("which", ["node"], { encoding: "utf8" }).trim();
    bin = readFileSync(execFileSync("readlink", ["-f", node], { encoding: "utf8" }).trim(), "latin1");
  } catch {
    return [];
  }
  const out: RawTemplate[] = [];
  const re = /\bE\('(ERR_[A-Z0-9_]{1,80})',\s{0,20}'((?:[^'\\\n]|\\.){4,300})'/g;
  for (let m = re.exec(bin); m; m = re.exec(bin)) out.push({ text: m[2]!, source: `node:${m[1]}` });
  // A message split over a concatenation ('a ' + 'b'): its first literal, then a placeholder.
  const split = /\bE\('(ERR_[A-Z0-9_]{1,80})',\s{0,20}\n?\s{0,20}'((?:[^'\\\n]|\\.){4,300})'\s{0,4}\+/g;
  for (let m = split.exec(bin); m; m = split.exec(bin)) out.push({ text: `${m[2]!}%s`, source: `node:${m[1]}` });
  return out;
}

function sourceTemplates(): RawTemplate[] {
  return harvestErrorStrings(REPO_DIR).map((e) => ({ text: e.message, source: `${e.lang}:${e.module}:${e.cls}` }));
}

/** Placeholders: printf's (%s, %d, %lu, %1$s, %(name)s), Python's ({}, {name!r}), JS template literals (${…}). */
const PLACEHOLDER =
  /%(?:\d{1,2}\$)?(?:\([A-Za-z_]{1,40}\))?[-+ #0-9.*']{0,8}(?:hh|h|ll|l|L|q|j|z|t|I64)?[diouxXeEfgGcsSpmr]|\{[^{}\n]{0,60}\}|\$\{[^{}\n]{0,80}\}/g;

export interface Template {
  /** Literal word runs between placeholders. */
  segments: string[][];
  /** A placeholder before the first run / after the last. */
  leading: boolean;
  trailing: boolean;
  literalWords: number;
  source: string;
}

/** The words a template and a report are matched on: runs of ASCII letters, lowercase. */
const WORD = /[A-Za-z]+/g;
const wordsOf = (text: string) => (text.match(WORD) ?? []).map((w) => w.toLowerCase());

const MIN_LITERAL_WORDS = Number(process.env.TEMPLATE_MIN_WORDS ?? 3);
const MIN_LITERAL_LETTERS = 12;
const MAX_LITERAL_WORDS = 30;

export function parseTemplate(text: string, source: string): Template | undefined {
  const t = text.replace(/\\n$|\n$/, "").replace(/%%/g, "%");
  if (/\n|\\n/.test(t.trim()) || t.length > 300) return undefined;
  if (/^\s*(?:usage|try '|Try `)/i.test(t)) return undefined;
  const segments = t.replace(PLACEHOLDER, HOLE).split(HOLE).map(wordsOf);
  const literalWords = segments.reduce((n, s) => n + s.length, 0);
  const letters = segments.reduce((n, s) => n + s.join("").length, 0);
  if (literalWords < MIN_LITERAL_WORDS || literalWords > MAX_LITERAL_WORDS || letters < MIN_LITERAL_LETTERS) return undefined;
  const leading = segments[0]!.length === 0;
  const trailing = segments.length > 1 && segments[segments.length - 1]!.length === 0;
  return { segments: segments.filter((s) => s.length > 0), leading, trailing, literalWords, source };
}

/** Where the catalog's raw templates are kept once read (TEMPLATE_CATALOG: another file, e.g. a run's). */
const CATALOG_FILE = process.env.TEMPLATE_CATALOG ?? join(OUT_DIR, "message-templates.json");

/** The catalog's raw templates (cached: reading every source takes a second). */
export function rawTemplates(): RawTemplate[] {
  if (existsSync(CATALOG_FILE)) return JSON.parse(readFileSync(CATALOG_FILE, "utf8"));
  const seen = new Set<string>();
  const out = [...gettextTemplates(), ...nodeTemplates(), ...sourceTemplates()].filter((t) => {
    if (seen.has(t.text)) return false;
    seen.add(t.text);
    return true;
  });
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(CATALOG_FILE, JSON.stringify(out));
  return out;
}

export interface Catalog {
  templates: Template[];
  /** Templates by their rarest literal word (fewest templates hold it), with where it is in them. */
  byKey: Map<string, Array<{ t: Template; seg: number; at: number }>>;
}

export function buildCatalog(raw: RawTemplate[]): Catalog {
  const seenShape = new Set<string>();
  const templates: Template[] = [];
  for (const r of raw) {
    const t = parseTemplate(r.text, r.source);
    if (!t) continue;
    const shape = `${t.leading ? "_ " : ""}${t.segments.map((s) => s.join(" ")).join(" _ ")}${t.trailing ? " _" : ""}`;
    if (seenShape.has(shape)) continue;
    seenShape.add(shape);
    templates.push(t);
  }
  const df = new Map<string, number>();
  for (const t of templates) for (const w of new Set(t.segments.flat())) df.set(w, (df.get(w) ?? 0) + 1);
  const byKey: Catalog["byKey"] = new Map();
  for (const t of templates) {
    let best = { seg: 0, at: 0, n: Number.POSITIVE_INFINITY };
    t.segments.forEach((s, seg) => {
      s.forEach((w, at) => {
        const n = df.get(w)!;
        if (n < best.n) best = { seg, at, n };
      });
    });
    const key = t.segments[best.seg]![best.at]!;
    const list = byKey.get(key) ?? [];
    list.push({ t, seg: best.seg, at: best.at });
    byKey.set(key, list);
  }
  return { templates, byKey };
}

/** The most words a placeholder between two literal runs stands for. */
const MAX_GAP = 12;

interface Token {
  w: string;
  start: number;
  end: number;
}

function segmentAt(tokens: Token[], seg: string[], p: number): boolean {
  if (p < 0 || p + seg.length > tokens.length) return false;
  for (let k = 0; k < seg.length; k++) if (tokens[p + k]!.w !== seg[k]) return false;
  return true;
}

/** The token range [first, last] of a match of `t` whose run `seg` starts at token `p`, if any. */
function matchAround(tokens: Token[], t: Template, seg: number, p: number): [number, number] | undefined {
  if (!segmentAt(tokens, t.segments[seg]!, p)) return undefined;
  let last = p + t.segments[seg]!.length - 1;
  for (let j = seg + 1; j < t.segments.length; j++) {
    const s = t.segments[j]!;
    let found = -1;
    for (let g = 0; g <= MAX_GAP && found < 0; g++) if (segmentAt(tokens, s, last + 1 + g)) found = last + 1 + g;
    if (found < 0) return undefined;
    last = found + s.length - 1;
  }
  let first = p;
  for (let j = seg - 1; j >= 0; j--) {
    const s = t.segments[j]!;
    let found = -1;
    for (let g = 0; g <= MAX_GAP && found < 0; g++) if (segmentAt(tokens, s, first - g - s.length)) found = first - g - s.length;
    if (found < 0) return undefined;
    first = found;
  }
  return [first, last];
}

export interface Anchor {
  line: number;
  start: number;
  end: number;
  score: number;
  template: Template;
}

/**
 * The class or code a message follows on its line, up to three of them: "java.net.ConnectException: ",
 * "Error [ERR_X]: ", "[Errno 28] ", "ENOTEMPTY: ", "ORA-12541: ", "error[E0601]: ", "ERROR 1452 (23000): ".
 */
const CLASS_BEFORE =
  /(?:^|[\s(\x60'"])((?:(?:(?:[A-Za-z_$][\w$]*[.\\:]{1,2}){0,8}[A-Z][\w$]*(?:Error|Exception)(?:[ \t]?\[[\w-]{1,60}\])?:|\[(?:Errno|WinError)[ \t]?-?\d{1,6}\]|E[A-Z]{2,20}:|[A-Z]{2,10}-\d{2,6}:|error\[E\d{4}\]:|ERROR[ \t]\d{1,6}(?:[ \t]\(\w{5}\))?:)[ \t]{0,8}){1,3})$/;

const isBlank = (c: string | undefined) => c !== undefined && /\s/.test(c);
const chunkStart = (line: string, i: number) => {
  let s = i;
  while (s > 0 && !isBlank(line[s - 1])) s--;
  return s;
};
const chunkEnd = (line: string, i: number) => {
  let e = i;
  while (e < line.length && !isBlank(line[e])) e++;
  return e;
};

/** The best template match in a report, if any: most literal words, then a class before it, then first. */
export function findAnchor(catalog: Catalog, text: string, maxLines = 400): Anchor | undefined {
  let best: Anchor | undefined;
  const lines = text.split("\n");
  for (let li = 0; li < Math.min(lines.length, maxLines); li++) {
    const line = lines[li]!;
    if (line.length > 4000) continue;
    const tokens: Token[] = [];
    for (const m of line.matchAll(WORD)) tokens.push({ w: m[0].toLowerCase(), start: m.index!, end: m.index! + m[0].length });
    for (let i = 0; i < tokens.length; i++) {
      const cands = catalog.byKey.get(tokens[i]!.w);
      if (!cands) continue;
      for (const c of cands) {
        if (best && c.t.literalWords + 0.5 <= best.score) continue;
        const r = matchAround(tokens, c.t, c.seg, i - c.at);
        if (!r) continue;
        let start = chunkStart(line, tokens[r[0]]!.start);
        let end = chunkEnd(line, tokens[r[1]]!.end);
        if (c.t.leading) {
          let s = start;
          while (s > 0 && isBlank(line[s - 1])) s--;
          start = chunkStart(line, s);
        }
        if (c.t.trailing) {
          let e = end;
          while (e < line.length && isBlank(line[e])) e++;
          end = chunkEnd(line, e);
        }
        const cls = CLASS_BEFORE.exec(line.slice(Math.max(0, start - 400), start));
        if (cls) start -= cls[1]!.length;
        const score = c.t.literalWords + (cls ? 0.5 : 0);
        if (!best || score > best.score) best = { line: li, start, end, score, template: c.t };
      }
    }
  }
  return best;
}

let catalog: Catalog | undefined;
export const defaultCatalog = (): Catalog => {
  catalog ??= buildCatalog(rawTemplates());
  return catalog;
};

export type AnchorMode = "span" | "tail" | "line" | "trim" | "inline";

/**
 * Where a message ends after its match: the line's end, a closing quote or bracket, or a sentence's
 * end; anything else (": more", ", more", "(more", a word) continues the message.
 */
const MESSAGE_END = /^(?:\s*$|[.。!'"\x60)\]}]{1,3}(?:\s|$))/;
/** A word attached to the template's first word without a separator: "'NoneType' object is …". */
const ATTACHED_BEFORE = /(?:^|\s)([^\s:|>\][)]*[\w'"\x60])[ \t]{1,4}$/;

/** The reading "trim" mode gives: the template's match, widened where the message goes on. */
export function trimmedReading(line: string, a: Anchor): string {
  let start = a.start;
  let end = a.end;
  if (!MESSAGE_END.test(line.slice(end))) end = line.length;
  const noClass = !a.template.leading && a.score === a.template.literalWords;
  const before = line.slice(Math.max(0, start - 200), start);
  // "subject: message" (perror's form, "libGL.so.1: cannot open shared object file"): what precedes
  // is the message's subject (the line is read from its start, as version 12 reads it).
  if (noClass && /:[ \t]{1,8}$/.test(before)) start = 0;
  else if (noClass) {
    const m = ATTACHED_BEFORE.exec(before);
    if (m) start -= m[0].trimStart().length;
  }
  return line.slice(start, end);
}

function readingOf(line: string, a: Anchor, mode: AnchorMode): string {
  if (mode === "line") return line;
  if (mode === "tail") return line.slice(a.start);
  if (mode === "trim") return trimmedReading(line, a);
  return line.slice(a.start, a.end);
}

/** The anchored reading of a report and the whole line it is on, when some template matched. */
export function anchoredLine(text: string, mode: AnchorMode = "span"): { reading: string; line: string } | undefined {
  const a = findAnchor(defaultCatalog(), text);
  if (!a) return undefined;
  const lines = text.split("\n");
  const line = lines[a.line]!;
  if (mode !== "inline") return { reading: readingOf(line, a, mode), line };
  // The report with the anchor's line trimmed to the message; version 12 reads the rest as before.
  lines[a.line] = trimmedReading(line, a);
  return { reading: lines.join("\n"), line };
}

/** The text read in place of the report: the anchored reading, or undefined when no template matched. */
export const anchoredReading = (text: string, mode: AnchorMode = "span"): string | undefined => anchoredLine(text, mode)?.reading;

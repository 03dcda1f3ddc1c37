// Experiment (issue 16, session 11; not adopted, bench/RESULTS.md "Session 11"): a learned choice of
// the error line in a pasted block. The rule-based normalizer reads a pasted block as a whole and
// sometimes keeps a line that is not the error (a reporter's sentence after it, a hint a tool
// printed, the next command's output) or picks another block's line. Here two small logistic
// models, trained by bench/fingerprint-line-choice.ts on the external sets of real reports and the
// dev set's tune split (cross-validated by group), decide whether one line of the block, normalized
// alone, is the error:
//   1. `pick` scores every line from its own text (error words, an exception class, a code, its
//      place in the block, a logger's level, a frame's shape, a reporter's words, …) and names the
//      most likely line, so that only one extra line is normalized per block;
//   2. `keep` reads that line's normal form against the block's and says whether it replaces it
//      (the block's form holds the line's form and more words; what the rest says; whether the
//      line runs on into the next one).
// Pure and deterministic, written so that it could move to src/core with frozen weights (a retrain
// would then be a new normalizer version); it stays here because it was not adopted.

import { stripLinePrefixes } from "../../src/core/error-normalizer-v2";

/** A logistic model over a fixed feature vector: weights[0] is the bias. */
export interface LogisticModel {
  weights: readonly number[];
  threshold: number;
}

export interface LineChoiceModel {
  pick: LogisticModel;
  keep: LogisticModel;
}

/** Lines a block is cut into; a longer paste keeps its first and last (the error is at one end). */
export const MAX_CANDIDATE_LINES = 60;
/** A line longer than this is not scored (a minified bundle, a log record on one line). */
const MAX_LINE_CHARS = 2000;

const ERROR_WORD =
  /\b(?:error|errors|exception|panic|panicked|fatal|failed|failure|fails|cannot|can't|couldn't|could not|unable|not found|denied|refused|invalid|missing|unknown|no such|timed out|timeout|abort(?:ed|ing)?|mismatch|not allowed|unexpected|undefined|segmentation fault|killed|incompatible|unsupported|exceeded|corrupt(?:ed)?|malformed)\b/gi;
const EXCEPTION_CLASS = /\b[A-Z][A-Za-z0-9_]*(?:Error|Exception|Fault|Failure)\b/;
const ERROR_CODE =
  /\b(?:[A-Z]{1,6}-?\d{3,6}|E[A-Z]{3,12}|ERR_[A-Z_]{3,60}|[A-Z]+\d*_[A-Z_]{3,60}|error\[E\d{4}\])\b|\[(?:Errno|WinError) -?\d{1,6}\]/;
const LEVEL_PREFIX = /^[ \t]*(?:\[?(?:error|fatal|critical|severe|err!?|e)\]?[ \t]*[:|\]]|(?:error|fatal|ERROR|FATAL)[ \t])/i;
const QUIET_LEVEL = /^[ \t]*\[?(?:info|debug|trace|notice|verbose|warn(?:ing)?)\b/i;
const FRAME =
  /^[ \t]*(?:at[ \t]+\S|File "|\S+\.(?:go|py|rs|js|ts|java|c|cc|cpp):\d+|#\d+[ \t]+0x|\d+:[ \t]+0x|goroutine \d+|Traceback \(|\.\.\. \d+ more)/;
const GUTTER = /^[ \t]*(?:\d+[ \t]*)?[|=][ \t]/;
const CAUSED_BY = /^[ \t]*Caused by\b/i;
const NOTE_HINT = /^[ \t]*(?:=[ \t]*)?(?:note|help|hint|see|for more information|did you mean|tip|suggestion)\b/i;
const REPORTER = /\b(?:i|i'm|im|i've|my|we|our|please|hello|hi|thanks|help me|anyone|someone|tried|trying|when i|how (?:to|can|do))\b/i;
const PROMPT = /^[ \t]*(?:[$#>%»]|PS [A-Z]:|[\w.-]+@[\w.-]+[:~])/;
const JSON_LIKE = /^[ \t]*[{["]/;
const PATH = /(?:^|[\s'"(=])(?:\/[\w.-]+){2,}|[A-Za-z]:\\/;
const SEVERITY_WORD = /^[ \t]*(?:[\w.-]+:[ \t]+)?(?:error|fatal|panic|E)[:[]/i;

/**
 * rustc's "= note:" lines are part of the error above them (version 2 attaches them on purpose: the
 * note names the missing target, `wasm32-wasip2` against `wasm32-unknown-unknown` for E0463): a
 * block with one keeps the rules' form.
 */
const RUSTC_NOTE = /^[ \t]*=[ \t]*note:/m;

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

function countMatches(re: RegExp, s: string, cap: number): number {
  re.lastIndex = 0;
  let n = 0;
  while (n < cap && re.exec(s) !== null) n++;
  re.lastIndex = 0;
  return n;
}

/** A line of a block: as pasted, without a logger's or runner's prefix, and how far it is indented. */
export interface BlockLine {
  raw: string;
  /** Without the prefix version 2 strips from every line (timestamps, levels, a pod's column, …), trimmed. */
  text: string;
  /** Blanks between that prefix and the text (a continuation line is indented under its message). */
  indent: number;
}

/** The block's lines worth scoring: non-blank, at most MAX_LINE_CHARS long (else blank), in order. */
export function candidateLines(text: string): BlockLine[] {
  let lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length > MAX_CANDIDATE_LINES) lines = [...lines.slice(0, MAX_CANDIDATE_LINES / 2), ...lines.slice(-MAX_CANDIDATE_LINES / 2)];
  return lines.map((raw) => {
    if (raw.length > MAX_LINE_CHARS) return { raw: "", text: "", indent: 0 };
    const stripped = stripLinePrefixes(raw).trim();
    const at = raw.lastIndexOf(stripped);
    let indent = 0;
    for (let i = at - 1; i >= 0 && (raw[i] === " " || raw[i] === "\t"); i--) indent += raw[i] === "\t" ? 4 : 1;
    return { raw, text: stripped, indent };
  });
}

/** Features of one line from its own text and its place in the block (the pick model's input). */
export function lineFeatures(lines: readonly BlockLine[], index: number): number[] {
  const { raw, text: line, indent } = lines[index]!;
  const count = lines.length;
  const letters = countMatches(/[A-Za-z]/g, line, 4000);
  const words = line === "" ? 0 : line.split(/\s+/).length;
  const fromEnd = count > 1 ? (count - 1 - index) / (count - 1) : 0;
  const errorWords = countMatches(ERROR_WORD, line, 3);
  const previous = lines[index - 1];
  return [
    1,
    errorWords > 0 ? 1 : 0,
    errorWords / 3,
    EXCEPTION_CLASS.test(line) ? 1 : 0,
    ERROR_CODE.test(line) ? 1 : 0,
    LEVEL_PREFIX.test(raw) ? 1 : 0,
    SEVERITY_WORD.test(line) ? 1 : 0,
    QUIET_LEVEL.test(raw) ? 1 : 0,
    FRAME.test(line) ? 1 : 0,
    GUTTER.test(line) ? 1 : 0,
    CAUSED_BY.test(line) ? 1 : 0,
    NOTE_HINT.test(line) ? 1 : 0,
    REPORTER.test(line) ? 1 : 0,
    PROMPT.test(raw) ? 1 : 0,
    JSON_LIKE.test(line) ? 1 : 0,
    PATH.test(line) ? 1 : 0,
    previous !== undefined && indent > previous.indent ? 1 : 0,
    line.length > 0 ? letters / line.length : 0,
    clamp01(words / 30),
    words <= 2 ? 1 : 0,
    fromEnd,
    index === count - 1 ? 1 : 0,
    index === 0 ? 1 : 0,
    clamp01(Math.log2(count) / 6),
    /^[a-z]/.test(line) ? 1 : 0,
    // Gradle and others nest a cause under its wrapper with deeper "> " marks.
    quoteDepth(raw) > quoteDepth(lines[0]!.raw) ? 1 : 0,
    previous !== undefined && /:$/.test(previous.text) ? 1 : 0,
  ];
}

function quoteDepth(raw: string): number {
  const m = /^[ \t]{0,40}((?:>[ \t]{0,8}){1,10})/.exec(raw);
  return m ? (m[1]!.match(/>/g) ?? []).length : 0;
}

/**
 * Whether the block's form reads as this line alone: every word of it (placeholders aside) is in
 * the line, so normalizing the line could only give the same form; the choice skips that work.
 */
export function blockFormIsLine(line: BlockLine, blockForm: string): boolean {
  const own = line.raw.toLowerCase();
  return blockForm.split(" ").every((w) => w.startsWith("<") || own.includes(w));
}

const wordsOf = (form: string) => (form === "" ? 0 : form.split(" ").length);

/**
 * Features of the picked line's normal form against the block's (the keep model's input): whether
 * the block's form holds it and what the rest says (an error of its own, a reporter's words, words
 * of the line itself that the line alone loses), and whether the line reads as complete or runs on
 * into the next one (a message wrapped over lines, an indented continuation, a list after a colon).
 */
export function keepFeatures(pickScore: number, lines: readonly BlockLine[], index: number, lineForm: string, blockForm: string): number[] {
  const line = lines[index]!;
  const next = lines[index + 1];
  const lineWords = wordsOf(lineForm);
  const blockWords = wordsOf(blockForm);
  const inside = blockForm.includes(lineForm);
  const rest = inside ? blockForm.replace(lineForm, " ").trim() : blockForm;
  const restWords = rest === "" ? [] : rest.split(" ");
  const own = line.text.toLowerCase();
  const restFromLine = restWords.length > 0 ? restWords.filter((w) => own.includes(w)).length / restWords.length : 0;
  const lineHasError = countMatches(ERROR_WORD, lineForm, 1) > 0 || EXCEPTION_CLASS.test(line.text);
  const restHasError = countMatches(ERROR_WORD, rest, 1) > 0;
  return [
    1,
    pickScore,
    inside ? 1 : 0,
    inside && blockForm.startsWith(lineForm) ? 1 : 0,
    inside && blockForm.endsWith(lineForm) ? 1 : 0,
    blockWords > 0 ? clamp01(lineWords / blockWords) : 1,
    clamp01(restWords.length / 30),
    clamp01(lineWords / 20),
    lineWords <= 2 ? 1 : 0,
    lineHasError ? 1 : 0,
    restHasError ? 1 : 0,
    REPORTER.test(rest) ? 1 : 0,
    /[.!?)\]'"`}>]$/.test(line.text) ? 1 : 0,
    /[:,;(]$/.test(line.text) ? 1 : 0,
    next !== undefined && /^[a-z]/.test(next.text) ? 1 : 0,
    next !== undefined && next.indent > line.indent ? 1 : 0,
    next === undefined ? 1 : 0,
    /\d/.test(rest) ? 1 : 0,
    ERROR_CODE.test(rest) || /\b[a-z_]+\(\)/.test(rest) ? 1 : 0,
    restWords.length <= 3 ? 1 : 0,
    restFromLine,
    /\w$/.test(line.text) && next !== undefined ? 1 : 0,
  ];
}

export function logistic(model: LogisticModel, features: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < features.length; i++) z += (model.weights[i] ?? 0) * features[i]!;
  return 1 / (1 + Math.exp(-z));
}

/** The line the pick model finds most likely to be the error, with its score (first on ties). */
export function pickLine(lines: readonly BlockLine[], model: LogisticModel): { index: number; score: number } | undefined {
  let best: { index: number; score: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.text === "") continue;
    const score = logistic(model, lineFeatures(lines, i));
    if (!best || score > best.score) best = { index: i, score };
  }
  return best;
}

/**
 * The normal form of a block: `blockForm` (the rules' reading of the whole block) unless the model
 * picks one of its lines and judges that line's form (`lineForm`: the line normalized alone, with
 * what the rules read from the whole report, such as the value a message is about) to be the
 * error's. A one-line text keeps its form: the choice is only among the lines of a block.
 */
export function chooseErrorForm(text: string, blockForm: string, lineForm: (line: string) => string, model: LineChoiceModel): string {
  if (!text.includes("\n") || RUSTC_NOTE.test(text)) return blockForm;
  const lines = candidateLines(text);
  if (lines.length < 2) return blockForm;
  const picked = pickLine(lines, model.pick);
  if (!picked || picked.score < model.pick.threshold || blockFormIsLine(lines[picked.index]!, blockForm)) return blockForm;
  const form = lineForm(lines[picked.index]!.raw);
  if (form === "" || form === blockForm) return blockForm;
  return logistic(model.keep, keepFeatures(picked.score, lines, picked.index, form, blockForm)) >= model.keep.threshold ? form : blockForm;
}

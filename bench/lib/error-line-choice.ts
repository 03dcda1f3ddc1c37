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

/** The block's lines worth scoring: non-blank, each at most MAX_LINE_CHARS long, with their place. */
export function candidateLines(text: string): string[] {
  let lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length > MAX_CANDIDATE_LINES) lines = [...lines.slice(0, MAX_CANDIDATE_LINES / 2), ...lines.slice(-MAX_CANDIDATE_LINES / 2)];
  return lines.map((l) => (l.length > MAX_LINE_CHARS ? "" : l));
}

/** Features of one line from its own text and its place in the block (the pick model's input). */
export function lineFeatures(line: string, index: number, count: number): number[] {
  const letters = countMatches(/[A-Za-z]/g, line, 4000);
  const words = line.trim().split(/\s+/).length;
  const fromEnd = count > 1 ? (count - 1 - index) / (count - 1) : 0;
  const errorWords = countMatches(ERROR_WORD, line, 3);
  return [
    1,
    errorWords > 0 ? 1 : 0,
    errorWords / 3,
    EXCEPTION_CLASS.test(line) ? 1 : 0,
    ERROR_CODE.test(line) ? 1 : 0,
    LEVEL_PREFIX.test(line) ? 1 : 0,
    SEVERITY_WORD.test(line) ? 1 : 0,
    QUIET_LEVEL.test(line) ? 1 : 0,
    FRAME.test(line) ? 1 : 0,
    GUTTER.test(line) ? 1 : 0,
    CAUSED_BY.test(line) ? 1 : 0,
    NOTE_HINT.test(line) ? 1 : 0,
    REPORTER.test(line) ? 1 : 0,
    PROMPT.test(line) ? 1 : 0,
    JSON_LIKE.test(line) ? 1 : 0,
    PATH.test(line) ? 1 : 0,
    /^[ \t]/.test(line) ? 1 : 0,
    line.length > 0 ? letters / line.length : 0,
    clamp01(words / 30),
    words <= 2 ? 1 : 0,
    fromEnd,
    index === count - 1 ? 1 : 0,
    index === 0 ? 1 : 0,
    clamp01(Math.log2(count) / 6),
  ];
}

const wordsOf = (form: string) => (form === "" ? 0 : form.split(" ").length);

/**
 * Features of the picked line's normal form against the block's (the keep model's input): whether
 * the block's form holds it and what the rest says (an error of its own, a reporter's words), and
 * whether the line reads as complete or runs on into the next one (a message wrapped over lines).
 */
export function keepFeatures(pickScore: number, line: string, nextLine: string, lineForm: string, blockForm: string): number[] {
  const lineWords = wordsOf(lineForm);
  const blockWords = wordsOf(blockForm);
  const inside = blockForm.includes(lineForm);
  const rest = inside ? blockForm.replace(lineForm, " ").trim() : blockForm;
  const lineHasError = countMatches(ERROR_WORD, lineForm, 1) > 0 || EXCEPTION_CLASS.test(line);
  const restHasError = countMatches(ERROR_WORD, rest, 1) > 0;
  const trimmed = line.trimEnd();
  const next = nextLine.trimStart();
  return [
    1,
    pickScore,
    inside ? 1 : 0,
    inside && blockForm.startsWith(lineForm) ? 1 : 0,
    inside && blockForm.endsWith(lineForm) ? 1 : 0,
    blockWords > 0 ? clamp01(lineWords / blockWords) : 1,
    clamp01(wordsOf(rest) / 30),
    clamp01(lineWords / 20),
    lineWords <= 2 ? 1 : 0,
    lineHasError ? 1 : 0,
    restHasError ? 1 : 0,
    REPORTER.test(rest) ? 1 : 0,
    /[.!?)\]'"`}>]$/.test(trimmed) ? 1 : 0,
    /[:,;(]$/.test(trimmed) ? 1 : 0,
    /^[a-z]/.test(next) ? 1 : 0,
    nextLine !== "" && /^[ \t]/.test(nextLine) ? 1 : 0,
    nextLine === "" ? 1 : 0,
    /\d/.test(rest) ? 1 : 0,
    ERROR_CODE.test(rest) || /\b[a-z_]+\(\)/.test(rest) ? 1 : 0,
    wordsOf(rest) <= 3 ? 1 : 0,
    /^[A-Z]/.test(next) ? 1 : 0,
  ];
}

export function logistic(model: LogisticModel, features: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < features.length; i++) z += (model.weights[i] ?? 0) * features[i]!;
  return 1 / (1 + Math.exp(-z));
}

/** The line the pick model finds most likely to be the error, with its score (first on ties). */
export function pickLine(lines: readonly string[], model: LogisticModel): { index: number; score: number } | undefined {
  let best: { index: number; score: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === "") continue;
    const score = logistic(model, lineFeatures(lines[i]!, i, lines.length));
    if (!best || score > best.score) best = { index: i, score };
  }
  return best;
}

/**
 * The normal form of a block: `blockForm` (the rules' reading of the whole block) unless the model
 * picks one of its lines and judges that line's form to be the error's. A one-line text keeps its
 * form: the choice is only among the lines of a block.
 */
export function chooseErrorForm(text: string, blockForm: string, normalizeLine: (line: string) => string, model: LineChoiceModel): string {
  if (!text.includes("\n") || RUSTC_NOTE.test(text)) return blockForm;
  const lines = candidateLines(text);
  if (lines.length < 2) return blockForm;
  const picked = pickLine(lines, model.pick);
  if (!picked || picked.score < model.pick.threshold) return blockForm;
  const lineForm = normalizeLine(lines[picked.index]!);
  if (lineForm === "" || lineForm === blockForm) return blockForm;
  const keep = keepFeatures(picked.score, lines[picked.index]!, lines[picked.index + 1] ?? "", lineForm, blockForm);
  return logistic(model.keep, keep) >= model.keep.threshold ? lineForm : blockForm;
}

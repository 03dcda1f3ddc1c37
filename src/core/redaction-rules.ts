// The redaction table: every kind of sensitive value, its pattern and its look-alike checks.
// Data, not code paths: redaction.ts applies the rules in this order, so specific detectors
// (provider tokens) run before generic ones (assignments, entropy, e-mail, addresses).
// Every pattern is linear-ish on adversarial input: bounded repeats, no nested unbounded
// quantifiers, lookbehinds that stop a match from starting mid-word.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.

export const PLACEHOLDER_PREFIX = "<redacted:";
export const placeholder = (kind: string) => `${PLACEHOLDER_PREFIX}${kind}>`;

export interface RedactionRule {
  kind: string;
  /** What the rule catches, for docs/content-safety.md and for people reading the table. */
  about: string;
  /** Global regex with the `d` flag (match indices), so only `group` is replaced. */
  pattern: RegExp;
  /** Capture group that holds the sensitive part; 0 = the whole match. */
  group: number;
  /** Cheap test the text must pass before the pattern runs (a required literal). */
  hint?: RegExp;
  /**
   * A test shared by a family of rules (the provider tokens' hints joined in one pattern): when it
   * fails on a text, no rule of the family runs there. Tested once per text, before `hint`.
   */
  family?: RegExp;
  /** Returns false to keep a candidate (a look-alike), or a kind to override the rule's kind. */
  accept?: (secret: string, m: RegExpExecArray, text: string) => boolean | string;
  /** Replacement text for the sensitive part (default: the typed placeholder). */
  replace?: (secret: string) => string;
  /**
   * The match is its own evidence (a prefixed token, a JWT, a URL password), so the rule also reads
   * the text with split pieces joined (redaction.ts joinedView: `"ghp_abc" + "def"`, wrapped lines).
   */
  joinable?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the accept checks.

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  if (s.length === 0) return 0;
  const freq = new Map<string, number>();
  for (const ch of s) freq.set(ch, (freq.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of freq.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const classes = (s: string) =>
  (/[a-z]/.test(s) ? 1 : 0) + (/[A-Z]/.test(s) ? 1 : 0) + (/[0-9]/.test(s) ? 1 : 0) + (/[^A-Za-z0-9]/.test(s) ? 1 : 0);

/** Random-looking: long enough, several character classes, high entropy. */
export function looksRandom(s: string, minLength = 16, minEntropy = 3.5): boolean {
  return s.length >= minLength && /[0-9]/.test(s) && /[A-Za-z]/.test(s) && classes(s) >= 2 && entropy(s) >= minEntropy;
}

const stripQuotes = (s: string) => s.replace(/^(?:\\\\){0,3}\\?["'`]|(?:\\\\){0,3}\\?["'`]$/g, "");

/** Values that are obviously not secrets: placeholders, variables, well-known defaults. */
const DUMMY_VALUES = new Set([
  "changeit",
  "changeme",
  "password",
  "passwd",
  "secret",
  "token",
  "example",
  "test",
  "dummy",
  "true",
  "false",
  "null",
  "none",
  "nil",
  "undefined",
  "yes",
  "no",
  "on",
  "off",
  "required",
  "optional",
  "string",
  "your_password",
  "yourpassword",
  "your-password",
  "your_token",
  "your-token",
  "your_api_key",
  "your-api-key",
  "mypassword",
  "redacted",
  "hidden",
  "empty",
]);

/** A reference to a value rather than the value: empty, a placeholder, a variable, a template. */
export function isReferenceValue(raw: string): boolean {
  const v = stripQuotes(raw.trim());
  if (v === "") return true;
  if (v.startsWith(PLACEHOLDER_PREFIX)) return true;
  if (/^[$%]|^\{\{|^<[^>]{0,60}>$|^\[[^\]]{0,60}\]$/.test(v)) return true; // $VAR, ${VAR}, %VAR%, {{ x }}, <your-key>
  if (/^[*x.•]+$/i.test(v)) return true; // ****, xxxx, ...
  if (/^!{1,2}[A-Za-z]+$/.test(v)) return true; // a YAML tag (!vault, !Ref): the value follows it
  if (/^file:(?:\/\/)?[/~.]/.test(v)) return true; // a file holding it (`--authkey=file:/etc/ts.key`, session 19)
  return false;
}

/** A reference, or a well-known dummy word (changeme, password, example) that names no secret. */
export function isPlaceholderValue(raw: string): boolean {
  return isReferenceValue(raw) || DUMMY_VALUES.has(stripQuotes(raw.trim()).toLowerCase());
}

// Splits a name into lowercase segments: DB_PASSWORD, dbPassword, db-password, db.password.
export function nameSegments(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

// Segments that turn a secret-sounding name into metadata about the secret (token_type,
// password_file, max_tokens is caught by the exact-segment match).
const META_SEGMENTS = new Set([
  "type",
  "name",
  "id",
  "file",
  "path",
  "url",
  "uri",
  "length",
  "len",
  "count",
  "size",
  "expires",
  "expiry",
  "expiration",
  "ttl",
  "timeout",
  "prompt",
  "hint",
  "policy",
  "field",
  "label",
  "header",
  "endpoint",
  "env",
  "var",
  "limit",
  "max",
  "min",
  "required",
  "enabled",
  "enable",
  "mode",
  "format",
  "version",
  "dir",
  "location",
  "stdin",
  "cmd",
  "command",
  "reset",
  "rotation",
  "provider",
  "store",
  "helper",
  "kind",
  "error",
  "errors",
  "validation",
  "strength",
  "input",
  "placeholder",
  "regex",
  "existing",
  "ref",
  "reference",
  "arn",
  "namespace",
  // gpg's --passphrase-fd N, --passphrase-repeat N, --check-sym-passphrase-pattern FILE: how a secret is read or checked.
  "fd",
  "repeat",
  "pattern",
]);
// `askpass` names the program that asks for a password (SSH_ASKPASS=/usr/bin/ssh-askpass, wget --use-askpass).
const PASS_LOOKALIKES = new Set(["bypass", "compass", "overpass", "underpass", "surpass", "trespass", "encompass", "askpass"]);

/** Which secret kind a name (env var, key, flag) announces, or null. */
export function secretKindOfName(name: string): string | null {
  // A key store or trust store is a thing with a password (keyStorePassword), not metadata.
  // Terraform reads `TF_VAR_db_password` as the variable `db_password` (session 19: `var` made it metadata).
  const segs = nameSegments(
    name.replace(/^TF_VAR_/i, "").replace(/(key|trust)[_.-]?store/gi, (_, which: string) => `${which.toLowerCase()}store`),
  );
  if (segs.length === 0 || segs.length > 8) return null;
  if (segs[0] === "no" || segs[0] === "skip" || segs[0] === "disable") return null;
  if (segs.some((s) => META_SEGMENTS.has(s))) return null;
  const joined = segs.join("_");
  if (/(^|_)api_?key(_|$)/.test(joined)) return "api_key";
  if (/(^|_)(private|secret|signing|encryption|master|client|app|access|auth)_key(_|$)/.test(joined)) return "secret";
  for (const s of segs) {
    if (s.endsWith("password") || s.endsWith("passwd") || s === "passphrase" || s === "passwort") return "password";
    if (s.endsWith("pass") && !PASS_LOOKALIKES.has(s)) return "password";
    if (s === "pwd") return "password"; // ODBC PWD=…; the shell's PWD=/path is excluded by the caller
    if (s === "psk") return "password"; // a Wi-Fi or VPN pre-shared key (wpa_supplicant psk="…")
    if (s.endsWith("secret")) return "secret";
    // Tailscale's and others' `--authkey` (session 19).
    if (s.endsWith("token") || s === "auth" || s === "authtoken" || s === "authkey") return "token";
  }
  return null;
}

/**
 * Words that stand after a secret-named option in documentation, not secrets: a synopsis's
 * metavariable (`-storepass arg`, `--passphrase-fd n`, `-psk key`) or the prose that goes on
 * (`the --ftp-password command`, `-keypass value is …`, `--password can take …`). Session 15,
 * from man pages and changelogs under /usr/share (bench/benign-corpus.ts).
 */
const OPTION_DOC_WORDS = new Set([
  ..."arg args argument value val str file filename path n num number key option options parameter parameters command flag name text word".split(
    " ",
  ),
  ..."a an the and or to can that is isn isn't if in on of for from with as at by be are was were will may must should does has have not also now when which only instead".split(
    " ",
  ),
  // PAM's control words: `-auth sufficient pam_systemd_home.so` in /etc/pam.d (the `-` skips a missing module).
  ..."sufficient requisite include substack".split(" "),
]);

/**
 * The value after a secret-named option reads as documentation: a word of OPTION_DOC_WORDS (a
 * trailing `.`, `,`, `:` or `)` dropped), a metavariable that itself names a secret
 * (`--oracle-password=ORACLE_PASSWORD`), a count of 1–3 digits (cwebp's `-pass 6`), or a lone `\`
 * (the option ends a continued line in a completion script).
 */
function optionValueIsDocumentation(raw: string, m?: RegExpExecArray, text?: string): boolean {
  // A help table: the option, a gap of two blanks or more, then its description, a sentence
  // (`--with-registry-auth    Send registry authentication details to Swarm agents`).
  if (
    m &&
    text &&
    /^[A-Z][a-z]{1,20}$/.test(raw) &&
    /[ \t]{2,}\S+$/.test(m[0]) &&
    /^ [a-z]{2,20} [a-z]/.test(text.slice(m.index + m[0].length, m.index + m[0].length + 40))
  )
    return true;
  if (raw === "\\") return true;
  if (isSecretMetavariable(raw)) return true;
  if (/^\d{1,3}$/.test(raw)) return true;
  return OPTION_DOC_WORDS.has(raw.replace(/[.,:;)]$/, ""));
}

// Verbs that make an option an action on secrets rather than one that carries a secret: gpg's
// --export-secret-key-p12 KEY-ID, --delete-secret-key, --with-secret; docker's --secret-rm NAME.
const OPTION_ACTIONS = new Set(
  "export import dump delete del rm remove list ls show with without change check ask prompt generate gen rotate revoke disable enable".split(
    " ",
  ),
);

// SASL and HTTP authentication mechanisms: what an `auth` option chooses (`--smtp-auth="PLAIN LOGIN GSSAPI"`).
const AUTH_MECHANISMS = new Set(
  "plain login cram-md5 digest-md5 gssapi ntlm xoauth2 oauthbearer scram-sha-1 scram-sha-256 external anonymous kerberos_v4 basic digest bearer negotiate".split(
    " ",
  ),
);
// The keys of a BuildKit secret or SSH reference (`docker build --secret id=npmrc,src=$HOME/.npmrc`).
const BUILDKIT_REFERENCE =
  /^(?:id|src|source|env|type|target|required|mode|uid|gid)=[^,\s]*(?:,(?:id|src|source|env|type|target|required|mode|uid|gid)=[^,\s]*)*$/;
/** A password's placeholder after a user (`bob:pw`, `USER:PASS`, `user:password`). */
export const isPasswordPlaceholder = (raw: string) => {
  const v = raw.replace(/[`'",.;:)\]]+$/, ""); // the prose around it: `--auth=bob:PASSWORD`,
  return isPlaceholderValue(v) || /^(?:pw|pwd|pass|pword|passwd|passphrase)$/i.test(v);
};

/**
 * Values a secret-named option takes that carry no secret (session 16, the benign corpus): an
 * `auth` option's method (`--smtp-auth=LOGIN`, `--smtp-auth="PLAIN LOGIN GSSAPI"`, `--auth=authmethod`;
 * a token has digits or symbols, as the assignment rule reads `auth: none`), a tag filter (`blkid
 * --match-token TYPE=ext4`, its name no secret's), a BuildKit secret's reference (`docker build
 * --secret id=npmrc,src=…`), a user with a password's placeholder (`--auth bob:pw`, `--auth USER:PASS`).
 */
function optionValueHoldsNoSecret(flag: string, raw: string): boolean {
  const v = stripQuotes(raw);
  if (nameSegments(flag).at(-1) === "auth") {
    if (/^[A-Za-z]{1,20}$/.test(v)) return true;
    const words = v.split(/[ ,]+/);
    if (words.length <= 12 && words.every((w) => AUTH_MECHANISMS.has(w.toLowerCase()))) return true;
  }
  const tag = /^([A-Z][A-Z0-9_]{0,40})=/.exec(v);
  if (tag && secretKindOfName(tag[1]!) === null) return true;
  if (BUILDKIT_REFERENCE.test(v)) return true;
  const colon = v.indexOf(":");
  return colon > 0 && !/[/@]/.test(v) && isPasswordPlaceholder(v.slice(colon + 1));
}

/**
 * An option that acts on a secret (its name holds a verb of OPTION_ACTIONS), or whose value is its
 * own name's last word in capitals (`--encryption-key=KEY`, a synopsis's metavariable).
 */
function optionActsOnSecret(flag: string, raw: string): boolean {
  const segs = nameSegments(flag);
  if (segs.some((seg) => OPTION_ACTIONS.has(seg))) return true;
  return /^[A-Z]{2,20}$/.test(raw) && segs.at(-1) === raw.toLowerCase();
}

/** An upper-case name that itself names a secret (`ORACLE_PASSWORD`, `PVK_PASSWORD`): a synopsis's metavariable. */
const isSecretMetavariable = (v: string) => /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(v) && secretKindOfName(v) !== null;

/** Accepts a value whose name (capture `nameGroup`) names a secret and that is no placeholder; the kind follows the name. */
function secretNamedBy(nameGroup: number) {
  return (value: string, m: RegExpExecArray): string | false => {
    const kind = secretKindOfName(m[nameGroup]!);
    return kind !== null && !isPlaceholderValue(value) ? kind : false;
  };
}

/**
 * The kind of a value given under a name, as the assignment rule judges it: the name's own kind
 * (password, secret, token, api_key) for any value no placeholder, or high_entropy_secret for a
 * random-looking value under a key, signature, session or similar name; false to keep it.
 */
function kindOfNamedValue(name: string, raw: string): string | false {
  if (isPlaceholderValue(raw)) return false;
  const kind = secretKindOfName(name);
  if (kind !== null) return kind;
  const v = stripQuotes(raw);
  const entropyName = nameSegments(name).some((seg) => ENTROPY_NAME_SEGMENTS.has(seg));
  return entropyName && /^[A-Za-z0-9+/=_\-.~%]{16,512}$/.test(v) && looksRandom(v) && !publicDerBase64(v) && !publicOrCacheKey(name, v, "")
    ? "high_entropy_secret"
    : false;
}

// Langfuse's public key (`pk-lf-` and a UUID): public by design, published beside the secret `sk-lf-` one.
const LANGFUSE_PUBLIC_KEY = /^pk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// A cache key (GitHub Actions' `node-modules-Linux-x64-<sha256 of the lockfile>`, `setup-python-…-3.11.5-pip-<hex>`):
// words joined by `-`, ending in a hex hash of files anyone can read.
const CACHE_KEY_VALUE = /^(?:[A-Za-z0-9_.]{1,64}-){1,16}[0-9a-f]{16,128}$/;

/**
 * A random-looking value under a key's name that is no secret: Langfuse's public key, or a cache key
 * (read as one only when the name or the line before it says cache, and a word of 3 letters leads the hash).
 */
function publicOrCacheKey(name: string, v: string, lineBefore: string): boolean {
  if (LANGFUSE_PUBLIC_KEY.test(v)) return true;
  if (!CACHE_KEY_VALUE.test(v) || !/[A-Za-z]{3}/.test(v.slice(0, v.lastIndexOf("-")))) return false;
  return /cache/i.test(name) || /cache/i.test(lineBefore);
}

/** The line's text before `index`, at most 120 characters of it. */
function lineBefore(text: string, index: number): string {
  const from = Math.max(0, index - 120);
  const nl = text.lastIndexOf("\n", index - 1);
  return text.slice(Math.max(from, nl + 1), index);
}

/** A value that names a file or directory, not a secret: /etc/app/key, ~/.ssh/id_rsa, C:\keys, ./secret.txt. */
const isPathValue = (v: string) => /^(?:\.{0,2}\/|~\/|[A-Za-z]:[\\/]|\$\{)/.test(stripQuotes(v));

// Names whose values are secret only when they look random (session ids, signatures, salts).
const ENTROPY_NAME_SEGMENTS = new Set([
  "key",
  "sig",
  "signature",
  "cookie",
  "session",
  "sessionid",
  "sid",
  "salt",
  "nonce",
  "hmac",
  "credential",
  "credentials",
  "jwt",
  "csrf",
  "otp",
  "passcode",
  "dsn",
  "license",
  "cert",
  "pat", // a personal access token (AZURE_DEVOPS_EXT_PAT): secret when random-looking
]);

const ALGORITHM_NAMES =
  /^(?:base(?:32|64)\w*|utf_?8|utf_?16|latin1|sha\d+|md5|hs\d{3}|rs\d{3}|es\d{3}|ps\d{3}|aes\d+\w*|u?int\d+|float\d+|x509|pkcs\d+|v\d+|scram-sha-\d+)$/i;

/** A bare (unquoted) value after `:` or ` = ` is code or prose unless it looks like a secret. */
export function bareValueLooksSecret(v: string): boolean {
  if (v.length < 6) return false;
  // postgresql.conf's `#password_encryption = scram-sha-256`: an algorithm's name.
  if (ALGORITHM_NAMES.test(v)) return false;
  // An identifier or plain word is code or prose, unless it mixes in digits the way passwords do
  // (`hunter2`, `S3cr3t`); algorithm and type names keep theirs.
  if (/^[A-Za-z_$][\w$]*$/.test(v)) return /[0-9]/.test(v) && /[A-Za-z]/.test(v) && !ALGORITHM_NAMES.test(v);
  if (/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(v)) return false; // dotted reference
  if (/^[\d.]+$/.test(v)) return false; // number or version
  if (/^(\.{0,2}\/|~\/|[A-Za-z]:\\)/.test(v)) return false; // a path
  return /[0-9]/.test(v) || /[^A-Za-z0-9]/.test(v);
}

/**
 * Looks back on the same line: does the match sit in a command that talks HTTP? httpie's `http` and
 * `https` count as commands only where a command starts (a line's start, after a shell operator or
 * `$ `), in lower case and followed by a blank: a URL (`http://…`) or the word HTTP in prose names
 * no client (session 15: any line holding `http://` passed).
 */
function onHttpCommandLine(m: RegExpExecArray, text: string): boolean {
  const start = Math.max(0, m.index - 300);
  const before = text.slice(start, m.index);
  const line = before.slice(before.lastIndexOf("\n") + 1);
  return (
    /\b(curl|wget|httpie|xh|Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b/i.test(line) ||
    /(?:^|[;&|(`]|\$ |\bsudo |\bexec )[ \t]*https?[ \t]/.test(line)
  );
}

/**
 * `identified by "jamesh"` in a changelog's prose is no SQL: lower-case `identified by` counts only
 * with a user, role or grant before it on its line (`create user 'a'@'%' identified by '…'`);
 * upper-case IDENTIFIED BY is SQL wherever it stands.
 */
function identifiedByInProse(m: RegExpExecArray, text: string): boolean {
  if (!/^identified\b/.test(m[0])) return false;
  const before = text.slice(Math.max(0, m.index - 300), m.index);
  const line = before.slice(before.lastIndexOf("\n") + 1);
  return !/\b(?:user|role|login|grant|alter|create)\b|@/i.test(line);
}

function decodeBase64(s: string): string | null {
  try {
    const bin = atob(s.replace(/[^A-Za-z0-9+/=]/g, ""));
    return bin;
  } catch {
    return null;
  }
}

// --- Bare random values (session 15) -----------------------------------------------------------
// A value with no name beside it is a secret only when it is random the way keys are and nothing
// around it says it is a hash. After gitleaks' generic rule (a keyword, then entropy ≥ 3.5) and
// detect-secrets' Base64HighEntropyString (entropy ≥ 4.5, quoted strings only), which both need more
// context than a trail gives: hex is never redacted bare (a git SHA, a sha256 of a file, a docker
// digest is hex, indistinguishable from a hex key), and a base64 run must pass all of these.

/**
 * One pass over a value: how many upper, lower and digit characters it has, and how often
 * neighbouring characters change class (upper, lower, digit, symbol): ~0.65 for random base64,
 * ~0.15 for camelCase names.
 */
function characterMix(s: string): { upper: number; lower: number; digits: number; changeRate: number; alphabetSteps: number } {
  let upper = 0;
  let lower = 0;
  let digits = 0;
  let changes = 0;
  let alphabetSteps = 0;
  let previous = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const cls = c >= 97 && c <= 122 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 48 && c <= 57 ? 2 : 3;
    if (cls === 0) lower++;
    else if (cls === 1) upper++;
    else if (cls === 2) digits++;
    if (previous !== -1 && cls !== previous) changes++;
    if (cls < 2 && previous !== -1 && previous < 2) {
      // Neighbours that spell the alphabet (`aA`, `ab`): an alphabet written out, not a key.
      const step = (c | 32) - (s.charCodeAt(i - 1) | 32);
      if (step === 0 || step === 1) alphabetSteps++;
    }
    previous = cls;
  }
  return { upper, lower, digits, changeRate: changes / Math.max(1, s.length - 1), alphabetSteps };
}

// Lower-case runs of three or more letters, and four consonants in a row (`y` a vowel): a run
// without such a cluster reads as a word or its abbreviation (`Cert`, `Load`, `Mngr`), one with it
// does not (`kjrpfn`).
const LOWER_RUN = /[a-z]{3,}/g;
const CONSONANT_CLUSTER = /[b-df-hj-np-tv-xz]{4}/;

/**
 * Random the way a key is, from the mix of its characters. Most keys change class (upper, lower,
 * digit, symbol) at ~0.65 of their neighbours and hold two digits or more; an identifier changes at
 * ~0.15–0.40 (`kMaxCallbacksUntilQueueIsShortened`). A key whose letters lean to one case changes
 * less (`DHRYKNH2GlhvBsTVIid6cYow9hbqWQPXOBDJ1MZa`, 0.44; session 16): one whose lower case does
 * not run in words is read as random down to 0.35, or with fewer than two digits from 0.45; an
 * identifier's letters run in words (`xmlSecOpenSSLAppKeysMngrCertLoad`: most of its lower case
 * in word-like runs). A base64url value (`-`, `_`) keeps the first bar: its separators join words.
 */
function mixIsRandom(v: string): boolean {
  const mix = characterMix(v);
  if (mix.upper < 2 || mix.lower < 2) return false;
  if (mix.alphabetSteps * 3 > v.length) return false; // `aAbBcC…`, `abcdefgh…`
  if (mix.digits >= 2 && mix.changeRate >= 0.45) return true;
  if (mix.changeRate < (mix.digits >= 2 ? 0.35 : 0.45) || /[-_]/.test(v)) return false;
  let inWords = 0;
  for (const run of v.match(LOWER_RUN) ?? []) {
    if (CONSONANT_CLUSTER.test(run)) continue;
    if (run.length > 7) return false;
    inWords += run.length;
  }
  return inWords <= 0.6 * mix.lower;
}
// A name just before the value that makes it public: a hash or digest of something, an id a service
// gives a request (S3's `<HostId>` and `x-amz-id-2`), an SSH or pinned public key, a PKCE code challenge.
const PUBLIC_VALUE_CONTEXT =
  /(?:sha-?\d|md5|integrity|digest|checksum|hash|etag|nonce|fingerprint|\bsum\b|\bh1\b|\bsri\b|base64,|revision|commit|(?:request|host|trace|correlation|span|event|amz|ray)[ _-]?id|\bid-2|ssh-[a-z0-9]{3,8}|ecdsa-|pub(?:lic)?[ _-]?key|challenge)[^\n]{0,24}$/i;
const BASE64_LINE = /^[ \t]*[-+>|#]?[ \t]*["']?[A-Za-z0-9+/_-]{32,}={0,2}["',]?[ \t]*$/;
// The start of base64 key material (a PEM block, an OpenSSH key, a DER body): left to the base64
// reading and to the key-material checks of rejection.ts, which cut the whole field.
const KEY_MATERIAL_BASE64 = /^(?:LS0t|b3BlbnNzaC1rZXktdjE|MII|MHcCAQEEI)/;
const PRINTABLE_TEXT = /^[\t\n\r\x20-\x7e]*$/;
// The start of a file's bytes in base64 (GIF, PNG, JPEG, RIFF/WebP, PDF, a length-prefixed binary
// such as an SSH public key): inline data, public.
const FILE_DATA_BASE64 = /^(?:R0lGOD|iVBORw0KGgo|\/9j\/|UklGR|JVBERi0|AAAA)/;

// The DER openings of private keys (session 16): a SEQUENCE then INTEGER 0, 1 or 3 (PKCS#1 RSA and DSA,
// PKCS#8, SEC1 EC, PKCS#12), or a SEQUENCE, a SEQUENCE and a password-based cipher's OID (an
// encrypted PKCS#8: PBES2 1.2.840.113549.1.5.13, PKCS#12 PBE 1.2.840.113549.1.12.1.x). A certificate,
// a public key (SubjectPublicKeyInfo) and a request open with two SEQUENCEs and another OID.
const PBE_OIDS = ["\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d", "\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01"];

/**
 * Does this base64 block decode to a private key's opening? An OpenSSH key ("openssh-key-v1") holds
 * its public header first (cipher, KDF, public key: ~160 bytes, 215 base64 characters for Ed25519,
 * more for RSA): a shorter run is that header, which rejection.ts's backstop still cuts whole. A
 * DER key's private part comes early (an EC or Ed25519 key's scalar within its first 50 characters;
 * the shortest whole key, Ed25519 in PKCS#8, is 64).
 */
export function privateKeyBody(s: string): boolean {
  const length = s.replace(/[^A-Za-z0-9+/]/g, "").length;
  if (s.startsWith("b3BlbnNzaC1rZXktdjE")) return length >= 200;
  if (length < 60) return false;
  let head: string;
  try {
    head = atob(s.slice(0, 48));
  } catch {
    return false;
  }
  if (head.charCodeAt(0) !== 0x30) return false;
  const lengthByte = head.charCodeAt(1);
  const at = lengthByte < 0x80 ? 2 : lengthByte >= 0x81 && lengthByte <= 0x83 ? 2 + (lengthByte - 0x80) : -1;
  if (at < 0) return false;
  const tag = head.charCodeAt(at);
  if (tag === 0x02) return head.charCodeAt(at + 1) === 0x01 && [0, 1, 3].includes(head.charCodeAt(at + 2));
  return tag === 0x30 && PBE_OIDS.some((oid) => head.includes(oid));
}

// Public DER in base64 (session 17): a key or certificate line alone can be told from a private
// key's by what it decodes to. A SubjectPublicKeyInfo opens with SEQUENCE, SEQUENCE and a public-key
// algorithm's OID (`MFkwEwYHKoZIzj0CAQYI…` EC P-256, `MFwwDQYJKoZIhvcNAQEB…` RSA-512, `MCowBQYDK2Vw…`
// Ed25519); a certificate's inner lines hold X.500 names and extensions (OID 2.5.4.x, 2.5.29.x) or
// validity times (`MDAwWjBHMQsw…` is "000Z0G1…", `MDAwWhcN…` "000Z" then a UTCTime). A private key
// holds integers only (random bytes: such a sequence by chance in one line, under 1 in 10^7).
const PUBLIC_KEY_ALGORITHMS = [
  "\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01", // rsaEncryption
  "\x2a\x86\x48\xce\x3d\x02\x01", // id-ecPublicKey
  "\x2a\x86\x48\xce\x38\x04\x01", // id-dsa
  "\x2b\x65\x6e", // X25519
  "\x2b\x65\x6f", // X448
  "\x2b\x65\x70", // Ed25519
  "\x2b\x65\x71", // Ed448
];
const CERTIFICATE_CONTENT = /\x06\x03\x55[\x04\x1d]|\x17\x0d\d{12}Z|\x18\x0f\d{14}Z|^\d{2,13}Z[\x17\x18\x30\x31]/;

/** Where a DER element's content starts (after its tag and length), or -1. */
function derContentStart(bin: string, at: number): number {
  const length = bin.charCodeAt(at + 1);
  if (Number.isNaN(length)) return -1;
  if (length < 0x80) return at + 2;
  return length >= 0x81 && length <= 0x83 ? at + 2 + (length - 0x80) : -1;
}

/** Base64 that decodes to a public key's opening or to a certificate's names, extensions or times. */
export function publicDerBase64(v: string): boolean {
  const clean = v.replace(/^[-+]|=+$/g, "");
  let bin: string;
  try {
    bin = atob(clean.slice(0, clean.length - (clean.length % 4)));
  } catch {
    return false;
  }
  if (CERTIFICATE_CONTENT.test(bin)) return true;
  if (bin.charCodeAt(0) !== 0x30) return false;
  const algorithm = derContentStart(bin, 0);
  if (algorithm < 0 || bin.charCodeAt(algorithm) !== 0x30) return false;
  const oid = derContentStart(bin, algorithm);
  if (oid < 0 || bin.charCodeAt(oid) !== 0x06) return false;
  return PUBLIC_KEY_ALGORITHMS.includes(bin.slice(oid + 2, oid + 2 + bin.charCodeAt(oid + 1)));
}

/** Line `at` is inside: its start and end. */
function lineBounds(text: string, at: number): [number, number] {
  const a = text.lastIndexOf("\n", at - 1) + 1;
  const b = text.indexOf("\n", at);
  return [a, b === -1 ? text.length : b];
}

export function bareValueIsSecret(s: string, at: number, text: string): boolean {
  const v = s.replace(/=+$/, "");
  // A patch's `+` or `-` may lead the run (`+MIIDdzCC…`, a certificate's line added).
  const data = v.replace(/^[-+]/, "");
  if (v.length < 32 || KEY_MATERIAL_BASE64.test(data) || FILE_DATA_BASE64.test(data)) return false;
  if (!mixIsRandom(v) || publicDerBase64(data)) return false;
  // One alphabet: base64 (`+/`) or base64url (`-_`), not both (identifiers and paths mix them).
  if (/[+/]/.test(v) && /[-_]/.test(v)) return false;
  // `__`, `--` or an edge `-`/`_` is an identifier or an option; `/` and `+` may stand anywhere in a key (`//` in 1 key of 100).
  if (/--|__/.test(v) || /^[-_]|[-_]$/.test(v)) return false;
  // A word joined to the value (`nonce-…`, `sha256_…`, `prefix_…`) names it: a prefixed token's rule, or no secret.
  if (/^[a-z]{2,12}[0-9]{0,3}[-_]/.test(v)) return false;
  if (entropy(v) < 4.2) return false;
  if (PUBLIC_VALUE_CONTEXT.test(text.slice(Math.max(0, at - 64), at))) return false;
  // A line of a base64 block (an image, a certificate, a key body wrapped at 64 or 76 columns).
  const [ls, le] = lineBounds(text, at);
  if (ls > 0 && BASE64_LINE.test(text.slice(lineBounds(text, ls - 1)[0], ls - 1))) return false;
  if (le < text.length && BASE64_LINE.test(text.slice(le + 1, lineBounds(text, le + 1)[1]))) return false;
  if (/-----BEGIN /.test(text.slice(Math.max(0, at - 4096), at))) return false;
  // Base64 of text is not a key (the base64 reading redacts what such text holds).
  if (!/[-_]/.test(v)) {
    const decoded = decodeBase64(v.length % 4 === 0 ? v : v + "=".repeat((4 - (v.length % 4)) % 4));
    if (decoded !== null && PRINTABLE_TEXT.test(decoded)) return false;
  }
  return true;
}

const EMAIL_KEEP_DOMAINS = /(^|\.)(example\.(com|org|net)|example|test|invalid|localhost)$/i;
const EMAIL_KEEP_LOCAL = new Set(["git", "this", "super", "return", "break", "continue"]);
// File extensions that look like top-level domains in `icon@2x.png` or `pkg@lodash.js`.
const FILE_EXTENSION_TLDS = new Set([
  "png",
  "jpg",
  "jpeg",
  "gif",
  "svg",
  "webp",
  "ico",
  "bmp",
  "js",
  "mjs",
  "cjs",
  "ts",
  "tsx",
  "jsx",
  "json",
  "css",
  "scss",
  "less",
  "map",
  "txt",
  "md",
  "html",
  "htm",
  "xml",
  "yml",
  "yaml",
  "toml",
  "lock",
  "py",
  "rb",
  "go",
  "rs",
  "java",
  "kt",
  "class",
  "jar",
  "so",
  "dll",
  "exe",
  "bin",
  "sh",
  "zip",
  "gz",
  "tgz",
  "whl",
  "vue",
  "svelte",
  "php",
  "c",
  "h",
  "cpp",
  "hpp",
  "log",
  "cfg",
  "ini",
]);

/** IPv4 addresses that identify nobody: loopback, unspecified, documentation, netmasks, well-known public resolvers. */
export function isHarmlessIPv4(ip: string): boolean {
  const o = ip.split(".").map(Number);
  if (o[0] === 127 || o[0] === 0 || o[0] === 255) return true;
  if (o[0] === 192 && o[1] === 0 && o[2] === 2) return true;
  if (o[0] === 198 && o[1] === 51 && o[2] === 100) return true;
  if (o[0] === 203 && o[1] === 0 && o[2] === 113) return true;
  if (o[0] === 169 && o[1] === 254) return true; // link-local, incl. the cloud metadata address
  return ["8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1", "9.9.9.9", "149.112.112.112"].includes(ip);
}

/** Validates an IPv6 candidate; false for look-alikes (times, MACs, C++ scopes) and harmless addresses. */
export function isSensitiveIPv6(s: string): boolean {
  if (!/[0-9]/.test(s)) return false;
  if (/[a-f]/.test(s) && /[A-F]/.test(s)) return false; // `Add::add`-style identifiers
  const parts = s.split("::");
  if (parts.length > 2) return false;
  const groups = (p: string) => (p === "" ? [] : p.split(":"));
  const head = groups(parts[0]!);
  const tail = parts.length === 2 ? groups(parts[1]!) : [];
  const all = [...head, ...tail];
  if (all.some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  if (parts.length === 1 && all.length !== 8) return false;
  if (parts.length === 2 && (all.length > 7 || all.length < 1)) return false;
  const lower = s.toLowerCase();
  if (lower === "::1" || lower === "::") return false;
  if (/^2001:0?db8:/.test(lower)) return false; // documentation range
  if (parts.length === 2 && all.length < 2 && !/^fe80/.test(lower)) return false; // `x::1`-ish fragments
  return true;
}

const INTERNAL_TLDS = new Set([
  "internal",
  "local",
  "lan",
  "corp",
  "intranet",
  "intra",
  "home",
  "localdomain",
  "private",
  "priv",
  "svc",
  "cluster",
]);
const INTERNAL_LABELS = new Set(["corp", "internal", "intranet", "intra", "lan", "priv"]);
const PUBLIC_INTERNAL_NAMES = new Set([
  "host.docker.internal",
  "gateway.docker.internal",
  "kubernetes.docker.internal",
  "metadata.google.internal",
]);

export function isInternalHost(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  if (!/[a-z]/.test(h) || !h.includes(".")) return false; // single-label names (db, redis) are compose services
  if (PUBLIC_INTERNAL_NAMES.has(h)) return false;
  const labels = h.split(".");
  if (INTERNAL_TLDS.has(labels[labels.length - 1]!)) return true;
  return labels.slice(0, -1).some((l) => INTERNAL_LABELS.has(l));
}

const GENERIC_USERS = new Set([
  "runner",
  "user",
  "username",
  "me",
  "you",
  "yourname",
  "your_user",
  "your-user",
  "yourusername",
  "your_username",
  "your-username",
  "shared",
  "public",
  "default",
  "default user",
  "all users",
  "guest",
  "ubuntu",
  "ec2-user",
  "admin",
  "administrator",
  "vagrant",
  "pi",
  "node",
  "app",
  "root",
  "jenkins",
  "builder",
  "circleci",
  "travis",
  "vscode",
  "codespace",
  "gitpod",
  "docker",
  "name",
  "x",
  "...",
  "..",
  ".",
  "*",
]);

// ---------------------------------------------------------------------------------------------
// Value syntax shared by the assignment rules: a quoted string on one line, or a bare word.
const QUOTED = String.raw`"[^"\n]{0,256}"|'[^'\n]{0,256}'`;
// A value quoted inside a JSON string: `{\"password\":\"…\"}` in a command or a log line, or
// escaped once or twice more (`\\\"`: JSON in a JSON string in a JSON string, a log of a log).
const ESCAPED_QUOTED = String.raw`(?:\\\\){0,3}\\"[^"\\\n]{0,256}(?:\\\\){0,3}\\"`;
const BARE = String.raw`[^\s"'<>;,|&(){}\[\]\x60]{1,512}`;
// A quoted value longer than QUOTED reads (an AWS session token, a SAS URL, a passphrase of words):
// its opening quote and first 256 characters, which applyRule extends to the closing quote
// (valueRunEnd). One that holds a blank counts only when its quote closes on the same line, within
// QUOTED_TAIL more characters: a quote that never closes starts prose (`{&quot;password&quot;:&quot;…`
// then a sentence, in docs/security.md: the benign corpus, session 17); session 17 kept every such
// value, so a passphrase of 257 characters was not redacted at all where one of 256 was (session 18).
const QUOTED_CUT = String.raw`"[^"\n]{256}(?=[^"\n])|'[^'\n]{256}(?=[^'\n])`;
const QUOTED_TAIL = 4096;
// The same inside a JSON string (`{\"SessionToken\":\"…\"}` in a command or a log line).
const ESCAPED_QUOTED_CUT = String.raw`(?:\\\\){0,3}\\"[^"\\\s]{256}(?=[^"\\\s])`;
// A bare value of BARE's 512 characters with more after it, where a rule needs the value to end its line.
const BARE_CUT = String.raw`[^\s"'<>;,|&(){}\[\]\x60]{512}(?=[^\s"'<>;,|&(){}\[\]\x60])`;
const OPENING_QUOTE = /^(?:\\\\){0,3}\\?["']/;
const BARE_CHAR = /[^\s"'<>;,|&(){}[\]\x60]/;
const BARE_RUN = /^[^\s"'<>;,|&(){}[\]\x60]+$/;

/**
 * Where a value a rule's bound cut short really ends (session 17): a bare value of BARE's 512
 * characters (BARE, BARE_CUT) runs on over the same characters, a quoted one cut by QUOTED_CUT or
 * ESCAPED_QUOTED_CUT to its closing quote, escapes and all (or the blank or backslash where it
 * stops; -1, no value, for one holding a blank whose quote does not close on its line). Any other
 * match ends where it ends. Linear: the caller skips what it covers.
 */
export function valueRunEnd(text: string, from: number, to: number): number {
  const opening = OPENING_QUOTE.exec(text.slice(from, from + 8))?.[0];
  if (opening !== undefined && to - from === opening.length + 256 && text[to - 1] !== opening.at(-1)) {
    const quote = opening.at(-1)!;
    const escaped = opening.length > 1;
    let end = to;
    if (/\s/.test(text.slice(from + opening.length, to))) {
      // Words: up to the closing quote on this line, or no value (-1). Each scan stops at the
      // quote character, which the next candidate opens with, so scans do not overlap.
      const limit = Math.min(text.length, to + QUOTED_TAIL);
      while (end < limit && text[end] !== quote && text[end] !== "\n" && !(escaped && text[end] === "\\")) end++;
      // A closing quote ends the value: a word glued to it (`"secrets hidden…`) opens another string.
      if (!text.startsWith(opening, end) || /\w/.test(text[end + opening.length] ?? "")) return -1;
      return end + opening.length;
    }
    while (end < text.length && text[end] !== quote && !(escaped && text[end] === "\\") && !/\s/.test(text[end]!)) end++;
    return text.startsWith(opening, end) ? end + opening.length : end;
  }
  if (to - from < 512 || !BARE_CHAR.test(text[to] ?? " ") || !BARE_RUN.test(text.slice(from, to))) return to;
  let end = to;
  while (end < text.length && BARE_CHAR.test(text[end]!)) end++;
  return end;
}
const NAME = String.raw`[A-Za-z][A-Za-z0-9_.\-]{0,60}`;
// Case-insensitive keyword without the i flag (which would change the rest of the pattern).
const ci = (w: string) => [...w].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join("");
// A name worth a look contains one of these; checked before the value is scanned, so ordinary
// `word: …` and `scheme://…` text costs little.
const NAME_KEYWORDS = [
  "pass",
  "pwd",
  "secret",
  "token",
  "key",
  "auth",
  "sig",
  "cookie",
  "session",
  "sid",
  "salt",
  "nonce",
  "hmac",
  "credential",
  "jwt",
  "csrf",
  "otp",
  "dsn",
  "license",
  "cert",
  "pat",
  "psk",
];
const NAME_HINT = String.raw`(?=[A-Za-z0-9_.\-]{0,60}?(?:${NAME_KEYWORDS.map(ci).join("|")}))`;

// ---------------------------------------------------------------------------------------------
// Provider tokens with a distinctive prefix, after the classes of gitleaks' default config and
// detect-secrets' plugins. Each gets its own kind; the shape is prefix + a fixed alphabet, so a
// match is its own evidence. Bodies are bounded; the edges refuse a neighbouring token character.

interface ProviderToken {
  kind: string;
  about: string;
  /** Cheap literal test (usually the prefix). */
  hint: RegExp;
  /** Regex source of the whole token. */
  body: string;
  /** Optional extra check on the token (digits and letters, entropy). */
  accept?: (token: string) => boolean;
}

const hexMixed = (s: string) => /[0-9]/.test(s) && /[a-fA-F]/.test(s);

const PROVIDER_TOKENS: ProviderToken[] = [
  { kind: "alibaba_access_key", about: "Alibaba Cloud AccessKey ids (LTAI…)", hint: /LTAI/, body: "LTAI[A-Za-z0-9]{20}" },
  {
    kind: "azure_client_secret",
    about: "Azure AD (Entra) client secrets (xxx8Q~…)",
    hint: /\dQ~/,
    body: String.raw`[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}`,
  },
  {
    kind: "digitalocean_token",
    about: "DigitalOcean tokens (dop_v1_, doo_v1_, dor_v1_)",
    hint: /do[opr]_v1_/,
    body: "do[opr]_v1_[a-f0-9]{64}",
  },
  { kind: "heroku_key", about: "Heroku API keys (HRKU-…)", hint: /HRKU-/, body: "HRKU-AA[0-9A-Za-z_\\-]{58}" },
  {
    kind: "terraform_token",
    about: "Terraform Cloud / HCP tokens (….atlasv1.…)",
    hint: /\.atlasv1\./,
    body: String.raw`[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}`,
  },
  { kind: "pulumi_token", about: "Pulumi access tokens (pul-…)", hint: /pul-/, body: "pul-[a-f0-9]{40}" },
  {
    kind: "vault_token",
    // A dev server's root token is `hvs.` and 24 characters (`Root Token: hvs.6j4c…`, Vault's
    // getting-started tutorial; detect-secrets reads `hv[brs].` + 24 or more), a service token 90+
    // (session 19: only the long form was read).
    about: "HashiCorp Vault service and batch tokens (hvs., hvb.)",
    hint: /hv[sb]\./,
    body: String.raw`hv[sb]\.[A-Za-z0-9_\-]{24,300}`,
    accept: (s) => s.length >= 94 || (/[0-9]/.test(s.slice(4)) && /[A-Za-z]/.test(s.slice(4))),
  },
  {
    kind: "doppler_token",
    // A service token names its config between `st.` and the key (`dp.st.prd.…`, Nosey Parker's
    // np.doppler.3; session 18: only the unnamed form was read).
    about: "Doppler tokens (dp.pt., dp.st., dp.st.CONFIG., dp.sa., dp.ct.)",
    hint: /dp\.[a-z]{2,5}\./,
    body: String.raw`dp\.(?:pt|st(?:\.[a-z0-9_-]{2,35})?|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}`,
  },
  {
    kind: "onepassword_token",
    about: "1Password service-account tokens (ops_eyJ…)",
    hint: /ops_eyJ/,
    body: "ops_eyJ[A-Za-z0-9+/]{250,2000}={0,3}",
  },
  {
    kind: "age_secret_key",
    about: "age encryption secret keys (AGE-SECRET-KEY-1…)",
    hint: /AGE-SECRET-KEY-1/,
    body: "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
  },
  {
    kind: "dockerhub_token",
    about: "Docker Hub access tokens (dckr_pat_, dckr_oat_)",
    hint: /dckr_/,
    body: "dckr_(?:pat|oat)_[A-Za-z0-9_\\-]{27,40}",
  },
  { kind: "rubygems_token", about: "RubyGems API keys (rubygems_…)", hint: /rubygems_/, body: "rubygems_[a-f0-9]{48}" },
  { kind: "clojars_token", about: "Clojars deploy tokens (CLOJARS_…)", hint: /CLOJARS_/, body: "CLOJARS_[a-z0-9]{60}" },
  { kind: "artifactory_key", about: "JFrog Artifactory API keys (AKCp…)", hint: /AKCp/, body: "AKCp[A-Za-z0-9]{69}" },
  { kind: "atlassian_token", about: "Atlassian API tokens (ATATT3…)", hint: /ATATT3/, body: "ATATT3[A-Za-z0-9_=\\-]{150,250}" },
  {
    kind: "linear_key",
    // OAuth access tokens are `lin_oauth_` + 64 hex (session 19: public code passing them to the API).
    about: "Linear API keys and OAuth access tokens (lin_api_…, lin_oauth_…)",
    hint: /lin_(?:api|oauth)_/,
    body: "lin_api_[A-Za-z0-9]{40}|lin_oauth_[a-f0-9]{64}",
    accept: (s) => !s.startsWith("lin_oauth_") || hexMixed(s.slice(10)),
  },
  {
    kind: "cloudflare_token",
    // Cloudflare's scannable formats (developers.cloudflare.com, "Token formats"): a prefix, 40
    // characters and a checksum, 8 lower-case hex characters (trufflehog's cloudflareapitoken v2).
    about: "Cloudflare API tokens and global keys (cfut_, cfat_, cfk_)",
    hint: /cf(?:ut|at|k)_/,
    body: "cf(?:ut|at|k)_[A-Za-z0-9]{40}[a-f0-9]{8}",
    accept: (s) => /[0-9]/.test(s.slice(s.indexOf("_"))) && /[A-Za-z]/.test(s.slice(s.indexOf("_") + 1)),
  },
  {
    kind: "e2b_key",
    // E2B's documentation writes `E2B_API_KEY=e2b_***`; keys in public code are `e2b_` + 40 hex.
    about: "E2B API keys (e2b_…)",
    hint: /e2b_/,
    body: "e2b_[a-f0-9]{40}",
    accept: (s) => hexMixed(s.slice(4)),
  },
  { kind: "postman_key", about: "Postman API keys (PMAK-…)", hint: /PMAK-/, body: "PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" },
  {
    kind: "grafana_token",
    about: "Grafana Cloud tokens, service-account tokens and API keys (glc_, glsa_, eyJrIjoi…)",
    hint: /glc_|glsa_|eyJrIjoi/,
    body: "glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3}",
  },
  {
    kind: "newrelic_key",
    about: "New Relic keys (NRAK-, NRII-, NRJS-)",
    hint: /NR(?:AK|II|JS)-/,
    body: "NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_\\-]{32}|NRJS-[a-f0-9]{19}",
  },
  {
    kind: "sentry_token",
    about: "Sentry user and organization tokens (sntryu_, sntrys_)",
    hint: /sntry[su]_/,
    body: "sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{60,800}",
  },
  {
    kind: "dynatrace_token",
    about: "Dynatrace API tokens (dt0c01.…)",
    hint: /dt0c01\./,
    body: String.raw`dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`,
  },
  { kind: "databricks_token", about: "Databricks tokens (dapi…)", hint: /dapi/, body: "dapi[a-f0-9]{32}(?:-\\d)?", accept: hexMixed },
  {
    kind: "planetscale_token",
    about: "PlanetScale tokens and passwords (pscale_tkn_, pscale_oauth_, pscale_pw_)",
    hint: /pscale_/,
    body: "pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\\-]{32,64}",
  },
  {
    kind: "shopify_token",
    about: "Shopify access tokens and shared secrets (shpat_, shpca_, shppa_, shpss_)",
    hint: /shp(?:at|ca|pa|ss)_/,
    body: "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
  },
  {
    kind: "square_token",
    about: "Square access tokens and OAuth secrets (sq0atp-, sq0csp-, EAAA…)",
    hint: /sq0(?:atp|csp)-|EAAA/,
    body: "sq0(?:atp|csp)-[0-9A-Za-z_\\-]{22,60}|EAAA[0-9A-Za-z_\\-]{60}",
  },
  { kind: "twilio_key", about: "Twilio API keys (SK + 32 hex)", hint: /SK[0-9a-fA-F]{32}/, body: "SK[0-9a-fA-F]{32}", accept: hexMixed },
  { kind: "mailgun_key", about: "Mailgun API keys (key-…)", hint: /key-[0-9a-f]{32}/, body: "key-[0-9a-f]{32}", accept: hexMixed },
  {
    kind: "mailchimp_key",
    about: "Mailchimp API keys (32 hex + -usNN)",
    hint: /-us\d/,
    body: "[0-9a-f]{32}-us[0-9]{1,2}",
    accept: hexMixed,
  },
  {
    kind: "sendinblue_key",
    about: "Brevo/Sendinblue API keys (xkeysib-…)",
    hint: /xkeysib-/,
    body: "xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
  },
  { kind: "telegram_bot_token", about: "Telegram bot tokens (123456789:AA…)", hint: /\d:AA/, body: "[0-9]{8,10}:AA[A-Za-z0-9_\\-]{33}" },
  {
    kind: "discord_token",
    about: "Discord bot tokens (three dot-separated base64url parts, the first starting M, N or O)",
    hint: /[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\./,
    body: String.raw`[MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}`,
    accept: (s) => /[0-9]/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s),
  },
  {
    kind: "webhook_url",
    about: "Discord and Microsoft Teams webhook URLs (the URL is the credential)",
    hint: /api\/webhooks\/|webhook\.office\.com/,
    body: String.raw`https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_\-]{60,68}|https://[A-Za-z0-9\-]{1,63}\.webhook\.office\.com/webhookb2/[^\s"'<>]{20,400}`,
  },
  {
    kind: "facebook_token",
    about: "Facebook/Meta page and app access tokens (EAAC…, EAAM…)",
    hint: /EAA[MC]/,
    body: "EAA[MC][A-Za-z0-9]{100,400}",
  },
  {
    kind: "mapbox_token",
    about: "Mapbox secret tokens (sk.eyJ…)",
    hint: /sk\.eyJ/,
    body: String.raw`sk\.eyJ[A-Za-z0-9_\-]{50,400}\.[A-Za-z0-9_\-]{20,100}`,
  },
  {
    kind: "notion_token",
    about: "Notion integration tokens (ntn_…, secret_…)",
    hint: /ntn_|secret_/,
    body: "ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}",
    accept: (s) => /[0-9]/.test(s) && /[A-Z]/.test(s),
  },
  { kind: "figma_token", about: "Figma personal access tokens (figd_…)", hint: /figd_/, body: "figd_[A-Za-z0-9_\\-]{40,80}" },
  { kind: "openshift_token", about: "OpenShift user tokens (sha256~…)", hint: /sha256~/, body: "sha256~[A-Za-z0-9_\\-]{43}" },
  {
    kind: "cloudflare_key",
    about: "Cloudflare Origin CA keys (v1.0-…)",
    hint: /v1\.0-[a-f0-9]/,
    body: "v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}",
  },
  {
    kind: "flyio_token",
    about: "Fly.io tokens (fo1_, fm1a_, fm1r_, fm2_)",
    hint: /fo1_|fm[12]/,
    body: "fo1_[A-Za-z0-9_\\-]{43}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,2000}={0,3}",
  },
  { kind: "perplexity_key", about: "Perplexity API keys (pplx-…)", hint: /pplx-/, body: "pplx-[A-Za-z0-9]{48}" },
  { kind: "groq_key", about: "Groq API keys (gsk_…)", hint: /gsk_/, body: "gsk_[A-Za-z0-9]{52}" },
  { kind: "replicate_token", about: "Replicate API tokens (r8_…)", hint: /r8_/, body: "r8_[A-Za-z0-9]{37}" },
  { kind: "easypost_key", about: "EasyPost API keys (EZAK…, EZTK…)", hint: /EZ[AT]K/, body: "EZ[AT]K[A-Za-z0-9]{54}" },
  {
    kind: "shippo_token",
    about: "Shippo API tokens (shippo_live_, shippo_test_)",
    hint: /shippo_/,
    body: "shippo_(?:live|test)_[a-fA-F0-9]{40}",
  },
  { kind: "flutterwave_key", about: "Flutterwave secret keys (FLWSECK-…)", hint: /FLWSECK/, body: "FLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X" },
  { kind: "prefect_token", about: "Prefect API keys (pnu_…)", hint: /pnu_/, body: "pnu_[A-Za-z0-9]{36}" },
  { kind: "readme_token", about: "ReadMe API keys (rdme_…)", hint: /rdme_/, body: "rdme_[a-z0-9]{70}" },
  { kind: "typeform_token", about: "Typeform tokens (tfp_…)", hint: /tfp_/, body: "tfp_[A-Za-z0-9_.=\\-]{59}" },
  { kind: "scalingo_token", about: "Scalingo API tokens (tk-us-…)", hint: /tk-us-/, body: "tk-us-[A-Za-z0-9_\\-]{48}" },
  { kind: "frameio_token", about: "Frame.io API tokens (fio-u-…)", hint: /fio-u-/, body: "fio-u-[A-Za-z0-9_=\\-]{64}" },
  { kind: "infracost_token", about: "Infracost API tokens (ico-…)", hint: /ico-/, body: "ico-[A-Za-z0-9]{32}" },
  { kind: "maxmind_key", about: "MaxMind license keys (…_mmk)", hint: /_mmk/, body: "[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" },
  // Session 13 audit: classes of gitleaks' default config, trufflehog's detectors and GitHub's
  // secret-scanning partners that the table missed.
  { kind: "xai_key", about: "xAI API keys (xai-…)", hint: /xai-/, body: "xai-[A-Za-z0-9]{70,90}" },
  { kind: "openrouter_key", about: "OpenRouter API keys (sk-or-v1-…)", hint: /sk-or-v1-/, body: "sk-or-v1-[a-f0-9]{64}" },
  {
    kind: "deepseek_key",
    about: "DeepSeek API keys (sk- + 32 lowercase hex)",
    hint: /sk-[a-f0-9]{32}/,
    body: "sk-[a-f0-9]{32}",
    accept: (s) => hexMixed(s.slice(3)),
  },
  {
    kind: "langsmith_key",
    about: "LangSmith API keys (lsv2_pt_, lsv2_sk_)",
    hint: /lsv2_/,
    body: "lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
  },
  {
    kind: "supabase_key",
    about: "Supabase access tokens and secret keys (sbp_, sb_secret_)",
    hint: /sbp_|sb_secret_/,
    body: "sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\\-]{20,80}",
  },
  {
    kind: "tailscale_key",
    about: "Tailscale keys (tskey-auth-, tskey-api-, tskey-client-, …)",
    hint: /tskey-/,
    body: "tskey-(?:api|auth|client|scim|webhook)-[0-9A-Za-z_]{4,64}-[0-9A-Za-z_]{8,128}",
  },
  { kind: "bitbucket_token", about: "Bitbucket app passwords (ATBB…)", hint: /ATBB/, body: "ATBB[A-Za-z0-9]{32}" },
  {
    kind: "firebase_key",
    about: "Firebase Cloud Messaging legacy server keys (AAAA…:APA91b…)",
    hint: /:APA91b/,
    body: "AAAA[A-Za-z0-9_\\-]{7}:APA91b[A-Za-z0-9_\\-]{120,200}",
  },
  {
    kind: "aws_bedrock_key",
    about: "Amazon Bedrock API keys (ABSK…, bedrock-api-key-…)",
    hint: /ABSK|bedrock-api-key-/,
    body: "ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/%]{20,2000}={0,2}",
  },
  { kind: "huggingface_token", about: "Hugging Face organization tokens (api_org_…)", hint: /api_org_/, body: "api_org_[A-Za-z]{34}" },
  {
    kind: "sourcegraph_token",
    about: "Sourcegraph access tokens (sgp_…)",
    hint: /sgp_/,
    body: "sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}",
  },
  { kind: "sonar_token", about: "SonarQube/SonarCloud tokens (squ_, sqp_, sqa_)", hint: /sq[upa]_/, body: "sq[upa]_[a-f0-9]{40}" },
  {
    kind: "octopus_key",
    about: "Octopus Deploy API keys (API- + 26 upper-case characters)",
    hint: /API-[A-Z0-9]{26}/,
    body: "API-[A-Z0-9]{26}",
    accept: (s) => /[0-9]/.test(s.slice(4)) && /[A-Z]/.test(s.slice(4)),
  },
  {
    kind: "harness_key",
    about: "Harness API keys and service-account tokens (pat.…, sat.…)",
    hint: /[ps]at\./,
    body: String.raw`[ps]at\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}`,
  },
  {
    kind: "airtable_token",
    about: "Airtable personal access tokens (pat….…)",
    hint: /pat[A-Za-z0-9]{14}\./,
    body: String.raw`pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`,
  },
  {
    kind: "duffel_token",
    about: "Duffel API tokens (duffel_live_, duffel_test_)",
    hint: /duffel_/,
    body: "duffel_(?:test|live)_[A-Za-z0-9_=\\-]{43}",
  },
  {
    kind: "settlemint_token",
    about: "SettleMint access tokens (sm_aat_, sm_pat_, sm_sat_)",
    hint: /sm_[aps]at_/,
    body: "sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}",
  },
  {
    kind: "adobe_secret",
    about: "Adobe client secrets (p8e-…)",
    hint: /p8e-/,
    body: "p8e-[A-Za-z0-9]{32}",
    accept: (s) => /[0-9]/.test(s.slice(4)) && /[A-Za-z]/.test(s),
  },
  {
    kind: "onepassword_secret_key",
    about: "1Password account secret keys (A3-…)",
    hint: /A3-[A-Z0-9]{6}-/,
    body: "A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
  },
  {
    kind: "twitter_bearer_token",
    about: "Twitter/X app bearer tokens (22 × A, then 80–100 characters)",
    hint: /A{22}/,
    body: "A{22}[A-Za-z0-9%]{80,100}",
    accept: (s) => /[a-z]/.test(s) && /[0-9]/.test(s),
  },
  {
    kind: "dropbox_token",
    about: "Dropbox short-lived access tokens (sl.…)",
    hint: /sl\./,
    body: String.raw`sl\.(?:u\.)?[A-Za-z0-9_=\-]{130,1400}`,
    accept: (s) => /[0-9]/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s),
  },
  { kind: "yandex_key", about: "Yandex Cloud API keys (AQVN…)", hint: /AQVN/, body: "AQVN[A-Za-z0-9_\\-]{35,38}" },
  {
    kind: "artifactory_token",
    about: "JFrog Artifactory reference tokens (cmVmd…)",
    hint: /cmVmd/,
    body: "cmVmd[A-Za-z0-9]{59}",
  },
  {
    kind: "google_oauth_token",
    about: "Google OAuth refresh tokens (1//0…)",
    hint: /1\/\/0/,
    body: "1//0[A-Za-z0-9_\\-]{40,512}",
    accept: (s) => /[a-z]/.test(s) && /[A-Z]/.test(s),
  },
  {
    kind: "azure_key",
    about:
      "Microsoft common annotated security keys: Azure DevOps personal access tokens and other Azure keys of 84 characters (JQQJ at 52, a provider signature such as AZDO at 76)",
    hint: /JQQJ/,
    body: "[A-Za-z0-9]{52}JQQJ[A-Za-z0-9]{20}[A-Za-z]{4}[A-Za-z0-9]{4}",
  },
  {
    kind: "nuget_key",
    about: "NuGet.org API keys (oy2 + 43 lowercase characters)",
    hint: /oy2[a-z0-9]{43}/,
    body: "oy2[a-z0-9]{43}",
    accept: (s) => /[0-9]/.test(s.slice(3)) && /[a-z]/.test(s.slice(3)),
  },
  { kind: "render_key", about: "Render API keys (rnd_…)", hint: /rnd_/, body: "rnd_[A-Za-z0-9]{32}" },
  { kind: "netlify_token", about: "Netlify personal access tokens (nfp_…)", hint: /nfp_/, body: "nfp_[A-Za-z0-9]{36,40}" },
  { kind: "neon_key", about: "Neon API keys (napi_…)", hint: /napi_/, body: "napi_[a-z0-9]{64}" },
  {
    kind: "resend_key",
    about: "Resend API keys (re_ + 8 + _ + 24)",
    hint: /re_[A-Za-z0-9]{8}_/,
    body: "re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}",
    accept: (s) => /[0-9]/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s.slice(3)),
  },
  { kind: "pinecone_key", about: "Pinecone API keys (pcsk_…)", hint: /pcsk_/, body: "pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{50,100}" },
  { kind: "contentful_token", about: "Contentful personal access tokens (CFPAT-…)", hint: /CFPAT-/, body: "CFPAT-[A-Za-z0-9_\\-]{43}" },
  { kind: "circleci_token", about: "CircleCI personal tokens (CCIPAT_…)", hint: /CCIPAT_/, body: "CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}" },
  { kind: "buildkite_token", about: "Buildkite API access tokens (bkua_…)", hint: /bkua_/, body: "bkua_[a-f0-9]{40}" },
  // Session 17: formats of gitleaks' rule list (config/gitleaks.toml) and of Kingfisher's and Nosey
  // Parker's that a trail field still leaked (src/core/redaction.round10.test.ts).
  {
    kind: "authress_key",
    about: "Authress service client access keys (sc_….acc_….…)",
    hint: /\.acc[_-]/,
    body: String.raw`(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`,
  },
  {
    kind: "defined_networking_token",
    about: "Defined Networking API tokens (dnkey-…)",
    hint: /dnkey-/,
    body: "dnkey-[A-Za-z0-9=_\\-]{26}-[A-Za-z0-9=_\\-]{52}",
  },
  {
    kind: "flutterwave_key",
    about: "Flutterwave encryption keys (FLWSECK_TEST… and 12 hex characters)",
    hint: /FLWSECK/,
    body: "FLWSECK_TEST-?[a-hA-H0-9]{12}",
    accept: hexMixed,
  },
  {
    kind: "gitlab_session",
    about: "GitLab session cookies (_gitlab_session=…)",
    hint: /_gitlab_session=/,
    body: "(?<=_gitlab_session=)[0-9a-z]{32}",
  },
  {
    kind: "intra42_secret",
    about: "42 Intra client secrets (s-s4t2ud-…, s-s4t2af-…)",
    hint: /s-s4t2(?:ud|af)-/,
    body: "s-s4t2(?:ud|af)-[a-f0-9]{64}",
  },
  {
    kind: "yandex_token",
    about: "Yandex Cloud IAM tokens (t1.….…, 86 characters after the second dot)",
    hint: /t1\./,
    body: String.raw`t1\.[A-Za-z0-9_-]{8,64}={0,2}\.[A-Za-z0-9_-]{86}={0,2}`,
  },
  {
    kind: "firecrawl_key",
    about: "Firecrawl API keys (fc- and 32 hex characters)",
    hint: /fc-[a-f0-9]{32}/,
    body: "fc-[a-f0-9]{32}",
    accept: hexMixed,
  },
  { kind: "nvidia_key", about: "NVIDIA API keys (nvapi-…)", hint: /nvapi-/, body: "nvapi-[A-Za-z0-9_-]{64}" },
  // Tavily (web search for agents: LangChain's and most agent frameworks' default) is in none of
  // the lists read; its keys' shape is public (`tvly-`, `tvly-dev-` and 32 letters and digits, in
  // committed .env files and code), placeholders (`tvly-xxx`, `tvly-your-api-key`) are not.
  {
    kind: "tavily_key",
    about: "Tavily API keys (tvly-…, tvly-dev-…)",
    hint: /tvly-/,
    body: "tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}",
    accept: (s) => /[0-9]/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s.slice(5)),
  },
  // Langfuse secret keys (`sk-lf-` and a UUID; the `pk-lf-` public key is not secret): in none of the
  // lists read, their shape public in committed code (session 18, found by search); a UUID's
  // random hex after the prefix, not a placeholder (`sk-lf-...`, `sk-lf-xxxx`).
  {
    kind: "langfuse_key",
    about: "Langfuse secret keys (sk-lf- and a UUID)",
    hint: /sk-lf-/,
    body: "sk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    accept: (s) => hexMixed(s.slice(6)),
  },
  // STS session tokens open with the base64 of their first field's header: `IQoJb3JpZ2luX2Vj…`
  // ("!\n\torigin_ec…", since 2019) or `FwoGZXIvYXdzE…`/`FQoGZXIvYXdzE…` (older); 400–1,200 characters,
  // pasted bare from `aws sts assume-role` or `aws configure export-credentials` output.
  {
    kind: "aws_session_token",
    about: "AWS STS session tokens (IQoJb3JpZ2luX2…, FwoGZXIvYXdzE…), bare",
    hint: /IQoJb3JpZ2luX2|F[wQ]oGZXIvYXdzE/,
    body: "(?:IQoJb3JpZ2luX2|F[wQ]oGZXIvYXdzE)[A-Za-z0-9+/]{100,4000}={0,2}",
  },
  {
    kind: "posthog_key",
    about: "PostHog personal API keys (phx_…; the project key phc_… is public)",
    hint: /phx_/,
    body: "phx_[A-Za-z0-9_]{43}",
    accept: (s) => /[0-9]/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s.slice(4)),
  },
  {
    kind: "facebook_token",
    about: "Facebook app access tokens (APP_ID|APP_SECRET)",
    hint: /\d{15}\|/,
    body: String.raw`[0-9]{15,16}\|[0-9A-Za-z_\-]{27,40}`,
    accept: (s) => /[a-z]/.test(s.slice(s.indexOf("|"))) && /[0-9]/.test(s.slice(s.indexOf("|"))),
  },
];

// One scan for any provider's hint: most texts hold none, and one pattern of alternatives costs a
// fifth of the 86 hints tested one by one (µs per trail of the dev set's tune split).
const PROVIDER_FAMILY = new RegExp(PROVIDER_TOKENS.map((t) => t.hint.source).join("|"));

// A token's edges refuse a neighbouring base64 character, so none matches inside a longer run. A
// prefix with `-` or `_` (`tskey-auth-`, `glsa_`) cannot stand in standard base64, and base64url
// has no `/`: such a token may sit between slashes, as a path segment (`deploy/tskey-auth-…/values.yaml`).
const providerEdges = (t: ProviderToken): [string, string] =>
  /[-_]/.test(t.hint.source)
    ? [String.raw`(?<![A-Za-z0-9_.~+\-])`, String.raw`(?![A-Za-z0-9_~+\-]|\.[A-Za-z0-9])`]
    : [String.raw`(?<![A-Za-z0-9_.~+/\-])`, String.raw`(?![A-Za-z0-9_~+/\-]|\.[A-Za-z0-9])`];

const providerRule = (t: ProviderToken): RedactionRule => ({
  kind: t.kind,
  about: t.about,
  family: PROVIDER_FAMILY,
  hint: t.hint,
  pattern: new RegExp(`${providerEdges(t)[0]}(?:${t.body})${providerEdges(t)[1]}`, "dg"),
  group: 0,
  accept: t.accept ? (s) => t.accept!(s) : undefined,
  joinable: true,
});

// ---------------------------------------------------------------------------------------------
// Command-line tools that take a secret through a short option, where the generic flag rule
// (which needs a secret-sounding flag name) cannot see it. `attached`: only `-pVALUE` (mysql's
// `-p VALUE` prompts for the password and VALUE is the database); `separate`: only `-P VALUE`;
// `both`: either. The option must follow the tool on the same command (no `;`, `|`, `&` between).
// The tool may be named by its path (`/usr/bin/sshpass`, `C:\tools\mysql.exe`).

interface CommandSecretOption {
  about: string;
  /** A literal of the command the text must hold before the pattern runs. */
  hint: RegExp;
  /** Regex source of the command (tool name, with a subcommand where the option is shared). */
  command: string;
  option: string;
  form: "attached" | "separate" | "both";
  kind?: string;
}

// Tools that store what they read on standard input as a secret (session 19): `echo X | docker
// secret create NAME -`, `gh secret set NAME <<< X`, `| wrangler secret put NAME`, `| passwd [--stdin]
// bob`, `| openssl rsa -passin stdin`, `| gcloud secrets versions add NAME --data-file=-`.
const STDIN_SECRET_STORES = String.raw`(?<![\w.\-])(?:(?:docker|podman)[ \t]+secret[ \t]+create|gh[ \t]+secret[ \t]+set|glab[ \t]+variable[ \t]+(?:set|update)|wrangler[ \t]+(?:pages[ \t]+)?secret[ \t]+put|vercel[ \t]+env[ \t]+add|gcloud[ \t]+secrets[ \t]+(?:create|versions[ \t]+add)(?=[^\n;|&]{0,300}--data-file=-)|passwd(?:[ \t]+--stdin)?[ \t]+[a-z_][a-z0-9_\-]{0,31}[ \t]*(?=$|[\r\n;|&)]))(?![\w\-])|-passin[ \t]+stdin`;
const STDIN_SECRET_HINT =
  /password-stdin|with-token|-[A-Za-z]*S\b|secret[ \t]+(?:create|set|put)|variable|env[ \t]+add|versions[ \t]+add|passwd|passin/;

// A type in an annotation: `str`, `Optional[str]`, `typing.Optional[str]`, `string`, `String?` (session 19).
const TYPE_NAME = String.raw`[A-Za-z_][\w.]{0,40}(?:\[[^\]\n=]{0,60}\])?\??`;

const COMMAND_SECRET_OPTIONS: CommandSecretOption[] = [
  {
    about: "mysql and MariaDB clients: -pSECRET",
    command: String.raw`mysql(?:dump|admin|import|check|show|pump|slap)?|mariadb(?:-dump|-admin|-import|-check|-show)?`,
    hint: /mysql|mariadb/,
    option: "-p",
    form: "attached",
  },
  { about: "sshpass -p SECRET", hint: /sshpass/, command: "sshpass", option: "-p", form: "both" },
  {
    about: "registry logins: docker/podman/nerdctl/buildah/skopeo/oras login -p SECRET, helm registry login -p SECRET",
    command: String.raw`(?:docker|podman|nerdctl|buildah|skopeo|oras)(?:\.exe)?[ \t]+login|helm[ \t]+registry[ \t]+login`,
    hint: /login/,
    option: "-p",
    form: "both",
  },
  {
    about: "Azure CLI service-principal login: az login … -p SECRET",
    hint: /az[ \t]+login/,
    command: String.raw`az[ \t]+login`,
    option: "-p",
    form: "separate",
  },
  { about: "redis-cli -a SECRET", hint: /redis-cli/, command: "redis-cli", option: "-a", form: "both" },
  {
    about: "MongoDB shells and tools: -p SECRET",
    command: String.raw`mongo(?:sh|dump|restore|export|import|stat|top)?`,
    hint: /mongo/,
    option: "-p",
    form: "separate",
  },
  { about: "SQL Server tools: sqlcmd/bcp/osql -P SECRET", hint: /sqlcmd|bcp|osql/, command: "sqlcmd|bcp|osql", option: "-P", form: "both" },
  {
    about: "OpenLDAP tools: -w SECRET",
    command: String.raw`ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)`,
    hint: /ldap/,
    option: "-w",
    form: "separate",
  },
  { about: "zip/unzip -P SECRET", hint: /zip/, command: "zip|unzip", option: "-P", form: "separate" },
  { about: "7-Zip -pSECRET", hint: /7z/, command: "7z|7za|7zr", option: "-p", form: "attached" },
  { about: "mosquitto clients -P SECRET", hint: /mosquitto_/, command: "mosquitto_(?:pub|sub|rr)", option: "-P", form: "separate" },
  { about: "ssh-keygen -N/-P PASSPHRASE", hint: /ssh-keygen/, command: "ssh-keygen", option: "-[NP]", form: "separate" },
  {
    about: "openssl enc -k PASSPHRASE (the legacy pass phrase option)",
    hint: /openssl/,
    command: "openssl",
    option: "-k",
    form: "separate",
  },
  { about: "twine upload -p PASSWORD (a PyPI password or token)", hint: /twine/, command: "twine", option: "-p", form: "separate" },
  // Session 19: Codecov's upload token (a UUID) by its short option.
  { about: "codecov -t TOKEN", hint: /codecov/, command: "codecov(?:cli)?", option: "-t", form: "separate", kind: "token" },
  {
    about: "NuGet feeds: dotnet nuget add|update source … -p PASSWORD",
    command: String.raw`dotnet[ \t]+nuget[ \t]+(?:add|update)[ \t]+source`,
    hint: /nuget/,
    option: "-p",
    form: "separate",
  },
];

// One scan for any of the commands: most texts name none of them.
const COMMAND_FAMILY = new RegExp(COMMAND_SECRET_OPTIONS.map((c) => c.hint.source).join("|"));

const commandOptionRule = (c: CommandSecretOption): RedactionRule => {
  const gap = c.form === "attached" ? "" : c.form === "separate" ? "[ \\t]+" : "[ \\t]*";
  return {
    kind: c.kind ?? "password",
    about: c.about,
    family: COMMAND_FAMILY,
    hint: c.hint,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])(?:${c.command})(?:\.exe)?[ \t](?:[^\n;|&]{0,300}?[ \t])?${c.option}${gap}(?![\s\-])(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 1,
    // What follows a password option is the password, even a word like `secret`.
    accept: (s) => !isReferenceValue(s),
  };
};

// Words a YAML line may hold after a secret-named key that are not secrets (status and type words).
const YAML_NON_SECRET_WORDS = new Set([
  "invalid",
  "incorrect",
  "missing",
  "wrong",
  "expired",
  "revoked",
  "unset",
  "set",
  "masked",
  "ok",
  "error",
  "failed",
  "denied",
  "rejected",
  "accepted",
  "valid",
  "str",
  "int",
  "bool",
  "boolean",
  "number",
  "bytes",
  "object",
  "any",
  "unknown",
  "never",
  "secretstr",
  "sensitive",
  "inherit",
  "auto",
  "plain",
  "plaintext",
]);

/**
 * What a changelog says after a function's name (`gnutls_psk_netconf_derive_key: REMOVED`,
 * `* conform/data/pwd.h-data: Likewise.`): the change, not a value. From GnuTLS's NEWS and glibc's
 * ChangeLog (session 15).
 */
const CHANGELOG_WORDS = new Set([
  ..."added removed changed deprecated likewise renamed updated fixed new".split(" "),
  // Debian changelogs about a patch: `- debian/patches/hurd-i386/git-auth-leak.diff: upstreamed.`
  ..."upstreamed dropped refreshed".split(" "),
]);

// The sources of /etc/nsswitch.conf (nsswitch.conf(5)): the first word after `passwd:`.
const NSS_SOURCES = new Set([
  "files",
  "compat",
  "systemd",
  "db",
  "nis",
  "nisplus",
  "ldap",
  "sss",
  "winbind",
  "dns",
  "mdns",
  "extrausers",
  "cache",
]);

/**
 * A version or version range as package manifests and lockfiles write it: `^6.0.0`, `~1.2`,
 * `>=1.0.0 <2`, `1.x`, `^1.0.0 || ^2.0.0`, `6.0.0-beta.1`. No password is written so.
 */
const quoted0 = (s: string) => /^(?:\\\\){0,3}\\?["']/.test(s);

export function isVersionRange(v: string): boolean {
  if (v.length > 80 || !/^[~^<>=v\d]/.test(v)) return false;
  return v.split(/[ \t]*\|\|[ \t]*|[ \t]+/).every((part) =>
    // An operator, or at least one dot: a bare number ("123456") may be a password.
    /^(?:(?:[~^]|[<>]=?|=)v?\d{1,6}(?:\.(?:\d{1,6}|[xX*])){0,3}|v?\d{1,6}(?:\.(?:\d{1,6}|[xX*])){1,3})(?:-[0-9A-Za-z.-]{1,40})?(?:\+[0-9A-Za-z.-]{1,40})?$/.test(
      part,
    ),
  );
}

/**
 * A four-part version where an IPv4 address could stand, as changelogs and release notes write it
 * (session 15, /usr/share/doc): `Git 1.8.1.5 Release Notes`, `Changes in 1.2.3.4 (18 Apr 2010)`,
 * `2014-12-05 (3.8.7.3)`, `1.2.3.4 - 2013-11-04`, `Bump to 1.2.3.4`, `openjdk-17 (17.0.21.1+2-1~deb12u1)`,
 * a user agent's `Chrome/120.0.6099.109`; section numbers and OIDs.
 */
function inVersionContext(text: string, from: number, to: number): boolean {
  const before = text.slice(Math.max(0, from - 48), from).toLowerCase();
  const after = text.slice(to, to + 32).toLowerCase();
  if (/^[+~]|^[ \t]+release notes|^[ \t]+\(\d{1,2} [a-z]{3,9} \d{4}\)|^[ \t]+-[ \t]+\d{4}-\d{2}-\d{2}/.test(after)) return true;
  if (/\d{4}-\d{2}-\d{2}[ \t]+\($/.test(before)) return true;
  // The version an upgrade replaced, in parentheses after the new one (`V8: Upgrade to 4.4.63.30 (from
  // 4.4.63.26)`), or the new one in parentheses (`Upgrade to (4.4.63.30)`).
  if (
    /\bupgrad[^\n]{0,30}[ \t]\d+(?:\.\d+){1,4}[ \t]+\((?:from|was)[ \t]+$/.test(before) ||
    (before.endsWith("(") && UPGRADE_TO_VERSION.test(before.slice(0, -1)))
  )
    return true;
  // A browser's token in a user agent; any other `word/` may be a path (`deploy/10.1.2.3/values.yaml`).
  if (/\b(?:chrome|chromium|crios|firefox|fxios|safari|applewebkit|edg|edge|opr|samsungbrowser|yabrowser)\/$/.test(before)) return true;
  // A section number (`RFC 5280, section 4.2.2.1`, `SP800-38D 5.2.1.1`, a heading `2.1.1.3. CRC32`),
  // a Debian policy version (`Policy 3.6.1.1`), an OID (`OID 1.3.101.110`).
  if (/\b(?:section|sections|sect\.|policy|standards-version:|oid)[ \t]*$|§[ \t]*$/.test(before)) return true;
  const small = text
    .slice(from, to)
    .split(".")
    .every((n) => Number(n) < 32);
  if (small && /(?:^|\n)[ \t]*$/.test(before) && /^\.[ \t]+[A-Za-z]/.test(text.slice(to, to + 4))) return true;
  // A product's name before it (session 16), or an upgrade to it: `XFree86 4.3.0.1`.
  if (PRODUCT_BEFORE_VERSION.test(before) || UPGRADE_TO_VERSION.test(before)) return true;
  // Only phrases that name a release: "updated DNS to 93.184.216.34" is an address.
  return /\b(?:release|changes in|new in|bump(?:ed)? to|fixes since)[ \t]+$/.test(before);
}

// Software whose four-part versions changelogs and release notes name (the benign corpus, session
// 16): X.org's libraries and protocol headers (`libxcb 1.1.90.1`, `inputproto 2.1.99.6`), `XFree86
// 4.3.0.1`, `OpenJDK 17.0.21.1`, `GCC 2.7.2.3`, `Linux 2.6.8.1`, `doxygen 1.8.1.2`, browsers and
// runtimes. Servers and hosts whose address follows their name (`redis 10.0.0.7`, `node 10.0.0.5`,
// `eth0 10.0.0.5`) are not in it.
const PRODUCTS =
  "lib[a-z][a-z0-9+_-]*|[a-z][a-z0-9]*proto|xfree86|xorg|x\\.org|linux|kernel|gcc|clang|llvm|openjdk|jdk|jre|doxygen|chrome|chromium|firefox|electron|v8|python|perl|ruby|php|openssl|mesa|qt|gtk\\+?|glib|glibc|icu|xcode|android|ios|macos";
const PRODUCT_BEFORE_VERSION = new RegExp(String.raw`(?:^|[\s(])(?:${PRODUCTS})[ \t]+$`);
// `Upgrade to 4.4.63.30`, `Upgrade v8 to 3.14.5.9`, `update V8 to 4.2.77.20`, `upgrade V8 from 4.1.0.21 to
// 4.2.77.18`: what is upgraded is software (an update names it: `Updated DNS to 93.184.216.34` is an address).
const UPGRADE_TO_VERSION = new RegExp(
  String.raw`\b(?:upgrad(?:e|ed|es|ing)[ \t]+(?:(?:${PRODUCTS})[ \t]+)?|updat(?:e|ed|es|ing)[ \t]+(?:${PRODUCTS})[ \t]+)(?:to|from|(?:from[ \t]+\d+(?:\.\d+){1,4}[ \t]+to))[ \t]+$`,
);

/** `name: value` alone on its line (after indentation or a list dash): a YAML mapping entry. */
function isYamlEntry(m: RegExpExecArray, text: string): boolean {
  if (!/^[ \t]*:[ \t]+$/.test(m[3]!)) return false;
  const lineStart = text.lastIndexOf("\n", m.index) + 1;
  if (!/^[ \t]*(?:-[ \t]+)?$/.test(text.slice(lineStart, m.index))) return false;
  const end = m.index + m[0].length;
  const rest = text.slice(end, end + 200);
  return /^[ \t]*(?:#[^\n]*)?(?:\r?\n|$)/.test(rest);
}

const AWS_BARE_SECRET = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/dg;
const looksLikeAwsSecret = (s: string) => /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s) && entropy(s) >= 4;

/**
 * A bare AWS secret access key in a string of a value (a trail) that holds an AWS access key id in
 * another string: a fix often names the key id in one step or command and the secret in the next
 * ("the secret is wJalr…"), out of the reach of the rule that looks 200 characters around the id.
 * Applied by redactDeep to every string once the value is known to hold an access key id.
 */
export const AWS_SECRET_ELSEWHERE: RedactionRule = {
  kind: "aws_secret_key",
  about: "bare AWS secret access keys anywhere in a trail that holds an AWS access key id",
  pattern: AWS_BARE_SECRET,
  group: 0,
  accept: (s) => looksLikeAwsSecret(s),
};

export const REDACTION_RULES: RedactionRule[] = [
  // --- Key material --------------------------------------------------------------------------
  {
    kind: "private_key",
    hint: /PRIVATE KEY/,
    about:
      "PEM/OpenSSH/PGP private key blocks (BEGIN … PRIVATE KEY … END), also with escaped \\n, a missing END line or a blank inside the dashes (`----- BEGIN RSA PRIVATE KEY -----`)",
    pattern:
      /-----[ \t]?BEGIN [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?[ \t]?-----(?:[A-Za-z0-9+/=\s:,.\\_]|-(?!----))*(?:-----[ \t]?END [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?[ \t]?-----)?/dg,
    group: 0,
  },
  {
    kind: "private_key",
    hint: /M[A-Za-z0-9+/]{40}|b3BlbnNzaC1rZXktdjE/,
    about:
      "A private key's base64 body pasted without its BEGIN/END lines, whole (the lines a block wraps at 64 or 70 columns, with a patch's prefixes): DER that opens as a private key does (a SEQUENCE then version 0, 1 or 3: PKCS#1, PKCS#8, SEC1 EC, PKCS#12; or a PKCS#8 encrypted with PBES2 or PKCS#12's ciphers: `MIIEvQIBADANBgkqhkiG9w0BAQEFAASC…`, `MIIEpAIBAAKCAQEA…`, `MHcCAQEEI…`, `MC4CAQAwBQYDK2VwBCIEI…`) or an OpenSSH key (`b3BlbnNzaC1rZXktdjE…`); certificates, public keys and requests (a SEQUENCE then a SEQUENCE) stay",
    pattern:
      /(?<![A-Za-z0-9+/_-])(?<!(?:^|\n)[ \t]*[-+>|]?[ \t]*(?:#|\/\/)?[ \t]*["']?[A-Za-z0-9+/]{16,}={0,2}["',]?[ \t]*\\?(?:\r?\n|\\n)[ \t]*[-+>|]?[ \t]*(?:#|\/\/)?[ \t]*["']?)(?:M[A-Za-z0-9+/]{15}|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{24,}={0,2}(?:[ \t]*\\?(?:\r?\n|\\n)[ \t]*[-+>|]?[ \t]*(?:#|\/\/)?[ \t]*["']?[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9_.:-]))*/dg,
    group: 0,
    // Not on a line after a base64 line: a block is read from its first line (once, not from each line again).
    accept: (s) => privateKeyBody(s),
  },
  {
    kind: "jwt",
    hint: /eyJ/,
    about: "JSON Web Tokens (three base64url parts, header and payload starting with eyJ)",
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,2048}/dg,
    group: 0,
    joinable: true,
  },
  // --- Provider credentials (specific shapes) -------------------------------------------------
  {
    kind: "aws_access_key",
    hint: /A(?:KIA|SIA|BIA|CCA|3T)/,
    about: "AWS access key ids (AKIA…, ASIA…, ABIA…, ACCA… + 16 characters)",
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "aws_secret_key",
    hint: /aws_access_key>/,
    about:
      "bare AWS secret access keys: a 40-character base64 string within 200 characters of an AWS access key id (in any other field of the same trail too: see AWS_SECRET_ELSEWHERE)",
    pattern: AWS_BARE_SECRET,
    group: 0,
    accept: (s, m, text) =>
      looksLikeAwsSecret(s) && text.slice(Math.max(0, m.index - 200), m.index + s.length + 200).includes(placeholder("aws_access_key")),
  },
  {
    kind: "aws_secret_key",
    hint: /secret[ _]?access[ _]?key|aws[ _]?secret/i,
    about:
      "AWS secret access keys (40 characters) after aws_secret_access_key / secretAccessKey (also `aws configure set aws_secret_access_key KEY`, and the answer to `aws configure`'s prompt `AWS Secret Access Key [None]: KEY`; a path segment: `deploy/…KEY/values.yaml`, session 16)",
    pattern:
      /(?:aws[ _]?secret[ _]?(?:access[ _]?)?key|secret[ _]?access[ _]?key)(?:[ \t]*\[[^\]\n]{0,64}\])?["']?(?:[ \t]*(?:=|:|=>)[ \t]*|[ \t]+)["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9+=])(?!\/[A-Za-z0-9+/=]*(?![A-Za-z0-9+/=._-]))/dgi,
    group: 1,
  },
  {
    kind: "github_token",
    hint: /gh[pousr]_|github_pat_/,
    about: "GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "gitlab_token",
    hint: /gl[a-z]{1,5}-|GR1348941/,
    about: "GitLab tokens (glpat-, glptt-, gldt-, glrt-, gloas-, glffct-, GR1348941 runner tokens)",
    pattern:
      /(?<![A-Za-z0-9_-])(?:gl(?:pat|ptt|dt|rt|soat|ft|imt|agent|cbt|oas|ffct)-[A-Za-z0-9_-]{20,255}|GR1348941[A-Za-z0-9_-]{20,255})/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "slack_webhook",
    hint: /hooks\.slack\.com/,
    about: "Slack incoming-webhook URLs",
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/]{20,300}/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "slack_token",
    hint: /xox|xapp-/,
    about: "Slack tokens (xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-, xoxe-, xapp-)",
    pattern: /(?<![A-Za-z0-9])(?:xox[abposre](?:\.[A-Za-z0-9]+)?-[A-Za-z0-9-]{10,250}|xapp-\d-[A-Za-z0-9-]{10,250})/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "stripe_key",
    hint: /_live_|_test_|_prod_|whsec_/,
    about: "Stripe secret and restricted keys and webhook secrets (sk_live_, rk_test_, sk_prod_, whsec_)",
    pattern: /(?<![A-Za-z0-9_])(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9]{24,64})(?![A-Za-z0-9_])/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "anthropic_key",
    hint: /sk-ant-/,
    about: "Anthropic API keys (sk-ant-…)",
    pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,255}/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "openai_key",
    hint: /sk-/,
    about: "OpenAI API keys (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…) with random-looking bodies",
    pattern: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,255}/dg,
    group: 0,
    joinable: true,
    accept: (s) => /T3BlbkFJ/.test(s) || (/[0-9]/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s) && entropy(s) >= 3.5),
  },
  {
    kind: "google_api_key",
    hint: /AIza|GOCSPX-/,
    about: "Google API keys (AIza + 35 characters) and OAuth client secrets (GOCSPX-)",
    pattern: /(?<![A-Za-z0-9_-])(?:AIza[0-9A-Za-z_-]{35}|GOCSPX-[0-9A-Za-z_-]{28})(?![A-Za-z0-9_-])/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "vault_token",
    hint: /s\.[A-Za-z0-9]{24}/,
    about: "HashiCorp Vault legacy service tokens (s. + 24 characters, digits and both cases), also as a path segment",
    // A `.` is no base64 character, so unlike the provider tokens this one may sit between slashes.
    pattern: /(?<![A-Za-z0-9_.~+-])s\.[A-Za-z0-9]{24}(?![A-Za-z0-9_~+-]|\.[A-Za-z0-9])/dg,
    group: 0,
    accept: (s) => /[0-9]/.test(s) && /[a-z]/.test(s.slice(2)) && /[A-Z]/.test(s),
  },
  {
    kind: "google_oauth_token",
    hint: /ya29\./,
    about: "Google OAuth access tokens (ya29.…)",
    pattern: /(?<![A-Za-z0-9_-])ya29\.[0-9A-Za-z_-]{20,2048}/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "npm_token",
    hint: /npm_/,
    about: "npm access tokens (npm_ + 36 characters)",
    pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "pypi_token",
    hint: /pypi-/,
    about: "PyPI API tokens (pypi-AgEIcHlwaS5vcmc…)",
    pattern: /(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,400}/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "huggingface_token",
    hint: /hf_/,
    about: "Hugging Face tokens (hf_ + 34+ characters)",
    pattern: /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9_])/dg,
    group: 0,
    joinable: true,
  },
  {
    kind: "sendgrid_key",
    hint: /SG\./,
    about: "SendGrid API keys (SG.xxx.yyy)",
    pattern: /(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg,
    group: 0,
    joinable: true,
  },
  ...PROVIDER_TOKENS.map(providerRule),
  {
    kind: "azure_connection_string",
    hint: /AccountKey=|SharedAccess/,
    about:
      "Azure storage / Service Bus keys and SAS signatures inside connection strings (AccountKey=, SharedAccessKey=, SharedAccessSignature=)",
    pattern: /(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature)=([^;"'\s<>]{8,1024})/dg,
    group: 1,
  },
  {
    kind: "telegram_bot_token",
    hint: /\/bot\d/,
    about: "Telegram bot tokens inside Bot API URLs (https://api.telegram.org/bot123456789:AA…/sendMessage)",
    pattern: /(?<=\/bot)[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/dg,
    group: 0,
  },
  {
    kind: "password",
    hint: /machine/,
    about: ".netrc entries (machine HOST login USER password SECRET), on one line or several; the login makes it a netrc entry, not prose",
    pattern: /(?<![\w-])machine[ \t]+[^\s;,]{1,253}(?:\s+(?:login|account)[ \t]+[^\s;,]{1,256}){1,2}\s+password[ \t]+(\S{1,256})/dg,
    group: 1,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "password",
    hint: /pgpass/i,
    about:
      "PostgreSQL password file lines (host:port:database:user:password) in a text that names the file (`.pgpass`, `pgpass.conf`, PGPASSFILE): a colon-separated line alone is ordinary error text",
    pattern:
      /(?<![\w.:@/\\*-])((?:\\[:\\]|[^\s:\\'"]){1,253}):(?:[0-9]{1,5}|\*):(?:\\[:\\]|[^\s:\\'"]){1,63}:(?:\\[:\\]|[^\s:\\'"]){1,63}:((?:\\[:\\]|[^\s:\\'"]){1,256})(?=$|[\s'"])/dg,
    group: 2,
    // A host holds a letter, a dot or is `*`: `12:30:45:123:456` is a time.
    accept: (s, m) => /[A-Za-z.*]/.test(m[1]!) && !isPlaceholderValue(s),
  },
  // The same line where the text does not name the file (session 18: `echo 'db…:5432:…' >> ~/.pgpass`
  // is named, an error quoting the line or a patch adding it is not). Narrower than the named form, so
  // a colon-separated line of another kind stays: the record stands alone between blanks or quotes, its
  // host is `*`, localhost, an IPv4 address or a dotted name, its port `*` or 2 to 5 digits, its database
  // and user `*` or names that start with a letter (`a.c:12:5:warning:x`'s column is a number), and the
  // password looks like one (bareValueLooksSecret: `root:*:0:0:System` from a passwd file stays).
  {
    kind: "password",
    hint: /:(?:[0-9]{2,5}|\*):/,
    about:
      "PostgreSQL password file lines (host:port:database:user:password) alone, in a text that does not name the file: a dotted host, `*` or localhost, a port, names for the database and user, and a value that looks like a password",
    pattern:
      /(?:(?<![^\s'"=>])|(?<=(?:^|\n)[+-]))(?:\*|localhost|[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}):(?:[0-9]{2,5}|\*):(?:\*|[A-Za-z_][A-Za-z0-9_$.-]{0,62}):(?:\*|[A-Za-z_][A-Za-z0-9_$.@-]{0,62}):((?:\\[:\\]|[^\s:\\'"]){6,256})(?![^\s'"<])/dg,
    group: 1,
    accept: (s) => bareValueLooksSecret(s) && !isPlaceholderValue(s),
  },
  // A wallet's recovery phrase (BIP-39: 12, 15, 18, 21 or 24 lower-case words) is the wallet: no
  // secret name announced it (`MNEMONIC="…"`, `mnemonic: …`, `Wallet.fromPhrase("…")`, truffle's
  // `{ mnemonic: { phrase: "…" } }`, session 18). The name must say mnemonic, seed, phrase or
  // recovery and the words must be the whole value: a sentence has capitals, punctuation or another count.
  {
    kind: "seed_phrase",
    hint: /mnemonic|seed|phrase|recovery/i,
    about: "Wallet recovery phrases (BIP-39: 12, 15, 18, 21 or 24 lower-case words) after a name saying mnemonic, seed, phrase or recovery",
    pattern:
      /(?<![A-Za-z0-9])[A-Za-z_]{0,40}(?:mnemonic|Mnemonic|MNEMONIC|seed|Seed|SEED|phrase|Phrase|PHRASE|recovery|Recovery|RECOVERY)[A-Za-z_]{0,40}["']?[ \t]*(?::=|=>|[:=(])[ \t]*(["'`]?)((?:[a-z]{3,8}[ \t]){11,23}[a-z]{3,8})\1(?![A-Za-z0-9_.-])/dg,
    group: 2,
    // Hardhat's and Truffle's public test phrase (`test test … junk`) repeats its words: a real one does not.
    accept: (s) => {
      const words = s.split(/[ \t]/);
      return [12, 15, 18, 21, 24].includes(words.length) && new Set(words).size >= words.length / 2;
    },
  },
  {
    kind: "password",
    hint: /<auth-user-pass>/,
    about: "OpenVPN inline credentials (`<auth-user-pass>` then the user name and the password, each on its line)",
    pattern:
      /<auth-user-pass>[ \t]*\r?\n[ \t]*[^\s<]{1,256}[ \t]*\r?\n[ \t]*([^\s<](?:[^\r\n<]{0,254}[^\s<])?)[ \t]*\r?\n[ \t]*<\/auth-user-pass>/dg,
    group: 1,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "token",
    hint: /_auth|_password/,
    about: ".npmrc credentials (//registry/:_authToken=…, _auth=…, _password=…)",
    pattern: /(?<![A-Za-z0-9])(?:_authToken|_auth|_password)[ \t]*=[ \t]*(["']?)([^\s"'<>]{8,1024})\1/dg,
    group: 2,
    accept: (s) => !isPlaceholderValue(s),
  },
  // --- Credentials in URLs and headers --------------------------------------------------------
  {
    kind: "password",
    about: "Passwords in URLs and connection strings (scheme://user:password@host)",
    hint: /:\/\//,
    pattern: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}:\/\/[^\s:/@<>"']{0,256}:([^\s@/<>"']{1,256})@/dg,
    group: 1,
    joinable: true,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "basic_auth",
    hint: /basic/i,
    about: "HTTP Basic credentials (`Basic <base64 of user:password>`; the scheme name in any case, as HTTP allows)",
    pattern: /(?<![A-Za-z0-9])[Bb][Aa][Ss][Ii][Cc][ \t]+([A-Za-z0-9+/]{8,1024}={0,2})(?![A-Za-z0-9+/=])/dg,
    group: 1,
    accept: (s) => {
      const d = decodeBase64(s);
      return d !== null && d.includes(":") && /^[\x20-\x7e]+$/.test(d);
    },
  },
  {
    kind: "bearer_token",
    hint: /bearer/i,
    about: "Bearer tokens (`Authorization: Bearer …` or a bare `Bearer …`)",
    pattern: /(?<![A-Za-z0-9])Bearer[ \t]+([A-Za-z0-9\-._~+/]{8,4096}=*)/dgi,
    group: 1,
    accept: (s) => !isPlaceholderValue(s) && (/[0-9]/.test(s) || (s.length >= 20 && classes(s) >= 2)),
  },
  {
    kind: "auth_header",
    hint: /authorization|api-key|-token/i,
    about:
      "Other credentials in auth headers (Authorization: token …, SSWS … (Okta), ApiKey … (Elastic), Splunk … (HEC), GenieKey …, X-Api-Key, Private-Token, X-Auth-Token, X-Vault-Token)",
    pattern:
      /(?<![A-Za-z0-9-])(?:Proxy-Authorization|Authorization|X-Api-Key|Api-Key|X-Auth-Token|X-Access-Token|Private-Token|X-Vault-Token|X-Goog-Api-Key)["']?[ \t]*[:=][ \t]*["']?(?:(?:token|digest|key|ssws|apikey|api-key|splunk|geniekey)[ \t]+)?([^\s"'<>]{8,4096})/dgi,
    group: 1,
    // A scheme and an encoded blank (`Bearer&#32;…`, `token%20…`): the normalized view reads the
    // credential after it (the bearer_token rule, or this one after the scheme), and one
    // placeholder stands for it instead of two.
    accept: (s) =>
      !isPlaceholderValue(s) &&
      !/^(Bearer|Basic|Token|Digest|SSWS|ApiKey|Api-Key|Splunk|GenieKey)$/i.test(s) &&
      !/^(?:Bearer|Basic|Token|Digest|SSWS|ApiKey|Api-Key|Splunk|GenieKey)(?:&#0{0,3}32;|&#[xX]0{0,2}20;|%20)/i.test(s),
  },
  {
    kind: "password",
    about: "user:password given to curl/wget/httpie with -u/--user (httpie and xh: -a/--auth)",
    hint: /-u|--user|-a|--auth/,
    pattern: /(?<![\w-])(?:-u|--user|-a|--auth)(?:[ \t]+|=)["']?[^\s:"'<>]{1,128}:([^\s"'<>]{1,256})/dg,
    group: 1,
    accept: (s, m, text) => !isPasswordPlaceholder(s) && onHttpCommandLine(m, text),
  },
  {
    kind: "password",
    about:
      'The password of a basic-auth pair in code: Python requests/httpx `auth=("user", "PASSWORD")`, `HTTPBasicAuth("user", "PASSWORD")`, aiohttp `BasicAuth(…)` (both quoted strings)',
    hint: /auth|Auth/,
    pattern:
      /(?<![\w.])(?:auth[ \t]*=[ \t]*|(?:HTTPBasicAuth|HTTPDigestAuth|BasicAuth|HTTPProxyAuth)[ \t]*)\([ \t]*(["'])[^"'\n]{1,128}\1[ \t]*,[ \t]*((["'])[^"'\n]{1,256}\3)[ \t]*\)/dg,
    group: 2,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "password",
    // Session 19: the password as a call's second argument, after the user: Python's smtplib, imaplib,
    // poplib and ftplib `.login(user, "X")`, .NET's `NetworkCredential("bob", "X")`, Java's
    // `PasswordAuthentication("bob", "X".toCharArray())`, Apache's `UsernamePasswordCredentials`,
    // Spring's `UsernamePasswordAuthenticationToken`, MongoDB's `changeUserPassword("app", "X")`; and
    // its third in `DriverManager.getConnection(url, "app", "X")` and `FTP(host, "bob", "X")`.
    about:
      'A password passed by position in code: `.login(user, "PASSWORD")`, `NetworkCredential("user", "PASSWORD")`, `PasswordAuthentication`, `UsernamePasswordCredentials`, `changeUserPassword("user", "PASSWORD")`, `DriverManager.getConnection(url, "user", "PASSWORD")`, `FTP(host, "user", "PASSWORD")` (a quoted string)',
    hint: /login|Credential|PasswordAuthentication|UsernamePassword|changeUserPassword|getConnection|FTP/,
    pattern:
      /(?:(?:\.login|(?<![\w.])NetworkCredential|(?<![\w.])PasswordAuthentication|(?<![\w.])UsernamePasswordCredentials|(?<![\w.])UsernamePasswordAuthenticationToken|\.changeUserPassword)[ \t]*\([ \t]*|(?:DriverManager\.getConnection|(?<![\w.])(?:ftplib\.)?FTP(?:_TLS)?)[ \t]*\([ \t]*[^,()\n]{1,200},[ \t]*)(?:"[^"\n]{1,128}"|'[^'\n]{1,128}'|[A-Za-z_$][\w$.]{0,63})[ \t]*,[ \t]*(("|')[^"'\n]{1,256}\2)(?:\.toCharArray\(\))?[ \t]*[,)]/dg,
    group: 1,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "password",
    // Go's MySQL driver names user and password before `@tcp(…)` with no scheme (session 19).
    about: "Go MySQL driver DSNs (`app:PASSWORD@tcp(db:3306)/app`, `@unix(…)`)",
    hint: /@(?:tcp|unix|udp)\(/,
    pattern: /(?<![^\s"'`=(,])[A-Za-z0-9_.-]{1,64}:([^\s@"'`:/]{1,256})@(?:tcp|unix|udp)\(/dg,
    group: 1,
    // `user:password@tcp(…)` in a driver's docs is a template; a port is no password.
    accept: (s) => !isPlaceholderValue(s) && !/^[0-9]{1,5}$/.test(s),
  },
  {
    kind: "password",
    // The plain text given to `openssl passwd` to hash (`useradd -p $(openssl passwd -6 X)`) (session 19).
    about: "The password `openssl passwd [-1|-5|-6|-apr1] X` hashes",
    hint: /openssl/,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])openssl[ \t]+passwd(?:[ \t]+(?:-(?:1|5|6|apr1|aixmd5|crypt|quiet|table|reverse|noverify)|-salt[ \t]+[^\s;|&)]{1,64}))*[ \t]+(?!-)(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    // The `user:password` lines chpasswd reads (session 19).
    about: "A `user:PASSWORD` line echoed into chpasswd (`echo 'bob:X' | chpasswd`)",
    hint: /chpasswd/,
    pattern:
      /(?<![\w.-])echo[ \t]+(?:-[neE]{1,3}[ \t]+)?(["']?)[a-z_][a-z0-9_.-]{0,31}:([^\s"':]{1,256})\1[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd/dg,
    group: 2,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    about: "A `user:PASSWORD` line given to chpasswd as a here-string (`chpasswd <<< 'bob:X'`)",
    hint: /chpasswd/,
    pattern: /(?<![\w.-])chpasswd[ \t]*<<<[ \t]*(["']?)[a-z_][a-z0-9_.-]{0,31}:([^\s"':]{1,256})\1/dg,
    group: 2,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    // Session 19: a value a cloud CLI stores as a secret: SSM's SecureString parameter (a String
    // parameter's value is plain configuration, kept), Secrets Manager's secret string, Key Vault's secret.
    about:
      "Values cloud CLIs store as secrets: `aws ssm put-parameter … --value X --type SecureString`, `aws secretsmanager create-secret|put-secret-value|update-secret … --secret-string X`, `az keyvault secret set … --value X`",
    hint: /put-parameter|secretsmanager|keyvault/,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])(?:aws[ \t]+ssm[ \t]+put-parameter(?=[^\n;|&]{0,400}SecureString)|aws[ \t]+secretsmanager[ \t]+(?:create-secret|put-secret-value|update-secret)|az[ \t]+keyvault[ \t]+secret[ \t]+set)[ \t](?:[^\n;|&]{0,300}?[ \t])?--(?:value|secret-string)(?:[ \t]+|=)(?!-)(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 1,
    // A file (`file://secret.json`) or a JSON document (its members are read by the JSON rules).
    accept: (s) => !isReferenceValue(s) && !/^["']?(?:file|fileb):\/\//.test(s) && !/^["']?\{/.test(s),
  },
  {
    kind: "password",
    // Session 19: a prompt's answer pasted with it: `[sudo] password for bob: X`, git's `Password for
    // 'https://bob@github.com': X`, ssh's `Enter passphrase for key '…': X` (a bare `Password: X` was read).
    about:
      "A password typed after a prompt naming whose it is (`[sudo] password for bob: X`, `Password for 'https://…': X`, `Enter passphrase for key '…': X`), the value ending its line",
    hint: /[Pp]ass(?:word|phrase) for /,
    pattern:
      /(?<![A-Za-z])[Pp]ass(?:word|phrase) for [^\n:]{0,200}(?::\/\/[^\n:]{0,200})?(?::[0-9]{2,5}[^\n:]{0,100})?:[ \t]+([^\s]{1,256})[ \t]*(?=\r?\n|$)/dg,
    group: 1,
    accept: (s) => !isPlaceholderValue(s) && bareValueLooksSecret(s),
  },
  {
    kind: "password",
    // Session 19: Python's bytes literal after a secret's name (`'password': b'X'` in a repr of locals;
    // the assignment rule cut the `b` alone and left the string: pydantic's `password_bytes=b'…'`).
    about:
      "A Python bytes or raw string literal after a secret-named key (`'password': b'…'`, `password=rb\"…\"`); the kind follows the name",
    hint: /[:=][ \t]*[bBrRuU]{1,2}["']/,
    pattern: new RegExp(
      String.raw`(?<![A-Za-z0-9_.\-])(["']?)${NAME_HINT}(${NAME})\1[ \t]*(?:=>|[:=])[ \t]*(?:[bBrRuU]|[bB][rR]|[rR][bB])(${QUOTED})`,
      "dg",
    ),
    group: 3,
    accept: (s, m) => kindOfNamedValue(m[2]!, s),
  },
  {
    kind: "password",
    // Session 19: a type between the name and `=` hid the assignment: Python's annotations (pydantic
    // settings' `db_password: str = '…'`, `Optional[str]`, `str | None`), TypeScript's and Kotlin's
    // `const token: string = '…'`, pydantic's `SecretStr("…")` wrapper.
    about:
      'Typed assignments of a secret-named variable: `db_password: str = \'…\'`, `api_key: Optional[str] = "…"`, `const token: string = \'…\'`, `val password: String = "…"`, `password: SecretStr = SecretStr("…")`; the kind follows the name',
    hint: /:[ \t]*[A-Za-z_][^=\n]{0,200}=/,
    pattern: new RegExp(
      String.raw`(?<![A-Za-z0-9_.\-])${NAME_HINT}([A-Za-z_][A-Za-z0-9_]{0,60})[ \t]*:[ \t]*${TYPE_NAME}(?:[ \t]*\|[ \t]*${TYPE_NAME}){0,3}[ \t]*=(?![=>])[ \t]*(?:(?:SecretStr|SecretBytes|Secret)\([ \t]*)?(?:[bBrRuU]|[bB][rR]|[rR][bB])?(${QUOTED})`,
      "dg",
    ),
    group: 2,
    accept: (s, m) => kindOfNamedValue(m[1]!, s),
  },
  {
    kind: "password",
    // Session 19: Go's typed declaration (`var apiKey string = "…"`, `const dbPassword = "…"` was read).
    about:
      'Go\'s typed declarations of a secret-named variable (`var apiKey string = "…"`, `const dbPassword string = "…"`); the kind follows the name',
    hint: /(?:var|const)[ \t]/,
    pattern: new RegExp(
      String.raw`(?<![\w.])(?:var|const)[ \t]+${NAME_HINT}([A-Za-z_][A-Za-z0-9_]{0,60})[ \t]+[A-Za-z_*\[\]][\w.*\[\]]{0,40}[ \t]*=(?!=)[ \t]*(${QUOTED}|\x60[^\x60\n]{1,256}\x60)`,
      "dg",
    ),
    group: 2,
    accept: (s, m) => kindOfNamedValue(m[1]!, s),
  },
  // --- Secrets in assignments and command-line flags ------------------------------------------
  ...COMMAND_SECRET_OPTIONS.map(commandOptionRule),
  {
    kind: "password",
    about: "OpenSSL-style pass phrases (-pass/-passin/-passout pass:SECRET)",
    hint: /pass:/,
    pattern: /(?<![\w-])-pass(?:in|out)?[ \t]+["']?pass:([^\s"'<>;|&]{1,256})/dg,
    group: 1,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "password",
    about: "Oracle connect strings given to sqlplus/sqlldr/expdp/impdp/rman (user/password@db)",
    hint: /sqlplus|sqlldr|expdp|impdp|rman/,
    pattern:
      /(?<![\w./\\-])(?:sqlplus|sqlldr|expdp|impdp|rman)(?:\.exe)?[ \t]+(?:-[A-Za-z]+[ \t]+)*(?:(?:userid|target)=)?["']?[A-Za-z0-9_$#]{1,64}\/([^\s@"'/]{1,128})(?=@|\s|["']|$)/dg,
    group: 1,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "password",
    about: "Samba clients (smbclient/rpcclient/smbmap -U user%password)",
    hint: /%/,
    pattern:
      /(?<![\w./\\-])(?:smbclient|rpcclient|smbget|smbcacls|net)[ \t](?:[^\n;|&]{0,300}?[ \t])?(?:-U|--user(?:name)?=?)[ \t]*["']?[^\s%"']{1,128}%([^\s"']{1,256})/dg,
    group: 1,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "password",
    about: "RabbitMQ users set on the command line (rabbitmqctl add_user/change_password NAME PASSWORD)",
    hint: /rabbitmqctl/,
    pattern: new RegExp(
      String.raw`(?<![\w./\-])rabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+(?:${QUOTED}|[^\s"';|&]{1,128})[ \t]+(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    kind: "password",
    about: "Command-line flags that carry a secret (--password x, --token=x, -storepass x, --api-key x); the kind follows the flag name",
    pattern: new RegExp(String.raw`(?<![\w\-])--?([A-Za-z][A-Za-z0-9\-_]{1,40})(?:=|[ \t]+)(${QUOTED}|(?![-=])${BARE})`, "dg"),
    group: 2,
    accept: (s, m, text) =>
      !optionValueIsDocumentation(s, m, text) &&
      !optionActsOnSecret(m[1]!, s) &&
      !optionValueHoldsNoSecret(m[1]!, s) &&
      secretNamedBy(1)(s, m),
  },
  {
    kind: "password",
    about:
      "Secret-named KEY=VALUE pairs given as an option's value or as a JVM/Gradle property (--from-literal=DB_PASSWORD=…, --env=API_TOKEN=…, -Djavax.net.ssl.keyStorePassword=…, -Psigning.password=…); the kind follows the name",
    hint: /=/,
    pattern: new RegExp(String.raw`(?<![\w\-])(?:--?[A-Za-z][A-Za-z0-9\-_]{0,40}=|-[DP])${NAME_HINT}(${NAME})=(${QUOTED}|${BARE})`, "dg"),
    group: 2,
    accept: secretNamedBy(1),
  },
  {
    kind: "password",
    about:
      "Secret-named settings given as NAME VALUE: Windows `setx NAME VALUE`, csh's and launchctl's `setenv NAME VALUE`, `npm|yarn|pnpm|pip … config set NAME VALUE`; the kind follows the name",
    hint: /setx|setenv|config/i,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])(?:[Ss][Ee][Tt][Xx]|setenv|config[ \t]+set)[ \t]+(?:[-/][A-Za-z][\w\-]*[ \t]+)*(["']?)${NAME_HINT}(${NAME})\1[ \t]+(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 3,
    accept: secretNamedBy(2),
  },
  {
    kind: "password",
    // Composer's key is the repository's host, dots and all (`composer config -g http-basic.repo.acme.io bob PASS`, session 19).
    about:
      "Poetry and Composer repository credentials (poetry config http-basic.REPO USER PASSWORD, composer config [-g] http-basic.HOST USER PASSWORD)",
    hint: /http-basic/,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])(?:poetry|composer)[ \t]+config[ \t]+(?:(?:-g|--global|--auth)[ \t]+)*http-basic\.[\w.\-]+[ \t]+\S+[ \t]+(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    hint: /send/,
    about:
      "The answer an expect script (or pexpect) sends to a password prompt: `expect \"*assword*\"` then `send \"SECRET\\r\"` on the next line, after `;` or in `{ … }`; `child.expect('Password:')` then `child.sendline('SECRET')`",
    pattern:
      /(?<![\w-])expect[ \t(]+[^\n]{0,120}?(?:[Pp]ass(?:word|phrase|code)|PASS(?:WORD|PHRASE)?|assword|PIN\b)[^\n;{]{0,120}(?:\r?\n[ \t]*(?:\w{1,40}\.)?|[;{][ \t]*)send(?:line)?(?:[ \t]+(?:--?\w{0,20}[ \t]+){0,2}|[ \t]*\([ \t]*)(["'])((?:\\[^rn\n]|[^"'\\\n]){1,256}?)(?:\\[rn])*\1/dg,
    group: 2,
    accept: (s) => !isPlaceholderValue(s) && !/^\[/.test(s),
  },
  {
    kind: "password",
    about:
      "A password or token piped to a tool that reads it from standard input: `echo SECRET | … --password-stdin`, `echo SECRET | sudo -S …`, `echo TOKEN | gh auth login --with-token` (a token), a secret store's or passwd's reader (`echo SECRET | docker secret create NAME -`, `| gh secret set NAME`, `| wrangler secret put NAME`, `| passwd --stdin bob`, `| openssl … -passin stdin`)",
    hint: STDIN_SECRET_HINT,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])echo[ \t]+(?:-[neE]{1,3}[ \t]+)?(${QUOTED}|${BARE})[ \t]*\|(?=[^\n;|&]*(?:--password-stdin|--with-token|(?<![\w.\-])sudo[ \t](?:[^\n;|&]*?[ \t])?-[A-Za-z]*S(?![\w\-])|${STDIN_SECRET_STORES}))`,
      "dg",
    ),
    group: 1,
    accept: (s, m, text) => {
      if (isReferenceValue(s)) return false;
      const rest = text.slice(m.index + m[0].length, lineBounds(text, m.index + m[0].length)[1]);
      return /^[^;|&]*--with-token/.test(rest) ? "token" : "password";
    },
  },
  {
    kind: "password",
    about:
      "A password given to such a tool as a here-string: `sudo -S <<< SECRET`, `… --password-stdin <<< SECRET`, `gh auth login --with-token <<< TOKEN`, `gh secret set NAME <<< SECRET`, `docker secret create NAME - <<< SECRET`",
    hint: /<<</,
    pattern: new RegExp(
      String.raw`(?:--password-stdin|--with-token|(?<![\w.\-])sudo[ \t](?:[^\n;|&<]*?[ \t])?-[A-Za-z]*S(?![\w\-])|${STDIN_SECRET_STORES})[^\n;|&<]*<<<[ \t]*(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 1,
    accept: (s, m) => (isReferenceValue(s) ? false : m[0].includes("--with-token") ? "token" : "password"),
  },
  {
    kind: "token",
    // Session 19: Snyk's API token (a UUID) as `snyk auth`'s argument.
    about: "Snyk's API token given to `snyk auth TOKEN`",
    hint: /snyk/,
    pattern: new RegExp(String.raw`(?<![\w.\-])snyk(?:\.exe)?[ \t]+auth[ \t]+(?!-)(${QUOTED}|${BARE})`, "dg"),
    group: 1,
    accept: (s) => !isReferenceValue(s) && stripQuotes(s).length >= 16,
  },
  {
    kind: "token",
    about: "Registry logins that take the token as their argument (cargo login TOKEN, vault login TOKEN)",
    hint: /login/,
    pattern: new RegExp(String.raw`(?<![\w.\-])(?:cargo|vault)[ \t]+login[ \t]+(?!-)(${QUOTED}|${BARE})`, "dg"),
    group: 1,
    // vault login -method=userpass username=bob: options and assignments, not a token.
    accept: (s) => !isReferenceValue(s) && !s.includes("=") && stripQuotes(s).length >= 16,
  },
  {
    kind: "password",
    about: "Windows `net use \\\\server\\share PASSWORD /user:NAME`: the password before /user",
    hint: /\/user:/i,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])[Nn][Ee][Tt][ \t]+[Uu][Ss][Ee][ \t]+(?:[A-Za-z]:[ \t]+)?\\\\\S+[ \t]+(${QUOTED}|${BARE})(?=[ \t]+/[Uu][Ss][Ee][Rr]:)`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isReferenceValue(s) && s !== "*",
  },
  {
    kind: "password",
    about: "htpasswd in batch mode (-b): the password is the last argument of the command",
    hint: /htpasswd/,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])htpasswd[ \t]+-[A-Za-z]*b[A-Za-z]*[ \t](?:[^\n;|&]*?[ \t])?(${QUOTED}|${BARE})[ \t]*(?=$|\r?\n|[;|&])`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    about: "PowerShell plain-text secure strings (ConvertTo-SecureString 'SECRET' -AsPlainText)",
    hint: /SecureString/i,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])[Cc]onvert[Tt]o-[Ss]ecure[Ss]tring[ \t]+(?:-[Ss]tring[ \t]+)?(${QUOTED}|${BARE})(?=[^\n;|]*-[Aa]s[Pp]lain[Tt]ext)`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "token",
    about: "Azure Functions keys in function URLs (https://APP.azurewebsites.net/api/FN?code=…)",
    hint: /azurewebsites\.net/,
    pattern:
      /https?:\/\/[A-Za-z0-9.-]{1,253}\.azurewebsites\.net\/api\/[^\s?#"'<>]{0,300}\?(?:[^\s#"'<>&]{0,300}&){0,20}code=([A-Za-z0-9_\-=%]{20,200})/dg,
    group: 1,
  },
  {
    kind: "password",
    about:
      "XML elements whose tag names a secret (Maven settings.xml `<password>…</password>`, `<apiKey>…</apiKey>`); the kind follows the tag",
    hint: /<\//,
    pattern: new RegExp(String.raw`<${NAME_HINT}(${NAME})>[ \t]*([^<>\s]{1,512})[ \t]*</\1>`, "dg"),
    group: 2,
    // `<passwordEncoding>base64</passwordEncoding>`, `<token>required</token>`: settings, not secrets.
    accept: (s, m) =>
      !isPathValue(s) && !ALGORITHM_NAMES.test(s) && !YAML_NON_SECRET_WORDS.has(s.toLowerCase()) && kindOfNamedValue(m[1]!, s),
  },
  {
    kind: "password",
    about: "Hadoop/Hive-style XML properties whose name announces a secret (`<name>…ConnectionPassword</name> <value>…</value>`)",
    hint: /<value>/,
    pattern: new RegExp(
      String.raw`<name>[ \t]*${NAME_HINT}(${NAME})[ \t]*</name>\s{0,200}<value>[ \t]*([^<>\s]{1,512})[ \t]*</value>`,
      "dg",
    ),
    group: 2,
    accept: (s, m) => !isPathValue(s) && kindOfNamedValue(m[1]!, s),
  },
  {
    kind: "password",
    about:
      'XML key/value attributes whose key announces a secret: .NET appSettings and NuGet `<add key="ApiKey" value="…"/>`, Ant `<property name="db.password" value="…"/>`',
    hint: /value=/,
    pattern: new RegExp(String.raw`(?<![\w-])(?:key|name)=(["'])${NAME_HINT}(${NAME})\1\s{1,40}value=(["'][^"'\n]{1,512}["'])`, "dg"),
    group: 3,
    accept: (s, m) => !isPathValue(s) && kindOfNamedValue(m[2]!, s),
  },
  {
    kind: "password",
    about: 'Android resource strings whose name announces a secret (`<string name="client_secret">…</string>`)',
    hint: /<string[ \t]/,
    pattern: new RegExp(
      String.raw`<string[ \t]+name=(["'])${NAME_HINT}(${NAME})\1[^<>]{0,200}>[ \t]*([^<>\s]{1,512})[ \t]*</string>`,
      "dg",
    ),
    group: 3,
    accept: (s, m) => !isPathValue(s) && !/^@/.test(s) && kindOfNamedValue(m[2]!, s),
  },
  {
    kind: "password",
    about:
      "A secret-named string and a string value as the first two arguments of a call or items of a tuple (PHP `define('DB_PASSWORD', '…')`, `os.Setenv(\"API_TOKEN\", \"…\")`, `config.set('api_key', '…')`); the kind follows the name",
    hint: /\([ \t]*["']/,
    pattern: new RegExp(String.raw`\([ \t]*(["'])${NAME_HINT}(${NAME})\1[ \t]*,[ \t]*(${QUOTED})[ \t]*[,)]`, "dg"),
    group: 3,
    accept: (s, m) => {
      const v = stripQuotes(s);
      if (/\s/.test(v) || isPathValue(s) || !(bareValueLooksSecret(v) || looksRandom(v))) return false;
      return kindOfNamedValue(m[2]!, s);
    },
  },
  {
    kind: "password",
    about:
      "Assignments to a secret-named key of a map (`os.environ[\"DB_PASSWORD\"] = \"…\"`, `ENV['API_KEY'] = '…'`, `$_ENV['DB_PASS'] = …`, Ruby's `params[:password] = …`); the kind follows the name",
    hint: /["'][ \t]*\][ \t]*=|\[[ \t]*:[A-Za-z]/,
    pattern: new RegExp(
      String.raw`\[[ \t]*(?:(["'])${NAME_HINT}(${NAME})\1|:${NAME_HINT}([A-Za-z][A-Za-z0-9_]{0,60}))[ \t]*\][ \t]*=(?![=~>])[ \t]*(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 4,
    accept: (s, m) => {
      if (!/^["']/.test(s) && !bareValueLooksSecret(s)) return false;
      return kindOfNamedValue(m[2] ?? m[3]!, s);
    },
  },
  {
    kind: "password",
    about: "Dockerfile ENV instructions in the legacy `ENV NAME value` form whose name announces a secret",
    // On a diff line the masked view blanks the `+`, so the instruction starts after blanks only.
    hint: /(?:^|\n)[ \t]*[Ee][Nn][Vv][ \t]/,
    pattern: new RegExp(
      String.raw`(?:^|\n)[ \t]*[Ee][Nn][Vv][ \t]+${NAME_HINT}(${NAME})[ \t]+(?![^\s=]*=)(${QUOTED}|${BARE})[ \t]*(?=\r?\n|$)`,
      "dg",
    ),
    group: 2,
    accept: (s, m) => kindOfNamedValue(m[1]!, s),
  },
  {
    kind: "password",
    about: "Redis AUTH commands (`redis-cli … AUTH [user] PASSWORD`, `127.0.0.1:6379> AUTH PASSWORD`)",
    hint: /AUTH[ \t]/,
    pattern: new RegExp(
      String.raw`(?:(?<![\w.\-])redis-cli(?:\.exe)?[ \t](?:[^\n;|&]{0,300}?[ \t])?|:[0-9]{2,5}(?:\[[0-9]{1,2}\])?>[ \t]*)AUTH[ \t]+(?:[^\s"';|&]{1,64}[ \t]+)?(${QUOTED}|${BARE})[ \t]*(?=$|\r?\n|[;|&])`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  // --- Session 19 (redact19): command lines and CLI output that hand over a secret by position ----
  {
    kind: "password",
    about: "mysqladmin's password command (`mysqladmin -u root password NEWPASSWORD`)",
    hint: /mysqladmin/,
    pattern: new RegExp(String.raw`(?<![\w.\-])mysqladmin(?:\.exe)?[ \t](?:[^\n;|&]{0,300}?[ \t])?password[ \t]+(${QUOTED}|${BARE})`, "dg"),
    group: 1,
    // A word of prose after it (`mysqladmin password to change it`) is no password.
    accept: (s) => !isPlaceholderValue(s) && (/^["']/.test(s) || bareValueLooksSecret(s)),
  },
  {
    kind: "password",
    about: "lftp's user and password (`lftp -u bob,PASSWORD host`, `open -u bob,PASSWORD host` in its commands)",
    hint: /lftp/,
    pattern: /(?<![\w.-])lftp(?:\.exe)?[ \t](?:[^\n;|&]{0,300}?[ \t])?-u[ \t]+["']?[^\s,"']{1,128},([^\s"']{1,256})/dg,
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    about: "FreeRDP's password option (`xfreerdp /u:bob /p:PASSWORD /v:host`)",
    hint: /freerdp/i,
    pattern:
      /(?<![\w.-])(?:[xw]freerdp|sdl-freerdp|sdl3-freerdp|freerdp)(?:\.exe)?[ \t](?:[^\n;|&]{0,300}?[ \t])?[/-]p(?:assword)?:((?:"[^"\n]{1,256}"|'[^'\n]{1,256}'|[^\s"']{1,256}))/dg,
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    about: "Windows `net use` with a password (`net use Z: \\\\srv\\share PASSWORD /user:bob`, or after /user:)",
    hint: /[Nn][Ee][Tt][ \t]+[Uu][Ss][Ee]/,
    pattern:
      /(?<![\w.-])[Nn][Ee][Tt](?:\.exe)?[ \t]+[Uu][Ss][Ee][ \t]+(?:(?:[A-Za-z]:|\*)[ \t]+)?\\\\[^\s]{1,256}[ \t]+(?:\/[Uu][Ss][Ee][Rr]:[^\s]{1,128}[ \t]+)?("[^"\n]{1,256}"|[^\s/*"][^\s]{0,255})/dg,
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    about: "net-snmp's SNMPv3 pass phrases (`snmpwalk -v3 -u bob -A AUTHPASS -X PRIVPASS host`)",
    hint: /snmp/,
    pattern: new RegExp(
      String.raw`(?<![\w.\-])snmp(?:walk|bulkwalk|get|getnext|bulkget|set|table|trap|inform|df|status|netstat|delta|usm|vacm)(?:\.exe)?[ \t](?:[^\n;|&]{0,300}?[ \t])?-[AX][ \t]+(?![\s\-])(${QUOTED}|${BARE})`,
      "dg",
    ),
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "token",
    // Vault AppRole's secret_id, Consul's SecretID and Nomad's Secret ID are the credential (a UUID)
    // beside a public accessor; `vault write …/secret-id` and `consul acl bootstrap` print them as a
    // table. Only a UUID: AWS's `--secret-id prod/db` names a stored secret (session 19).
    about:
      "HashiCorp secret ids (Vault AppRole `secret_id`, Consul `SecretID`, Nomad `Secret ID`) given as a UUID, as an assignment, an option or a CLI table row",
    hint: /[Ss][Ee][Cc][Rr][Ee][Tt][ _.-]?[Ii][Dd]/,
    pattern:
      /(?<![A-Za-z0-9])(?:[Ss]ecret|SECRET)(?:[ _.-]?(?:[Ii][Dd]|ID))["']?(?:[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+)["']?([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})(?![0-9A-Za-z-])/dg,
    group: 1,
  },
  {
    kind: "password",
    // A secret-named variable read with a default written in: the default is the secret wherever
    // the variable is unset (`${DB_PASSWORD:-…}` in compose or a shell, PowerShell-style
    // `${env:API_TOKEN:-…}`); session 19: `${env:…}` came back.
    about:
      "Defaults of secret-named shell variables (`${DB_PASSWORD:-…}`, `${API_TOKEN:=…}`, `${env:DB_PASSWORD:-…}`); the kind follows the name",
    hint: /\$\{/,
    pattern: new RegExp(String.raw`\$\{(?:env:)?${NAME_HINT}([A-Za-z_][A-Za-z0-9_]{0,60}):?[-=]([^\s"'}$]{1,256})(?=\})`, "dg"),
    group: 2,
    accept: (s, m) => kindOfNamedValue(m[1]!, s),
  },
  {
    kind: "password",
    about:
      "Defaults of secret-named variables in code (`process.env.API_KEY ?? \"…\"`, `getenv('DB_PASS') ?: '…'`, `ENV['TOKEN'] || '…'`); the kind follows the name",
    hint: /\?\?|\?:|\|\|/,
    pattern: new RegExp(
      String.raw`(?<![A-Za-z0-9_\-])${NAME_HINT}([A-Za-z_][A-Za-z0-9_]{0,60})["']?[ \t]*[\])]{0,2}[ \t]*(?:\|\||\?\?|\?:)[ \t]*(${QUOTED})`,
      "dg",
    ),
    group: 2,
    accept: (s, m) => kindOfNamedValue(m[1]!, s),
  },
  {
    kind: "password",
    about: "Wi-Fi pass phrases given to wpa_passphrase (wpa_passphrase SSID PASSPHRASE)",
    hint: /wpa_passphrase/,
    pattern: new RegExp(String.raw`(?<![\w.\-])wpa_passphrase[ \t]+(?:${QUOTED}|[^\s"';|&]{1,64})[ \t]+(${QUOTED}|${BARE})`, "dg"),
    group: 1,
    accept: (s) => !isReferenceValue(s),
  },
  {
    kind: "password",
    // MySQL's `SET PASSWORD [FOR 'bob'@'%'] = '…'` (or `= PASSWORD('…')`, before 5.7) puts `=` between (session 19).
    about: "SQL passwords (IDENTIFIED BY '…', PASSWORD '…', SET PASSWORD [FOR user] = '…')",
    hint: /identified|password/i,
    pattern:
      /(?<![A-Za-z0-9_])(?:(?:IDENTIFIED(?:[ \t]+WITH[ \t]+[A-Za-z0-9_]{1,40})?[ \t]+BY|PASSWORD)[ \t]+|SET[ \t]+PASSWORD(?:[ \t]+FOR[ \t]+[^\s=;]{1,200})?[ \t]*=(?:[ \t]*PASSWORD[ \t]*\()?[ \t]*)('[^'\n]{1,256}'|"[^"\n]{1,256}")/dgi,
    group: 1,
    accept: (s, m, text) => !isPlaceholderValue(s) && !identifiedByInProse(m, text),
  },
  {
    kind: "password",
    about:
      'Assignments whose name announces a secret, in env files, shell, YAML, JSON and code (DB_PASSWORD=…, "api_key": "…", token: …); the kind (password, secret, token, api_key) follows the name. Names of keys, signatures, cookies, sessions, salts, nonces (key=…, sig=…) give high_entropy_secret when the value looks random (≥ 16 chars, letters and digits, entropy ≥ 3.5 bits/char)',
    hint: /[:=]/,
    pattern: new RegExp(
      // After `$env:` (PowerShell's environment drive) the name starts, though a colon precedes it.
      // A YAML anchor (`password: &db_pw VALUE`) names the value for later aliases; the value follows it.
      // A removed diff line's `-` may stand just before a quoted name (`-"password": "…"`): the view with
      // line leads blanked loses the name's opening quote with it (session 16).
      String.raw`(?:(?<![A-Za-z0-9_.\-:=<])|(?<=\$[Ee][Nn][Vv]:)|(?<=(?:^|[\r\n])-))((?:\\\\){0,3}\\?["']|)${NAME_HINT}(${NAME})\1([ \t]*(?::=|=>|[:=])[ \t]*)(?:(?<=:[ \t]{1,8})&[A-Za-z0-9_.\-]{1,64}[ \t]+)?(${ESCAPED_QUOTED}|${ESCAPED_QUOTED_CUT}|${QUOTED}|${QUOTED_CUT}|${BARE})`,
      "dg",
    ),
    group: 4,
    accept: (s, m, text) => {
      const kind = secretKindOfName(m[2]!);
      if (isPlaceholderValue(s)) return false;
      // tests/test_auth.py::test_x and std::x are scopes, auth.js:12 a file location: no assignment.
      if (m[3]!.trim() === ":" && s.startsWith(":")) return false;
      // `expect "Password:"; send "…"`: the name ends a quoted string, and the "value" opens with its closing quote.
      const before = text[m.index - 1];
      if (m[1] === "" && m[3] === ":" && (before === '"' || before === "'") && s.startsWith(before)) return false;
      // A YAML alias (`password: *db_pw`) refers to an anchored value; it holds none.
      if (m[3]!.trim() === ":" && /^\*[A-Za-z0-9_.-]{1,64}$/.test(s)) return false;
      // A Python string prefix (`password=b'…'`, `r"…"`): the string after it is the value, which the
      // rule for prefixed literals reads; cutting the prefix alone left the string (session 19).
      if (/^(?:[bBrRuUfF]|[bBfF][rR]|[rR][bBfF])$/.test(s) && /["']/.test(text[m.index + m[0].length] ?? "")) return false;
      // A shell expansion (`${DB_PASSWORD:-…}`, `${TOKEN:?unset}`): its default is read by the rule for
      // defaults, which keeps the braces; a reference (`${DB_PASSWORD:-$FALLBACK}`) is none (session 19).
      if (m[3] === ":" && text.slice(m.index - 2, m.index) === "${" && /^[-=?+]/.test(s)) return false;
      const ext = /\.([A-Za-z0-9]{1,6})$/.exec(m[2]!)?.[1];
      if (ext !== undefined && FILE_EXTENSION_TLDS.has(ext.toLowerCase())) return false;
      // A license expression (`SPDX-License-Identifier: LGPL-2.1-or-later`) heads source files everywhere.
      if (/^spdx-license-identifier$/i.test(m[2]!)) return false;
      const v = stripQuotes(s);
      // A dependency's version range under a package's name (`"token-types": "^6.0.0"` in a lockfile).
      if (isVersionRange(v)) return false;
      if (kind === null) {
        // Keys, signatures, cookies, sessions, salts: secret only when the value looks random.
        const entropyName = nameSegments(m[2]!).some((seg) => ENTROPY_NAME_SEGMENTS.has(seg));
        return entropyName &&
          /^[A-Za-z0-9+/=_\-.~%]{16,512}$/.test(v) &&
          looksRandom(v) &&
          !publicDerBase64(v) &&
          !publicOrCacheKey(m[2]!, v, lineBefore(text, m.index))
          ? "high_entropy_secret"
          : false;
      }
      if (v.toLowerCase() === m[2]!.toLowerCase()) return false; // f(token=token)
      if (!quoted0(s) && isSecretMetavariable(v)) return false; // gcloud's --oracle-password=ORACLE_PASSWORD
      if (!quoted0(s) && /^[A-Z]{2,20}$/.test(v) && nameSegments(m[2]!).at(-1) === v.toLowerCase()) return false; // --encryption-key=KEY
      if (/^pwd$/i.test(m[2]!) && /^(\/|~|[A-Za-z]:\\)/.test(v)) return false; // the shell's working directory
      if (/^\d{1,5}$/.test(v)) return false; // max_token=100, port-like numbers
      const quoted = /^(?:\\\\){0,3}\\?["']/.test(s);
      const after = text[m.index + m[0].length];
      if (!quoted && (after === "(" || after === "[")) return false; // a call or an index: code
      const envStyle = m[3] === "=" && !quoted; // NAME=value with no spaces: env files, CLI
      if (!quoted && CHANGELOG_WORDS.has(v.toLowerCase().replace(/\.$/, ""))) return false;
      // A name that says only `auth` names a method or a switch when its value is a plain word
      // (`jdk.http.ntlm.transparentAuth=disabled`, `jdk.http.auth.tunneling.disabledSchemes=Basic` in
      // the JDK's net.properties; `auth: none`); a token has digits or symbols.
      if (
        kind === "token" &&
        /^[A-Za-z]{1,16}$/.test(v) &&
        !nameSegments(m[2]!).some((seg) => seg.endsWith("token") || seg === "authtoken")
      )
        return false;
      // /etc/nsswitch.conf: `passwd:         files systemd` names where user accounts are looked up.
      if (!quoted && /^(?:passwd|shadow|gshadow)$/.test(m[2]!) && NSS_SOURCES.has(v)) return false;
      const yamlSecret = !quoted && isYamlEntry(m, text) && !YAML_NON_SECRET_WORDS.has(v.toLowerCase()) && !ALGORITHM_NAMES.test(v);
      if (!quoted && !envStyle && !yamlSecret && !bareValueLooksSecret(v)) return false;
      if (!quoted && /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(v)) return false;
      return kind;
    },
  },
  {
    kind: "high_entropy_secret",
    about:
      "Random-looking values of UPPER_CASE environment variables (export FOO=…) — ≥ 20 chars, upper, lower and digits, entropy ≥ 4 bits/char",
    hint: /[A-Z]=/,
    pattern: /(?<![A-Za-z0-9_])(?:export[ \t]+)?[A-Z][A-Z0-9_]{2,60}=(["']?)([A-Za-z0-9+/=_\-.~]{20,1024})\1(?![A-Za-z0-9+/=_\-.~])/dg,
    group: 2,
    accept: (s) => !/^[/.~]/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s) && entropy(s) >= 4, // paths are not secrets
  },
  {
    kind: "secret",
    hint: /key|token|secret|pass/i,
    about:
      "A random-looking value a phrase names as a secret without an assignment (`api key 3f9a…` (32+ hex), `the token is Qx7b…`, a CLI's prompt answered: `? What's the value of API_TOKEN? Qx7b…`): ≥ 20 characters, hex with letters and digits or upper, lower and digits at ≥ 3.8 bits/char; the kind follows the name",
    pattern:
      /(?<![A-Za-z0-9_])((?:api|access|secret|private|client)[ _-]?key|(?:access|auth|api|bearer|session|refresh|personal[ _-]access)[ _-]?token|token|client[ _-]?secret|secret|password|passphrase)(?:[ \t]+(?:is|was|of|value|set[ \t]+to|to|=|:))?[ \t]*[:=?]?[ \t]+["'`]?([A-Za-z0-9+/=_.~-]{20,256})(?![A-Za-z0-9+/=_.~-])/dgi,
    group: 2,
    accept: (s, m) => {
      const v = s.replace(/=+$/, "");
      if (KEY_MATERIAL_BASE64.test(v)) return false;
      if (isPlaceholderValue(v) || /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(v) || /^[./~]/.test(v)) return false;
      const hex = /^[0-9a-fA-F]{32,}$/.test(v) && /[0-9]/.test(v) && /[a-fA-F]/.test(v);
      const mixed = /[A-Z]/.test(v) && /[a-z]/.test(v) && /[0-9]/.test(v) && entropy(v) >= 3.8;
      if (!hex && !mixed) return false;
      const name = m[1]!.toLowerCase();
      // The 40-character shape of an AWS secret access key ("the secret is wJalr…") keeps its kind.
      if (/^[A-Za-z0-9/+]{40}$/.test(s) && looksLikeAwsSecret(s)) return "aws_secret_key";
      if (/pass/.test(name)) return "password";
      if (/token/.test(name)) return "token";
      if (/^api[ _-]?key$/.test(name)) return "api_key";
      return "secret";
    },
  },
  {
    kind: "high_entropy_secret",
    // Starts only where a run starts: a third cheaper than trying every position inside long runs.
    hint: /(?<![\w+/-])[\w+/-]{32}/,
    about:
      "A bare random value no name announces (an AWS secret key or a base64 key alone on a line, in a string literal or a call): 32–100 base64 or base64url characters with ≥ 2 upper, lower and digits, ≥ 4.2 bits/char, changing case or class often; not after a hash's or an id's name (sha…, integrity, digest, checksum, h1:, ETag, nonce, HostId, x-amz-id-2, ssh-ed25519, pubkey, code_challenge), not a line of a base64 block, not base64 of text, not hex (git SHAs, content hashes, digests stay)",
    pattern: /(?<![A-Za-z0-9+/=_.:@$%~\\&?#,-])[A-Za-z0-9+/_-]{32,100}={0,2}(?![A-Za-z0-9+/=_.:@$%~\\-]|\.[A-Za-z0-9])/dg,
    group: 0,
    accept: (s, m, text) => bareValueIsSecret(s, m.index, text),
  },
  {
    kind: "password",
    hint: /value:/,
    about:
      "Kubernetes-style name/value pairs whose name announces a secret (`- name: DB_PASSWORD` then `value: …` on the next line); the kind follows the name",
    pattern: new RegExp(
      String.raw`(?:^|\n)[ \t]*(?:-[ \t]+)?name:[ \t]*(["']?)(${NAME})\1[ \t]*\r?\n[ \t]*value:[ \t]*(${QUOTED}(?=[ \t]*(?:\r?\n|$))|${BARE_CUT}|${BARE}(?=[ \t]*(?:\r?\n|$)))`,
      "dg",
    ),
    group: 3,
    accept: secretNamedBy(2),
  },
  {
    kind: "password",
    hint: /:[ \t]*(?:[|>][-+]?[0-9]?[ \t]*)?\r?\n/,
    about:
      "YAML entries whose key announces a secret and whose value, one word or a quoted string, is on the next, more indented line (`password: >-` or `api_token:` then the value)",
    pattern: new RegExp(
      String.raw`(?:^|\n)([ \t]*)(?:-[ \t]+)?(["']?)(${NAME})\2:[ \t]*(?:[|>][-+]?[0-9]?[ \t]*)?\r?\n\1[ \t]+(${QUOTED}(?=[ \t]*(?:\r?\n|$))|${BARE_CUT}|[^\s#"'][^\s]{0,511}(?=[ \t]*(?:\r?\n|$)))`,
      "dg",
    ),
    group: 4,
    accept: (s, m) => {
      const kind = secretKindOfName(m[3]!);
      if (kind === null || isPlaceholderValue(s)) return false;
      const v = stripQuotes(s.trim());
      // A nested mapping or list (valueFrom: / secretKeyRef:, - item) is structure, not a value.
      if (/^[\w.-]+:(?:[ \t]|$)/.test(v) || /^-(?:[ \t]|$)/.test(v) || /^[{[]/.test(v)) return false;
      if (YAML_NON_SECRET_WORDS.has(v.toLowerCase()) || ALGORITHM_NAMES.test(v)) return false;
      return kind;
    },
  },
  {
    kind: "password_hash",
    hint: /\$(?:1|2[abxy]|5|6|y|apr1|argon2(?:id|i|d))\$/,
    about: "crypt(3)/bcrypt/Apache/Argon2 password hashes ($1$, $2b$, $5$, $6$, $y$, $apr1$, $argon2id$)",
    pattern: /(?<![A-Za-z0-9$])\$(?:1|2[abxy]|5|6|y|apr1|argon2(?:id|i|d))\$[./A-Za-z0-9$=,+]{20,200}/dg,
    group: 0,
  },
  // --- Personal data ------------------------------------------------------------------------
  {
    kind: "email",
    hint: /@/,
    about:
      "E-mail addresses (not git@host SSH remotes, documentation domains, file names like icon@2x.png, or a variable's name before @: $USER@host)",
    // After `$` or `${` the "local part" is a variable's name (`https://x:$GITHUB_TOKEN@github.com`,
    // `$USER@host`): the shell puts the value there, and a literal token there is the URL rule's.
    pattern:
      /(?<![A-Za-z0-9._%+$-]|\$\{)([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@([A-Za-z0-9][A-Za-z0-9.-]{0,252}[A-Za-z0-9])(?![A-Za-z0-9-])/dg,
    group: 0,
    accept: (_s, m) => {
      const local = m[1]!;
      const domain = m[2]!;
      if (EMAIL_KEEP_LOCAL.has(local.toLowerCase())) return false;
      const labels = domain.split(".");
      if (labels.length < 2 || labels.some((l) => l === "")) return false;
      const tld = labels[labels.length - 1]!;
      if (!/^[A-Za-z]{2,24}$/.test(tld) || FILE_EXTENSION_TLDS.has(tld.toLowerCase())) return false;
      return !EMAIL_KEEP_DOMAINS.test(domain);
    },
  },
  {
    kind: "user",
    hint: /Users|home/,
    about:
      "User names inside home paths (/home/alice, /Users/bob, C:\\Users\\carol, also glued to an option: -I/home/alice/include); the path shape is kept",
    pattern:
      /(?:(?<![A-Za-z0-9_.-])|(?<=(?:^|[\s'"=,;(])-[A-Za-z]{1,12}))(?:\/home\/|\/Users\/|[A-Za-z]:(?:\\\\|\\|\/)Users(?:\\\\|\\|\/))([A-Za-z0-9_][^\s/\\:*?"<>|'`$%(){}[\],;]{0,63}(?: [^\s/\\:*?"<>|'`$%(){}[\],;]{1,32}(?=\\))?)/dg,
    group: 1,
    accept: (s) => !GENERIC_USERS.has(s.toLowerCase()),
  },
  {
    kind: "host",
    hint: /:\/\//,
    about: "Internal host names in URLs (.internal, .local, .lan, .corp, .intranet, .svc.cluster.local, or a corp/internal label)",
    pattern:
      /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,15}:\/\/(?:[^\s/@"']{1,256}@)?([A-Za-z0-9](?:[A-Za-z0-9\-.]{0,251}[A-Za-z0-9])?)/dg,
    group: 1,
    accept: (s) => isInternalHost(s),
  },
  {
    kind: "ip_address",
    about:
      "IPv4 addresses except loopback, 0.0.0.0, documentation ranges, netmasks, link-local and public DNS resolvers; not version numbers",
    hint: /\d\.\d/,
    pattern:
      /(?:(?<![A-Za-z0-9_.-])|(?<=(?:^|[\s'"=,;(])-[A-Za-z]{1,12}))((?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})(?![0-9]|\.[0-9]|[A-Za-z_-])/dg,
    group: 1,
    accept: (s, m, text) => {
      if (isHarmlessIPv4(s)) return false;
      const before = text.slice(Math.max(0, m.index - 16), m.index).toLowerCase();
      // `version 1.2.3.4`, `ver: …`, `v 1.2.3.4`; a word ending in `ver` is no version's name
      // (`server 10.0.0.5`, `nameserver`, `resolver`, `driver` kept the address before session 16).
      if (/version|\bver[ =:]|(?:^|[^A-Za-z])v[ =:]?$/.test(before)) return false;
      return !inVersionContext(text, m.index, m.index + m[0].length);
    },
  },
  {
    kind: "ip_address",
    about: "IPv6 addresses except ::1, :: and 2001:db8::/32",
    hint: /[0-9A-Fa-f]?::?[0-9A-Fa-f]/,
    pattern: /(?<![A-Za-z0-9_:.])((?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4})(?![A-Za-z0-9_:])/dg,
    group: 1,
    accept: (s) => isSensitiveIPv6(s),
  },
];

// Rejection verdicts for the enrichment worker: content redaction cannot make safe
// (sensitive_content), text aimed at the reading agent (prompt_injection), and trails too thin to
// help (low_quality). Runs on the already-redacted trail. Pure: no I/O.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.
import type { Trail } from "./trail.ts";
import { detectInjection } from "./injection.ts";
import { removeInvisible } from "./screening-text.ts";
import { LOW_QUALITY_THRESHOLD } from "./quality.ts";
import { type ReadRun, readingRuns, readingText } from "./reading-order.ts";

export type RejectionReason = "sensitive_content" | "prompt_injection" | "low_quality";
export const REJECTION_REASONS: readonly RejectionReason[] = ["sensitive_content", "prompt_injection", "low_quality"];

export interface RejectionDetail {
  reason: RejectionReason;
  /** JSON pointer of the field, e.g. /solution/code_patches/0/diff; "/" for the whole trail. */
  path: string;
  detail: string;
}

/** Kinds that are secrets (as opposed to personal data such as e-mail, user, host, IP). */
const SECRET_PLACEHOLDER = /<redacted:(?!email>|user>|host>|ip_address>)[a-z0-9_]+>/g;

/** One string holding this many secrets is a dump (.env, credentials file), not a fix. */
export const SECRETS_PER_FIELD_LIMIT = 3;
/** The whole trail holding this many secrets is refused too. */
export const SECRETS_PER_TRAIL_LIMIT = 6;

// Key material that redaction did not recognise (a mangled header, a bare base64 body, PuTTY).
const LEFTOVER_KEY: { re: RegExp; detail: string }[] = [
  { re: /PRIVATE KEY(?: BLOCK)?-----|-----BEGIN [A-Z ]{0,30}PRIVATE/, detail: "private key material is left after redaction" },
  { re: /PuTTY-User-Key-File-\d|Private-Lines:\s*\d/, detail: "a PuTTY private key file" },
  { re: /\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,}/, detail: "an OpenSSH private key body (base64)" },
  {
    re: /\bMII[A-Za-z0-9+/]{3}(?:IBADANBgkqhkiG9w0BAQEFAAS|IBAAKC)[A-Za-z0-9+/=]{20,}/,
    detail: "an RSA/PKCS#8 private key body (base64 DER)",
  },
  { re: /\bMHcCAQEEI[A-Za-z0-9+/=]{40,}/, detail: "an EC private key body (base64 DER)" },
];

/** A base64 blob that decodes to a PEM private key (kubeconfig client-key-data, k8s secrets). */
function base64PrivateKey(t: string): boolean {
  const re = /LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}/g;
  let m: RegExpExecArray | null;
  for (let n = 0; n < 16 && (m = re.exec(t)) !== null; n++) {
    const head = m[0].slice(0, 96);
    try {
      if (atob(head.slice(0, head.length - (head.length % 4))).includes("PRIVATE KEY")) return true;
    } catch {
      /* not base64 after all */
    }
  }
  return false;
}

/**
 * The text as a reader copies it: without invisible characters (a zero-width space inside a key
 * body or its `PRIVATE KEY` header hid it from these checks, session 13 audit).
 */
const visibleText = (text: string) => (/[^\x00-\x7f]/.test(text) ? removeInvisible(text) : text);

/**
 * Key material redaction does not recognise is left in one text (a bare base64 key body, a PuTTY
 * key, a base64 PEM key): what the first pass cuts from a trail, and what an outcome report's
 * notes lose (outcome-notes.ts).
 */
export function keyMaterialLeft(text: string): boolean {
  const t = visibleText(text.length > 70000 ? text.slice(0, 70000) : text);
  return LEFTOVER_KEY.some((k) => k.re.test(t)) || base64PrivateKey(t);
}

// Whole credential files pasted as text.
const CREDENTIAL_FILES: { re: RegExp; detail: string }[] = [
  {
    // Not a name that is itself an option's value: gcloud's synopsis names both as metavariables
    // (`--aws-access-key-id=AWS_ACCESS_KEY_ID … --aws-secret-access-key=AWS_SECRET_ACCESS_KEY`).
    re: /(?<!=)aws_secret_access_key[\s\S]{0,400}(?<!=)aws_access_key_id|(?<!=)aws_access_key_id[\s\S]{0,400}(?<!=)aws_secret_access_key/i,
    detail: "an AWS credentials file",
  },
  { re: /\bmachine\s+\S+\s+login\s+\S+\s+password\s+\S+/, detail: "a .netrc credentials file" },
  { re: /"auths"\s*:\s*\{[\s\S]{0,400}"auth"\s*:\s*"[^"]+"/, detail: "a Docker registry credentials file (config.json)" },
  {
    re: /\bclient-(?:key|certificate)-data\s*:\s*\S{20,}|\busers:\s*\n[\s\S]{0,400}\btoken:\s*\S{20,}/,
    detail: "a kubeconfig with credentials",
  },
  {
    re: /(?:^|\n)[a-z_][\w-]{0,31}:(?:\$(?:1|2[abxy]|5|6|y)\$|<redacted:password_hash>)[^\n]{0,200}\n[a-z_][\w-]{0,31}:(?:\$(?:1|2[abxy]|5|6|y)\$|<redacted:password_hash>)/,
    detail: "an /etc/shadow dump",
  },
];

const CREDENTIAL_PATH =
  /(^|[/\\])(\.env(\.[\w-]+)?|\.aws[/\\]credentials|\.netrc|_netrc|\.pgpass|\.git-credentials|\.npmrc|\.pypirc|\.yarnrc(\.yml)?|credentials(\.json|\.ya?ml|\.toml)?|secrets?\.(ya?ml|json|toml|env)|\.docker[/\\]config\.json|kubeconfig|\.kube[/\\]config|[^/\\]*\.pem)$/i;
const KEY_FILE_PATH = /(^|[/\\])(id_(rsa|dsa|ecdsa|ed25519)|[^/\\]*\.(key|p12|pfx|jks|keystore|ppk))$/i;

function* strings(value: unknown, path: string): Generator<{ path: string; text: string }> {
  if (typeof value === "string") yield { path: path || "/", text: value };
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* strings(value[i], `${path}/${i}`);
  else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value)) yield* strings(v, `${path}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`);
}

function addedText(diff: string): string {
  const lines = diff.split("\n");
  if (!lines.some((l) => /^(@@|\+\+\+ |--- |[+-])/.test(l))) return diff;
  return lines
    .filter((l) => l.startsWith("+") && !l.startsWith("+++ "))
    .map((l) => l.slice(1))
    .join("\n");
}

/** Why the (redacted) trail holds content that must not be published. */
export function sensitiveFindings(trail: Trail): RejectionDetail[] {
  const out: RejectionDetail[] = [];
  let total = 0;
  const add = (path: string, detail: string) => out.push({ reason: "sensitive_content", path, detail });
  for (const { path, text } of strings(trail, "")) {
    const t = visibleText(text.length > 70000 ? text.slice(0, 70000) : text);
    const secrets = t.match(SECRET_PLACEHOLDER)?.length ?? 0;
    total += secrets;
    if (secrets >= SECRETS_PER_FIELD_LIMIT) add(path, `${secrets} secrets in one field (a .env or credentials dump)`);
    for (const k of LEFTOVER_KEY) if (k.re.test(t)) add(path, k.detail);
    if (base64PrivateKey(t)) add(path, "a base64-encoded private key (e.g. kubeconfig client-key-data)");
    for (const c of CREDENTIAL_FILES) if (c.re.test(t)) add(path, c.detail);
    if (t.includes(CUT_PLACEHOLDER))
      add(path, "content redaction could not make safe was cut from this field when the trail was submitted");
  }
  const patches = Array.isArray(trail.solution?.code_patches) ? trail.solution.code_patches : [];
  patches.forEach((p, i) => {
    if (!p || typeof p.file_path !== "string") return;
    const added = typeof p.diff === "string" ? addedText(p.diff) : "";
    const secrets = added.match(SECRET_PLACEHOLDER)?.length ?? 0;
    if (KEY_FILE_PATH.test(p.file_path) && added.trim().length > 0) {
      add(`/solution/code_patches/${i}`, `a patch writes the key file ${p.file_path}`);
    } else if (CREDENTIAL_PATH.test(p.file_path) && (secrets >= 2 || /<redacted:private_key>/.test(added))) {
      add(`/solution/code_patches/${i}`, `a patch writes ${secrets} secrets into the credentials file ${p.file_path}`);
    }
  });
  if (total >= SECRETS_PER_TRAIL_LIMIT && !out.some((d) => /secrets in one field/.test(d.detail))) {
    add("/", `${total} secrets across the trail`);
  }
  return out;
}

/**
 * Every string of the trail that addresses the reading agent, and every instruction split across
 * adjacent fields that a reader meets as one text (reading-order.ts: the trail's JSON as served,
 * the schema's order, colony_search's view).
 */
export function injectionFindings(trail: Trail): RejectionDetail[] {
  const out: RejectionDetail[] = [];
  const all = [...strings(trail, "")];
  const runs = readingRuns(trail);
  // One pass over all fields (blank lines keep them apart) and one over the runs a reader reads
  // find the usual clean trail fast; only then is each field checked, to name where the injection
  // sits, and then each run, for one no field holds alone.
  const apart = detectInjection(all.map((s) => s.text).join("\n\n")).length > 0;
  const together = detectInjection(runs.map((r) => readingText(r.fields)).join("\n\n"), ACROSS).length > 0;
  if (!apart && !together) return out;
  for (const { path, text } of all) {
    for (const f of detectInjection(text)) out.push({ reason: "prompt_injection", path, detail: `${f.kind}: ${f.detail}` });
  }
  if (out.length > 0 || !together) return out;
  for (const run of runs) {
    const found = splitInjection(run);
    if (found.length > 0) return found;
  }
  return out;
}

/** Adjacent fields are read as such: each was screened alone already (injection.ts). */
const ACROSS = { acrossFields: true } as const;

/** A run longer than this is not searched for the fields that hold its injection (the cost of naming them). */
const MAX_LOCATED_CHARS = 65536;

/**
 * Where an injection no single field holds sits in a run of adjacent fields: the shortest stretch
 * found by two binary searches (the first end that holds it, then the last start), named by its
 * first field (the detail lists them all); the whole trail ("/") when the run is too long to search
 * or the search does not settle; none when the run does not hold it.
 */
function splitInjection(run: ReadRun): RejectionDetail[] {
  const { fields } = run;
  const whole = detectInjection(readingText(fields), ACROSS);
  if (whole.length === 0) return [];
  const fires = (from: number, to: number) => detectInjection(readingText(fields.slice(from, to)), ACROSS).length > 0;
  if (readingText(fields).length <= MAX_LOCATED_CHARS) {
    let lo = 1;
    let hi = fields.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (fires(0, mid)) hi = mid;
      else lo = mid + 1;
    }
    const to = lo;
    lo = 0;
    hi = to - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (fires(mid, to)) lo = mid;
      else hi = mid - 1;
    }
    const stretch = fields.slice(lo, to);
    const found = detectInjection(readingText(stretch), ACROSS);
    if (found.length > 0) {
      const across = `split across ${stretch.map((f) => f.path).join(", ")}, read ${run.reading}`;
      return found.map((f) => ({ reason: "prompt_injection", path: stretch[0]!.path, detail: `${f.kind}: ${f.detail} (${across})` }));
    }
  }
  return whole.map((f) => ({
    reason: "prompt_injection",
    path: "/",
    detail: `${f.kind}: ${f.detail} (split across the trail's fields, read ${run.reading})`,
  }));
}

/** Reasons with the fields and details behind them, for logs and operators. */
export function explainRejection(trail: Trail, quality: number): RejectionDetail[] {
  const details = [...sensitiveFindings(trail), ...injectionFindings(trail)];
  if (!(quality >= LOW_QUALITY_THRESHOLD)) {
    details.push({ reason: "low_quality", path: "/", detail: `quality ${quality} is below ${LOW_QUALITY_THRESHOLD}` });
  }
  return details;
}

/**
 * The trail with every field a sensitive_content finding names replaced by a secret placeholder
 * (a patch: its diff), as it is kept once rejected: the finding is what redaction could not make
 * safe, so the rejected trail must not hold it either. A finding about the whole trail ("/": many
 * secrets, already placeholders) changes nothing. Returns a fresh value.
 */
export function withoutSensitiveFields(trail: Trail, details: readonly RejectionDetail[]): Trail {
  return replaceFields(trail, details, SENSITIVE_PLACEHOLDER).trail;
}

function replaceFields(trail: Trail, details: readonly RejectionDetail[], placeholder: string): { trail: Trail; replaced: number } {
  const out = structuredClone(trail) as unknown as Record<string, unknown>;
  let replaced = 0;
  for (const d of details) {
    if (d.reason !== "sensitive_content" || d.path === "/") continue;
    const keys = d.path
      .split("/")
      .slice(1)
      .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = keys.pop()!;
    let parent: any = out;
    for (const k of keys) parent = parent !== null && typeof parent === "object" && Object.hasOwn(parent, k) ? parent[k] : undefined;
    if (parent === null || typeof parent !== "object" || !Object.hasOwn(parent, last)) continue;
    const target = parent[last];
    if (typeof target === "string") {
      if (target !== placeholder) replaced++;
      parent[last] = placeholder;
    } else if (target !== null && typeof target === "object" && typeof target.diff === "string") {
      if (target.diff !== placeholder) replaced++;
      target.diff = placeholder;
    }
  }
  return { trail: out as unknown as Trail, replaced };
}

/** What a field refused as sensitive_content holds once the trail is rejected. */
export const SENSITIVE_PLACEHOLDER = "<redacted:secret>";

/**
 * What a field sensitive_content flags holds from the first pass on (prepare.ts), before the trail
 * is stored, shown in a draft or sent by the MCP tool: enrichment refuses a trail that holds it, as
 * it would have refused the field.
 */
export const CUT_PLACEHOLDER = "<redacted:sensitive_content>";

/**
 * The first pass's cut: every field sensitive_content flags replaced by CUT_PLACEHOLDER (a patch:
 * its diff), and how many fields that changed. What redaction cannot make safe is then neither
 * stored nor shown while the trail waits for enrichment, which still refuses the trail.
 */
export function cutSensitiveContent(trail: Trail): { trail: Trail; cut: number } {
  const findings = sensitiveFindings(trail);
  if (!findings.some((d) => d.path !== "/")) return { trail, cut: 0 };
  const { trail: out, replaced } = replaceFields(trail, findings, CUT_PLACEHOLDER);
  return { trail: out, cut: replaced };
}

/** [] means accept. Reasons come in a fixed order: sensitive_content, prompt_injection, low_quality. */
export function rejectionReasons(trail: Trail, quality: number): RejectionReason[] {
  return reasonsOf(explainRejection(trail, quality));
}

/** The reasons behind some findings, in the fixed order. */
export function reasonsOf(details: readonly RejectionDetail[]): RejectionReason[] {
  const found = new Set(details.map((d) => d.reason));
  return REJECTION_REASONS.filter((r) => found.has(r));
}

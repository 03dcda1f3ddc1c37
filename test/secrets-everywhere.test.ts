// Secrets never come back out (issue 15 item 3): a seeded set of secrets of every kind the
// redaction rules cover, placed at random positions of every field of a trail (diff lines with
// each prefix included), never appears in any HTTP response, MCP tool output (the SDK client on
// the hosted /mcp), outcome report notes, activity text, draft or approval-page JSON, nor in the
// bytes of the SQLite database and its WAL. Real colony on loopback; bounded, seeded, replayable
// (SEED below).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Trail } from "../src/core/trail";
import { startTestColony, TEST_BACKEND, tempDir, type TestColony } from "./support/colony";
import { callTool, connectHttp } from "./support/mcp";
import { Prng } from "./support/prng";
import { agentAt, json, sampleTrail } from "./support/trails";

const SEED = Number(process.env.COLONY_TEST_SEED ?? 0x5ec2e75);
const TRAILS = 48;
const SECRETS_PER_TRAIL = 4;

// ---- The secrets -------------------------------------------------------------------------------

interface Secret {
  kind: string;
  /** The text placed in a field. */
  text: string;
  /** What must never come back: the secret part (a value, not the name announcing it). */
  needle: string;
  /** Fits a one-line field (no line breaks). */
  oneLine: boolean;
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;

function pick(r: Prng, alphabet: string, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[r.int(0, alphabet.length - 1)];
  return s;
}
/** Random, with at least one upper, lower and digit (what credential detectors expect). */
function mixed(r: Prng, n: number, extra = ""): string {
  const body = pick(r, ALNUM + extra, n - 3);
  return pick(r, UPPER, 1) + body.slice(0, 4) + pick(r, DIGITS, 1) + body.slice(4) + pick(r, LOWER, 1);
}
const b64url = (s: string) => Buffer.from(s).toString("base64url");

/** Two digits or more and a class change at 0.45 of neighbours or more: what the bare-value rule always reads as random. */
function inBareKeyEnvelope(v: string): boolean {
  const cls = (c: string) => (/[a-z]/.test(c) ? 0 : /[A-Z]/.test(c) ? 1 : /[0-9]/.test(c) ? 2 : 3);
  let changes = 0;
  for (let i = 1; i < v.length; i++) if (cls(v[i]!) !== cls(v[i - 1]!)) changes++;
  return (v.match(/[0-9]/g)?.length ?? 0) >= 2 && changes / (v.length - 1) >= 0.45;
}

type Maker = (r: Prng) => Omit<Secret, "kind" | "oneLine"> & { oneLine?: boolean };

const MAKERS: Record<string, Maker> = {
  aws_access_key: (r) => {
    const v = `AKIA${pick(r, UPPER + "234567", 16)}`;
    return { text: v, needle: v };
  },
  aws_secret_key: (r) => {
    const v = mixed(r, 40, "/+");
    return { text: `aws_secret_access_key = ${v}`, needle: v };
  },
  aws_secret_bare: (r) => {
    const v = mixed(r, 40, "/+");
    return { text: `AKIA${pick(r, UPPER + "234567", 16)} ${v}`, needle: v };
  },
  github_token: (r) => {
    const v = mixed(r, 36);
    return { text: `ghp_${v}`, needle: v };
  },
  github_pat: (r) => {
    const v = `${mixed(r, 22)}_${mixed(r, 59)}`;
    return { text: `github_pat_${v}`, needle: v };
  },
  gitlab_token: (r) => {
    const v = mixed(r, 20);
    return { text: `glpat-${v}`, needle: v };
  },
  slack_token: (r) => {
    const v = `${pick(r, DIGITS, 12)}-${pick(r, DIGITS, 13)}-${mixed(r, 24)}`;
    return { text: `xoxb-${v}`, needle: v };
  },
  stripe_key: (r) => {
    const v = mixed(r, 24);
    return { text: `sk_live_${v}`, needle: v };
  },
  anthropic_key: (r) => {
    const v = mixed(r, 80, "-_");
    return { text: `sk-ant-api03-${v}`, needle: v };
  },
  openai_key: (r) => {
    const v = mixed(r, 48);
    return { text: `sk-proj-${v}`, needle: v };
  },
  google_api_key: (r) => {
    const v = mixed(r, 35);
    return { text: `AIza${v}`, needle: v };
  },
  npm_token: (r) => {
    const v = mixed(r, 36);
    return { text: `npm_${v}`, needle: v };
  },
  pypi_token: (r) => {
    const v = mixed(r, 70, "-_");
    return { text: `pypi-AgEIcHlwaS5vcmc${v}`, needle: v };
  },
  huggingface_token: (r) => {
    const v = mixed(r, 34);
    return { text: `hf_${v}`, needle: v };
  },
  sendgrid_key: (r) => {
    const v = `${mixed(r, 22)}.${mixed(r, 43)}`;
    return { text: `SG.${v}`, needle: v };
  },
  jwt: (r) => {
    const payload = b64url(JSON.stringify({ sub: pick(r, DIGITS, 10), name: pick(r, LOWER, 8), iat: r.int(1e9, 2e9) }));
    const v = `${b64url('{"alg":"HS256","typ":"JWT"}')}.${payload}.${mixed(r, 43, "-_")}`;
    return { text: v, needle: payload };
  },
  private_key: (r) => {
    const body = [mixed(r, 64, "+/"), mixed(r, 64, "+/"), mixed(r, 40, "+/")];
    return {
      text: `-----BEGIN RSA PRIVATE KEY-----\n${body.join("\n")}\n-----END RSA PRIVATE KEY-----`,
      needle: body[0]!,
      oneLine: false,
    };
  },
  url_password: (r) => {
    const v = mixed(r, 14, "!#%");
    return { text: `https://deploy:${v}@git.example.org/team/app.git`, needle: v };
  },
  mysql_url: (r) => {
    const v = mixed(r, 12);
    return { text: `mysql://root:${v}@db:3306/app`, needle: v };
  },
  redis_url: (r) => {
    const v = mixed(r, 16);
    return { text: `redis://:${v}@cache:6379/0`, needle: v };
  },
  postgres_url: (r) => {
    const v = mixed(r, 12);
    return { text: `postgres://app:${v}@db.internal:5432/prod`, needle: v };
  },
  yaml_password: (r) => {
    const v = mixed(r, 12, "!#");
    return { text: `password: ${v}`, needle: v };
  },
  env_password: (r) => {
    const v = mixed(r, 14);
    return { text: `DB_PASSWORD=${v}`, needle: v };
  },
  quoted_api_key: (r) => {
    const v = mixed(r, 24);
    return { text: `api_key = "${v}"`, needle: v };
  },
  json_secret: (r) => {
    const v = mixed(r, 20);
    return { text: `"client_secret": "${v}"`, needle: v };
  },
  export_token: (r) => {
    const v = mixed(r, 30);
    return { text: `export GITHUB_TOKEN=${v}`, needle: v };
  },
  mysql_cli: (r) => {
    const v = mixed(r, 10);
    return { text: `mysql -u root -p${v} app`, needle: v };
  },
  sshpass: (r) => {
    const v = mixed(r, 10);
    return { text: `sshpass -p ${v} ssh deploy@build`, needle: v };
  },
  docker_login: (r) => {
    const v = mixed(r, 12);
    return { text: `docker login -u ci -p ${v} registry.gitlab.com`, needle: v };
  },
  curl_user: (r) => {
    const v = mixed(r, 12);
    return { text: `curl -u admin:${v} https://jenkins.example.org/api`, needle: v };
  },
  bearer: (r) => {
    const v = mixed(r, 32);
    return { text: `Authorization: Bearer ${v}`, needle: v };
  },
  email: (r) => {
    const v = `${pick(r, LOWER, 7)}.${pick(r, LOWER, 6)}@${pick(r, LOWER, 8)}.io`;
    return { text: v, needle: v };
  },
  ipv4: (r) => {
    const v = `10.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(2, 254)}`;
    return { text: v, needle: v };
  },
  ipv4_public: (r) => {
    const v = `${r.int(11, 99)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(2, 254)}`;
    return { text: v, needle: v };
  },
  ipv6: (r) => {
    const v = `fd${pick(r, "0123456789abcdef", 2)}:${pick(r, "0123456789abcdef", 4)}:${pick(r, "0123456789abcdef", 4)}::${pick(r, "123456789abcdef", 4)}`;
    return { text: v, needle: v };
  },
  home_linux: (r) => {
    const v = pick(r, LOWER, 9);
    return { text: `/home/${v}/src/app/main.py`, needle: `/${v}/` };
  },
  home_mac: (r) => {
    const v = pick(r, LOWER, 9);
    return { text: `/Users/${v}/Library/Caches`, needle: `/${v}/` };
  },
  home_windows: (r) => {
    const v = pick(r, LOWER, 9);
    return { text: `C:\\Users\\${v}\\AppData\\Local\\Temp`, needle: `\\${v}\\` };
  }, // Session 13 audit: hidden by invisible characters, look-alike letters, fullwidth forms or
  // percent-encoding; provider and config forms the table learned then.
  zero_width_password: (r) => {
    const v = mixed(r, 14);
    return { text: `DB_PASS\u200bWORD=${v}`, needle: v };
  },
  lookalike_token: (r) => {
    const v = mixed(r, 36);
    return { text: `gh\u0440_${v}`, needle: v };
  },
  fullwidth_password: (r) => {
    const v = mixed(r, 12);
    return { text: `\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44=${v}`, needle: v };
  },
  percent_url_password: (r) => {
    const v = mixed(r, 14);
    return { text: `redirect=https%3A%2F%2Fdeploy%3A${v}%40git.example.org%2Fapp`, needle: v };
  },
  vault_legacy_token: (r) => {
    const v = mixed(r, 24);
    return { text: `s.${v}`, needle: v };
  },
  xai_key: (r) => {
    const v = mixed(r, 80);
    return { text: `xai-${v}`, needle: v };
  },
  tailscale_key: (r) => {
    const v = mixed(r, 33);
    return { text: `tskey-auth-${mixed(r, 12)}-${v}`, needle: v };
  },
  maven_password: (r) => {
    const v = mixed(r, 12);
    return { text: `<server><id>nexus</id><password>${v}</password></server>`, needle: v };
  },
  php_define: (r) => {
    const v = mixed(r, 14);
    return { text: `define('DB_PASSWORD', '${v}');`, needle: v };
  },
  // Session 13, the forms content-safety.md listed as not recognised.
  pgpass_line: (r) => {
    const v = mixed(r, 14);
    return { text: `echo 'db.example.org:5432:app:app_rw:${v}' >> ~/.pgpass`, needle: v };
  },
  openvpn_inline: (r) => {
    const v = mixed(r, 14);
    return { text: `<auth-user-pass>\ndeploy\n${v}\n</auth-user-pass>`, needle: v, oneLine: false };
  },
  expect_send: (r) => {
    const v = mixed(r, 14);
    return { text: `expect -c 'spawn ssh deploy@build; expect "*assword*"; send "${v}\\r"; interact'`, needle: v };
  },
  yaml_anchor: (r) => {
    const v = mixed(r, 14);
    return { text: `password: &db_pw "${v}"`, needle: v };
  },
  // Session 15: a token split across string literals, a bare random key, a value named in prose or
  // answering aws configure's prompt.
  concatenated_token: (r) => {
    const v = mixed(r, 36);
    return { text: `token = "ghp_${v.slice(0, 10)}" + "${v.slice(10)}"`, needle: v.slice(10) };
  },
  bare_secret_key: (r) => {
    // A bare key is redacted for sure with two digits or more and a class change (upper, lower,
    // digit, symbol) at 0.45 of its neighbours or more; below that only when its lower case does
    // not run in words (docs/content-safety.md §1, high_entropy_secret), which refuses ≈ 0.4 % of
    // random 30-byte keys by design (bench/RESULTS.md, session 16): those are drawn again.
    let v: string;
    do v = Buffer.from(Array.from({ length: 30 }, () => r.int(0, 255))).toString("base64");
    while (!inBareKeyEnvelope(v));
    return { text: v, needle: v };
  },
  prose_api_key: (r) => {
    const v = pick(r, "0123456789abcdef", 60) + "a1";
    return { text: `my api key ${v} was rejected`, needle: v };
  },
  aws_configure_prompt: (r) => {
    const v = mixed(r, 40, "/+");
    return { text: `AWS Secret Access Key [None]: ${v}`, needle: v };
  },
  // Session 16: a token split into shell variables, a PEM key body without its BEGIN/END lines.
  shell_split_token: (r) => {
    const v = mixed(r, 36);
    return {
      text: `T1=ghp_${v.slice(0, 10)}; T2=${v.slice(10)}; curl -H "Authorization: token $T1$T2" https://api.github.com/user`,
      needle: v.slice(10),
    };
  },
  // Session 17: a value past the assignment rule's bounds (an AWS session token runs to 800+
  // characters), and the prefixed formats round 10 added.
  long_session_token: (r) => {
    // No AWS prefix (aws_session_token would catch it alone): the long-value reading is what is drawn.
    const v = mixed(r, 716, "/+");
    return { text: r.chance(0.5) ? `AWS_SESSION_TOKEN=${v}` : `"SessionToken": "${v}"`, needle: v.slice(-40) };
  },
  round10_provider_token: (r) => {
    const v = r.pick([
      `nvapi-${mixed(r, 64, "_-")}`,
      `phx_${mixed(r, 43)}`,
      `fc-${pick(r, "0123456789abcdef", 30)}a1`,
      `s-s4t2ud-${pick(r, "0123456789abcdef", 62)}a1`,
      `IQoJb3JpZ2luX2Vj${mixed(r, 400, "/+")}`,
    ]);
    return { text: v, needle: v.slice(-16) };
  },
  // Session 18: formats round 11 added (a Langfuse key, a Doppler service token naming its config,
  // a token inside URL-safe base64 after a parameter's `=`).
  round11_form: (r) => {
    const hex = (n: number) => pick(r, "0123456789abcdef", n);
    const uuid = `${hex(7)}a-${hex(3)}1-${hex(4)}-${hex(4)}-${hex(12)}`;
    const state = Buffer.from(`{"t":"ghp_${mixed(r, 36)}","n":"~~"}`).toString("base64url");
    const v = r.pick([`sk-lf-${uuid}`, `dp.st.prd.${mixed(r, 42)}`, `https://app.example.io/cb?state=${state}`]);
    return { text: v, needle: v.startsWith("https:") ? state.slice(0, 40) : v.slice(-16) };
  },
  // Session 19: formats and forms round 12 added (Cloudflare, E2B, Linear OAuth, a Vault dev root
  // token, a HashiCorp secret id, positional passwords, a secret-named variable's default, a password
  // passed by position in code, a Go MySQL DSN, a typed assignment).
  round12_form: (r) => {
    const hex = (n: number) => pick(r, "0123456789abcdef", n);
    const uuid = `${hex(7)}a-${hex(3)}1-${hex(4)}-${hex(4)}-${hex(12)}`;
    const pw = mixed(r, 16);
    const forms: [string, string][] = [
      [`cfut_${mixed(r, 40)}${hex(7)}a`, ""],
      [`e2b_${hex(39)}a`, ""],
      [`lin_oauth_${hex(63)}a`, ""],
      [`hvs.${mixed(r, 24)}`, ""],
      [`SecretID:         ${uuid}`, uuid],
      [`mysqladmin -u root password ${pw}`, pw],
      [`SET PASSWORD FOR 'app'@'%' = '${pw}';`, pw],
      [`process.env.DB_PASSWORD ?? '${pw}'`, pw],
      [`\${env:API_TOKEN:-${pw}}`, pw],
      [`smtp.login("ops@acme.io", "${pw}")`, pw],
      [`sql.Open("mysql", "app:${pw}@tcp(db:3306)/app")`, pw],
      [`db_password: Optional[str] = '${pw}'`, pw],
    ];
    const [text, needle] = r.pick(forms);
    return { text, needle: needle || text.slice(-16) };
  },
  unarmoured_private_key: (r) => {
    // PKCS#1 RSA's DER opening (SEQUENCE, version 0, the modulus), then random bytes, wrapped at 64.
    const der = Buffer.from([
      0x30,
      0x82,
      0x04,
      0xa4,
      0x02,
      0x01,
      0x00,
      0x02,
      0x82,
      0x01,
      0x01,
      0x00,
      ...Array.from({ length: 180 }, () => r.int(0, 255)),
    ]);
    const lines = der.toString("base64").match(/.{1,64}/g)!;
    return { text: lines.join("\n"), needle: lines[1]!, oneLine: false };
  },
};

const KINDS = Object.keys(MAKERS);

function makeSecret(r: Prng, kind: string): Secret {
  const s = MAKERS[kind]!(r);
  return { kind, text: s.text, needle: s.needle, oneLine: s.oneLine ?? true };
}

// ---- Placing them ------------------------------------------------------------------------------

const FILLER = [
  "the build",
  "fails when",
  "we run",
  "make deploy",
  "after upgrading",
  "in CI",
  "(see log)",
  "on the runner",
  "--verbose",
  "=>",
];

/** The secret somewhere in a line: alone, first, last, in the middle, quoted, after `=` or `(`. */
function inLine(r: Prng, secret: string): string {
  const a = r.pick(FILLER);
  const b = r.pick(FILLER);
  switch (r.int(0, 7)) {
    case 0:
      return secret;
    case 1:
      return `${secret} ${a}`;
    case 2:
      return `${a} ${secret}`;
    case 3:
      return `${a} ${secret} ${b}`;
    case 4:
      return `${a} "${secret}" ${b}`;
    case 5:
      return `${a}='${secret}'`;
    case 6:
      return `${a} (${secret})`;
    default:
      return `${a}\n${secret}\n${b}`;
  }
}

/** A unified diff with the secret on a line of each kind of prefix. */
function inDiff(r: Prng, secret: string): string {
  const prefix = r.pick(["+", "-", " "]);
  const lines = secret.split("\n").map((l) => `${prefix}${r.chance(0.5) ? "" : r.pick(["  ", "\t", '"', "# "])}${l}`);
  return [
    "--- a/config/settings.py",
    "+++ b/config/settings.py",
    "@@ -1,3 +1,3 @@",
    " import os",
    ...lines,
    "-DEBUG = True",
    "+DEBUG = False",
  ].join("\n");
}

type Placement = (t: Trail, r: Prng, s: Secret) => boolean;

const oneLine =
  (f: (t: Trail, r: Prng, s: Secret) => void, max: number): Placement =>
  (t, r, s) => {
    if (!s.oneLine || s.text.length > max) return false;
    f(t, r, s);
    return true;
  };

/** Every string field of a Trail, each a way to put a secret into it. */
const FIELDS: Record<string, Placement> = {
  "problem.error": oneLine((t, r, s) => (t.problem.error = `${t.problem.error} ${inLine(r, s.text).replace(/\n/g, " ")}`), 1500),
  "problem.error_type": oneLine((t, r, s) => (t.problem.error_type = r.chance(0.5) ? s.text : `DeployError ${s.text}`), 180),
  "problem.description": (t, r, s) => ((t.problem.description = `${t.problem.description}\n${inLine(r, s.text)}`), true),
  "problem.root_cause": (t, r, s) => ((t.problem.root_cause = `${inLine(r, s.text)} ${t.problem.root_cause}`), true),
  "problem.dead_ends.attempt": (t, r, s) => (t.problem.dead_ends!.push({ attempt: inLine(r, s.text), result: "same error" }), true),
  "problem.dead_ends.result": (t, r, s) => (t.problem.dead_ends!.push({ attempt: "retried the job", result: inLine(r, s.text) }), true),
  "solution.summary": (t, r, s) => ((t.solution.summary = `${t.solution.summary} ${inLine(r, s.text)}`), true),
  "solution.steps": (t, r, s) => (t.solution.steps!.splice(r.int(0, t.solution.steps!.length), 0, inLine(r, s.text)), true),
  "solution.commands": (t, r, s) => (t.solution.commands!.splice(r.int(0, t.solution.commands!.length), 0, inLine(r, s.text)), true),
  "solution.code_patches.diff": (t, r, s) => {
    t.solution.code_patches ??= [];
    t.solution.code_patches.push({ file_path: "config/settings.py", diff: inDiff(r, s.text), language: "python" });
    return true;
  },
  "solution.code_patches.hunk_header": oneLine((t, r, s) => {
    t.solution.code_patches ??= [];
    const header = `@@ -12,7 +12,7 @@ ${inLine(r, s.text).replace(/\n/g, " ")}`;
    t.solution.code_patches.push({ file_path: "deploy/env.sh", diff: `--- a/deploy/env.sh\n+++ b/deploy/env.sh\n${header}\n-x=1\n+x=2` });
  }, 3000),
  "solution.code_patches.file_path": oneLine((t, _r, s) => {
    t.solution.code_patches ??= [];
    t.solution.code_patches.push({ file_path: `deploy/${s.text}/values.yaml`, diff: "@@ -1 +1 @@\n-a: 1\n+a: 2" });
  }, 450),
  "solution.verification": (t, r, s) => ((t.solution.verification = `${inLine(r, s.text)}\n${t.solution.verification}`), true),
  tags: oneLine((t, _r, s) => (t.tags = [...(t.tags ?? []), s.text]), 50),
  "agent_info.model": oneLine((t, _r, s) => (t.agent_info.model = `model ${s.text}`), 190),
  "environment.os_version": oneLine((t, _r, s) => (t.environment.os_version = s.text), 100),
  "environment.packages.version": oneLine((t, _r, s) => t.environment.packages!.push({ name: "private-pkg", version: s.text }), 100),
};
const FIELD_NAMES = Object.keys(FIELDS);

interface Case {
  trail: Trail;
  secrets: Secret[];
}

function makeCases(r: Prng): Case[] {
  const cases: Case[] = [];
  let slot = 0;
  for (let i = 0; i < TRAILS; i++) {
    const trail = sampleTrail({ error: `RuntimeError: deploy step ${i} failed with code ${100 + i}` });
    trail.problem.dead_ends = [...trail.problem.dead_ends!];
    trail.environment.packages = [...trail.environment.packages!];
    const secrets: Secret[] = [];
    for (let k = 0; k < SECRETS_PER_TRAIL; k++, slot++) {
      // Walk kinds and fields in step (every kind meets many fields), the position is random.
      const kind = KINDS[slot % KINDS.length]!;
      let field = FIELD_NAMES[(slot * 7 + i) % FIELD_NAMES.length]!;
      const secret = makeSecret(r, kind);
      let tries = 0;
      while (!FIELDS[field]!(trail, r, secret)) field = FIELD_NAMES[(FIELD_NAMES.indexOf(field) + 1 + tries++) % FIELD_NAMES.length]!;
      secrets.push(secret);
    }
    cases.push({ trail, secrets });
  }
  return cases;
}

// ---- Running it --------------------------------------------------------------------------------

const prng = new Prng(SEED);
const cases = makeCases(prng);
const allSecrets = cases.flatMap((c) => c.secrets);
/** Everything any surface gave back, by where it came from. */
const seen: { where: string; text: string }[] = [];
let colony: TestColony;
let dataDir: string;

async function record(where: string, res: Response): Promise<any> {
  const text = await res.text();
  seen.push({ where: `${where} → ${res.status}`, text });
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function leaks(texts: { where: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const s of allSecrets) {
    for (const t of texts) {
      const at = t.text.indexOf(s.needle);
      if (at >= 0) {
        const context = t.text.slice(Math.max(0, at - 60), at + s.needle.length + 20);
        out.push(`${s.kind} ${JSON.stringify(s.needle)} in ${t.where}: …${JSON.stringify(context)}…`);
        break;
      }
    }
  }
  return out;
}

beforeAll(async () => {
  dataDir = tempDir();
  colony = await startTestColony({
    COLONY_DATA_DIR: dataDir,
    COLONY_TRUST_PROXY: "1",
    COLONY_PUBLISH_LIMIT: "100000",
    COLONY_DRAFT_LIMIT: "100000",
    COLONY_RATE_LIMIT: "100000",
  });
});
afterAll(async () => {
  await colony.stop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

describe(`secrets placed anywhere never come back (seed ${SEED}, ${allSecrets.length} secrets of ${KINDS.length} kinds in ${FIELD_NAMES.length} fields)`, () => {
  test("the generator covers every kind in every field shape", () => {
    expect(new Set(allSecrets.map((s) => s.kind)).size).toBe(KINDS.length);
  });

  test("HTTP: publish, status, lookup, search, feed, activity, stats, outcomes, drafts", async () => {
    const ids: string[] = [];
    for (const [i, c] of cases.entries()) {
      const body = await record(`publish ${i}`, await colony.fetch("/v1/trails", json(c.trail, agentAt(`agent-secret-author-${i % 4}`))));
      expect(body?.trail_id).toBeString();
      ids.push(body.trail_id);
    }
    await colony.service.worker!.drain();
    for (const [i, id] of ids.entries()) {
      const status = await record(`status ${i}`, await colony.fetch(`/v1/trails/${id}`));
      await record(`lookup ${i}`, await colony.fetch(`/v1/trails/by-fingerprint/${status.fingerprint}`));
      const c = cases[i]!;
      // The query and error_type carry the secrets too (the search event and hot labels keep labels).
      await record(
        `search ${i}`,
        await colony.fetch(
          "/v1/search",
          json(
            { query: c.trail.problem.error.slice(0, 2000), error_type: c.trail.problem.error_type?.slice(0, 200), limit: 10 },
            agentAt("agent-secret-search"),
          ),
        ),
      );
      if (status.status === "indexed") {
        const note = inLine(prng, c.secrets[i % c.secrets.length]!.text).slice(0, 2000);
        await record(
          `outcome ${i}`,
          await colony.fetch(
            `/v1/trails/${id}/outcomes`,
            json({ protocol_version: "1.0", outcome: "worked", notes: note }, agentAt(`agent-secret-reporter-${i}`)),
          ),
        );
      }
    }
    let cursor: string | null = null;
    do {
      const page: any = await record("feed", await colony.fetch(`/v1/feed?limit=50${cursor ? `&cursor=${cursor}` : ""}`));
      cursor = page.next_cursor;
    } while (cursor);
    await record("activity", await colony.fetch("/v1/activity?limit=50"));
    await record("stats", await colony.fetch("/v1/stats"));

    // Drafts: the create answer, the approval page's JSON, after publishing.
    for (const [i, c] of cases.slice(0, 12).entries()) {
      const draft = await record(`draft ${i}`, await colony.fetch("/v1/drafts", json(c.trail, agentAt("agent-secret-drafter"))));
      await record(`draft page ${i}`, await colony.fetch(`/v1/drafts/${draft.draft_id}`));
      if (i % 3 === 0) {
        await record(`draft publish ${i}`, await colony.fetch(`/v1/drafts/${draft.draft_id}/publish`, { method: "POST" }));
        await record(`draft after ${i}`, await colony.fetch(`/v1/drafts/${draft.draft_id}`));
      }
    }
    const indexed = seen.filter((s) => s.where.startsWith("status") && s.text.includes('"status":"indexed"')).length;
    expect(indexed).toBeGreaterThan(TRAILS / 4); // enough reach search, the feed and outcomes
    expect(leaks(seen)).toEqual([]);
  });

  test("MCP (the SDK client on the hosted /mcp): search, publish, publish status, report", async () => {
    const before = seen.length;
    const client = await connectHttp(`${colony.url}/mcp`, agentAt("agent-secret-mcp-01"));
    const tool = async (where: string, name: string, args: Record<string, unknown>) => {
      const r = await callTool(client, name, args);
      seen.push({ where: `mcp ${where}`, text: `${r.text}\n${JSON.stringify(r.structured)}` });
      return r;
    };
    try {
      for (const [i, c] of cases.slice(0, 16).entries()) {
        await tool(`search ${i}`, "colony_search", {
          error: c.trail.problem.error.slice(0, 2000),
          error_type: c.trail.problem.error_type?.slice(0, 200),
        });
        const pub = await tool(`publish ${i}`, "colony_publish", { trail: c.trail });
        const id = pub.structured?.draft_id ?? pub.structured?.trail_id;
        if (id) await tool(`publish status ${i}`, "colony_publish_status", { id });
      }
      const found = await tool("search for a report", "colony_search", { error: cases[1]!.trail.problem.error.slice(0, 2000) });
      const target = found.structured?.results?.[0]?.trail_id;
      if (target) {
        for (const s of allSecrets.slice(0, 6))
          await tool(`report ${s.kind}`, "colony_report", { trail_id: target, outcome: "worked", notes: inLine(prng, s.text) });
      }
    } finally {
      await client.close();
    }
    expect(seen.length).toBeGreaterThan(before + 40);
    expect(leaks(seen.slice(before))).toEqual([]);
  });

  // The bytes of SQLite's files; a PostgreSQL colony's rows are read through the API checks above.
  test.skipIf(TEST_BACKEND === "postgres")("the database file and its WAL, after a checkpoint", async () => {
    const db = colony.subsystems.db!;
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const files = ["colony.db", "colony.db-wal"].map((f) => join(dataDir, f)).filter((f) => existsSync(f));
    const bytes = files.map((f) => ({ where: f, text: readFileSync(f).toString("latin1") }));
    // Secrets are ASCII: their UTF-8 bytes read as latin1 are the same characters.
    expect(bytes[0]!.text.length).toBeGreaterThan(100_000);
    expect(leaks(bytes)).toEqual([]);
    await colony.stop();
    const after = ["colony.db", "colony.db-wal"].map((f) => join(dataDir, f)).filter((f) => existsSync(f));
    expect(leaks(after.map((f) => ({ where: `${f} (stopped)`, text: readFileSync(f).toString("latin1") })))).toEqual([]);
  });
});

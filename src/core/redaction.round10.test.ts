// Session 17 (redact17), redaction round 10: what session 16 left (a variable's name before `@` read
// as an e-mail, an upgrade's old version in parentheses read as an address, public DER lines read as
// keys, values longer than the assignment rules' bounds keeping their tail) and the provider formats
// a comparison with gitleaks' rule list found uncaught. Each `redacts` case failed before this round;
// each `staysClean` input is real text that must keep passing. Fake credentials are assembled at run
// time so no scanner mistakes this file for a leak.
import { describe, expect, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { redactText } from "./redaction.ts";
import { publicDerBase64 } from "./redaction-rules.ts";
import { cpuMsSince } from "../../test/support/cpu-time";
import { redacts, redactsInEveryPlace, staysClean } from "../../test/support/redaction-cases";

const j = (...parts: string[]) => parts.join("");

describe("a variable's name before @ is no e-mail address", () => {
  staysClean([
    "git clone https://x:$GITHUB_TOKEN@github.com/acme/api.git",
    "git remote set-url origin https://oauth2:$CI_JOB_TOKEN@gitlab.com/acme/api.git",
    "echo $USER@corp-mail.com",
    "scp build.tgz ${DEPLOY_USER}@deploy.acme.io:/srv",
  ]);
  const GHP = j("ghp_", "R8kL2mQ9vX4tZ7wB1nC5hJ3gF6dS0aP2eY8u");
  redacts([
    ["a literal token in the same place still goes", "github_token", `git clone https://x:${GHP}@github.com/acme/api.git`, [GHP]],
    ["a real address still goes", "email", "mail the logs to ops-oncall@acme-corp.com", ["ops-oncall@"]],
  ]);
});

describe("an upgrade's versions in parentheses are no addresses", () => {
  // Node's CHANGELOG_IOJS.md (the benign corpus, session 16).
  staysClean([
    "* **V8**: Upgrade to 4.4.63.30 (from 4.4.63.26) (Michaël Zasso) [#2482](https://github.com/nodejs/node/pull/2482)",
    "* deps: upgrade V8 to (4.4.63.30)",
  ]);
  redacts([
    ["an address after an update's old address still goes", "ip_address", "updated DNS to 127.0.0.1 (from 10.20.0.5)", ["10.20.0.5"]],
    ["an address with `(from` but no upgrade still goes", "ip_address", "host 127.0.0.1 (from 10.20.0.5)", ["10.20.0.5"]],
  ]);
});

describe("a public key's or certificate's base64 line alone is public; a private key's lines stay redacted", () => {
  // Lines of the benign corpus (docker's swarm docs, libxmlsec1's rsapub.pem, /etc/ssl/certs) that the
  // bare-value rule redacted as random: each decodes to names, times or a public key's algorithm.
  const PUBLIC_LINES = [
    "MDAwWjATMREwDwYDVQQDEwhzd2FybS1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH",
    "MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBANPQbQ92nlbeg1Q5JNHSO1Yey46nZ7GJ",
    "MDAwMDAwMFowRjELMAkGA1UEBhMCQkUxGTAXBgNVBAoTEEdsb2JhbFNpZ24gbnYt",
    "MDAwWjBHMQswCQYDVQQGEwJVUzEiMCAGA1UEChMZR29vZ2xlIFRydXN0IFNlcnZp",
    "MDAwWhcNNDkxMjMxMjM1OTU5WjAfMR0wGwYDVQQDDBRzYW5kYm94aW5nLWVncmVz",
    "MDAwMDAwWhcNMzgwMTE4MjM1OTU5WjCBhTELMAkGA1UEBhMCR0IxGzAZBgNVBAgT",
    "Issuer Public Key: MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAExuICYRP4dnK97fm6OucvaQ4sERCEUNnkyHEC5iz3qfv3qwWV/FPELWUz/aACHwMjfimbcmYeBnF4E8pRREkcpQ==",
  ];
  staysClean(PUBLIC_LINES);
  staysClean(PUBLIC_LINES.map((l) => `+${l}`));
  const lines = (pem: string | Buffer) =>
    String(pem)
      .split("\n")
      .filter((l) => l && !l.startsWith("-----"));
  test("public keys made at run time: their first line alone is kept", () => {
    for (const k of [
      generateKeyPairSync("ec", { namedCurve: "P-256" }),
      generateKeyPairSync("ed25519"),
      generateKeyPairSync("x25519"),
      generateKeyPairSync("rsa", { modulusLength: 512 }),
    ]) {
      const first = lines(k.publicKey.export({ type: "spki", format: "pem" }))[0]!;
      expect(publicDerBase64(first)).toBe(true);
      expect(redactText(`key ${first}`).counts).toEqual({});
    }
  });
  test("no line of a private key reads as public DER (so none loses the bare-value rule)", () => {
    const keys = [
      ...Array.from({ length: 4 }, () => generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey),
      ...Array.from({ length: 20 }, () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey),
      ...Array.from({ length: 20 }, () => generateKeyPairSync("ed25519").privateKey),
    ];
    let checked = 0;
    for (const key of keys) {
      const forms = key.asymmetricKeyType === "rsa" ? ["pkcs1", "pkcs8"] : key.asymmetricKeyType === "ec" ? ["sec1", "pkcs8"] : ["pkcs8"];
      for (const type of forms) {
        for (const line of lines(key.export({ type, format: "pem" } as never))) {
          expect(publicDerBase64(line)).toBe(false);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
  });
  test("random base64 lines almost never read as public DER", () => {
    let publicLike = 0;
    for (let i = 0; i < 20_000; i++) if (publicDerBase64(randomBytes(48).toString("base64"))) publicLike++;
    expect(publicLike).toBeLessThanOrEqual(1);
  });
});

describe("a value longer than the assignment rules read is redacted whole", () => {
  // An AWS session token runs to 800+ characters; SAS tokens and cookies can be longer still.
  // No AWS prefix (its own rule would catch it): the long-value reading alone is tested.
  const LONG = j("xT7q", randomBytes(600).toString("base64").replace(/[+/=]/g, "x"));
  const tail = LONG.slice(-40);
  redacts([
    ["unquoted, env style", "token", `export AWS_SESSION_TOKEN=${LONG} && aws s3 ls`, [tail]],
    ["unquoted, after a colon", "secret", `client_secret: ${LONG}`, [tail]],
    ["double-quoted", "token", `AWS_SESSION_TOKEN="${LONG}"`, [tail]],
    ["in JSON", "token", `{"SessionToken": "${LONG}", "Expiration": "2026-11-27T22:00:00Z"}`, [tail]],
    ["single-quoted in YAML", "password", `password: '${LONG}'`, [tail]],
    ["an option's value", "password", `mysql -p${LONG} -h db`, [tail]],
    ["in JSON inside a command's string", "token", `{"cmd": "echo '{\\"SessionToken\\":\\"${LONG}\\"}'"}`, [tail]],
    ["in JSON escaped twice", "token", `{\\\\\\"SessionToken\\\\\\":\\\\\\"${LONG}\\\\\\"}`, [tail]],
    ["a YAML value on the next line", "token", `token: >-\n  ${LONG}\nnext: 1`, [tail]],
    ["a Kubernetes name/value pair", "token", `- name: AWS_SESSION_TOKEN\n  value: ${LONG}\n- name: B`, [tail]],
  ]);
  test("what follows the value stays", () => {
    expect(redactText(`AWS_SESSION_TOKEN="${LONG}" aws s3 ls`).text).toBe('AWS_SESSION_TOKEN="<redacted:token>" aws s3 ls');
    expect(redactText(`{"SessionToken": "${LONG}", "Expiration": "2026"}`).text).toBe(
      '{"SessionToken": "<redacted:token>", "Expiration": "2026"}',
    );
  });
  test("prose after a quote that never closes is no long value (docs/security.md, the benign corpus)", () => {
    const prose =
      "HTML character references (`{&quot;password&quot;:&quot;…`), ANSI colour codes of pasted terminal output (`\\x1b[31mDB_PASSWORD=\\x1b[0m…`), no-break or ideographic blanks, JSON escaped two or three times, a command continued over lines (`docker login \\` ⏎ `-u bob \\` ⏎ `-p PASS`, `mysql … \\` ⏎ `-pPASS`, PowerShell `` ` `` and cmd `^` alike: the tool and its option were on two lines): each came back whole";
    expect(redactText(prose).text).toContain("ANSI colour codes of pasted terminal output");
    expect(redactText(`password: "${"word ".repeat(80)}`).text).toContain("word word");
  });
  test("64 kB of names before long values stays linear", () => {
    for (const unit of [
      'password="',
      "password=",
      `token=${"a".repeat(600)} `,
      `secret="${"b".repeat(300)}" `,
      "--with-token <<< ",
      "t1.a.",
      "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE ",
      '\\"password\\":\\"',
      `\\"password\\":\\"${"c".repeat(300)}\\" `,
      "- name: TOKEN\n  value: ",
      `token:\n  ${"d".repeat(600)}\n`,
    ]) {
      const text = unit.repeat(Math.ceil(65_536 / unit.length)).slice(0, 65_536);
      const t0 = process.cpuUsage();
      redactText(text);
      expect(cpuMsSince(t0)).toBeLessThan(1500);
    }
  });
});

describe("provider formats of gitleaks', Kingfisher's and Nosey Parker's rule lists that leaked, and bare AWS session tokens", () => {
  // Each fake token has the provider's published shape, built at run time from a fixed body.
  const hex = (n: number) => "3f9a0c7e5b1d2486".repeat(8).slice(0, n);
  const mixed = (n: number) => "Qx7bN2kLm9pR4tV8wZ3yH6jFa4lQh3X0".repeat(8).slice(0, n);
  const tokens: [string, string][] = [
    ["authress_key", j("sc_", "ab12cd34ef", ".", "xk2p9", ".acc_", "a1b2c3d4e5f6g7h8", ".", mixed(60))],
    ["defined_networking_token", j("dnkey-", "q7w2e9r4t1y6u3i8o5p0a2s7d4", "-", "f1g6h3j8k5l0z7x2c9v4b1n6m3q8w5e2r7t4y9u6i1o8p5a2s9d4")],
    ["flutterwave_key", j("FLWSECK_TEST-", "c99d6fbe1790")],
    ["gitlab_session", j("_gitlab_session=", "zsmncdq04tqm5ci4fdaypxpk4tn49ref")],
    ["intra42_secret", j("s-s4t2ud-", hex(64))],
    ["yandex_token", j("t1.", "9euelZqPmpGPjJLHy", ".", mixed(86))],
    ["firecrawl_key", j("fc-", hex(32))],
    ["nvidia_key", j("nvapi-", mixed(64))],
    ["posthog_key", j("phx_", mixed(43))],
    ["tavily_key", j("tvly-dev-", mixed(32))],
    ["tavily_key", j("tvly-", mixed(32))],
    ["aws_session_token", j("IQoJb3JpZ2luX2Vj", "EJr//////////wEaCXVzLWVhc3QtMSJH", mixed(256), "+", mixed(200))],
    ["aws_session_token", j("FwoGZXIvYXdzE", "Kj//////////wEaDM", mixed(300))],
  ];
  redactsInEveryPlace(tokens);
  const GH_TOKEN = j("Zq8fIvjqKny", "63wEniGqd");
  redacts([
    ["a token piped to gh auth login --with-token", "token", `echo ${GH_TOKEN} | gh auth login --with-token`, [GH_TOKEN]],
    ["a token given to gh auth login as a here-string", "token", `gh auth login --with-token <<< ${GH_TOKEN}`, [GH_TOKEN]],
  ]);
  // Public or look-alike values of the same families.
  staysClean([
    "posthog.init('phc_UPdNPQ9L5IfsRgPI6HlHiP4npmngdn05X4ftv8Gja1r')",
    "echo $GH_TOKEN | gh auth login --with-token",
    "gh auth login --with-token < token.txt",
    "the fc-dev cluster and the nvapi-docs page",
    "Add tvly-xxxxx to .env (a tvly-your-api-key placeholder)",
    "placeholder: 'tvly-...'",
    "see t1.small and t1.micro instances",
  ]);
});

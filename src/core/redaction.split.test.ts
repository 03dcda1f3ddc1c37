// Session 15 (redact15): secrets split across lines or string literals, bare random values with
// no name, and the prompt and prose forms that name a secret in words. Each case failed before
// this round. Fake credentials are assembled at run time so no scanner mistakes this file for a leak.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { redactDeep, redactText } from "./redaction.ts";
import { cpuMsSince } from "../../test/support/cpu-time";
import { redacts, staysClean } from "../../test/support/redaction-cases";

const j = (...parts: string[]) => parts.join("");
const GHP = j("ghp_", "R8kL2mQ9vX4tZ7wB1nC5hJ3gF6dS0aP2eY8u");
const JWT = j(
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
  ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
  ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
);
const XOXB = j("xoxb-", "2384729384-2938472938472-Qx7bN2kLm9pR4tV8wZ3yH6jF");
const SK_LIVE = j("sk_live_", "51Hx8QmL2vR9tZ4wB7nC1kJ5gF3dS6aP0eY2u");
const AWS_ID = j("AKIA", "Q3EGRTY7ZK4NXW2P");
const AWS_SECRET = j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYzQ8vT3kLm2");
const PASSWORD = "Tr0ub4dor3xK";
const wrap = (s: string, n: number) => s.match(new RegExp(`.{1,${n}}`, "g"))!;

describe("a token split across lines or string literals (session 15, item 1)", () => {
  redacts([
    ["JWT wrapped at 76 columns", "jwt", `token:\n${wrap(JWT, 76).join("\n")}`, [JWT.slice(60, 90), JWT.slice(-20)]],
    [
      "JWT wrapped at 64 columns on added diff lines",
      "jwt",
      wrap(JWT, 64)
        .map((l) => `+${l}`)
        .join("\n"),
      [JWT.slice(70, 120), JWT.slice(-20)],
    ],
    ["JWT continued with backslashes", "jwt", wrap(JWT, 60).join("\\\n"), [JWT.slice(70, 110), JWT.slice(-20)]],
    ["JWT concatenated in JavaScript", "jwt", `const t = "${JWT.slice(0, 50)}" + "${JWT.slice(50)}";`, [JWT.slice(50, 90)]],
    ["ghp_ concatenated in JavaScript", "github_token", `const t = "${GHP.slice(0, 12)}" + "${GHP.slice(12)}";`, [GHP.slice(12)]],
    [
      "ghp_ concatenated across lines in Java",
      "github_token",
      `String t = "${GHP.slice(0, 12)}" +\n    "${GHP.slice(12)}";`,
      [GHP.slice(12)],
    ],
    [
      "ghp_ by Python implicit concatenation",
      "github_token",
      `TOKEN = ("${GHP.slice(0, 12)}"\n         "${GHP.slice(12)}")`,
      [GHP.slice(12)],
    ],
    [
      "ghp_ by Python implicit concatenation in a diff",
      "github_token",
      `+TOKEN = (\n+    "${GHP.slice(0, 12)}"\n+    "${GHP.slice(12)}"\n+)`,
      [GHP.slice(12)],
    ],
    [
      "ghp_ as a JSON array of chunks",
      "github_token",
      JSON.stringify({ parts: [GHP.slice(0, 10), GHP.slice(10, 25), GHP.slice(25)] }),
      [GHP.slice(10, 25), GHP.slice(25)],
    ],
    ["ghp_ joined by Python", "github_token", `"".join(["${GHP.slice(0, 20)}", "${GHP.slice(20)}"])`, [GHP.slice(20)]],
    ["ghp_ concatenated in PHP", "github_token", `$t = '${GHP.slice(0, 16)}' . '${GHP.slice(16)}';`, [GHP.slice(16)]],
    ["ghp_ wrapped in an error message", "github_token", `Authorization failed for ${GHP.slice(0, 20)}\n${GHP.slice(20)}`, [GHP.slice(20)]],
    [
      "JWT wrapped in comment lines of a diff",
      "jwt",
      wrap(JWT, 64)
        .map((l) => `+# ${l}`)
        .join("\n"),
      [JWT.slice(70, 120), JWT.slice(-20)],
    ],
    [
      "JWT wrapped in // comments",
      "jwt",
      wrap(JWT, 64)
        .map((l) => `  // ${l}`)
        .join("\n"),
      [JWT.slice(70, 120), JWT.slice(-20)],
    ],
    [
      "ghp_ both hidden (a zero-width space) and concatenated",
      "github_token",
      `const t = "gh\u200bp_${GHP.slice(4, 12)}" + "${GHP.slice(12)}";`,
      [GHP.slice(12)],
    ],
    [
      "ghp_ both hidden (a Cyrillic р) and wrapped",
      "github_token",
      `Authorization failed for gh\u0440_${GHP.slice(4, 20)}\n${GHP.slice(20)}`,
      [GHP.slice(20)],
    ],
    ["ghp_ in a YAML folded block", "github_token", `token: >\n  ${GHP.slice(0, 22)}\n  ${GHP.slice(22)}`, [GHP.slice(22)]],
    [
      "sk_live_ wrapped on added diff lines with a hunk header before",
      "stripe_key",
      `@@ -1,2 +1,3 @@\n+${SK_LIVE.slice(0, 24)}\n+${SK_LIVE.slice(24)}`,
      [SK_LIVE.slice(24)],
    ],
    ["xoxb- concatenated in JavaScript", "slack_token", `const slack = '${XOXB.slice(0, 8)}' + '${XOXB.slice(8)}';`, [XOXB.slice(8)]],
    ["a URL password concatenated in code", "password", `url = "postgres://app:" + "${PASSWORD}" + "@db.prod.acme.io/app"`, [PASSWORD]],
  ]);
  test("the literals around a joined token keep the code well-formed", () => {
    expect(redactText(`const t = "${GHP.slice(0, 12)}" + "${GHP.slice(12)}";`).text).toBe('const t = "<redacted:github_token>";');
  });
  test("a joined token is still read in a text another rule cut first, and in many fields of one trail", () => {
    // The joined views are looked for once per text before any rule's hint (bench15): after a cut
    // the text is new, and its joined views are looked for again.
    const code = j(`db = "postgres://app:${PASSWORD}@db.acme.io/app"\n`, `const t = "${GHP.slice(0, 12)}" + "${GHP.slice(12)}";`);
    expect(redactText(code).text).toBe('db = "postgres://app:<redacted:password>@db.acme.io/app"\nconst t = "<redacted:github_token>";');
    const joined = `const t = "${GHP.slice(0, 12)}" + "${GHP.slice(12)}";`;
    const { value } = redactDeep({ a: "no token here", b: joined, c: `${JWT.slice(0, 40)}\n${JWT.slice(40)}`, d: joined });
    expect(value).toEqual({
      a: "no token here",
      b: 'const t = "<redacted:github_token>";',
      c: "<redacted:jwt>",
      d: 'const t = "<redacted:github_token>";',
    });
  });
  test("a token and the assignment or path on the next line stay apart", () => {
    const env = j("printenv\nHOME=/root\nSTRIPE_API_KEY=", SK_LIVE, "\nPATH=/usr/bin");
    expect(redactText(env).text).toBe("printenv\nHOME=/root\nSTRIPE_API_KEY=<redacted:stripe_key>\nPATH=/usr/bin");
    expect(redactText(`${GHP}\nsrc/index.ts`).text).toBe("<redacted:github_token>\nsrc/index.ts");
    // After a token cut whole: a removed diff line, a word, a line of another shape stay.
    const diff = j("+API_KEY=", SK_LIVE, "\n-OLD_KEY_VALUE_abc123XYZ");
    expect(redactText(diff).text).toBe("+API_KEY=<redacted:stripe_key>\n-OLD_KEY_VALUE_abc123XYZ");
    expect(redactText(`${GHP}\ndeployed\ndone`).text).toBe("<redacted:github_token>\ndeployed\ndone");
  });
  test("a complete token and the next line stay apart", () => {
    expect(redactText(`${GHP}\nnext step: rerun the job`).text).toBe("<redacted:github_token>\nnext step: rerun the job");
    expect(redactText(`["${GHP}", "another"]`).text).toBe('["<redacted:github_token>", "another"]');
  });
  staysClean([
    `"abc" + "def"`,
    `const a = "sk-" + "proj";`,
    `["xoxb", "is a slack prefix"]`,
    "sha512-Xb1Lp0yTFU7gsVH/ee3M2nsN5sqpjlGrc/e0Gf9fOv7xQk5jC6lW8nJ0oR4h7d8yQ2jP9sK1wB3nM6vX\nresolved https://registry.npmjs.org/x",
    `ghp_ tokens start with "ghp_" + "36 characters"`,
  ]);
});

describe("the other half of a secret in a prompt or in prose (session 15, items 2 and 3)", () => {
  redacts([
    ["aws configure's secret prompt answered", "aws_secret_key", `AWS Secret Access Key [None]: ${AWS_SECRET}`, [AWS_SECRET]],
    [
      "aws configure's secret prompt with a masked old key",
      "aws_secret_key",
      `AWS Secret Access Key [****************ABCD]: ${AWS_SECRET}`,
      [AWS_SECRET],
    ],
    [
      "a hex API key named in prose",
      "api_key",
      "api key 3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a rejected",
      ["3f9a1c7e5b2d8f4a"],
    ],
    ["a token named in prose", "token", "the token is Qx7bN2kLm9pR4tV8wZ3yH6jF1c and it expired", ["Qx7bN2kLm9pR4tV8wZ3yH6jF1c"]],
    [
      "a CLI's prompt for a secret answered (vercel env add)",
      "token",
      "? What's the value of API_TOKEN? Qx7bN2kLm9pR4tV8wZ3yH6jF1c",
      ["Qx7bN2kLm9pR4tV8wZ3yH6jF1c"],
    ],
  ]);
  staysClean([
    "Unexpected token ILLEGAL in JSON at position 4096",
    "the token is stored in ~/.config/gh/hosts.yml",
    "api key 9fceb02d is too short",
    "secret key base is read from config/master.key",
    "the token is abcdefghijklmnopqrstuvwxyz",
  ]);
  test("a secret's name ending one item of a list, its value alone the next", () => {
    const r = redactDeep({
      commands: ["export DB_PASSWORD=", PASSWORD, "npm start"],
      steps: ["Set API_TOKEN to", "Qx7bN2kLm9pR4tV8wZ3yH6jF1c"],
    });
    expect(r.value).toEqual({
      commands: ["export DB_PASSWORD=", "<redacted:password>", "npm start"],
      steps: ["Set API_TOKEN to", "<redacted:token>"],
    });
    expect(r.counts).toEqual({ password: 1, token: 1 });
    expect(redactDeep(r.value).counts).toEqual({});
  });
  test("a list whose items only look like a name and a value stays", () => {
    const items = {
      steps: ["Set the log level to", "debug"],
      commands: ["export NODE_ENV=", "production"],
      more: ["password:", "$DB_PASSWORD"],
      tags: ["token", "auth"],
      notes: ["Rotate the token:", "done"],
      paths: ["key_file:", "/etc/ssl/private/app.key"],
    };
    expect(redactDeep(items)).toEqual({ value: items, counts: {} });
  });
  test("steps answering aws configure across fields", () => {
    const r = redactDeep({
      steps: ["Run aws configure", `AWS Access Key ID [None]: ${AWS_ID}`, `AWS Secret Access Key [None]: ${AWS_SECRET}`],
    });
    expect(JSON.stringify(r.value)).not.toContain(AWS_SECRET);
  });
});

describe("bare random values with no name (session 15, item 3)", () => {
  redacts([
    [
      "an AWS secret access key alone on a line",
      "high_entropy_secret",
      `I set the key to\n${AWS_SECRET}\nand it still fails`,
      [AWS_SECRET],
    ],
    [
      "a base64 40-character secret on an added diff line",
      "high_entropy_secret",
      `+    return "${j("a4lQh3X09Rj7ndFvDEWR", "exf32LxoD8nv8hLpOaOU")}"`,
      ["a4lQh3X09Rj7ndFvDEWR"],
    ],
    [
      "a 32-byte base64 key as a call argument",
      "high_entropy_secret",
      `Fernet(b"${j("mbcaA5vUfP-yejbw3guD", "770vwSYs5GP8jLzFRklAKE0")}=")`,
      ["mbcaA5vUfP-yejbw3guD"],
    ],
  ]);
  // What must stay: hashes, digests and sums are public and keep fingerprints stable.
  staysClean([
    "commit 1f3c9a7e5b2d8f4a6c0e9b7d5f3a1c8e2b4d6f8a",
    "sha256:3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a",
    "3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a  dist/app.tar.gz",
    "FROM node:20@sha256:3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a",
    '"integrity": "sha512-q3X9vLm2RtY8pK4wZ7bN1cF5hJ0gD6sA+eU3iO8yT2rXb1Lp0yTFU7gsVH/ee3M2nsN5sqpjlGrc/e0Gf9fOv7xQ=="',
    "integrity sha1-q3X9vLm2RtY8pK4wZ7bN1cF5hJ0=",
    "golang.org/x/text v0.3.7 h1:olpwvP2KacW1ZWvsR7uQhoyTYvKAupfQrRGBFM352Gk=",
    "golang.org/x/text v0.3.7/go.mod h1:u+2+/6zg+i71rQMx5EYifcz6MCKuco9NR6JIITiCfzQ=",
    "request id 6f1c2a9e-7b3d-4e8f-9a0b-1c2d3e4f5a6b failed",
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">',
    "at org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.createBean",
    "src/main/java/com/example/demo/DemoApplicationTests2.java:14",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6: version GLIBCXX_3.4.29 not found",
    "Digest: sha256=q3X9vLm2RtY8pK4wZ7bN1cF5hJ0gD6sAeU3iO8yT2rX=",
    'ETag: "q3X9vLm2RtY8pK4wZ7bN1cF5hJ0gD6sAeU3iO8"',
    "Content-Security-Policy: script-src 'nonce-q3X9vLm2RtY8pK4wZ7bN1cF5hJ0gD6sAeU3iO8'",
    "Error: Cannot find module '@babel/plugin-transform-runtime/lib/index.js'",
    "TypeError: Cannot read properties of undefined (reading 'getInitialPropsForComponent2')",
    "E: Failed to fetch http://archive.ubuntu.com/ubuntu/pool/main/o/openssl/libssl3_3.0.2-0ubuntu1.10_amd64.deb",
  ]);
  test("public hashes, digests, sums and ids stay (test/fixtures/benign-hashes.json)", () => {
    const file = join(resolve(import.meta.dir, "../.."), "test/fixtures/benign-hashes.json");
    const { hashes } = JSON.parse(readFileSync(file, "utf8")) as { hashes: string[] };
    expect(hashes.length).toBeGreaterThan(20);
    expect(hashes.filter((t) => redactText(t).text !== t)).toEqual([]);
  });
  test("a base64 block (an image, a certificate) wrapped at 64 or 76 columns stays", () => {
    const block = wrap(
      j(
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ",
        "RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD",
        "VQQDExlCYWx0aW1vcmUgQ3liZXJUcnVzdCBSb290MB4XDTAwMDUxMjE4NDYwMFoX",
      ),
      64,
    ).join("\n");
    expect(redactText(block).counts).toEqual({});
    expect(redactText(`-----BEGIN CERTIFICATE-----\n${block}\n-----END CERTIFICATE-----`).counts).toEqual({});
  });
});

describe("forms the session 15 probes found", () => {
  const PEM_BODY = j(
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKB",
    "\nwqJjb3W0Q2F4oPZ8mX4n3r2RL9v+Yz1Kq6cF0eT8pD2hN5sW7uA9yB3xM1gC4kJ6",
  );
  redacts([
    [
      "a PEM block with blanks inside its dashes",
      "private_key",
      `----- BEGIN RSA PRIVATE KEY -----\n${PEM_BODY}\n----- END RSA PRIVATE KEY -----`,
      ["wqJjb3W0Q2F4oPZ8"],
    ],
    ["httpie's -a user:password", "password", `http -a bob:${PASSWORD} https://api.acme.io/me`, [PASSWORD]],
    ["Python requests' auth tuple", "password", `requests.get(url, auth=("bob", "${PASSWORD}"))`, [PASSWORD]],
    ["requests' HTTPBasicAuth", "password", `s.auth = HTTPBasicAuth('bob', '${PASSWORD}')`, [PASSWORD]],
    ["xh's --auth=user:password", "password", `xh --auth=bob:${PASSWORD} get api.acme.io/me`, [PASSWORD]],
  ]);
  test("a prefixed token as a path segment (secrets-everywhere, seed 0x5ec2e75 with the session 15 kinds)", () => {
    const key = j("tskey-auth-", "RS8L52BMEsKi-ETU9i3X5P5F69VQw9FFDUbIIknSMt8YDz");
    expect(redactText(`deploy/${key}/values.yaml`).text).toBe("deploy/<redacted:tailscale_key>/values.yaml");
  });
  staysClean([
    "tar -a -cf out.tar.zst dir/",
    "git log -a --author=bob:fix",
    'requests.get(url, auth=("bob", os.environ["PW"]))',
    'auth=("user", "password")',
    'HTTPBasicAuth("<user>", "<password>")',
  ]);
});

describe("the session 15 readings stay linear on 64 kB hostile inputs", () => {
  const units = [
    "----- BEGIN PRIVATE KEY ----- ",
    "-a a:",
    '"a" + "',
    '"a"\n"',
    "'a' . '",
    '"a", "',
    "ghp_abcdefgh\n",
    "aaaaaaaaaaaaaaaaaaaa\n+",
    "A1b2C3d4E5f6G7h8I9j0 ",
    "Ab1/",
    "api key ",
    "token is ",
    "AWS Secret Access Key [",
    "\\\n",
    "eyJaaaaaaaaaaaaa.eyJaaaaaaaaa.\n",
    '"xoxb-aaaaaaaaaa" + "',
    "sk_live_aaaaaaaaaaaa\n+",
    "+# aaaaaaaaaaaaaaaaaaaa\n",
    'gh\u200bp_a" + "',
    "gh\u0440_aaaaaaaaaaaaaaaa\n",
    "<redacted:github_token>\nAb1Cd2Ef3Gh\n",
    'auth=("a", "',
    "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx\n",
  ];
  for (const unit of units) {
    test(JSON.stringify(unit), () => {
      const text = unit.repeat(Math.ceil(65_536 / unit.length)).slice(0, 65_536);
      const t0 = process.cpuUsage();
      redactText(text);
      expect(cpuMsSince(t0)).toBeLessThan(1500);
    });
  }
});

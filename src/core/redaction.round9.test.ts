// Session 16 (redact16), redaction round 9: bare keys whose letters lean to one case, tokens split
// into shell variables, PEM key bodies pasted without their armour, and the false alarms the benign
// corpus left (docs/content-safety.md §1). Each `redacts` case failed before this round; each
// `staysClean` input is real text that must keep passing. Fake credentials are assembled at run time
// so no scanner mistakes this file for a leak.
import { describe, expect, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { redactDeep, redactText, redactTrail } from "./redaction.ts";
import { rejectionReasons } from "./rejection.ts";
import { scoreQuality } from "./quality.ts";
import { cpuMsSince } from "../../test/support/cpu-time";
import { redacts, staysClean } from "../../test/support/redaction-cases";

const j = (...parts: string[]) => parts.join("");

describe("bare keys whose letters lean to one case (secrets-everywhere seeds 0 and 24)", () => {
  const SEED0 = j("DHRYKNH2GlhvBsTVIid6", "cYow9hbqWQPXOBDJ1MZa");
  const SEED24 = j("tprhXHCdSkjrpfnGGjdb", "a4rmeyicqB2z8FDa2077");
  const ONE_DIGIT = j("XLLiecAkcCvMNEmSyiVE", "CzhUaW2FCCswVPprMBgu");
  const NO_DIGIT = j("RO+sRVnCQNdqAyDmoybv", "Po+hTXJuSYZnMSuibrVq");
  redacts([
    [
      "an upper-case-heavy key on a diff's hunk header (seed 0)",
      "high_entropy_secret",
      `--- a/deploy/env.sh\n+++ b/deploy/env.sh\n@@ -12,7 +12,7 @@ we run ${SEED0}\n-x=1\n+x=2`,
      [SEED0],
    ],
    ["a lower-case-heavy key in prose (seed 24)", "high_entropy_secret", `on the runner ${SEED24} in CI`, [SEED24]],
    ["a key with one digit", "high_entropy_secret", `export it: ${ONE_DIGIT}`, [ONE_DIGIT]],
    ["a key with no digit", "high_entropy_secret", `key = "${NO_DIGIT}"`, [NO_DIGIT]],
  ]);
  // Identifiers and data of the benign corpus and of node_modules, /usr/include and python3's
  // library that a lower bar would have read as keys.
  staysClean([
    "xmlSecOpenSSLAppKeysMngrCertLoad(mngr, file, xmlSecKeyDataFormatPem)",
    "if (xmlSecTmplX509DataAddCertificate(x509DataNode) == NULL) {",
    "xmlSecGCryptKeyDataRsaAdoptKeyPair failed",
    "kMaxCallbacksUntilQueueIsShortened is now 1000",
    "PCSCv2_PART10_PROPERTY_wIdVendor and PCSCv2_PART10_PROPERTY_dwMaxAPDUDataSize",
    "Fast_Unaligned_Load_X86_ISA_LEVEL",
    "const letters = 'aAbcdDeEfFgGhHiIjlLmMnNoOPrsStTUuwWyYzZ'",
    "R0lGODlhoACgAOMIAAEDACwpAEpCAGdgAJaKAM28AOnVAP3rAP",
    "the docs example wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  ]);
});

describe("a token split into shell variables and joined where it is used", () => {
  const GHP_HEAD = j("ghp_", "R8kL2mQ9vX");
  const GHP_TAIL = j("4tZ7wB1nC5hJ3", "gF6dS0aP2eY8u");
  const SK_HEAD = j("sk-proj-", "Qx7bN2");
  const SK_TAIL = j("kLm9pR4tV8wZ3yH6jFa4l", "Qh3X09Rj7ndFvDEWRexf32");
  const SK_LONG = j("sk-proj-", "Qx7bN2kLm9pR4tV8wZ3yH6jFa4lQh3X09");
  const SK_REST = j("Rj7ndFvDEWRexf3", "2LxoD8nv8hLpOaOU");
  const SLACK_REST = j("2384729384-2938472938472-", "Qx7bN2kLm9pR4tV8wZ3yH6jF");
  redacts([
    [
      "two halves, joined in a header",
      "github_token",
      `T1=${GHP_HEAD}; T2=${GHP_TAIL}; curl -H "Authorization: token $T1$T2" https://api.github.com/user`,
      [GHP_HEAD, GHP_TAIL],
    ],
    [
      'export A=… B=…, then "$A$B" on the next line',
      "openai_key",
      `export A=${SK_HEAD} B=${SK_TAIL}\ncurl https://api.openai.com/v1/models -H "Authorization: Bearer $A$B"`,
      [SK_HEAD, SK_TAIL],
    ],
    [
      "the rest glued to a head long enough to be cut alone",
      "openai_key",
      `export A=${SK_LONG} B=${SK_REST}\ncurl -H "Authorization: Bearer $A$B" https://api.openai.com/v1/models`,
      [SK_REST],
    ],
    [
      "braced references, quoted values",
      "github_token",
      `P1="${GHP_HEAD}"\nP2="${GHP_TAIL}"\necho "\${P1}\${P2}" | gh auth login --with-token`,
      [GHP_TAIL],
    ],
    [
      "assignments inside a quoted command (secrets-everywhere seeds 5, 7, 10 with the shell-split kind)",
      "github_token",
      `after upgrading='T1=${GHP_HEAD}; T2=${GHP_TAIL}; curl -H "Authorization: token $T1$T2" https://api.github.com/user'`,
      [GHP_HEAD, GHP_TAIL],
    ],
    [
      "the prefix written at the use",
      "slack_token",
      `T=${SLACK_REST}; curl -H "Authorization: Bearer xoxb-$T" https://slack.com/api/auth.test`,
      [SLACK_REST],
    ],
  ]);
  test("the halves in separate commands of one trail's list", () => {
    const r = redactDeep({
      commands: [`export T1=${GHP_HEAD}`, `export T2=${GHP_TAIL}`, 'curl -H "Authorization: token $T1$T2" https://api.github.com/user'],
    });
    const out = JSON.stringify(r.value);
    expect(out).not.toContain(GHP_HEAD);
    expect(out).not.toContain(GHP_TAIL);
    expect(r.counts.github_token).toBeGreaterThanOrEqual(1);
  });
  staysClean([
    "A=foo B=bar; echo $A$B",
    "PREFIX=/usr/local; export PATH=$PREFIX/bin:$PATH",
    "VERSION=1.2.3; NAME=app; docker build -t $NAME:$VERSION .",
    'TOKEN=$(gh auth token); curl -H "Authorization: token $TOKEN" https://api.github.com',
    'BASE=https://api.example.com; VER=v2; curl "$BASE/$VER/items"',
    // A masked display is the right way to show a token (jsboige/CoursIA#8519 read one as a leak).
    "the token ghp_IMfYN5...NCsd was revoked",
  ]);
});

describe("a private key's body pasted without its BEGIN/END lines is redacted whole", () => {
  // Keys made at run time (no key in the repository); the armour stripped as a paste loses it.
  const body = (pem: string) => pem.split("\n").filter((l) => l && !l.startsWith("-----"));
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const ed = generateKeyPairSync("ed25519");
  const pem = (k: { export(o: object): string | Buffer }, o: object) => body(k.export({ format: "pem", ...o }) as string);
  // openssh-key-v1: magic, cipher "none", KDF "none", no KDF options, one key, its public blob, the private section.
  const sshString = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, (b.length >> 8) & 255, b.length & 255]), b]);
  const openssh = Buffer.concat([
    Buffer.from("openssh-key-v1\0"),
    sshString(Buffer.from("none")),
    sshString(Buffer.from("none")),
    sshString(Buffer.alloc(0)),
    Buffer.from([0, 0, 0, 1]),
    sshString(Buffer.concat([sshString(Buffer.from("ssh-ed25519")), sshString(randomBytes(32))])),
    sshString(randomBytes(152)),
  ])
    .toString("base64")
    .match(/.{1,70}/g)!;
  const keys: [string, string[]][] = [
    ["PKCS#8 RSA (MIIEvQIBADANBgkqhkiG9w0BAQEFAASC…)", pem(rsa.privateKey, { type: "pkcs8" })],
    ["PKCS#1 RSA (MIIEpAIBAAKCAQEA…)", pem(rsa.privateKey, { type: "pkcs1" })],
    ["SEC1 EC (MHcCAQEEI…)", pem(ec.privateKey, { type: "sec1" })],
    ["PKCS#8 EC (MIGHAgEAMBMGByqGSM49…)", pem(ec.privateKey, { type: "pkcs8" })],
    ["PKCS#8 Ed25519, one line (MC4CAQAwBQYDK2VwBCIEI…)", pem(ed.privateKey, { type: "pkcs8" })],
    ["encrypted PKCS#8 (PBES2)", pem(rsa.privateKey, { type: "pkcs8", cipher: "aes-256-cbc", passphrase: "correct horse" })],
    ["OpenSSH (b3BlbnNzaC1rZXktdjEAAAAA…)", openssh],
  ];
  for (const [name, lines] of keys) {
    test(name, () => {
      const forms = [
        `I pasted the key into the secret:\n${lines.join("\n")}\nand the job still fails`,
        `--- a/deploy/key\n+++ b/deploy/key\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}`,
        `export SSH_PRIVATE_KEY="${lines.join("\\n")}"`,
        `SSH_KEY=${lines.join("")}`,
      ];
      for (const input of forms) {
        const r = redactText(input);
        for (const line of lines) expect(r.text).not.toContain(line.slice(0, 40));
        expect(r.counts).toEqual({ private_key: 1 });
        expect(redactText(r.text).counts).toEqual({});
      }
    });
  }
  test("a redacted body leaves the trail nothing to refuse (it was cut whole as sensitive_content)", () => {
    const lines = pem(rsa.privateKey, { type: "pkcs8" });
    const t = {
      protocol_version: "1.0",
      problem: {
        error: 'Load key "/root/.ssh/id_rsa": invalid format',
        root_cause: "The key file was pasted without its header and footer lines",
      },
      solution: { summary: "Restore the BEGIN and END lines around the key body", steps: [`The file held only:\n${lines.join("\n")}`] },
      agent_info: { model: "m", framework: "f" },
      environment: { os: "linux", runtime: { name: "node" } },
    };
    const red = redactTrail(t).value;
    expect(JSON.stringify(red)).not.toContain(lines[3]!);
    expect(red.solution.steps[0]).toBe("The file held only:\n<redacted:private_key>");
    expect(rejectionReasons(red as never, scoreQuality(red as never))).not.toContain("sensitive_content");
  });
  // Public material opens with a SEQUENCE inside the SEQUENCE: certificates, public keys, requests.
  staysClean([
    pem(rsa.publicKey, { type: "spki" }).join("\n"),
    pem(rsa.publicKey, { type: "pkcs1" }).join("\n"),
    pem(ec.publicKey, { type: "spki" }).join("\n"),
    [
      "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ",
      "RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD",
      "VQQDExlCYWx0aW1vcmUgQ3liZXJUcnVzdCBSb290MB4XDTAwMDUxMjE4NDYwMFoX",
    ].join("\n"),
    "+MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ",
    "Meanwhile the MIGRATION_TIMEOUT_SECONDS_FOR_LARGE_TABLES setting was raised",
  ]);
});

describe("false alarms the session 15 benign corpus left (docs/content-safety.md §1)", () => {
  // Lines of /usr/share/doc changelogs and man pages on this machine (bench/benign-corpus.ts).
  staysClean([
    "XFree86 4.3.0.1",
    "It hasn't been used since libxcb 1.1.90.1, released in 2008.",
    "libXi 1.6.99.1",
    "Require inputproto 2.0.99.1 or later",
    "* OpenJDK 17.0.21.1 release, build 2.",
    "- GCC 2.95 and GCC 2.7.2.3 were removed for the",
    "Linux 2.6.8.1 includes ALSA driver",
    "* doc/Doxyfile.in: Upgrade to doxygen 1.8.1.2 format.",
    "Upgrade v8 to 3.14.5.9",
    "Fixes since 1.5.4.7",
    "node v10.16.3.1 and ver: 1.2.3.4, version 4.0.0.1",
    "* [`0a7bf81d2f`] - **deps**: update V8 to 4.2.77.20 (Ali Ijaz Sheikh)",
    "* **V8**: upgrade V8 from 4.1.0.21 to 4.2.77.18 with minor fixes",
    "| `http -a bob:PASSWORD …` (httpie) and `xh --auth=bob:PASSWORD`, Python's",
    "Google Chrome 120.0.6099.109 (Official Build) (64-bit)",
    'msmtp --auth=on --smtp-auth="PLAIN LOGIN GSSAPI"',
    "git send-email --smtp-auth=LOGIN",
    "--auth=authmethod",
    "blkid --match-token TYPE=ext4 /dev/sda1",
    "blkid --match-token NAME=value",
    "docker build --secret id=npmrc,src=$HOME/.npmrc -t app .",
    "docker buildx build --secret id=aws,src=$HOME/.aws/credentials .",
    "http --auth USER:PASS example.org",
    "xh --auth bob:pw get api.acme.io/me",
    "curl --auth user:password https://jenkins.example.org/api",
  ]);
  // What the same shapes still catch: addresses after words that name hosts, real values.
  redacts([
    ["an address after a DNS change", "ip_address", "Updated DNS to 93.184.216.34", ["93.184.216.34"]],
    ["an address after a server's name", "ip_address", "connect to redis 10.0.0.7 failed", ["10.0.0.7"]],
    ["a node's address", "ip_address", "node 10.0.0.5 is NotReady", ["10.0.0.5"]],
    // A word ending in `ver` read as `ver ` (version) kept the address after it (test/fixtures/fingerprint-real-variants-2.json).
    ["an update to an address", "ip_address", "updated the resolver to 10.20.30.40", ["10.20.30.40"]],
    ["kubectl's server address", "ip_address", "Unable to connect to the server: dial tcp 10.1.0.215:6443: i/o timeout", ["10.1.0.215"]],
    ["a nameserver line", "ip_address", "nameserver 10.0.0.53", ["10.0.0.53"]],
    ["a real password after a user", "password", `xh --auth bob:${j("Tr0ub4", "dor3xK")} get api.acme.io`, ["dor3xK"]],
    ["a secret-named tag's value", "token", `tool --match-token DB_PASSWORD=${j("Tr0ub4", "dor3xK")}`, ["dor3xK"]],
    ["an auth option's value with digits", "token", `--auth=${j("Tr0ub4", "dor3")}`, ["dor3"]],
  ]);
});

describe("forms the session 16 probes found (secrets-everywhere with the shell-split and unarmoured kinds)", () => {
  const KEY = j("PPfJg7Rj3j9IEypMDvSQ", "CJIjaJIRl10xJgL9z7jy");
  redacts([
    [
      "aws configure's answer as a directory of a patched file's path",
      "aws_secret_key",
      `deploy/AWS Secret Access Key [None]: ${KEY}/values.yaml`,
      [KEY],
    ],
    [
      "a JSON secret on a removed diff line (`-` just before the name's quote)",
      "secret",
      `--- a/config/settings.py\n+++ b/config/settings.py\n@@ -1,3 +1,3 @@\n import os\n-"client_secret": "${j("PPXpl7wxCj", "1LJ5D3JfIw")}"\n-DEBUG = True\n+DEBUG = False`,
      ["1LJ5D3JfIw"],
    ],
    ["a removed JSON password line", "password", `-"password": "${j("Tr0ub4", "dor3xK")}"`, ["dor3xK"]],
  ]);
});

describe("the session 16 readings stay linear on 64 kB hostile inputs", () => {
  const units = [
    "MAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", // every line a block's start before the fix: 107 ms
    "+MAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
    "b3BlbnNzaC1rZXktdjEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
    "MAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA ",
    "$a", // one use of 32,768 pieces
    "$v1$v2 ",
    "x='a=b ",
    `x="a='b=c $a$b' $x$x" `,
    "DHRYKNH2GlhvBsTVIid6cYow9hbqWQPXOBDJ1MZa ",
  ];
  for (const unit of units) {
    test(JSON.stringify(unit), () => {
      const text = `a=ghp_abc v1=ghp_x1 v2=Ab1Cd2Ef3Gh4 ${unit.repeat(Math.ceil(65_536 / unit.length))}`.slice(0, 65_536);
      const t0 = process.cpuUsage();
      redactText(text);
      expect(cpuMsSince(t0)).toBeLessThan(1500);
    });
  }
  test("many distinct joins are read up to a bound", () => {
    const names = Array.from({ length: 300 }, (_, i) => `v${i}=Ab1Cd2Ef3Gh4${i}`).join(";");
    const uses = Array.from({ length: 3000 }, (_, i) => `$v${i % 300}$v${(i * 7) % 300}`).join(" ");
    const t0 = process.cpuUsage();
    redactText(`${names};${uses}`.slice(0, 65_536));
    expect(cpuMsSince(t0)).toBeLessThan(1500);
  });
});

// Session 16 (redact16), redaction round 9: bare keys whose letters lean to one case, tokens split
// into shell variables, PEM key bodies pasted without their armour, and the false alarms the benign
// corpus left (docs/content-safety.md §1). Each `redacts` case failed before this round; each
// `staysClean` input is real text that must keep passing. Fake credentials are assembled at run time
// so no scanner mistakes this file for a leak.
import { describe, expect, test } from "bun:test";
import { redactDeep, redactText } from "./redaction.ts";

const j = (...parts: string[]) => parts.join("");

/** Each input loses every one of `gone` and counts `kind`; a second pass changes nothing. */
function redacts(cases: [string, string, string, string[]][]) {
  for (const [name, kind, input, gone] of cases) {
    test(name, () => {
      const r = redactText(input);
      for (const g of gone) expect(r.text).not.toContain(g);
      expect(r.counts[kind]).toBeGreaterThanOrEqual(1);
      expect(redactText(r.text).counts).toEqual({});
    });
  }
}

function staysClean(inputs: string[]) {
  for (const input of inputs) {
    test(`stays: ${JSON.stringify(input).slice(0, 70)}`, () => {
      expect(redactText(input)).toEqual({ text: input, counts: {} });
    });
  }
}

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

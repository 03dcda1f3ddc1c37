// Session 16 (redact16), redaction round 9: bare keys whose letters lean to one case, tokens split
// into shell variables, PEM key bodies pasted without their armour, and the false alarms the benign
// corpus left (docs/content-safety.md §1). Each `redacts` case failed before this round; each
// `staysClean` input is real text that must keep passing. Fake credentials are assembled at run time
// so no scanner mistakes this file for a leak.
import { describe, expect, test } from "bun:test";
import { redactText } from "./redaction.ts";

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

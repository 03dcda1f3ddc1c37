// Table-driven redaction tests shared by the rounds' test files (src/core/redaction.*.test.ts).
import { expect, test } from "bun:test";
import { redactText } from "../../src/core/redaction.ts";

/** Each input ([name, kind, input, gone]) loses every one of `gone` and counts `kind`; a second pass changes nothing. */
export function redacts(cases: [string, string, string, string[]][]): void {
  for (const [name, kind, input, gone] of cases) {
    test(name, () => {
      const r = redactText(input);
      for (const g of gone) expect(r.text).not.toContain(g);
      expect(r.counts[kind]).toBeGreaterThanOrEqual(1);
      expect(redactText(r.text).counts).toEqual({});
    });
  }
}

/** Each [kind, token] in every place a token turns up: an error, a patch's added and removed lines, a command, a URL, a JSON-escaped string, base64 of user:token. */
export function redactsInEveryPlace(tokens: [string, string][]): void {
  for (const [kind, token] of tokens) {
    const tail = token.slice(-12);
    const b64 = Buffer.from(`ci:${token}`).toString("base64");
    redacts([
      [`${kind}: in an error`, kind, `request failed: ${token} was rejected (401)`, [tail]],
      [`${kind}: on a patch's added line`, kind, `--- a/app.yaml\n+++ b/app.yaml\n@@ -1 +1 @@\n-  x: 1\n+  x: ${token}`, [tail]],
      [`${kind}: on a patch's removed line`, kind, `--- a/app.yaml\n+++ b/app.yaml\n@@ -1 +1 @@\n-  x: ${token}\n+  x: 1`, [tail]],
      [`${kind}: in a command`, kind, `curl -s https://api.example.io/v1 -d 'k=${token}'`, [tail]],
      [`${kind}: in a URL, percent-encoded`, kind, `https://api.example.io/cb?k=${encodeURIComponent(token)}&x=1`, [tail]],
      [`${kind}: in a JSON-escaped string`, kind, `{"cmd": "run \\u0022${token}\\u0022"}`, [tail]],
      [`${kind}: base64 of user:token, unnamed`, kind, `creds ${b64} in the log`, [b64.slice(8, 30)]],
    ]);
  }
}

/** Each input comes back unchanged, with nothing counted. */
export function staysClean(inputs: string[]): void {
  for (const input of inputs) {
    test(`stays: ${JSON.stringify(input).slice(0, 70)}`, () => {
      expect(redactText(input)).toEqual({ text: input, counts: {} });
    });
  }
}

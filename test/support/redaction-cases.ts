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

/** Each input comes back unchanged, with nothing counted. */
export function staysClean(inputs: string[]): void {
  for (const input of inputs) {
    test(`stays: ${JSON.stringify(input).slice(0, 70)}`, () => {
      expect(redactText(input)).toEqual({ text: input, counts: {} });
    });
  }
}

import { expect, test } from "bun:test";
import { createLogger } from "./log";

test("a log line shows no raw control or invisible character of a field, and parses to the same values", () => {
  // Fields carry clients' text (a stdio line's id, an SDK error message quoting it): an 8-bit CSI
  // (U+009B) or a bidi override in it reached the terminal of whoever reads the logs as it acts.
  const lines: string[] = [];
  const id = "call\u009b2J\u001b[31m\u202e1-dI\u2028next";
  createLogger("info", (line) => lines.push(line)).warn("refused a line of stdin", { id });
  expect(lines).toHaveLength(1);
  expect(lines[0]!.endsWith("\n")).toBe(true);
  expect(lines[0]!.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u);
  expect(JSON.parse(lines[0]!).id).toBe(id);
});

import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { ServiceError } from "../service/errors.ts";
import { ERROR_CODES, type ErrorCode, isRetryable } from "./error-codes.ts";

// interface.md §7, copied here so a clone without ../shared still checks it (status, codes).
const SPEC_SECTION_7: [number, string[]][] = [
  [400, ["invalid_trail"]],
  [400, ["invalid_request"]],
  [401, ["unauthorized"]],
  [404, ["not_found"]],
  [409, ["discarded", "published", "in_progress"]],
  [413, ["too_large"]],
  [429, ["rate_limited"]],
  [429, ["draft_limited"]],
  [429, ["publish_limited"]],
  [501, ["not_enabled"]],
  [503, ["unavailable"]],
  [503, ["busy"]],
];

/** Rows of a markdown table whose first cell is a `code`: [code, ...other cells]. */
const tableRows = (markdown: string) =>
  markdown
    .split("\n")
    .filter((l) => /^\| *[0-9`]/.test(l))
    .map((l) =>
      l
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );

describe("error codes", () => {
  test("every code of interface.md §7 is in the table with its status", () => {
    for (const [status, codes] of SPEC_SECTION_7)
      for (const code of codes)
        expect({ code, status: ERROR_CODES[code as ErrorCode]?.status as number | undefined }).toEqual({ code, status });
  });

  test("the copy above matches interface.md §7 when the spec sits beside the checkout", () => {
    const spec = new URL("../../shared/spec/interface.md", import.meta.url);
    if (!existsSync(spec)) return; // a public clone has no ../shared; the copy above is the check
    const text = readFileSync(spec, "utf8");
    const section = text.slice(text.indexOf("## 7. Errors"), text.indexOf("## 8."));
    const rows = tableRows(section).map(([status, codes]) => [Number(status), codes!.split(",").map((c) => c.trim())]);
    expect(rows).toEqual(SPEC_SECTION_7);
  });

  test("docs/errors.md shows exactly the table", () => {
    const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    const documented = tableRows(doc).map(([code, status, retryable, message]) => [
      code!.replaceAll("`", ""),
      Number(status),
      retryable === "yes",
      message,
    ]);
    const table = Object.entries(ERROR_CODES).map(([code, row]) => [code, row.status, row.retryable, row.message]);
    expect(documented).toEqual(table);
  });

  test("a ServiceError takes its status from its code", () => {
    expect(new ServiceError("not_found", "no trail with this id").status).toBe(404);
    expect(new ServiceError("busy").status).toBe(503);
    expect(new ServiceError("internal").message).toBe("internal error");
    expect(isRetryable("rate_limited")).toBe(true);
    expect(isRetryable("invalid_trail")).toBe(false);
    expect(isRetryable("something_else")).toBe(false);
  });
});

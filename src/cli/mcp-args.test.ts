import { describe, expect, test } from "bun:test";
import { UsageError } from "./command";
import { parseMcpArgs } from "./mcp-args";

describe("parseMcpArgs", () => {
  test("stdio, --http with or without a port, and refusals", () => {
    expect(parseMcpArgs([])).toBeNull();
    expect(parseMcpArgs(["--http"])).toBeNaN();
    expect(parseMcpArgs(["--http", "--port", "9000"])).toBe(9000);
    expect(parseMcpArgs(["--http", "--port=0"])).toBe(0);
    expect(parseMcpArgs(["--port", "9000", "--http"])).toBe(9000);
    // Each refusal says what is wrong (it was "unknown arguments: …" for all of them).
    for (const [bad, message] of [
      [["--port", "9000"], "--port is for the HTTP server: colony mcp --http --port N"],
      [["--http", "--port"], "--port needs a value"],
      [["--http", "--port", "x"], '--port takes a whole number from 0 to 65535 (got "x")'],
      [["--http", "--port", "70000"], '--port takes a whole number from 0 to 65535 (got "70000")'],
      [["stdio"], 'unexpected argument "stdio"'],
      [["--http", "extra"], 'unexpected argument "extra"'],
      [["--htp"], "unknown option --htp"],
    ] as const) {
      expect(() => parseMcpArgs([...bad])).toThrow(new UsageError(message));
    }
  });
});

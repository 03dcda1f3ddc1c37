import { describe, expect, test } from "bun:test";
import { acceptsAnswer, acceptWeight, answerType } from "./accept";
import { cpuMsSince } from "../../test/support/cpu-time";

describe("Accept read as RFC 9110 §12.5.1", () => {
  test("wildcards list application/json (the headers curl, HTTP libraries and MCP clients send)", () => {
    for (const accept of [
      "*/*",
      "application/*",
      "application/json, */*;q=0.8",
      "application/json, text/event-stream",
      "text/event-stream, application/json",
      "APPLICATION/JSON",
      "application/json; charset=utf-8",
      "text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8",
      "application/json;q=0.001",
      "  */*  ;  q=1.0 ",
    ]) {
      expect([accept, acceptsAnswer(accept)]).toEqual([accept, true]);
    }
  });

  test("no Accept, or a blank one, accepts any type", () => {
    expect(acceptsAnswer(null)).toBe(true);
    expect(acceptsAnswer("")).toBe(true);
    expect(acceptsAnswer("   ")).toBe(true);
  });

  test("q=0 refuses, and the most specific range decides", () => {
    for (const accept of [
      "text/html",
      "text/event-stream;q=0",
      "application/json;q=0, */*;q=0",
      "application/json;q=0.000, application/*",
      "*/*;q=0",
      "application/json;q=0, text/event-stream;q=0",
      "application/jsonx, application/json-seq",
      "json",
      "*/json",
    ]) {
      expect([accept, acceptsAnswer(accept)]).toEqual([accept, false]);
    }
    // Refusing JSON but taking the event stream (the type, text/*, */*) is answered as events.
    for (const accept of [
      "text/event-stream",
      "text/*",
      "application/json;q=0, */*",
      "application/*;q=0, */*",
      "application/json;q=0, text/event-stream",
    ]) {
      expect([accept, answerType(accept)]).toEqual([accept, "text/event-stream"]);
    }
    expect(answerType("application/json, text/event-stream")).toBe("application/json");
    expect(acceptWeight("application/*;q=0.2, */*;q=0.9", "application/json")).toBe(0.2);
    expect(acceptWeight("application/json;q=0.3, application/*;q=0.9", "application/json")).toBe(0.3);
  });

  test("a malformed element is skipped, not read as a weight of 1", () => {
    expect(acceptsAnswer("application/json;q=2")).toBe(false);
    expect(acceptsAnswer("application/json;q=NaN")).toBe(false);
    expect(acceptsAnswer("application/json;q=-0, */*;q=0.1")).toBe(true);
    expect(acceptWeight("application/json;q=abc, */*;q=0.5", "application/json")).toBe(0.5);
  });

  test("a hostile header costs linear time", () => {
    const accept = `${"a/b;x=1;".repeat(5_000)}, ${",".repeat(50_000)}application/json`;
    const started = process.cpuUsage();
    expect(acceptsAnswer(accept)).toBe(true);
    expect(cpuMsSince(started)).toBeLessThan(200);
  });
});

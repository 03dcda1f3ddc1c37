import { describe, expect, test } from "bun:test";
import { ColonyClientError } from "../colony-client";
import { describeColonyError } from "./results";

const say = (status: number, code: string, retryAfter: number | null = null, details: { path: string; message: string }[] = []) =>
  describeColonyError(new ColonyClientError(status, code, "the message", retryAfter, details), "http://colony:8080");

describe("describeColonyError", () => {
  test("every refusal becomes a message a model can act on", () => {
    expect(say(429, "rate_limited", 17)).toBe("rate limited (rate_limited): retry in 17 s. the message.");
    expect(say(429, "publish_limited")).toStartWith("rate limited (publish_limited): retry later with backoff");
    expect(say(503, "busy", 3)).toBe("the colony is busy (too many trails waiting): retry in 3 s.");
    expect(say(503, "unavailable")).toStartWith("the colony is unavailable (unavailable): retry later with backoff");
    expect(say(404, "not_found")).toBe("not found: the message.");
    expect(say(409, "published")).toStartWith("the draft is already published");
    expect(say(400, "invalid_trail", null, [{ path: "/problem/error", message: "required" }])).toBe(
      "the colony refused the request (invalid_trail): the message.\n  /problem/error: required",
    );
    expect(say(0, "unreachable")).toContain("check COLONY_URL (http://colony:8080)");
    expect(say(0, "timeout")).toBe(
      "the message (overloaded or stalled, or a network that drops the connection); retry later with backoff.",
    );
    expect(say(0, "timeout")).not.toContain("unreachable");
    expect(say(500, "internal")).toBe("the colony answered 500 internal: the message.");
  });
});

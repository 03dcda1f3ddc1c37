import { expect, test } from "bun:test";
import { FixedWindowLimiter, quotaHeaders } from "./rate-limit";

test("counts uses per key within the window, then resets", () => {
  let now = 1_000_000;
  const l = new FixedWindowLimiter(2, 60_000, () => now);
  expect(l.take("a")).toMatchObject({ allowed: true, remaining: 1, limit: 2, reset: 60 });
  expect(l.take("a")).toMatchObject({ allowed: true, remaining: 0 });
  expect(l.take("a")).toMatchObject({ allowed: false, remaining: 0 });
  expect(l.take("b").allowed).toBe(true);
  now += 30_500;
  expect(l.take("a")).toMatchObject({ allowed: false, reset: 30 });
  now += 30_000;
  expect(l.take("a")).toMatchObject({ allowed: true, remaining: 1, reset: 60 });
});

test("peek does not count", () => {
  const l = new FixedWindowLimiter(1, 1000, () => 0);
  expect(l.peek("k").remaining).toBe(1);
  expect(l.peek("k").remaining).toBe(1);
  expect(l.take("k").allowed).toBe(true);
  expect(l.peek("k")).toMatchObject({ allowed: false, remaining: 0 });
});

test("headers carry limit, remaining and reset seconds", () => {
  expect(quotaHeaders({ limit: 600, remaining: 599, reset: 60 })).toEqual({
    "RateLimit-Limit": "600",
    "RateLimit-Remaining": "599",
    "RateLimit-Reset": "60",
  });
});

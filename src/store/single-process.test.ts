import { expect, test } from "bun:test";
import { FixedWindowLimiter, LocalChangeFeed, SoleLeader } from "./single-process";

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

test("a local feed calls every listener before announce resolves, until unsubscribed", async () => {
  const feed = new LocalChangeFeed<{ n: number }>();
  const seen: number[] = [];
  const stop = feed.subscribe((c) => seen.push(c.n));
  feed.subscribe((c) => seen.push(c.n * 10));
  const sent = feed.announce({ n: 1 });
  expect(seen).toEqual([1, 10]);
  await sent;
  stop();
  await feed.announce({ n: 2 });
  expect(seen).toEqual([1, 10, 20]);
});

test("the sole leader runs every task, but not one that is still running", async () => {
  const leader = new SoleLeader();
  let release!: () => void;
  const first = leader.run("purge", () => new Promise<void>((r) => (release = r)));
  expect(await leader.run("purge", async () => {})).toBe(false);
  expect(await leader.run("reindex", async () => {})).toBe(true);
  release();
  expect(await first).toBe(true);
  expect(await leader.run("purge", async () => {})).toBe(true);
});

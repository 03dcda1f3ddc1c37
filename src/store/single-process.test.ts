import { expect, test } from "bun:test";
import { FixedWindowLimiter, LocalChangeFeed, MAX_QUOTA_WINDOWS, SoleLeader } from "./single-process";

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

test("1,000,000 distinct addresses within one window keep the limiter at its bound; the newest keep their counts", () => {
  const l = new FixedWindowLimiter(1, 60_000, () => 5_000);
  for (let i = 0; i < 1_000_000; i++) l.take(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
  expect(l.size).toBe(MAX_QUOTA_WINDOWS);
  expect(l.take("10.15.66.63").allowed).toBe(false); // address 999,999: still counted
  expect(l.take("10.0.0.0").allowed).toBe(true); // the oldest was forgotten: it starts afresh
}, 30_000);

test("expired windows are dropped as time passes, and peeking stores none", () => {
  let now = 0;
  const l = new FixedWindowLimiter(5, 60_000, () => now);
  for (let i = 0; i < 1000; i++) l.peek(`peek-${i}`);
  expect(l.size).toBe(0);
  for (let i = 0; i < 1000; i++) l.take(`a-${i}`);
  now = 61_000;
  for (let i = 0; i < 10; i++) l.take(`b-${i}`); // a- moved to the previous generation
  expect(l.size).toBe(1010);
  expect(l.take("a-0")).toMatchObject({ allowed: true, remaining: 4 }); // expired: a new window
  now = 122_000; // the a- windows are dropped, b- and the new a-0 kept
  l.take("c");
  expect(l.size).toBe(1001 + 11 - 1000);
  now = 400_000; // long after: nothing is left but the newest
  l.take("d");
  expect(l.size).toBe(1);
});

test("while idle, a timer drops the expired windows", async () => {
  let now = 0;
  const l = new FixedWindowLimiter(5, 50, () => now);
  for (let i = 0; i < 100; i++) l.take(`k-${i}`);
  now = 60;
  await Bun.sleep(60); // one rotation: the windows are in the previous generation
  now = 120;
  await Bun.sleep(80); // the second drops them
  expect(l.size).toBe(0);
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

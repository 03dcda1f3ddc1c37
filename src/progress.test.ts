import { describe, expect, test } from "bun:test";
import { createLogger } from "./log";
import { formatProgress, startProgress } from "./progress";

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

function logLines() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("info", (l) => lines.push(JSON.parse(l))) };
}

describe("formatProgress", () => {
  test("count, total, percentage, rate and time left", () => {
    expect(formatProgress({ label: "re-embedding trails", unit: "trails", done: 1200, total: 5000, elapsedMs: 1500 })).toBe(
      "re-embedding trails: 1,200/5,000 trails (24%), 800/s, about 5 s left",
    );
  });
  test("without a total: the count and rate only; slow rates keep a decimal", () => {
    expect(formatProgress({ label: "importing", unit: "trails", done: 3, total: undefined, elapsedMs: 2000 })).toBe(
      "importing: 3 trails, 1.5/s",
    );
  });
  test("finished: the time taken instead of the time left", () => {
    expect(formatProgress({ label: "x", unit: "rows", done: 10, total: 10, elapsedMs: 125_000 }, true)).toBe(
      "x: 10/10 rows (100%), 0.1/s, done in 2 min 5 s",
    );
  });
});

describe("startProgress on a terminal", () => {
  test("one line rewritten in place, at most every 200 ms, ended by a newline", () => {
    const c = clock();
    const out: string[] = [];
    const { lines, logger } = logLines();
    const p = startProgress({
      label: "job",
      unit: "trails",
      total: 100,
      logger,
      stream: { isTTY: true, write: (s) => out.push(s) },
      now: c.now,
    });
    expect(out).toEqual(["\rjob: 0/100 trails (0%), 0.0/s\x1b[K"]);
    c.advance(100);
    p.tick(10); // too soon: not shown
    expect(out.length).toBe(1);
    c.advance(100);
    p.tick(10);
    expect(out[1]).toBe("\rjob: 20/100 trails (20%), 100/s, about 1 s left\x1b[K");
    c.advance(800);
    p.tick(80);
    p.finish();
    p.finish(); // once
    expect(out.at(-1)).toBe("\rjob: 100/100 trails (100%), 100/s, done in 1 s\x1b[K\n");
    expect(out.filter((s) => s.endsWith("\n")).length).toBe(1);
    expect(lines).toEqual([]); // nothing in the log
    expect(p.done).toBe(100);
  });
});

describe("startProgress without a terminal", () => {
  test("log lines with counts and rate, at most every 5 s, and a last one with the job's fields", () => {
    const c = clock();
    const out: string[] = [];
    const { lines, logger } = logLines();
    const p = startProgress({ label: "importing trails", logger, stream: { isTTY: false, write: (s) => out.push(s) }, now: c.now });
    for (let i = 0; i < 10; i++) {
      c.advance(1000);
      p.tick();
    }
    p.setTotal(10);
    p.finish({ added: 7 });
    expect(out).toEqual([]);
    expect(lines.map((l) => [l.msg, l.done, l.total, l.rate_per_s])).toEqual([
      ["importing trails", 0, undefined, 0],
      ["importing trails", 5, undefined, 1],
      ["importing trails", 10, undefined, 1],
      ["importing trails: done", 10, 10, 1],
    ]);
    expect(lines.at(-1)).toMatchObject({ level: "info", added: 7, elapsed_s: 10 });
  });
});

import { describe, expect, test } from "bun:test";
import { strength, strengthPosterior, type OutcomeCounts } from "./strength.ts";

const none: OutcomeCounts = { worked: 0, partially_worked: 0, failed: 0 };
const add = (c: OutcomeCounts, d: Partial<OutcomeCounts>): OutcomeCounts => ({
  worked: c.worked + (d.worked ?? 0),
  partially_worked: c.partially_worked + (d.partially_worked ?? 0),
  failed: c.failed + (d.failed ?? 0),
});

describe("strength (decisions §6)", () => {
  test("quality sets the starting point: (1 + 4q) / 6", () => {
    expect(strength(none, 0)).toBeCloseTo(1 / 6, 12);
    expect(strength(none, 0.5)).toBe(0.5);
    expect(strength(none, 1)).toBeCloseTo(5 / 6, 12);
    expect(strength(none, 0.8)).toBeCloseTo(4.2 / 6, 12);
  });

  test("exact formula: α = 1 + 4q + worked + ½·partial, β = 1 + 4(1 − q) + failed", () => {
    const c = { worked: 3, partially_worked: 2, failed: 1 };
    expect(strengthPosterior(c, 0.75)).toEqual({ alpha: 1 + 3 + 3 + 1, beta: 1 + 1 + 1 });
    expect(strength(c, 0.75)).toBeCloseTo(8 / 11, 12);
  });

  test("worked raises, failed lowers, partial raises less than worked", () => {
    for (const q of [0, 0.3, 0.5, 0.9, 1]) {
      for (const base of [none, { worked: 5, partially_worked: 1, failed: 0 }, { worked: 0, partially_worked: 0, failed: 7 }]) {
        const s = strength(base, q);
        const w = strength(add(base, { worked: 1 }), q);
        const p = strength(add(base, { partially_worked: 1 }), q);
        const f = strength(add(base, { failed: 1 }), q);
        expect(w).toBeGreaterThan(s);
        expect(p).toBeGreaterThan(s);
        expect(p).toBeLessThan(w);
        expect(f).toBeLessThan(s);
      }
    }
  });

  test("two partial successes count as one success", () => {
    expect(strength({ worked: 0, partially_worked: 2, failed: 1 }, 0.4)).toBeCloseTo(
      strength({ worked: 1, partially_worked: 0, failed: 1 }, 0.4),
      12,
    );
  });

  test("monotonic in quality and bounded in 0..1 over long runs", () => {
    let c = none;
    let prev = strength(c, 0.5);
    for (let i = 0; i < 500; i++) {
      c = add(c, { worked: 1 });
      const s = strength(c, 0.5);
      expect(s).toBeGreaterThan(prev);
      expect(s).toBeLessThan(1);
      prev = s;
    }
    c = none;
    prev = strength(c, 0.5);
    for (let i = 0; i < 500; i++) {
      c = add(c, { failed: 1 });
      const s = strength(c, 0.5);
      expect(s).toBeLessThan(prev);
      expect(s).toBeGreaterThan(0);
      prev = s;
    }
    const counts = { worked: 2, partially_worked: 1, failed: 3 };
    let last = -1;
    for (let q = 0; q <= 1.0001; q += 0.1) {
      const s = strength(counts, q);
      expect(s).toBeGreaterThan(last);
      last = s;
    }
  });

  test("evidence outweighs the prior: many failures sink even a top-quality trail", () => {
    expect(strength({ worked: 0, partially_worked: 0, failed: 10 }, 1)).toBeLessThan(0.4);
    expect(strength({ worked: 10, partially_worked: 0, failed: 0 }, 0)).toBeGreaterThan(0.6);
  });

  test("out-of-range inputs are clamped: negative or non-finite counts count 0, quality clamps to 0..1", () => {
    expect(strength({ worked: -3, partially_worked: Number.NaN, failed: -1 }, 0.5)).toBe(0.5);
    expect(strength(none, 7)).toBe(strength(none, 1));
    expect(strength(none, -2)).toBe(strength(none, 0));
    expect(strength(none, Number.NaN)).toBe(0.5);
  });
});

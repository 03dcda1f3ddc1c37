// The in-memory binary pass against a brute-force reference: same distances, exact k, set/delete.
import { describe, expect, test } from "bun:test";
import { HammingIndex } from "./hamming-index";

function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const randomCode = (bytes: number, rand: () => number) => Uint8Array.from({ length: bytes }, () => Math.floor(rand() * 256));

function hamming(a: Uint8Array, b: Uint8Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = a[i]! ^ b[i]!;
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d;
}

describe("HammingIndex", () => {
  for (const bits of [256, 384, 40]) {
    test(`nearest matches brute force (${bits} bits, ties included)`, () => {
      const rand = prng(bits);
      const index = new HammingIndex(bits, 4); // starts small: grows
      const codes = new Map<number, Uint8Array>();
      for (let id = 1; id <= 3000; id++) {
        // every fifth code a near-duplicate of an earlier one, so equal distances are common
        const code = id % 5 === 0 ? codes.get(id - 1)!.slice() : randomCode(bits / 8, rand);
        if (id % 5 === 0) code[0]! ^= 1;
        codes.set(id, code);
        index.set(id, code);
      }
      for (let q = 0; q < 20; q++) {
        const query = randomCode(bits / 8, rand);
        for (const k of [1, 10, 120]) {
          const got = index.nearest(query, k);
          expect(got.length).toBe(k);
          expect(new Set(got).size).toBe(k);
          const distances = got.map((id) => hamming(codes.get(id)!, query));
          expect(distances).toEqual([...distances].sort((a, b) => a - b));
          // the k-th smallest distance overall equals ours, and nothing nearer was left out
          const all = [...codes].map(([id, c]) => ({ id, d: hamming(c, query) })).sort((a, b) => a.d - b.d);
          expect(distances[k - 1]).toBe(all[k - 1]!.d);
          for (const { id, d } of all) if (d < distances[k - 1]!) expect(got).toContain(id);
        }
      }
    });
  }

  test("set replaces, delete removes and keeps the others findable, k above the size returns all, empty returns none", () => {
    const index = new HammingIndex(64);
    const a = new Uint8Array(8).fill(0xff);
    const b = new Uint8Array(8);
    const c = new Uint8Array(8).fill(0x0f);
    index.set(1, a);
    index.set(2, b);
    index.set(3, c);
    expect(index.nearest(a, 1)).toEqual([1]);
    index.set(1, b); // replaced: now equal to 2
    expect(index.count).toBe(3);
    expect(index.nearest(a, 1)).toEqual([3]);
    expect(index.delete(2)).toBe(true);
    expect(index.delete(2)).toBe(false);
    expect(index.nearest(b, 10).sort()).toEqual([1, 3]);
    expect(index.nearest(b, 1)).toEqual([1]);
    index.delete(1);
    index.delete(3);
    expect(index.count).toBe(0);
    expect(index.nearest(b, 3)).toEqual([]);
    expect(() => index.set(4, new Uint8Array(4))).toThrow(/bits/);
    expect(() => new HammingIndex(12)).toThrow(/multiple of 8/);
  });
});

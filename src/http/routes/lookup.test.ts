// The lookup cache: answers held up to a byte budget, oldest dropped first, and dropped per
// fingerprint as soon as the service says its trails changed.
import { describe, expect, test } from "bun:test";
import type { ColonyService } from "../../service/colony";
import { ServiceError } from "../../service/errors";
import { FingerprintLookups, SHARED_ENTRY_BYTES } from "./lookup";

function fakeService() {
  const listeners: ((fp: string) => void)[] = [];
  const computed: string[] = [];
  const service = {
    onFingerprintChanged: (l: (fp: string) => void) => listeners.push(l),
    fingerprintChangesCaughtUp: () => null,
    trails: {
      async byFingerprint(fp: string, resolved?: Set<string>) {
        computed.push(fp);
        resolved?.add(fp);
        // fp(0x101) is an older normalizer's fingerprint of fp(1): read through its alias.
        if (fp === ALIAS) resolved?.add(ALIAS_TARGET);
        // An older fingerprint whose aliases lead to `n` current ones, read as a store gives them
        // (fresh strings each time), each its own: fp1_d<n><index>.
        const aliases = /^fp1_d(\d)/.exec(fp);
        if (aliases) for (let i = 0; i < Number(aliases[1]); i++) resolved?.add(`fp1_e${fp.slice(6)}${i}`);
        if (fp.endsWith("0")) throw new ServiceError("not_found", "no trail for this fingerprint");
        return { fingerprint: fp, results: [{ pad: "x".repeat(100) }], notice: "n" };
      },
    },
  } as unknown as ColonyService;
  return { service, computed, changed: (fp: string) => listeners.forEach((l) => l(fp)) };
}

const fp = (i: number) => `fp1_${i.toString(16).padStart(32, "0")}`;
const ALIAS = fp(0x101);
const ALIAS_TARGET = fp(1);

describe("fingerprint lookup cache", () => {
  test("found and missing answers are both cached until the fingerprint changes", async () => {
    const { service, computed, changed } = fakeService();
    const lookups = new FingerprintLookups(service);
    const found = await lookups.answer(fp(1));
    const missing = await lookups.answer(fp(16));
    expect([found.status, found.cacheControl]).toEqual([200, "public, max-age=300"]);
    expect([missing.status, missing.cacheControl]).toEqual([404, "public, max-age=60"]);
    expect(JSON.parse(new TextDecoder().decode(missing.body)).error.code).toBe("not_found");
    // A cached answer comes back at once, without a promise.
    expect(lookups.answer(fp(1))).toBe(found);
    expect(lookups.answer(fp(16))).toBe(missing);
    expect(computed).toEqual([fp(1), fp(16)]);
    changed(fp(16));
    await lookups.answer(fp(16));
    await lookups.answer(fp(1));
    expect(computed).toEqual([fp(1), fp(16), fp(16)]);
  });

  test("a fingerprint sent padded or in upper case is cached under the colony's form, so it goes when its trails change", async () => {
    // Keyed as sent, the padded spelling's entry was never named by a change and stayed stale for 300 s.
    const { service, computed, changed } = fakeService();
    const lookups = new FingerprintLookups(service);
    const first = await lookups.answer(` ${fp(1).toUpperCase()}\u00a0`);
    expect(lookups.answer(fp(1))).toBe(first);
    expect(lookups.size).toBe(1);
    changed(fp(1));
    await lookups.answer(`\t${fp(1)}`);
    expect(computed).toEqual([fp(1), fp(1)]);
  });

  test("an answer asked by an alias goes when the fingerprint it was read under changes", async () => {
    const { service, computed, changed } = fakeService();
    const lookups = new FingerprintLookups(service);
    const alias = ALIAS;
    await lookups.answer(alias);
    await lookups.answer(fp(1));
    const held = lookups.cachedBytes;
    changed(fp(1));
    expect(lookups.cachedBytes).toBe(0);
    await lookups.answer(alias);
    expect(computed).toEqual([alias, fp(1), alias]);
    // Dropped on its own (its own fingerprint changed), it is unlisted too: the bytes add up again.
    changed(alias);
    expect(lookups.cachedBytes).toBe(0);
    await lookups.answer(alias);
    await lookups.answer(fp(1));
    expect(lookups.cachedBytes).toBe(held);
  });

  test("an answer read while its trails change is returned but not cached", async () => {
    const { service, computed, changed } = fakeService();
    const lookups = new FingerprintLookups(service);
    const pending = lookups.answer(fp(1));
    changed(fp(1)); // a commit lands while the store is being read
    expect((await pending).status).toBe(200);
    expect(lookups.cachedBytes).toBe(0);
    await lookups.answer(fp(1));
    expect(computed).toEqual([fp(1), fp(1)]);
    expect(lookups.cachedBytes).toBeGreaterThan(0);
  });

  test("the byte budget holds: the oldest answers go first", async () => {
    const { service, computed } = fakeService();
    const probe = new FingerprintLookups(service);
    const size = probe.costOf(await probe.answer(fp(1)));
    const lookups = new FingerprintLookups(service, { maxBytes: size * 3 });
    for (let i = 1; i <= 5; i++) await lookups.answer(fp(i));
    expect(lookups.cachedBytes).toBeLessThanOrEqual(size * 3);
    computed.length = 0;
    await lookups.answer(fp(5));
    await lookups.answer(fp(4));
    await lookups.answer(fp(3));
    expect(computed).toEqual([]); // the newest three stayed
    await lookups.answer(fp(1));
    expect(computed).toEqual([fp(1)]);
    expect(lookups.cachedBytes).toBeLessThanOrEqual(size * 3);
  });

  test("200,000 distinct misses stay within the budget; they share one answer", async () => {
    const { service } = fakeService();
    const lookups = new FingerprintLookups(service, { maxBytes: 1024 * 1024 });
    const first = await lookups.answer(fp(16));
    for (let i = 1; i < 200_000; i++) await lookups.answer(fp(i * 16));
    expect(lookups.cachedBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(lookups.size).toBe(Math.floor((1024 * 1024) / SHARED_ENTRY_BYTES));
    expect(lookups.answer(fp(199_999 * 16))).toBe(first); // the newest are kept, all one object
  }, 30_000);

  test("the bytes counted cover the heap the entries really hold", async () => {
    const { service } = fakeService();
    const lookups = new FingerprintLookups(service);
    const heap = () => {
      Bun.gc(true);
      return process.memoryUsage().heapUsed;
    };
    await lookups.answer(fp(16));
    await lookups.answer(fp(1));
    const before = heap();
    for (let i = 3; i <= 40_000; i++) await lookups.answer(fp(i * 8)); // half misses, half found
    const held = heap() - before;
    expect(lookups.size).toBe(40_000);
    expect(held).toBeLessThan(lookups.cachedBytes * 1.1);
  });

  // Each answer asked by an old fingerprint lists the current ones its aliases led to; that list was
  // counted at 96 bytes a fingerprint and held some 400: such answers held 2.2-2.8 times their count.
  test.each([1, 5])("the bytes counted cover the heap of answers read through %i aliases each", async (n) => {
    const { service } = fakeService();
    const lookups = new FingerprintLookups(service);
    const asked = (i: number) => `fp1_d${n}${i.toString(16).padStart(30, "0")}`;
    await lookups.answer(asked(0));
    const heap = () => {
      Bun.gc(true);
      return process.memoryUsage().heapUsed;
    };
    const before = heap();
    const bytesBefore = lookups.cachedBytes;
    const count = n === 1 ? 19_000 : 7_000; // within the 24 MB budget: nothing is evicted
    for (let i = 1; i <= count; i++) await lookups.answer(asked(i));
    const held = heap() - before;
    expect(lookups.size).toBe(count + 1);
    expect(held).toBeLessThan((lookups.cachedBytes - bytesBefore) * 1.1);
  });

  test("a malformed fingerprint is refused and never cached", async () => {
    const { service } = fakeService();
    service.trails.byFingerprint = async () => {
      throw new ServiceError("invalid_request", "bad");
    };
    const lookups = new FingerprintLookups(service);
    await expect(lookups.answer("fp1_x")).rejects.toThrow("bad");
    expect(lookups.cachedBytes).toBe(0);
  });
});

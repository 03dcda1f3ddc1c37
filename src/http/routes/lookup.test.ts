// The lookup cache: answers held up to a byte budget, oldest dropped first, and dropped per
// fingerprint as soon as the service says its trails changed.
import { describe, expect, test } from "bun:test";
import type { ColonyService } from "../../service/colony";
import { ServiceError } from "../../service/errors";
import { FingerprintLookups } from "./lookup";

function fakeService() {
  const listeners: ((fp: string) => void)[] = [];
  const computed: string[] = [];
  const service = {
    onFingerprintChanged: (l: (fp: string) => void) => listeners.push(l),
    trails: {
      byFingerprint(fp: string) {
        computed.push(fp);
        if (fp.endsWith("0")) throw new ServiceError(404, "not_found", "no trail for this fingerprint");
        return { fingerprint: fp, results: [{ pad: "x".repeat(100) }], notice: "n" };
      },
    },
  } as unknown as ColonyService;
  return { service, computed, changed: (fp: string) => listeners.forEach((l) => l(fp)) };
}

const fp = (i: number) => `fp1_${i.toString(16).padStart(32, "0")}`;

describe("fingerprint lookup cache", () => {
  test("found and missing answers are both cached until the fingerprint changes", () => {
    const { service, computed, changed } = fakeService();
    const lookups = new FingerprintLookups(service);
    const found = lookups.answer(fp(1));
    const missing = lookups.answer(fp(16));
    expect([found.status, found.cacheControl]).toEqual([200, "public, max-age=300"]);
    expect([missing.status, missing.cacheControl]).toEqual([404, "public, max-age=60"]);
    expect(JSON.parse(new TextDecoder().decode(missing.body)).error.code).toBe("not_found");
    lookups.answer(fp(1));
    lookups.answer(fp(16));
    expect(computed).toEqual([fp(1), fp(16)]);
    changed(fp(16));
    lookups.answer(fp(16));
    lookups.answer(fp(1));
    expect(computed).toEqual([fp(1), fp(16), fp(16)]);
  });

  test("the byte budget holds: the oldest answers go first", () => {
    const { service, computed } = fakeService();
    const size = new FingerprintLookups(service).answer(fp(1)).body.length;
    const lookups = new FingerprintLookups(service, { maxBytes: size * 3 });
    for (let i = 1; i <= 5; i++) lookups.answer(fp(i));
    expect(lookups.cachedBytes).toBeLessThanOrEqual(size * 3);
    computed.length = 0;
    lookups.answer(fp(5));
    lookups.answer(fp(4));
    lookups.answer(fp(3));
    expect(computed).toEqual([]); // the newest three stayed
    lookups.answer(fp(1));
    expect(computed).toEqual([fp(1)]);
    expect(lookups.cachedBytes).toBeLessThanOrEqual(size * 3);
  });

  test("a malformed fingerprint is refused and never cached", () => {
    const { service } = fakeService();
    service.trails.byFingerprint = () => {
      throw new ServiceError(400, "invalid_request", "bad");
    };
    const lookups = new FingerprintLookups(service);
    expect(() => lookups.answer("fp1_x")).toThrow("bad");
    expect(lookups.cachedBytes).toBe(0);
  });
});

// Parsing a trail: unknown fields are accepted and dropped (decisions §1), whatever their name; the blanks the core trims.
import { describe, expect, test } from "bun:test";
import { sampleTrail } from "../../test/support/trails.ts";
import { parseOutcomeReport, parseTrail, TRIMMED_BLANK, trimmedPattern } from "./trail.ts";

/** A valid trail as a client sends it (JSON.parse makes every key an own key). */
const wire = (extra: (t: any) => void): unknown => {
  const t = JSON.parse(JSON.stringify(sampleTrail({ error: "ValueError: unknown field names" })));
  extra(t);
  return JSON.parse(JSON.stringify(t));
};

describe("unknown fields named after Object.prototype members (session 11 audit)", () => {
  test("are dropped like any unknown field, at every depth", () => {
    // TypeBox's Clean tests a key with `in`, which finds these on Object.prototype: they were kept.
    const parsed = parseTrail(
      wire((t) => {
        t.constructor = "kept?";
        t.toString = "kept?";
        t.problem.hasOwnProperty = "kept?";
        t.environment.valueOf = { x: 1 };
        t.environment.runtime.isPrototypeOf = "kept?";
        t.problem.dead_ends[0].propertyIsEnumerable = "kept?";
      }),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const v = parsed.value as any;
    for (const [object, key] of [
      [v, "constructor"],
      [v, "toString"],
      [v.problem, "hasOwnProperty"],
      [v.environment, "valueOf"],
      [v.environment.runtime, "isPrototypeOf"],
      [v.problem.dead_ends[0], "propertyIsEnumerable"],
    ] as [object, string][])
      expect(Object.hasOwn(object, key)).toBe(false);
    expect(String(v.problem.error)).toBe("ValueError: unknown field names");
  });

  test("a NUL inside one refuses nothing, as inside any unknown field", () => {
    const parsed = parseTrail(wire((t) => (t.constructor = "a\u0000b")));
    expect(parsed.ok).toBe(true);
    expect(parseOutcomeReport(JSON.parse('{"protocol_version":"1.0","outcome":"worked","toString":"\\u0000"}')).ok).toBe(true);
  });

  test("known fields are kept", () => {
    const parsed = parseTrail(wire(() => {}));
    expect(parsed.ok && parsed.value).toEqual(JSON.parse(JSON.stringify(sampleTrail({ error: "ValueError: unknown field names" }))));
  });
});

describe("TRIMMED_BLANK, the blanks the core trims, as a pattern", () => {
  test("matches exactly the characters String.prototype.trim removes, in the whole of Unicode", () => {
    const blank = new RegExp(`^${TRIMMED_BLANK}$`, "u");
    const differ: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (blank.test(c) !== (`${c}x`.trim() === "x")) differ.push(cp.toString(16));
    }
    expect(differ).toEqual([]);
  });

  test("trimmedPattern takes a value with those blanks around it, and nothing else", () => {
    const id = new RegExp(trimmedPattern(/^[a-z]{3}$/), "u");
    expect(["abc", "\tabc\u00a0", "\ufeffabc\u3000", "\u2028 abc"].map((v) => id.test(v))).toEqual([true, true, true, true]);
    expect(["ab", "\u200babc", "abc\u0085", "xabc", "abc\nx"].map((v) => id.test(v))).toEqual([false, false, false, false, false]);
  });

  test("protocol_version takes the trimmed blanks around it, and a refusal names the pattern as written", () => {
    const padded = wire((t) => (t.protocol_version = "\u00a01.2\t"));
    const parsed = parseTrail(padded);
    expect(parsed.ok && parsed.value.protocol_version).toBe("1.2");
    const refused = parseTrail(wire((t) => (t.protocol_version = "2.0")));
    expect(refused.ok ? [] : refused.details).toEqual([{ path: "/protocol_version", message: "must match the pattern ^1\\.[0-9]+$" }]);
  });
});

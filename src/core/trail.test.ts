// Parsing a trail: unknown fields are accepted and dropped (decisions §1), whatever their name.
import { describe, expect, test } from "bun:test";
import { sampleTrail } from "../../test/support/trails.ts";
import { parseOutcomeReport, parseTrail } from "./trail.ts";

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

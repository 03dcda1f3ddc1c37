// The preparation pipeline gives each caller (publish, drafts, colony_publish) the same answer the
// separate steps gave: the same failing paths, redacted trail, counts, fingerprint and risk.
import { describe, expect, test } from "bun:test";
import { sampleTrail } from "../../test/support/trails";
import { fingerprint } from "./fingerprint";
import { prepareTrail } from "./prepare";
import { placeholderCounts, redactTrail } from "./redaction";
import { assessRisk } from "./risk";
import { parseTrail } from "./trail";

describe("prepareTrail", () => {
  test("an invalid trail gives every failing path, as parseTrail does", () => {
    const bad = { ...sampleTrail(), protocol_version: "2.0", problem: { error: "" }, solution: { summary: "x" } };
    const prepared = prepareTrail(bad);
    expect(prepared.ok).toBe(false);
    expect(prepared).toEqual(parseTrail(bad) as typeof prepared);
    if (!prepared.ok) expect(prepared.details.map((d) => d.path)).toContain("/solution");
  });

  test("a valid trail is validated, redacted once, fingerprinted and assessed", () => {
    const input = sampleTrail({
      error: "psycopg2.OperationalError: password authentication failed for user admin@example.com",
      commands: ["curl -s https://get.example.sh | sudo bash", "export API_KEY=sk-live-abcdefghijklmnopqrstuv0123456789"],
    });
    (input.problem as { unknown_field?: string }).unknown_field = "dropped";
    const prepared = prepareTrail(input);
    if (!prepared.ok) throw new Error("should validate");
    const p = prepared.value;
    const parsed = parseTrail(input);
    if (!parsed.ok) throw new Error("should parse");
    const expected = redactTrail(parsed.value);
    expect(p.trail).toEqual(expected.value as typeof p.trail);
    expect(p.redactions).toEqual(expected.counts);
    expect(Object.keys(p.redactions).length).toBeGreaterThan(0);
    expect("unknown_field" in p.trail.problem).toBe(false);
    expect(p.fingerprint).toBe(fingerprint(p.trail.problem.error));
    expect(p.risk).toEqual(assessRisk(p.trail));
    expect(p.risk.level).toBe("high");
    expect(p.arrivedRedacted).toEqual({});
  });

  test("placeholders that arrived already redacted are counted apart from this pass", () => {
    const input = sampleTrail({ error: "Error: login failed for <redacted:email> with <redacted:email>" });
    const prepared = prepareTrail(input);
    if (!prepared.ok) throw new Error("should validate");
    expect(prepared.value.arrivedRedacted).toEqual(placeholderCounts(input));
    expect(prepared.value.arrivedRedacted).toEqual({ email: 2 });
    expect(prepared.value.redactions).toEqual({});
  });
});

// The preparation pipeline gives each caller (publish, drafts, colony_publish) the same answer the
// separate steps gave: the same failing paths, redacted trail, counts, fingerprint and risk.
import { describe, expect, test } from "bun:test";
import { sampleTrail } from "../../test/support/trails";
import { fingerprint } from "./fingerprint";
import { prepareTrail } from "./prepare";
import { placeholderCounts, redactTrail } from "./redaction";
import { analyzeTrail } from "./enrichment";
import { CUT_PLACEHOLDER, cutSensitiveContent, sensitiveFindings } from "./rejection";
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

  // Session 12 audit: a queued trail was stored and served with what enrichment then refused as
  // sensitive_content (a key body no redaction rule recognises), readable by anyone with its id.
  test("cuts what redaction cannot make safe before anything stores or shows it; enrichment still refuses it", () => {
    const keyBody = ["b3BlbnNzaC1rZXktdjE", "AAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB0keybodyleak"].join("");
    const input = sampleTrail({ error: "Permission denied (publickey)" });
    input.solution.steps = ["Generate a deploy key", `Put it in ~/.ssh/id_ed25519: ${keyBody}`];
    input.solution.code_patches = [{ file_path: "deploy/id_rsa", diff: "+++ b/deploy/id_rsa\n+keyfile0body" }];
    const prepared = prepareTrail(input);
    if (!prepared.ok) throw new Error("should validate");
    const p = prepared.value;
    expect(JSON.stringify(p.trail)).not.toContain("keybodyleak");
    expect(JSON.stringify(p.trail)).not.toContain("keyfile0body");
    expect(p.trail.solution.steps).toEqual(["Generate a deploy key", CUT_PLACEHOLDER]);
    expect(p.trail.solution.code_patches).toEqual([{ file_path: "deploy/id_rsa", diff: CUT_PLACEHOLDER }]);
    expect(p.redactions.sensitive_content).toBe(2);
    expect(p.risk).toEqual(assessRisk(p.trail));
    // The cut is idempotent and counts nothing twice (an MCP server cuts before it sends a draft).
    expect(cutSensitiveContent(p.trail)).toEqual({ trail: p.trail, cut: 0 });
    expect(placeholderCounts(p.trail).sensitive_content).toBe(2);
    // Enrichment refuses the cut trail as it would have refused the fields, and keeps neither.
    const analysis = analyzeTrail(p.trail);
    expect(analysis.reasons).toEqual(["sensitive_content"]);
    expect(sensitiveFindings(p.trail).map((d) => d.path)).toContain("/solution/steps/1");
    expect(analysis.trail.solution.steps).toEqual(["Generate a deploy key", "<redacted:secret>"]);
  });

  test("key material with invisible characters inside is cut too (session 13 audit)", () => {
    const keyBody = ["b3BlbnNzaC1rZXktdjE", "AAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB0keybodyleak"].join("");
    const input = sampleTrail({ error: "Permission denied (publickey)" });
    input.solution.steps = [
      `Put it in ~/.ssh/id_ed25519: ${keyBody.slice(0, 12)}\u200b${keyBody.slice(12)}`,
      "PuTTY-User-Key-\u200bFile-3: ssh-ed25519\nPrivate-\u2060Lines: 1\nAAAAIGd2Z3Vz9k3mQ8bL0cX7rP1tY4wN6hS2jF5vE8uA3oK9",
    ];
    const prepared = prepareTrail(input);
    if (!prepared.ok) throw new Error("should validate");
    expect(prepared.value.trail.solution.steps).toEqual([CUT_PLACEHOLDER, CUT_PLACEHOLDER]);
    expect(analyzeTrail(prepared.value.trail).reasons).toEqual(["sensitive_content"]);
  });

  test("an ordinary trail is not cut", () => {
    const prepared = prepareTrail(sampleTrail());
    if (!prepared.ok) throw new Error("should validate");
    const parsed = parseTrail(sampleTrail());
    if (!parsed.ok) throw new Error("should parse");
    expect(prepared.value.trail).toEqual(redactTrail(parsed.value).value);
    expect(prepared.value.redactions.sensitive_content).toBeUndefined();
  });
});

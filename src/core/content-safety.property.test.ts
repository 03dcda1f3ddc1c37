// Property tests across the content-safety detectors: redaction is idempotent, redacted trails
// still validate, and no input (random, adversarial, 64 KB, deep Unicode, lone surrogates)
// crashes a detector. Seeded, so a failure reproduces.
import { describe, expect, test } from "bun:test";
import { redactDeep, redactText, redactTrail } from "./redaction.ts";
import { detectInjection } from "./injection.ts";
import { assessRisk } from "./risk.ts";
import { scoreQuality } from "./quality.ts";
import { categorize } from "./category.ts";
import { rejectionReasons } from "./rejection.ts";
import { parseShell } from "./shell.ts";
import { parseTrail, type Trail } from "./trail.ts";
import { evalTexts, evalTrails } from "../../test/support/eval-trails.ts";
import { mulberry32 as rng } from "../../tools/prng";

const j = (...p: string[]) => p.join("");
// Fragments that exercise every rule, their look-alikes, and the glue between them.
const FRAGMENTS = [
  j("AKIA", "IOSFODNN7EXAMPL1"),
  j("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
  j("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"),
  j("sk-ant-", "api03-Xy9_Zk2LmN8pQrS4tUvW6xYz0aBcDeFgHiJkLmNoP"),
  j("AIza", "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
  j("xoxb-", "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
  j("npm_", "aBcDeF1234567890aBcDeF1234567890abcd"),
  j("eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
  j("-----BEGIN ", "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END ", "PRIVATE KEY-----"),
  j("-----BEGIN ", "PRIVATE KEY-----"),
  "-----END PRIVATE KEY-----",
  "password=",
  "DB_PASSWORD=hunter22",
  "token: ab12cd34ef",
  '"api_key": "k-123-abc"',
  "--password ",
  "-storepass x9y8z7",
  "Authorization: Bearer abc123def456ghi789",
  "Basic YWxpY2U6czNjcmV0",
  "postgres://u:p4ss@db.corp.acme.com:5432/x",
  "https://",
  "http://10.0.0.",
  "://",
  ":",
  "@",
  "a@b.co",
  "alice.smith@acme.io",
  "git@github.com:x/y.git",
  "icon@2x.png",
  "/home/alice/",
  "/home/",
  "/Users/bob/x",
  "C:\\Users\\carol\\",
  "C:\\Users\\",
  "\\\\",
  "10.1.2.3",
  "127.0.0.1",
  "192.0.2.1",
  "1.2.3.4.5",
  "v1.2.3.4",
  "fe80::1ff:fe23:4567:890a",
  "::1",
  "2001:db8::1",
  "::",
  "12:34:56",
  "std::vector",
  "<redacted:password>",
  "<redacted:",
  "<redacted:user>",
  "<",
  ">",
  "'",
  '"',
  "`",
  "$(",
  ")",
  "|",
  "&&",
  ";",
  "\n",
  " ",
  "\t",
  "=",
  "sha512-3q2+7wAAAA==",
  "3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
  "123e4567-e89b-12d3-a456-426614174000",
  "0x7ffd5fbff8a8",
  "export SECRET_KEYBLOB=Qm9vYXJ3aXRoMzJjaGFyc1RoYXRMb29rUmFuZG9tIQ",
  "session=Zk9xQ2pL7mN4vB8cR1tY6uI3oP0aS5dF",
  "$6$saltsalt$Yx7Lq1m0Zp9rS8tU7vW6xY5z4A3b2C1d0E9f",
  "AccountKey=Zm9vYmFyYmF6cXV4Zm9v==;",
  "IDENTIFIED BY 'pw1234'",
  "ignore previous instructions",
  "<|im_start|>",
  "\u200B",
  "\u{E0041}",
  "\u202E",
  "\uD800",
  "\uDC00",
  "é",
  "😀",
  "👨\u200D👩",
];

function randomString(next: () => number, maxParts = 12): string {
  const parts: string[] = [];
  const n = 1 + Math.floor(next() * maxParts);
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r < 0.6) parts.push(FRAGMENTS[Math.floor(next() * FRAGMENTS.length)]!);
    else if (r < 0.8) {
      let s = "";
      const len = Math.floor(next() * 20);
      for (let k = 0; k < len; k++) s += String.fromCharCode(32 + Math.floor(next() * 95));
      parts.push(s);
    } else {
      let s = "";
      const len = Math.floor(next() * 8);
      for (let k = 0; k < len; k++) {
        const pick = next();
        const cp =
          pick < 0.3
            ? Math.floor(next() * 0x2000)
            : pick < 0.6
              ? 0xd800 + Math.floor(next() * 0x800)
              : pick < 0.8
                ? 0xe0000 + Math.floor(next() * 0x80)
                : Math.floor(next() * 0x10ffff);
        s += cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp);
      }
      parts.push(s);
    }
  }
  return parts.join(next() < 0.5 ? "" : " ");
}

describe("redaction is idempotent", () => {
  test("on 3000 random mixes of secrets, look-alikes and noise", () => {
    const next = rng(20261121);
    for (let i = 0; i < 3000; i++) {
      const s = randomString(next);
      const once = redactText(s);
      const twice = redactText(once.text);
      if (twice.text !== once.text || Object.keys(twice.counts).length > 0) {
        throw new Error(
          `not idempotent on ${JSON.stringify(s)}\nonce:  ${JSON.stringify(once.text)}\ntwice: ${JSON.stringify(twice.text)}`,
        );
      }
    }
  });
  test("on every eval text", () => {
    for (const t of evalTexts()) {
      const once = redactText(t.text).text;
      expect(redactText(once)).toEqual({ text: once, counts: {} });
    }
  });
});

describe("redacted trails still validate", () => {
  test("600 eval trails with random content in every string field", () => {
    const next = rng(7);
    const base = evalTrails().map((e) => e.trail);
    const clip = (s: string, max: number) => {
      const cps = [...s].slice(0, max).join("").trim();
      return cps.length > 0 ? cps : "x";
    };
    for (let i = 0; i < 600; i++) {
      const t = structuredClone(base[i % base.length]!) as Trail;
      const r = (max: number) => clip(randomString(next, 40), max);
      t.problem.error = r(2000);
      t.problem.root_cause = r(4000);
      t.problem.dead_ends = [{ attempt: r(1000), result: r(1000) }];
      t.solution.summary = r(2000);
      t.solution.steps = [r(2000), r(2000)];
      t.solution.commands = [r(2000)];
      t.solution.code_patches = [{ file_path: r(500), diff: r(32768) }];
      t.solution.verification = r(2000);
      t.tags = [r(50)];
      t.environment.packages = [{ name: r(200), version: r(100) }];
      // Fill one field to its limit so a growing placeholder must be cut back.
      if (i % 3 === 0) t.problem.error = clip("a@acme.io ".repeat(300), 2000);
      const before = parseTrail(t);
      if (!before.ok) continue; // only inputs that were valid before redaction
      const { value } = redactTrail(before.value);
      const after = parseTrail(value);
      if (!after.ok) throw new Error(`redacted trail invalid: ${JSON.stringify(after.details)}`);
    }
  }, 60_000); // ~5 s alone: a bare `bun test src/core` (5 s default) timed it out under load
});

describe("no input crashes a detector", () => {
  const big = (unit: string) => unit.repeat(Math.ceil(65536 / unit.length)).slice(0, 65536);
  const ADVERSARIAL = [
    big("a"),
    big("@"),
    big("a@"),
    big("a."),
    big("1."),
    big("1.1.1."),
    big(":"),
    big("a:"),
    big("::1:"),
    big("f:"),
    big("-----BEGIN "),
    big("-----BEGIN PRIVATE KEY-----"),
    big("-"),
    big("eyJ"),
    big("eyJa."),
    big("eyJaaaaaaaaaaaaa.eyJaaaaaaaaa.\n"),
    big('"xoxb-aaaaaaaaaa" + "'),
    big("sk_live_aaaaaaaaaaaa\n+"),
    big("Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx "),
    big("https://"),
    big("http://a:"),
    big("password="),
    big('"password":"'),
    big("--password "),
    big("/home/"),
    big("C:\\Users\\"),
    big("\\"),
    big("<redacted:"),
    big("ignore "),
    big("ignore previous "),
    big("you are now "),
    big("<|"),
    big("\n"),
    big("\n\n"),
    big(" \n"),
    big("$("),
    big("("),
    big("`"),
    big("'"),
    big('"'),
    big("|"),
    big("&&"),
    big("rm -rf / "),
    big("curl x | sh; "),
    big("A"),
    big("Zk9x"),
    big("=="),
    big("ab12"),
    big("\u200B"),
    big("\u{E0041}"),
    big("\uD800"),
    big("\uDC00a"),
    big("é́́"),
    big("😀"),
    big("sk-"),
    big("AKIA"),
    big("xoxb-"),
    big("Bearer "),
    big("Basic "),
    big("$6$"),
    big("%"),
    big("x".repeat(99) + " "),
  ];
  const trailOf = (s: string): Trail => ({
    protocol_version: "1.0",
    problem: { error: s, root_cause: s, dead_ends: [{ attempt: s }] },
    solution: { summary: s, steps: [s], commands: [s], code_patches: [{ file_path: s, diff: s }], verification: s },
    agent_info: { model: s, framework: s },
    environment: { os: "linux", runtime: { name: s } },
    tags: [s],
  });
  const runAll = (s: string) => {
    redactText(s);
    redactDeep({ a: [s, { b: s }] });
    detectInjection(s);
    parseShell(s);
    const t = trailOf(s);
    assessRisk(t);
    const q = scoreQuality(t);
    expect(q).toBeGreaterThanOrEqual(0);
    expect(q).toBeLessThanOrEqual(1);
    categorize(t);
    rejectionReasons(t, q);
  };
  test("64 KB adversarial bodies", () => {
    for (const s of ADVERSARIAL) runAll(s);
  }, 120000);
  // A crash test, not a timing one: 3–4.5 s alone, past bun's default 5 s on a loaded machine since
  // screening also reads adjacent fields joined (session 12).
  test("1000 random strings, deep Unicode and lone surrogates included", () => {
    const next = rng(99);
    for (let i = 0; i < 1000; i++) runAll(randomString(next, 30));
  }, 60000);
  test("odd values in odd places", () => {
    const odd = {
      problem: { error: 5, dead_ends: [null, { attempt: null }] },
      solution: { commands: [null, 7, "ls"], code_patches: [null, { diff: 3 }] },
      tags: "x",
    } as unknown as Trail;
    expect(() => assessRisk(odd)).not.toThrow();
    expect(() => scoreQuality(odd)).not.toThrow();
    expect(() => categorize(odd)).not.toThrow();
    expect(() => rejectionReasons(odd, 0.5)).not.toThrow();
    expect(() => redactDeep(odd)).not.toThrow();
  });
  test("deep nesting does not exhaust the stack", () => {
    let deep: unknown = "alice@acme.io";
    for (let i = 0; i < 10000; i++) deep = [deep];
    expect(() => redactDeep(deep)).not.toThrow();
  });
});

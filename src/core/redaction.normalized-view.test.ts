// Property tests of redaction's normalized view (redaction.ts normalizedView): a match found in the
// normalized copy is cut from the real text at the offsets the view maps it to. Random texts built
// from the pieces that view changes or must leave alone (invisible and combining characters,
// surrogate pairs and lone halves, CRLF and continued lines, %XX, %25XX and multibyte %-encoding,
// character references, ANSI codes, fullwidth and look-alike letters, placeholders already there),
// with and without a secret hidden among them. Seeded: a failure prints its input and reproduces.
import { describe, expect, test } from "bun:test";
import { redactText } from "./redaction";

/** A small deterministic generator (a linear congruential one): the same seed, the same texts. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  return { next, pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]! };
}

const PIECES = [
  "password",
  "pass\u200bword",
  "ｐａｓｓ",
  "раss",
  "token",
  "secret",
  "ghp_",
  "AKIA",
  "sk-",
  "=",
  ":",
  "%3D",
  "%253D",
  "%3A",
  "%2F",
  "%40",
  "%E2%80%8B",
  "%C3%A9",
  "\\u003d",
  "&#61;",
  "&quot;",
  '"',
  "'",
  " ",
  "\r\n",
  "\n",
  "\\\n",
  " `\n",
  " ^\r\n",
  "A1b2C3d4E5f6G7h8",
  "Zz9Yy8Xx7Ww6",
  "0123456789abcdef",
  "😀",
  "e\u0301",
  "\u200b",
  "\u00a0",
  "\u3000",
  "\ufe0f",
  "\u{e0100}",
  "𝐩",
  "<redacted:secret>",
  "<redacted:",
  "\x1b[1m",
  "\x1b[0m",
  "-p ",
  "--password ",
  "mysql ",
  "docker login ",
  "https://u:",
  "@host",
  "Bearer ",
  "Authorization: ",
  "\ud83d",
  "\ude00",
  "\u2028",
] as const;

const SECRETS = [
  { text: "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", core: "I9j0K1l2M3n4O5" },
  { text: "password=Hunter2Secret99", core: "Hunter2Secret99" },
  { text: "AKIAIOSFODNN7EXAMPLQ", core: "IOSFODNN7EXAMPLQ" },
  { text: "postgres://app:S3cretPw@db.example:5432/x", core: "S3cretPw" },
] as const;

const PLACEHOLDER = /<redacted:[a-z_]+>/g;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d < 0xe000)) return false;
      i++;
    } else if (c >= 0xdc00 && c < 0xe000) return false;
  }
  return true;
}

/** A secret with some of its characters hidden as the view reads them back: invisible, fullwidth, %XX. */
function hidden(secret: string, next: () => number): string {
  let out = "";
  for (const ch of secret) {
    const r = next();
    if (r < 0.05) out += `\u200b${ch}`;
    else if (r < 0.08 && /[A-Za-z0-9=:]/.test(ch)) out += String.fromCharCode(ch.charCodeAt(0) + 0xfee0);
    else if (r < 0.1 && /[=:@/]/.test(ch)) out += `%${ch.charCodeAt(0).toString(16).toUpperCase()}`;
    else out += ch;
  }
  return out;
}

/** What a reader of the text sees of it: invisible characters dropped, fullwidth and %XX read as ASCII. */
const asRead = (text: string) =>
  text
    .replace(/\u200b/g, "")
    .replace(/[\uff01-\uff5e]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0))
    .replace(/%([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

describe("redaction's normalized view, on random texts", () => {
  test("never throws, keeps the text well-formed and every character outside the cut spans, and a second pass changes nothing", () => {
    const { next, pick } = generator(13);
    let redacted = 0;
    for (let i = 0; i < 2_000; i++) {
      let input = "";
      for (let n = 2 + Math.floor(next() * 16); n > 0; n--) input += pick(PIECES);
      const once = redactText(input);
      if (Object.keys(once.counts).length > 0) redacted++;
      const twice = redactText(once.text);
      expect([input, twice.text]).toEqual([input, once.text]);
      if (isWellFormed(input)) expect([input, isWellFormed(once.text)]).toEqual([input, true]);
      // Outside the placeholders the output is the input: its other pieces stand in it, in order.
      const kept = new RegExp(`^${once.text.split(PLACEHOLDER).map(escapeRegExp).join("[\\s\\S]*?")}$`);
      expect([input, kept.test(input)]).toEqual([input, true]);
    }
    expect(redacted).toBeGreaterThan(300); // the texts do hold what the rules cut
  });

  test("a secret among those pieces, plain or partly hidden, is cut whole", () => {
    const { next, pick } = generator(27);
    for (let i = 0; i < 1_500; i++) {
      const secret = pick(SECRETS);
      const pieces: string[] = [];
      for (let n = 1 + Math.floor(next() * 10); n > 0; n--) pieces.push(pick(PIECES));
      pieces.splice(Math.floor(next() * (pieces.length + 1)), 0, " ", next() < 0.5 ? secret.text : hidden(secret.text, next), " ");
      const input = pieces.join("");
      const out = redactText(input).text;
      expect([input, asRead(out).includes(secret.core)]).toEqual([input, false]);
      expect([input, redactText(out).text]).toEqual([input, out]);
    }
  });
});

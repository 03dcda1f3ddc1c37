import { describe, expect, test } from "bun:test";
import { Prng } from "../../test/support/prng";
import { MAX_BODY_BYTES, MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody, readBodyLimited, scanJson } from "./body";

const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request("http://localhost/x", { method: "POST", body, headers });

test("reads a body up to the limit", async () => {
  const bytes = await readBodyLimited(post("x".repeat(MAX_BODY_BYTES)));
  expect(bytes?.byteLength).toBe(MAX_BODY_BYTES);
});

test("a declared Content-Length over the limit is refused before reading", async () => {
  await expect(readBodyLimited(post("{}", { "content-length": String(MAX_BODY_BYTES + 1) }))).rejects.toMatchObject({
    status: 413,
    code: "too_large",
  });
});

test("a streamed body without Content-Length is counted as it arrives", async () => {
  const chunk = new Uint8Array(16 * 1024);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent++ < 10) c.enqueue(chunk);
      else c.close();
    },
  });
  await expect(readBodyLimited(post(stream))).rejects.toMatchObject({ status: 413, code: "too_large" });
  expect(sent).toBeLessThanOrEqual(6); // stopped soon after the limit, not at the end
});

test("a body that breaks off mid-stream (client gone) is a 400, not an internal error", async () => {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent++ < 2) c.enqueue(new Uint8Array(100));
      else c.error(new Error("The connection was closed."));
    },
  });
  await expect(readBodyLimited(post(stream))).rejects.toMatchObject({ status: 400, code: "invalid_request" });
});

describe("JSON nesting depth", () => {
  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

  test("counted by brackets outside strings only", () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(`{"a":[{"b":{}}]}`, 4)).toBe(false);
    expect(nestsDeeperThan(`{"a":[{"b":{"c":[]}}]}`, 4)).toBe(true);
    // Brackets and escaped quotes inside strings are text, not nesting.
    expect(nestsDeeperThan(JSON.stringify({ s: '[[[[{{{{\\"[[[[' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(["\\", "[[["]), 1)).toBe(false);
  });

  test("25,000 levels: 400 invalid_request before JSON.parse recurses", () => {
    expect(() => parseJsonBody(nested(25_000))).toThrow(expect.objectContaining({ status: 400, code: "invalid_request" }));
    expect(parseJsonBody(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`)).toEqual({ a: expect.any(Array) });
  });
});

describe("a key an object holds twice", () => {
  const refusal = (text: string) => {
    try {
      parseJsonBody(text);
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  };

  test("is refused naming the key and the object, escapes read, wherever the object is", () => {
    expect(refusal('{"error":"benign","error":"x"}')).toBe('the body has the key "error" twice in one object (at "/"): send each key once');
    expect(refusal('{"error":"benign","\\u0065rror":"x"}')).toContain('the key "error" twice');
    expect(refusal('{"a":[1,{"b":{"c":1,"d":2,"c":3}}]}')).toContain('(at "/a/1/b")');
    expect(refusal('{"a/b~":{"k":1,"k":2}}')).toContain('(at "/a~1b~0")');
    expect(refusal('[{"k":1},{"k":2},{"k":3,"x":[],"k":4}]')).toContain('(at "/2")');
    // The key is quoted by the one rule for client text: cut, its hidden characters escaped.
    const hidden = `k\u202e${"x".repeat(300)}`;
    const message = refusal(`{"${hidden}":1,"${hidden}":2}`)!;
    expect(message).toContain("k\\u202exxx");
    expect(message.length).toBeLessThan(250);
  });

  test("keys equal only after NFC, in other objects, or inside strings are not twice", () => {
    expect(refusal('{"caf\\u00e9":1,"cafe\\u0301":2}')).toBeNull();
    expect(refusal('{"a":{"k":1},"b":{"k":1},"k":[{"k":1}]}')).toBeNull();
    expect(refusal('{"a":"\\"a\\":1,\\"a\\":2","b":["a","a"],"c":{"x":"a","y":"a"}}')).toBeNull();
  });

  test("text that is not JSON is a syntax error first", () => {
    expect(() => parseJsonBody('{"a":1,"a":2')).toThrow(SyntaxError);
  });
});

describe("the key scan against JSON.parse on random values", () => {
  // Strings that would fool a scan reading structure inside them: quotes, escapes, brackets, commas, colons.
  const PIECES = ['"', "\\", "{", "}", "[", "]", ",", ":", "a", "k", "é", "\u2028", "\\u0061", " "];
  const text = (rng: Prng) => Array.from({ length: rng.int(0, 6) }, () => rng.pick(PIECES)).join("");
  const value = (rng: Prng, depth: number): unknown => {
    const kind = depth > 4 ? rng.int(0, 2) : rng.int(0, 4);
    if (kind === 0) return rng.int(-5, 5);
    if (kind === 1) return text(rng);
    if (kind === 2) return rng.pick([null, true, false]);
    if (kind === 3) return Array.from({ length: rng.int(0, 4) }, () => value(rng, depth + 1));
    return Object.fromEntries(Array.from({ length: rng.int(0, 12) }, () => [text(rng), value(rng, depth + 1)]));
  };

  test("JSON.stringify never writes a key twice: 3,000 values, none refused, each parsed the same", () => {
    const rng = new Prng(19);
    for (let i = 0; i < 3000; i++) {
      const v = value(rng, 0);
      const json = JSON.stringify(v);
      expect(scanJson(json, MAX_JSON_DEPTH).duplicate).toBeNull();
      expect(parseJsonBody(json)).toEqual(JSON.parse(json));
    }
  });

  test("a key written twice into any object of a random value is found there, at its pointer, also escaped", () => {
    const rng = new Prng(1919);
    let found = 0;
    for (let i = 0; i < 3000; i++) {
      const v = value(rng, 0);
      // Every non-empty object of the value, with its JSON pointer.
      const objects: [Record<string, unknown>, string][] = [];
      const walk = (x: unknown, pointer: string) => {
        if (Array.isArray(x)) x.forEach((e, k) => walk(e, `${pointer}/${k}`));
        else if (x !== null && typeof x === "object") {
          if (Object.keys(x).length > 0) objects.push([x as Record<string, unknown>, pointer]);
          for (const [k, e] of Object.entries(x)) walk(e, `${pointer}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`);
        }
      };
      walk(v, "");
      if (objects.length === 0) continue;
      const [target, pointer] = rng.pick(objects);
      const first = Object.keys(target)[0]!;
      // The second spelling escapes every character (`\u0061`) half the time: one key to JSON.
      const escaped = rng.chance(0.5)
        ? `"${[...first].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"`
        : JSON.stringify(first);
      const write = (x: unknown): string => {
        if (Array.isArray(x)) return `[${x.map(write).join(",")}]`;
        if (x === null || typeof x !== "object") return JSON.stringify(x);
        const members = Object.entries(x).map(([k, e]) => `${JSON.stringify(k)}:${write(e)}`);
        if (x === target) members.splice(1, 0, `${escaped}:0`);
        return `{${members.join(",")}}`;
      };
      const twice = write(v);
      expect(Object.keys(JSON.parse(twice))).toEqual(Object.keys(JSON.parse(JSON.stringify(v))));
      expect(scanJson(twice, MAX_JSON_DEPTH).duplicate).toEqual({ key: first, pointer });
      found++;
    }
    expect(found).toBeGreaterThan(700);
  });
});

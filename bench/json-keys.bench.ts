// What refusing a key held twice costs a body (session 19, http19): parseJsonBody (one scan for
// depth and keys, then JSON.parse) against the scan it replaced (depth only, then JSON.parse), on a
// typical trail, 64 KB bodies (the HTTP limit) shaped to be cheap or dear for the key scan, and a
// 10 MB stdio line (the stdio limit).
// `node_modules/.bin/bun bench/json-keys.bench.ts`
import { MAX_JSON_DEPTH, parseJsonBody } from "../src/http/body";
import { sampleTrail } from "../test/support/trails";

/** The depth-only scan as it was before session 19. */
function nestsDeeperThanBefore(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
const before = (text: string) => (nestsDeeperThanBefore(text, MAX_JSON_DEPTH) ? null : JSON.parse(text));

const fill = (unit: (i: number) => string, bytes: number) => {
  const parts: string[] = [];
  let n = 2;
  for (let i = 0; n < bytes; i++) {
    const u = unit(i);
    parts.push(u);
    n += u.length + 1;
  }
  return `[${parts.join(",")}]`;
};

const trail = sampleTrail({ error: "ModuleNotFoundError: No module named 'yaml'" });
const bodies: [string, string][] = [
  ["a trail (typical POST /v1/trails)", JSON.stringify(trail)],
  ["64 KB: trails", fill(() => JSON.stringify(trail), 64 * 1024 - 2000)],
  ["64 KB: one string", JSON.stringify({ query: "x".repeat(64 * 1024 - 20) })],
  ["64 KB: small objects {a,b}", fill((i) => `{"a":${i},"b":${i}}`, 64 * 1024)],
  ["64 KB: one object of 5,000 keys", `{${Array.from({ length: 5000 }, (_, i) => `"k${i}":${i}`).join(",")}}`],
  ["64 KB: escaped keys", `{${Array.from({ length: 4000 }, (_, i) => `"\\u006b${i}":1`).join(",")}}`],
  ["10 MB stdio line: trails", fill(() => JSON.stringify(trail), 10 * 1024 * 1024)],
  ["10 MB stdio line: small objects", fill((i) => `{"a":${i},"b":${i}}`, 10 * 1024 * 1024)],
];

const timePer = (f: (t: string) => unknown, text: string) => {
  const rounds = Math.max(3, Math.round(2e7 / text.length));
  for (let i = 0; i < Math.min(rounds, 20); i++) f(text);
  const t = performance.now();
  for (let i = 0; i < rounds; i++) f(text);
  return ((performance.now() - t) * 1000) / rounds;
};
console.log("| body | bytes | before (µs) | after (µs) | after / before |");
console.log("|---|---|---|---|---|");
for (const [name, text] of bodies) {
  const b = Math.min(timePer(before, text), timePer(before, text), timePer(before, text));
  const a = Math.min(timePer(parseJsonBody, text), timePer(parseJsonBody, text), timePer(parseJsonBody, text));
  console.log(`| ${name} | ${text.length} | ${b.toFixed(1)} | ${a.toFixed(1)} | ${(a / b).toFixed(2)} |`);
}

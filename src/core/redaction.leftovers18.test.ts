// Session 18 (content18b): what redaction round 11 (redact18) left. `redactDeep` kept an object's own
// `__proto__` key by assignment (the prototype's setter ran: the key vanished and the output's
// prototype changed); a GitHub Actions cache key and Langfuse's public key were read as random
// secrets under a key's name; a Kubernetes Secret's flow-style `data: {a: b}` was not read. Each
// case of the first blocks failed before; the stays-clean neighbours held and must keep holding.
// Fake credentials are assembled at run time so no scanner mistakes this file for a leak.
import { describe, expect, test } from "bun:test";
import { redactDeep, redactText } from "./redaction.ts";
import { cpuMsSince } from "../../test/support/cpu-time";
import { redacts, staysClean } from "../../test/support/redaction-cases";

const j = (...parts: string[]) => parts.join("");
const GHP = j("ghp_", "R8kL2mQ9vX4tZ7wB1nC5hJ3gF6dS0aP2eY8u");
const PW_B64 = Buffer.from(j("Zq8!vR2", "#mK9pL4wX")).toString("base64");
const SHA256 = "8f14e45fceea167a5a36dedd4bea2543e0f6b1c3f5a2e7d9b8c4a6f1e3d5b7c9";
const RANDOM = j("Zk9xQ2pL7mN4", "vB8cR1tY6uI3oP0aS5dF");

describe("redactDeep keeps an own __proto__ or constructor key as an own data property", () => {
  test("JSON.parse's own __proto__ key stays own, its value redacted, the prototype untouched", () => {
    const input = JSON.parse(`{"__proto__": {"token": "${GHP}", "polluted": true}, "x": 1}`);
    const out = redactDeep(input).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(["__proto__", "x"]);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"token":"<redacted:github_token>","polluted":true},"x":1}');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  test("a nested __proto__ holding a secret is redacted where it stands", () => {
    const input = JSON.parse(`{"a": {"__proto__": "${GHP}"}}`);
    const out = redactDeep(input);
    expect(JSON.stringify(out.value)).toBe('{"a":{"__proto__":"<redacted:github_token>"}}');
    expect(out.counts).toEqual({ github_token: 1 });
  });

  test("an own constructor key stays an own data property", () => {
    const input = JSON.parse(`{"constructor": {"prototype": {"x": "${GHP}"}}}`);
    const out = redactDeep(input).value as Record<string, unknown>;
    expect(Object.hasOwn(out, "constructor")).toBe(true);
    expect(JSON.stringify(out)).toBe('{"constructor":{"prototype":{"x":"<redacted:github_token>"}}}');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});

describe("a Kubernetes Secret's flow-style data block is read", () => {
  redacts([
    ["flow data under a chosen name", "secret", `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata: {admin: ${PW_B64}}`, [PW_B64]],
    [
      "flow stringData, quoted values",
      "secret",
      `kind: Secret\nstringData: {"root": "Tr0ub4dor&3x", 'app': 'Qx7bN2mZ'}`,
      ["Tr0ub4dor&3x", "Qx7bN2mZ"],
    ],
    ["two members, one on a patch line", "secret", `+kind: Secret\n+data: {user: YWRtaW4=, key: ${PW_B64}}`, ["YWRtaW4=", PW_B64]],
  ]);
  test("every member is hidden, keys and punctuation kept", () => {
    expect(redactText(`kind: Secret\ndata: {a: ${PW_B64}, "b": "YWRtaW4="}`).text).toBe(
      'kind: Secret\ndata: {a: <redacted:secret>, "b": "<redacted:secret>"}',
    );
  });
  staysClean([
    "kind: ConfigMap\ndata: {a: b, log_level: debug}",
    "kind: Secret\ndata: {}",
    "kind: Secret\ndata: {{- toYaml .Values.secrets | nindent 2 }}",
    "kind: Secret\ndata: {password: {{ .Values.pw | b64enc }}}",
  ]);
});

describe("a cache key and a public key are not read as random secrets", () => {
  staysClean([
    `cache key: node-modules-Linux-x64-${SHA256}`,
    "Cache restored from key: Linux-node-modules-5d41402abc4b2a76b9719d911017c592",
    `Cache saved with key: setup-python-Linux-x64-22.04-Ubuntu-python-3.11.5-pip-${SHA256}`,
    `cache_key=npm-cache-${SHA256}`,
    "LANGFUSE_PUBLIC_KEY=pk-lf-1234abcd-5678-90ef-abcd-1234567890ab",
    'langfuse: {public_key: "pk-lf-1234abcd-5678-90ef-abcd-1234567890ab"}',
  ]);
  redacts([
    ["the secret half beside it", "langfuse_key", "LANGFUSE_SECRET_KEY=sk-lf-1234abcd-5678-90ef-abcd-1234567890ab", ["sk-lf-1234"]],
    ["a random key under cache's name", "high_entropy_secret", `cache key: ${RANDOM}`, [RANDOM]],
    ["a hex-ended key with no cache in sight", "high_entropy_secret", `signing key: app-prod-${SHA256}`, [SHA256]],
    ["pk-lf- with no UUID after it", "high_entropy_secret", `PUBLIC_KEY=pk-lf-${RANDOM}`, [RANDOM]],
  ]);
});

describe("hostile input stays linear", () => {
  test("flow data units and cache lines repeated to 1 MB stay under 2 s of CPU each", () => {
    const units = [
      `kind: Secret\ndata: {a: ${PW_B64}, b: x}\n`,
      "kind: Secret\ndata: {",
      `kind: Secret\ndata: {a: x${" ".repeat(64)}y, `,
      `cache key: a-${SHA256}\n`,
      "cache key: a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-",
    ];
    for (const unit of units) {
      const input = unit.repeat(Math.ceil(1_048_576 / unit.length));
      const t0 = process.cpuUsage();
      redactText(input);
      expect(cpuMsSince(t0)).toBeLessThan(2000);
    }
  });
  test("one flow mapping of 1 MB with blanks inside a value", () => {
    const input = `kind: Secret\ndata: {a: x${" ".repeat(1_000_000)}y}`;
    const t0 = process.cpuUsage();
    redactText(input);
    expect(cpuMsSince(t0)).toBeLessThan(2000);
  });
});

// The protocol objects of decisions.md §1 and §6 as TypeBox schemas: one definition serves
// validation, the TypeScript types and the API docs. Pure: no I/O.
import { Type, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { trimmedPattern } from "./trimmed";
import { plainMessage } from "./validation-message";

const Str = (max: number, min = 0) => Type.String({ minLength: min, maxLength: max });
const Arr = <T extends TSchema>(item: T, max: number) => Type.Array(item, { maxItems: max });

export { TRIMMED_BLANK, trimmedPattern } from "./trimmed";

export const OS_VALUES = ["linux", "macos", "windows", "freebsd", "other"] as const;

const Package = Type.Object({ name: Str(200, 1), version: Type.Optional(Str(100)) });
const Os = Type.Union(OS_VALUES.map((v) => Type.Literal(v)));

/** Environment inside a Trail: os and runtime.name are required. */
export const TrailEnvironment = Type.Object({
  os: Os,
  os_version: Type.Optional(Str(100)),
  arch: Type.Optional(Str(40)),
  runtime: Type.Object({ name: Str(40, 1), version: Type.Optional(Str(40)) }),
  packages: Type.Optional(Arr(Package, 100)),
});

/** Environment in a search request or an outcome report: every field optional. */
export const QueryEnvironment = Type.Object({
  os: Type.Optional(Os),
  os_version: Type.Optional(Str(100)),
  arch: Type.Optional(Str(40)),
  runtime: Type.Optional(Type.Object({ name: Type.Optional(Str(40, 1)), version: Type.Optional(Str(40)) })),
  packages: Type.Optional(Arr(Package, 100)),
});

/**
 * Upper bounds of the effort numbers (decisions.md §1 only says ≥ 0). Generous for any real fix,
 * small enough that every sum of them stays an exact integer: a billion tokens, ten thousand
 * failed attempts, a year of work. Larger values get 400 invalid_trail at the field's pointer.
 */
export const EFFORT_LIMITS = { tokens_spent: 1_000_000_000, failed_attempts: 10_000, duration_s: 31_536_000 } as const;

// Checked once trimmed; the pattern takes the blanks too, so the published schema (OpenAPI, the
// MCP tools' inputSchema) does not refuse what the colony accepts.
export const ProtocolVersion = Type.String({ pattern: trimmedPattern(/^1\.[0-9]+$/), maxLength: 20 });

export const Trail = Type.Object({
  protocol_version: ProtocolVersion,
  problem: Type.Object({
    error: Str(2000, 1),
    error_type: Type.Optional(Str(200)),
    description: Type.Optional(Str(4000)),
    root_cause: Type.Optional(Str(4000)),
    dead_ends: Type.Optional(Arr(Type.Object({ attempt: Str(1000, 1), result: Type.Optional(Str(1000)) }), 20)),
  }),
  solution: Type.Object({
    summary: Str(2000, 1),
    steps: Type.Optional(Arr(Str(2000, 1), 50)),
    commands: Type.Optional(Arr(Str(2000, 1), 50)),
    code_patches: Type.Optional(
      Arr(
        Type.Object({
          file_path: Str(500, 1),
          diff: Type.Optional(Str(32768)),
          language: Type.Optional(Str(40)),
        }),
        20,
      ),
    ),
    verification: Type.Optional(Str(2000)),
  }),
  agent_info: Type.Object({ model: Str(200, 1), framework: Str(200, 1) }),
  environment: TrailEnvironment,
  effort: Type.Optional(
    Type.Object({
      tokens_spent: Type.Optional(Type.Number({ minimum: 0, maximum: EFFORT_LIMITS.tokens_spent })),
      failed_attempts: Type.Optional(Type.Integer({ minimum: 0, maximum: EFFORT_LIMITS.failed_attempts })),
      duration_s: Type.Optional(Type.Number({ minimum: 0, maximum: EFFORT_LIMITS.duration_s })),
    }),
  ),
  tags: Type.Optional(Arr(Str(50, 1), 20)),
});

export const OUTCOMES = ["worked", "partially_worked", "failed", "not_applicable"] as const;

export const OutcomeReport = Type.Object({
  protocol_version: ProtocolVersion,
  solution_id: Type.Optional(Str(100)),
  outcome: Type.Union(OUTCOMES.map((v) => Type.Literal(v))),
  agent_info: Type.Optional(Type.Object({ model: Type.Optional(Str(200)), framework: Type.Optional(Str(200)) })),
  environment: Type.Optional(QueryEnvironment),
  notes: Type.Optional(Str(2000)),
});

/** The longest search query, in characters: POST /v1/search and colony_search alike. */
export const MAX_QUERY_CHARS = 2000;

export const SearchRequest = Type.Object({
  query: Str(MAX_QUERY_CHARS, 1),
  error_type: Type.Optional(Str(200)),
  environment: Type.Optional(QueryEnvironment),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  min_strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  min_confidence: Type.Optional(
    Type.Union([Type.Literal("weak"), Type.Literal("likely"), Type.Literal("strong")], {
      description: "Only results at least this sure: weak (all, the default), likely or strong",
    }),
  ),
});

/** Query of GET /v1/feed (values arrive as strings: see parseQuery). */
export const FeedQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 100, description: "next_cursor of the previous page" })),
  category: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        "one category, in any case or width: Dependency and ｄｅｐｅｎｄｅｎｃｙ find the same trails; a value that is no category is 400",
    }),
  ),
  runtime: Type.Optional(
    Type.String({
      maxLength: 100,
      description: "any spelling of one runtime, in any case or width: node, nodejs, Node.js and ｎｏｄｅ find the same trails",
    }),
  ),
});

/** Query of GET /v1/activity. */
export const ActivityQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
});

/** Optional body of DELETE /v1/trails/{id}: why the operator removes it (checked, not kept). */
export const RemoveRequest = Type.Object({ reason: Type.Optional(Str(500)) });

export type Trail = Static<typeof Trail>;
export type SearchRequest = Static<typeof SearchRequest>;
export type TrailEnvironment = Static<typeof TrailEnvironment>;
export type QueryEnvironment = Static<typeof QueryEnvironment>;
export type OutcomeReport = Static<typeof OutcomeReport>;
export type Outcome = (typeof OUTCOMES)[number];

export interface ValidationDetail {
  path: string;
  message: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; details: ValidationDetail[] };

/** The message for a string holding U+0000 (PostgreSQL's text and jsonb cannot store it). */
export const NUL_MESSAGE = "must not contain the NUL character (U+0000)";

const pointerKey = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * Trims every string, recursively, and makes it well-formed Unicode (a lone surrogate, which JSON
 * allows but no store keeps, becomes U+FFFD); returns a fresh value (the input is never mutated).
 * The JSON pointer of every string holding NUL goes to `nul`: such a string is refused, on every
 * store alike, rather than failing to be written (PostgreSQL) after it was accepted.
 */
function trimStrings(value: unknown, path: string, nul: string[]): unknown {
  if (typeof value === "string") {
    if (value.includes("\u0000")) nul.push(path || "/");
    return value.toWellFormed().trim();
  }
  if (Array.isArray(value)) return value.map((v, i) => trimStrings(v, `${path}/${i}`, nul));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // JSON.parse makes "__proto__" an own key; assigning it would swap the prototype.
      if (k === "__proto__") continue;
      out[k] = trimStrings(v, `${path}/${pointerKey(k)}`, nul);
    }
    return out;
  }
  return value;
}

/** Resolves a JSON pointer inside value (only for the few pointers TypeBox reports). */
function at(value: unknown, pointer: string): unknown {
  let cur: any = value;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    // own keys only: "/constructor" must not find Object's constructor
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/**
 * Value.Clean, and then every key an object schema does not own is dropped: Clean tests a key
 * with `in`, so unknown fields named after Object.prototype members (`constructor`, `toString`,
 * `hasOwnProperty`) survived it, were stored and served. Mutates value, as Clean does.
 */
function clean(schema: TSchema, value: unknown): unknown {
  const cleaned = Value.Clean(schema, value);
  dropInheritedNames(schema, cleaned);
  return cleaned;
}

function dropInheritedNames(schema: TSchema, value: unknown): void {
  const s = schema as { type?: string; items?: TSchema; properties?: Record<string, TSchema>; additionalProperties?: unknown };
  if (Array.isArray(value)) {
    if (s.type === "array" && s.items) for (const item of value) dropInheritedNames(s.items, item);
    return;
  }
  if (value === null || typeof value !== "object" || s.type !== "object" || !s.properties) return;
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (Object.hasOwn(s.properties, key)) dropInheritedNames(s.properties[key]!, object[key]);
    else if (key in s.properties && !s.additionalProperties) delete object[key];
  }
}

/** A string's length as the schema's limits count it: characters (code points), not UTF-16 units. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** `text` cut to `max` characters (code points), with "…" when cut: a client's text quoted in a message. */
export function cutToChars(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max).join("")}…` : text;
}

/**
 * The paths among `paths` that the parsed value keeps: an unknown field is accepted and dropped
 * (decisions §1), so a NUL inside one refuses nothing.
 */
function keptPaths(schema: TSchema, value: unknown, paths: string[]): string[] {
  const kept = clean(schema, Value.Clone(value));
  return paths.filter((p) => p === "/" || at(kept, p) !== undefined);
}

/**
 * Validates value against schema: strings are trimmed, every failing path is reported once (a
 * JSON pointer with a message), lengths count characters (code points, not UTF-16 units), and
 * unknown fields are dropped from the returned value.
 */
export function parseWith<T extends TSchema>(
  schema: T,
  input: unknown,
  extraRules?: (value: Static<T>) => ValidationDetail[],
): Parsed<Static<T>> {
  const found: string[] = [];
  const value = trimStrings(input, "", found);
  const nul = found.length === 0 ? found : keptPaths(schema, value, found);
  const seen = new Set<string>();
  const details: ValidationDetail[] = [];
  for (const path of nul) {
    seen.add(path);
    details.push({ path, message: NUL_MESSAGE });
  }
  for (const error of Value.Errors(schema, value)) {
    const path = error.path || "/";
    if (seen.has(path)) continue;
    // TypeBox counts UTF-16 units; the contract counts characters.
    const max = (error.schema as { maxLength?: number }).maxLength;
    const actual = at(value, error.path);
    if (max !== undefined && typeof actual === "string" && codePointLength(actual) <= max && actual.length > max) {
      continue;
    }
    seen.add(path);
    details.push({ path, message: plainMessage(error) });
  }
  // Cross-field rules run even when the schema failed elsewhere, so every failure is listed.
  if (extraRules) for (const d of extraRules(value as Static<T>)) if (!seen.has(d.path)) details.push(d);
  if (details.length > 0) return { ok: false, details };
  return { ok: true, value: clean(schema, value) as Static<T> };
}

function trailRules(trail: Trail): ValidationDetail[] {
  const s = (trail as Partial<Trail> | null)?.solution;
  if (s === null || typeof s !== "object") return [];
  const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;
  const hasAction = nonEmpty(s.steps) || nonEmpty(s.commands) || nonEmpty(s.code_patches);
  return hasAction ? [] : [{ path: "/solution", message: "at least one of steps, commands, code_patches must be non-empty" }];
}

/**
 * The tokens a trail's fix saves a later agent: its tokens_spent as a whole number from 0 to
 * EFFORT_LIMITS.tokens_spent, whatever is stored (a trail kept by an older version may hold any
 * number, even one that is not finite).
 */
export function tokensSaved(trail: Trail): number {
  const spent = trail.effort?.tokens_spent;
  if (typeof spent !== "number" || !Number.isFinite(spent) || spent <= 0) return 0;
  return Math.round(Math.min(spent, EFFORT_LIMITS.tokens_spent));
}

export const parseTrail = (input: unknown) => parseWith(Trail, input, trailRules);
export const parseOutcomeReport = (input: unknown) => parseWith(OutcomeReport, input);
export const parseSearchRequest = (input: unknown) => parseWith(SearchRequest, input);

/**
 * Validates URL query parameters against an object schema: an empty value counts as absent and a
 * decimal string becomes a number where the schema wants an integer (anything else stays a
 * string and fails as such).
 */
export function parseQuery<T extends TObject>(schema: T, query: Record<string, unknown>): Parsed<Static<T>> {
  const input: Record<string, unknown> = {};
  // A parameter of the schema given more than once (src/http/query.ts keeps every value) is
  // refused: which one the client meant cannot be known. An unknown one is ignored, as any.
  const repeated: ValidationDetail[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (Array.isArray(raw) && Object.hasOwn(schema.properties, key)) {
      repeated.push({ path: `/${pointerKey(key)}`, message: `is given ${raw.length} times; give it once` });
    }
  }
  if (repeated.length > 0) return { ok: false, details: repeated };
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined || raw === "") continue;
    const type = (schema.properties[key] as { type?: string } | undefined)?.type;
    // Trimmed as every string a client sends; a sign kept, so `-1` is "at least 1" as in a JSON
    // body, not "a whole number" (ASCII digits only: `\d` without the u flag, no fullwidth `５`).
    const text = typeof raw === "string" ? raw.trim() : raw;
    input[key] = type === "integer" && typeof text === "string" && /^-?\d{1,15}$/.test(text) ? Number(text) : raw;
  }
  return parseWith(schema, input);
}

// The OpenAPI document at GET /openapi.json: valid OpenAPI 3.1 (checked against the official
// schema by @seriousme/openapi-schema-validator), every route of interface.md §4 in it, and the
// answers of a real colony, success and error alike, match the schemas it declares.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ErrorBody } from "../src/http/api-schemas";
import { API_ROUTES } from "../src/http/openapi";
import { startTestColony, type TestColony } from "./support/colony";
import { json, sampleTrail } from "./support/trails";

// interface.md §4, copied so a clone without ../shared still checks it; the last test compares.
const SPEC_ROUTES = [
  "GET /v1/trails/by-fingerprint/{fp}",
  "POST /v1/search",
  "POST /v1/trails",
  "POST /v1/drafts",
  "GET /v1/drafts/{draft_id}",
  "POST /v1/drafts/{draft_id}/publish",
  "POST /v1/drafts/{draft_id}/discard",
  "DELETE /v1/trails/{trail_id}",
  "GET /v1/trails/{trail_id}",
  "POST /v1/trails/{trail_id}/outcomes",
  "GET /v1/feed",
  "GET /v1/activity",
  "GET /v1/stats",
  "GET /healthz",
  "GET /readyz",
  "POST /mcp", // §4.14
];

const TOKEN = "openapi-test-operator-token";
let colony: TestColony;
let doc: any;

beforeAll(async () => {
  colony = await startTestColony({ COLONY_ADMIN_TOKEN: TOKEN });
  const res = await colony.fetch("/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  doc = await res.json();
}, 60_000);

afterAll(() => colony?.dispose());

/** The route template an actual path matches ({x} segments match any one segment). */
function templateOf(method: string, path: string): string {
  const clean = path.split("?")[0]!;
  for (const [template, item] of Object.entries(doc.paths as Record<string, object>)) {
    if (!(method.toLowerCase() in item)) continue;
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (re.test(clean)) return template;
  }
  throw new Error(`${method} ${clean} is not in the document`);
}

/** Calls the colony and checks the answer against the schema the document declares for its status. */
async function conforms(method: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await colony.fetch(path, { ...init, method });
  const template = templateOf(method, path);
  const route = API_ROUTES.find((r) => r.path === template && r.method === method.toLowerCase())!;
  const text = route.contentType && res.ok ? true : null;
  if (text) expect(res.headers.get("content-type")).toContain(route.contentType!);
  const body = text ? await res.text() : await res.json();
  const declared = doc.paths[template][method.toLowerCase()].responses;
  expect({ path, status: res.status, declared: String(res.status) in declared }).toEqual({ path, status: res.status, declared: true });
  // Strict: a field a real answer carries that the document does not declare is an error too.
  const schema = closed(route.answers[res.status]?.schema ?? route.errorBody ?? ErrorBody);
  const errors = [...Value.Errors(schema, body)].map((e) => `${e.path}: ${e.message}`);
  expect({ path, status: res.status, errors }).toEqual({ path, status: res.status, errors: [] });
  for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) expect(res.headers.get(h)).not.toBeNull();
  return { status: res.status, body };
}

/**
 * A copy of a TypeBox schema in which every object with declared properties and no word on others
 * refuses undeclared ones (JSON-RPC messages and maps say additionalProperties themselves).
 */
function closed(schema: TSchema): TSchema {
  const walk = (node: any): any => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== "object") return node;
    const out: any = {};
    for (const key of Object.keys(node)) out[key] = walk(node[key]);
    for (const symbol of Object.getOwnPropertySymbols(node)) out[symbol] = node[symbol];
    if (node.type === "object" && node.properties && node.additionalProperties === undefined) out.additionalProperties = false;
    return out;
  };
  return walk(schema);
}

const bearer = { authorization: `Bearer ${TOKEN}` };

describe("OpenAPI document", () => {
  test("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  test("has every route of interface.md, each with its answers and the error shape", () => {
    const inDoc = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const route of SPEC_ROUTES) expect(inDoc).toContain(route);
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses);
        expect({ route: `${method} ${path}`, success: statuses.some((s) => s.startsWith("2")) }).toEqual({
          route: `${method} ${path}`,
          success: true,
        });
        // Every route can be refused by the general quota, in the error shape (JSON-RPC's on the MCP endpoint).
        const shape = path === "/mcp" ? "JsonRpcError" : "Error";
        expect(op.responses["429"].content["application/json"].schema).toEqual({ $ref: `#/components/schemas/${shape}` });
      }
    }
    expect(doc.components.schemas.Error.properties.error.required).toEqual(["code", "message"]);
  });

  test("request schemas are the ones the service validates with", () => {
    const search = doc.paths["/v1/search"].post.requestBody.content["application/json"].schema;
    expect(search).toEqual({ $ref: "#/components/schemas/SearchRequest" });
    expect(doc.components.schemas.SearchRequest.properties.query.maxLength).toBe(2000);
    expect(doc.components.schemas.SearchRequest.properties.limit).toMatchObject({ minimum: 1, maximum: 10 });
    const feedLimit = doc.paths["/v1/feed"].get.parameters.find((p: any) => p.name === "limit");
    expect(feedLimit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 50, default: 20 });
    expect(doc.paths["/v1/trails/{trail_id}"].delete.security).toEqual([{ operatorToken: [] }]);
  });

  test("real answers of every route match the schemas the document declares", async () => {
    await conforms("GET", "/healthz");
    await conforms("GET", "/readyz");
    const published = await conforms("POST", "/v1/trails", json(sampleTrail()));
    expect(published.status).toBe(202);
    await conforms("POST", "/v1/trails", json({ protocol_version: "1.0" }));
    const id = published.body.trail_id;
    await conforms("GET", `/v1/trails/${id}`);
    // Wait for enrichment, then every view has something to show.
    for (let i = 0; i < 200; i++) {
      const r = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as any;
      if (r.status !== "queued") break;
      await Bun.sleep(50);
    }
    const indexed = await conforms("GET", `/v1/trails/${id}`);
    expect(indexed.body.status).toBe("indexed");
    const found = await conforms("GET", `/v1/trails/by-fingerprint/${published.body.fingerprint}`);
    expect(found.body.results.length).toBe(1);
    await conforms("GET", `/v1/trails/by-fingerprint/fp1_${"0".repeat(32)}`);
    await conforms("GET", "/v1/trails/by-fingerprint/nope");
    const search = await conforms("POST", "/v1/search", json({ query: "No module named yaml" }));
    expect(search.body.results.length).toBeGreaterThan(0);
    await conforms("POST", "/v1/search", json({ query: "" }));
    await conforms("POST", `/v1/trails/${id}/outcomes`, json({ protocol_version: "1.0", outcome: "worked", notes: "fine" }));
    await conforms("POST", `/v1/trails/${id}/outcomes`, json({ protocol_version: "1.0", outcome: "maybe" }));
    await conforms("GET", "/v1/feed?limit=5");
    await conforms("GET", "/v1/feed?limit=500");
    await conforms("GET", "/v1/activity");
    await conforms("GET", "/v1/stats");
    const draft = await conforms("POST", "/v1/drafts", json(sampleTrail({ error: "Error: listen EADDRINUSE :::3000" })));
    await conforms("GET", `/v1/drafts/${draft.body.draft_id}`);
    await conforms("POST", `/v1/drafts/${draft.body.draft_id}/publish`);
    await conforms("GET", `/v1/drafts/${draft.body.draft_id}`);
    await conforms("POST", `/v1/drafts/${draft.body.draft_id}/discard`);
    const other = await conforms("POST", "/v1/drafts", json(sampleTrail({ error: "Error: ENOSPC: no space left on device" })));
    await conforms("POST", `/v1/drafts/${other.body.draft_id}/discard`);
    await conforms("GET", `/v1/drafts/${other.body.draft_id}`);
    await conforms("GET", "/v1/drafts/unknown");
    await conforms("DELETE", `/v1/trails/${id}`, { headers: { authorization: "Bearer wrong" } });
    await conforms("DELETE", `/v1/trails/${id}`, {
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ reason: 7 }),
    });
    const removed = await conforms("DELETE", `/v1/trails/${id}`, {
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ reason: "spam" }),
    });
    expect(removed.status).toBe(200);
    await conforms("GET", `/v1/trails/${id}`);
    await conforms("GET", `/v1/admin/trails/${id}`, { headers: bearer });
    await conforms("GET", "/v1/admin/overview", { headers: bearer });
    await conforms("GET", "/v1/admin/overview");
    await conforms("GET", "/v1/admin/series?hours=3", { headers: bearer });
    await conforms("GET", "/v1/admin/series?hours=0", { headers: bearer });
    const explained = await conforms("POST", "/v1/admin/search", json({ query: "No module named yaml" }, bearer));
    expect(explained.body.explanations.length).toBe(explained.body.results.length);
    await conforms("GET", `/v1/admin/trails/${id}`, { headers: bearer });
    await conforms("GET", "/v1/admin/trails/nope", { headers: bearer });
    await conforms("GET", "/metrics");
    await conforms("GET", "/metrics", { headers: bearer });
    const mcp = await conforms(
      "POST",
      "/mcp",
      json({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { accept: "application/json, text/event-stream" }),
    );
    expect(mcp.status).toBe(200);
    // The MCP endpoint refuses in JSON-RPC's shape, and its document says so.
    const rpc = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const refusals = [
      await conforms("POST", "/mcp", { headers: rpc, body: "{not json" }),
      await conforms("POST", "/mcp", { headers: rpc, body: JSON.stringify({ hello: 1 }) }),
      await conforms("POST", "/mcp", { headers: { ...rpc, "x-colony-agent": "bad" }, body: list }),
      await conforms("POST", "/mcp", { headers: { ...rpc, origin: "https://elsewhere.example" }, body: list }),
      await conforms("POST", "/mcp", { headers: { "content-type": "application/json", accept: "text/html" }, body: list }),
      await conforms("POST", "/mcp", { headers: { ...rpc, "content-type": "text/plain" }, body: list }),
      await conforms("POST", "/mcp", { headers: rpc, body: JSON.stringify({ jsonrpc: "2.0", id: 1, pad: "x".repeat(70_000) }) }),
    ];
    expect(refusals.map((r) => r.status)).toEqual([400, 400, 400, 403, 406, 415, 413]);
    expect(doc.paths["/mcp"].post.responses["413"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/JsonRpcError",
    });
  }, 60_000);

  test("the id patterns of the path parameters take what the colony accepts: an id with the blanks the core trims around it, and nothing else", async () => {
    // The core trims a trail or draft id as every string a client sends (String.prototype.trim:
    // a tab, a no-break space, a BOM, U+3000 …), while the document's pattern said a bare UUID: a
    // client or gateway validating against the document refused ids the colony finds.
    const publish = await colony.fetch("/v1/trails", json(sampleTrail({ error: "openapi padded id: ZeroDivisionError" })));
    const id: string = ((await publish.json()) as any).trail_id;
    const draft = await colony.fetch("/v1/drafts", json(sampleTrail({ error: "openapi padded draft: ZeroDivisionError" })));
    const draftId: string = ((await draft.json()) as any).draft_id;
    const pattern = (path: string, name: string) =>
      new RegExp(doc.paths[path].get.parameters.find((p: any) => p.name === name).schema.pattern, "u");
    const trailPattern = pattern("/v1/trails/{trail_id}", "trail_id");
    const draftPattern = pattern("/v1/drafts/{draft_id}", "draft_id");
    for (const [pad, end] of [
      ["\t", "\u00a0"],
      ["\ufeff", "\u3000"],
      ["\u2028", " "],
      ["\u00a0\u00a0", "\u205f"],
    ]) {
      const paddedTrail = `${pad}${id.toUpperCase()}${end}`;
      const paddedDraft = `${pad}${draftId}${end}`;
      expect((await colony.fetch(`/v1/trails/${encodeURIComponent(paddedTrail)}`)).status).toBe(200);
      expect((await colony.fetch(`/v1/drafts/${encodeURIComponent(paddedDraft)}`)).status).toBe(200);
      expect({ paddedTrail, ok: trailPattern.test(paddedTrail) }).toEqual({ paddedTrail, ok: true });
      expect({ paddedDraft, ok: draftPattern.test(paddedDraft) }).toEqual({ paddedDraft, ok: true });
    }
    // What the core does not trim stays outside the pattern, and the colony does not find it.
    for (const pad of ["\u200b", "\u180e", "x", "\u0085"]) {
      expect(trailPattern.test(`${pad}${id}`)).toBe(false);
      expect(draftPattern.test(`${pad}${draftId}`)).toBe(false);
      expect((await colony.fetch(`/v1/trails/${encodeURIComponent(`${pad}${id}`)}`)).status).toBe(404);
    }
  });

  test("the fingerprint pattern of the lookup takes what the colony reads as one: surrounding blanks, hex in any case; not look-alikes", async () => {
    const publish = await colony.fetch("/v1/trails", json(sampleTrail({ error: "openapi padded fingerprint: ZeroDivisionError" })));
    const fp: string = ((await publish.json()) as any).fingerprint;
    await colony.service.worker!.drain();
    const pattern = new RegExp(
      doc.paths["/v1/trails/by-fingerprint/{fp}"].get.parameters.find((p: any) => p.name === "fp").schema.pattern,
      "u",
    );
    const readable = [fp, `\t${fp}\u00a0`, `\ufeff${fp.toUpperCase()}\u3000`];
    const lookAlike = [`\u200b${fp}`, fp.replace("f", "\u0192"), fp.replace(/[0-9]/, "\uff11")];
    for (const [sent, ok, status] of [...readable.map((f) => [f, true, 200] as const), ...lookAlike.map((f) => [f, false, 400] as const)]) {
      expect({
        sent,
        ok: pattern.test(sent),
        status: (await colony.fetch(`/v1/trails/by-fingerprint/${encodeURIComponent(sent)}`)).status,
      }).toEqual({ sent, ok, status });
    }
  });

  test("protocol_version's pattern takes the blanks the core trims, as the colony does; the document says strings are checked trimmed", async () => {
    const pattern = new RegExp(doc.components.schemas.Trail.properties.protocol_version.pattern, "u");
    const trail: any = sampleTrail({ error: "openapi padded protocol version: ZeroDivisionError" });
    trail.protocol_version = "\u00a01.0\t";
    expect((await colony.fetch("/v1/trails", json(trail))).status).toBe(202);
    expect(pattern.test(trail.protocol_version)).toBe(true);
    expect(["2.0", "1.x", "\u200b1.0"].map((v) => pattern.test(v))).toEqual([false, false, false]);
    expect(doc.info.description).toContain("trimmed");
  });

  test("every field of the spec's resource tables is in the served document with the spec's type", () => {
    // interface.md §2 and decisions §5–§11: [component schema, dotted field path ([] steps into
    // array items), type]. "enum:a|b" lists the values a string field takes.
    const FIELDS: [string, string, string][] = [
      ["Trail", "protocol_version", "string"],
      ["Trail", "problem.error", "string"],
      ["Trail", "solution.code_patches[].file_path", "string"],
      ["Trail", "solution.commands[]", "string"],
      ["Trail", "solution.steps[]", "string"],
      ["Trail", "agent_info.model", "string"],
      ["Trail", "agent_info.framework", "string"],
      ["Trail", "environment.os", "enum:linux|macos|windows|freebsd|other"],
      ["Trail", "environment.os_version", "string"],
      ["Trail", "environment.arch", "string"],
      ["Trail", "environment.runtime.name", "string"],
      ["Trail", "environment.runtime.version", "string"],
      ["Trail", "environment.packages[].name", "string"],
      ["Trail", "environment.packages[].version", "string"],
      ["Trail", "effort.tokens_spent", "number"],
      ["Trail", "effort.failed_attempts", "integer"],
      ["SearchResult", "trail_id", "string"],
      ["SearchResult", "match.via", "enum:fingerprint|semantic"],
      ["SearchResult", "match.score", "number"],
      ["SearchResult", "match.environment_overlap", "number"],
      ["SearchResult", "strength", "number"],
      ["SearchResult", "outcomes.worked", "integer"],
      ["SearchResult", "outcomes.partially_worked", "integer"],
      ["SearchResult", "outcomes.failed", "integer"],
      ["SearchResult", "risk.level", "enum:low|medium|high"],
      ["SearchResult", "risk.flags[].command_index", "integer"],
      ["SearchResult", "risk.flags[].flag", "string"],
      ["SearchResult", "risk.flags[].level", "enum:low|medium|high"],
      ["SearchResult", "risk.flags[].detail", "string"],
      ["SearchResult", "trail.problem", "object"],
      ["SearchEnvelope", "fingerprint", "string"],
      ["SearchEnvelope", "results", "array"],
      ["SearchEnvelope", "notice", "string"],
      ["TrailStatus", "status", "enum:queued|indexed|merged|rejected|removed"],
      ["TrailStatus", "category", "string"],
      ["TrailStatus", "quality", "number"],
      ["TrailStatus", "strength", "number"],
      ["TrailStatus", "merged_into", "string"],
      ["TrailStatus", "reasons[]", "string"],
      ["TrailStatus", "created_at", "string"],
      ["OutcomeReport", "protocol_version", "string"],
      ["OutcomeReport", "solution_id", "string"],
      ["OutcomeReport", "outcome", "enum:worked|partially_worked|failed|not_applicable"],
      ["OutcomeReport", "agent_info.model", "string"],
      ["OutcomeReport", "environment.os", "enum:linux|macos|windows|freebsd|other"],
      ["OutcomeReport", "notes", "string"],
      ["OutcomeResult", "trail_id", "string"],
      ["OutcomeResult", "strength", "number"],
      ["OutcomeResult", "outcomes.worked", "integer"],
      ["OutcomeResult", "counted", "boolean"],
      ["Published", "trail_id", "string"],
      ["Published", "fingerprint", "string"],
      ["Published", "status", "enum:queued"],
      ["Published", "status_url", "string"],
      ["Draft", "draft_id", "string"],
      ["Draft", "approve_url", "string"],
      ["Draft", "expires_in", "integer"],
      ["Draft", "fingerprint", "string"],
      ["Draft", "redactions", "object"],
      ["Draft", "risk.level", "enum:low|medium|high"],
      ["Draft", "trail.problem", "object"],
      ["DraftPublished", "state", "enum:published"],
      ["DraftPublished", "trail_id", "string"],
      ["DraftPublished", "trail_status", "string"],
      ["DraftPublished", "status_url", "string"],
      ["DraftDiscarded", "state", "enum:discarded"],
      ["Removed", "status", "enum:removed"],
      ["FeedItem", "trail_id", "string"],
      ["FeedItem", "category", "string"],
      ["FeedItem", "quality", "number"],
      ["FeedItem", "strength", "number"],
      ["FeedItem", "reinforced_at", "string"],
      ["FeedItem", "outcomes.failed", "integer"],
      ["FeedItem", "replies[].outcome", "enum:worked|partially_worked|failed|not_applicable"],
      ["FeedItem", "replies[].notes", "string"],
      ["FeedItem", "replies[].agent", "string"],
      ["FeedItem", "replies[].at", "string"],
      ["Feed", "items", "array"],
      ["Feed", "next_cursor", "string"],
      ["ActivityEvent", "kind", "enum:reinforced|weakened|search|laid"],
      ["ActivityEvent", "agent", "string"],
      ["ActivityEvent", "trail_id", "string"],
      ["ActivityEvent", "text", "string"],
      ["ActivityEvent", "at", "string"],
      ["Stats", "trails", "integer"],
      ["Stats", "outcomes_24h", "integer"],
      ["Stats", "tokens_saved_24h", "integer"],
      ["Stats", "agents_24h", "integer"],
      ["Stats", "hot[].label", "string"],
      ["Stats", "hot[].searches", "integer"],
      ["Health", "status", "enum:ok"],
      ["Health", "version", "string"],
      ["Health", "uptime_s", "integer"],
      ["Readiness", "status", "enum:ready|unavailable"],
      ["Readiness", "checks.kv.ok", "boolean"],
      ["Readiness", "checks.vector.latency_ms", "number"],
      ["Readiness", "checks.embedding.detail", "string"],
      ["Readiness", "queue_depth", "integer"],
    ];
    const deref = (node: any): any => {
      while (node?.$ref) node = doc.components.schemas[node.$ref.split("/").pop()];
      // Nullable(x) is anyOf [x, null]: the field's type is x's.
      if (node?.anyOf && node.anyOf.some((a: any) => a.type === "null") && node.anyOf.length === 2) {
        return deref(node.anyOf.find((a: any) => a.type !== "null"));
      }
      return node;
    };
    // Object schemas that are a union of shapes (TrailStatus, DraftState) hold a field in any
    // member; a field in several members takes the values of all (TrailStatus.status).
    const members = (node: any, key: string): any[] => {
      node = deref(node);
      if (node?.properties?.[key]) return [node.properties[key]];
      return (node?.anyOf ?? []).flatMap((alt: any) => members(alt, key));
    };
    const typeOf = (raw: any): string => {
      const node = deref(raw);
      if (node?.const !== undefined) return `enum:${node.const}`;
      if (node?.anyOf) {
        const consts = node.anyOf.map((a: any) => deref(a));
        if (consts.every((c: any) => c.const !== undefined)) return `enum:${consts.map((c: any) => c.const).join("|")}`;
      }
      return node?.type;
    };
    const typesOf = (nodes: any[]): string => {
      const types = [...new Set(nodes.map(typeOf))];
      if (types.length > 1 && types.every((t) => t?.startsWith("enum:"))) return `enum:${types.map((t) => t.slice(5)).join("|")}`;
      return types.length === 1 ? types[0]! : `mixed ${types.join(", ")}`;
    };
    const mismatches: string[] = [];
    for (const [schema, path, type] of FIELDS) {
      let nodes: any[] = [{ $ref: `#/components/schemas/${schema}` }];
      for (const step of path.split(".")) {
        const [key, ...arrays] = step.split("[]");
        nodes = nodes.flatMap((n) => members(n, key!));
        for (const _ of arrays) nodes = nodes.map((n) => deref(n)?.items).filter(Boolean);
      }
      const actual = nodes.length === 0 ? "missing" : typesOf(nodes);
      const fits = actual === type || (type.startsWith("enum:") && actual.startsWith("enum:") && sameSet(actual, type));
      if (!fits) mismatches.push(`${schema}.${path}: ${actual}, spec ${type}`);
    }
    expect(mismatches).toEqual([]);
  });

  test("the copy of the route table matches interface.md §4 when the spec sits beside the checkout", () => {
    const spec = new URL("../../shared/spec/interface.md", import.meta.url);
    const local = new URL("../shared/spec/interface.md", import.meta.url);
    const file = [local, spec].find((u) => existsSync(u));
    if (!file) return; // a public clone has no ../shared; the copy above is the check
    const text = readFileSync(file, "utf8");
    const section = text.slice(text.indexOf("## 4. Endpoints"), text.indexOf("### 4.1"));
    const rows = [...section.matchAll(/^\| (GET|POST|DELETE) \| (\S+) \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(rows.length).toBeGreaterThan(10);
    expect(SPEC_ROUTES.slice(0, -1).sort()).toEqual(rows.sort());
  });
});

/** Two "enum:a|b" strings naming the same values, in any order. */
function sameSet(a: string, b: string): boolean {
  const values = (e: string) => e.slice(5).split("|").sort().join("|");
  return values(a) === values(b);
}

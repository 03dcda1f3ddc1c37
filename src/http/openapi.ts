// The OpenAPI 3.1 document served at GET /openapi.json, built from the TypeBox schemas the service
// validates requests with (src/core/trail.ts) and the answer schemas of src/http/api-schemas.ts.
// Nothing here restates a schema: the route table only says which schema goes where.
import { Type, type TObject, type TSchema } from "@sinclair/typebox";
import { SeriesQuery } from "../service/admin";
import { DRAFT_ID_PATTERN } from "../service/drafts";
import { UUID_PATTERN } from "../service/trails";
import { ERROR_CODES, type ErrorCode } from "../core/error-codes";
import { FINGERPRINT_AS_SENT_PATTERN } from "../core/fingerprint";
import { ActivityQuery, FeedQuery, OutcomeReport, RemoveRequest, SearchRequest, Trail, trimmedPattern } from "../core/trail";
import { VERSION } from "../version";
import * as S from "./api-schemas";
import { AGENT_ID_PATTERN, AGENT_ID_RULE } from "../core/agent-id";

type Method = "get" | "post" | "delete";

interface Answer {
  description: string;
  schema: TSchema;
  /** Extra response headers, by name: their description. */
  headers?: Record<string, string>;
}

export interface ApiRoute {
  method: Method;
  /** OpenAPI path template ({name} parameters). */
  path: string;
  summary: string;
  tag: string;
  /** Needs Authorization: Bearer <COLONY_ADMIN_TOKEN>. */
  operator?: boolean;
  pathParams?: Record<string, { schema: TSchema; description: string }>;
  /** Request headers this route reads, by name (beyond X-Colony-Agent, which every route reads). */
  headerParams?: Record<string, { schema: TSchema; description: string }>;
  query?: TObject;
  body?: { schema: TSchema; required: boolean };
  answers: Record<number, Answer>;
  /** Error codes this route answers with, beyond those every route may give. */
  errors: ErrorCode[];
  /** The body of this route's error answers when it is not the REST error shape (POST /mcp: JSON-RPC). */
  errorBody?: TSchema;
  /** Refusals no error code names, by status (POST /mcp: the SDK's and the Origin check's). */
  moreErrors?: Record<number, string>;
  /** The answer is not JSON (text/html, text/plain). */
  contentType?: string;
}

const TRAIL_ID = {
  schema: Type.String({ pattern: trimmedPattern(UUID_PATTERN) }),
  description: "a trail id (a UUID, any letter case, surrounding blanks ignored; answers write it in lower case)",
};
const DRAFT_ID = {
  schema: Type.String({ pattern: trimmedPattern(DRAFT_ID_PATTERN) }),
  description: "the draft id from approve_url (surrounding blanks ignored)",
};
const FP = {
  schema: Type.String({ pattern: trimmedPattern(FINGERPRINT_AS_SENT_PATTERN) }),
  description:
    "an error fingerprint (fp1_ and 32 hex characters, any letter case, surrounding blanks ignored; answers write it in lower case)",
};

/** Every route of the API (interface.md §4 and the operator additions), in the order of the docs. */
export const API_ROUTES: ApiRoute[] = [
  {
    method: "get",
    path: "/v1/trails/by-fingerprint/{fp}",
    summary: "Up to 5 indexed trails for a fingerprint, strongest first",
    tag: "Trails",
    pathParams: { fp: FP },
    answers: {
      200: { description: "the search envelope", schema: S.SearchEnvelope, headers: { "Cache-Control": "public, max-age=300" } },
    },
    errors: ["invalid_request", "not_found", "unavailable"],
  },
  {
    method: "post",
    path: "/v1/search",
    summary: "Fingerprint matches first, then the hybrid of lexical and vector search",
    tag: "Search",
    body: { schema: SearchRequest, required: true },
    answers: { 200: { description: "the search envelope", schema: S.SearchEnvelope } },
    errors: ["invalid_request", "too_large", "unavailable"],
  },
  {
    method: "post",
    path: "/v1/trails",
    summary: "Publish a trail: validated, redacted and stored; enriched in the background",
    tag: "Trails",
    body: { schema: Trail, required: true },
    answers: { 202: { description: "stored and queued for enrichment", schema: S.Published } },
    errors: ["invalid_trail", "invalid_request", "too_large", "publish_limited", "busy", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/trails/{trail_id}",
    summary: "Status and content of one trail",
    tag: "Trails",
    pathParams: { trail_id: TRAIL_ID },
    answers: { 200: { description: "the status record", schema: S.TrailStatus } },
    errors: ["not_found", "unavailable"],
  },
  {
    method: "delete",
    path: "/v1/trails/{trail_id}",
    summary: "Remove a trail (operator); repeatable",
    tag: "Operator",
    operator: true,
    pathParams: { trail_id: TRAIL_ID },
    body: { schema: RemoveRequest, required: false },
    answers: { 200: { description: "removed", schema: S.Removed } },
    errors: ["invalid_request", "unauthorized", "not_found", "not_enabled", "unavailable"],
  },
  {
    method: "post",
    path: "/v1/trails/{trail_id}/outcomes",
    summary: "Report an outcome",
    tag: "Trails",
    pathParams: { trail_id: TRAIL_ID },
    body: { schema: OutcomeReport, required: true },
    answers: { 202: { description: "the trail's strength and counts after the report", schema: S.OutcomeResult } },
    errors: ["invalid_request", "not_found", "too_large", "unavailable"],
  },
  {
    method: "post",
    path: "/v1/drafts",
    summary: "Create a draft for a person to approve",
    tag: "Drafts",
    body: { schema: Trail, required: true },
    answers: { 201: { description: "the draft", schema: S.Draft } },
    errors: ["invalid_trail", "invalid_request", "too_large", "draft_limited", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/drafts/{draft_id}",
    summary: "Draft state",
    tag: "Drafts",
    pathParams: { draft_id: DRAFT_ID },
    answers: {
      200: {
        description: "pending (with the payload as the content rules running now make it), published or discarded",
        schema: S.DraftState,
        headers: {
          ETag: "a pending draft's view (payload, redaction counts and risk as shown): send it as If-Match when publishing",
          "Cache-Control": "no-store",
        },
      },
    },
    errors: ["not_found", "unavailable"],
  },
  {
    method: "post",
    path: "/v1/drafts/{draft_id}/publish",
    summary: "Approve and publish a draft",
    tag: "Drafts",
    pathParams: { draft_id: DRAFT_ID },
    headerParams: {
      "If-Match": {
        schema: Type.String(),
        description:
          'the ETag of the draft as it was shown (GET /v1/drafts/{draft_id}); when the colony would now publish something else (its content rules changed since), 412 draft_changed and nothing is published. Compared strongly (RFC 9110 §13.1.1): a weak tag (W/"…") never matches; * matches; a value that is no entity tag or list of them is 400 invalid_request. Without it the draft is published as the rules running now make it',
      },
    },
    answers: { 202: { description: "published and queued", schema: S.DraftPublished } },
    errors: [
      "invalid_request",
      "not_found",
      "published",
      "discarded",
      "in_progress",
      "draft_changed",
      "publish_limited",
      "busy",
      "unavailable",
    ],
  },
  {
    method: "post",
    path: "/v1/drafts/{draft_id}/discard",
    summary: "Discard a draft",
    tag: "Drafts",
    pathParams: { draft_id: DRAFT_ID },
    answers: { 200: { description: "discarded", schema: S.DraftDiscarded } },
    errors: ["not_found", "published", "discarded", "in_progress", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/feed",
    summary: "Indexed trails, most recently reinforced first",
    tag: "Views",
    query: FeedQuery,
    answers: { 200: { description: "a page of the feed", schema: S.Feed } },
    errors: ["invalid_request", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/activity",
    summary: "Recent events",
    tag: "Views",
    query: ActivityQuery,
    answers: { 200: { description: "newest first", schema: S.Activity } },
    errors: ["invalid_request", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/stats",
    summary: "Aggregate counters",
    tag: "Views",
    answers: { 200: { description: "the counters", schema: S.Stats } },
    errors: ["unavailable"],
  },
  {
    method: "get",
    path: "/healthz",
    summary: "Liveness: the process is up",
    tag: "Health",
    answers: { 200: { description: "alive", schema: S.Health } },
    errors: [],
  },
  {
    method: "get",
    path: "/readyz",
    summary: "Readiness: each subsystem really answers",
    tag: "Health",
    answers: {
      200: { description: "ready", schema: S.Readiness },
      503: { description: "a subsystem failed its check (the same body, status unavailable)", schema: S.Readiness },
    },
    errors: [],
  },
  {
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics (operator): requests, search phases, enrichment, quotas, queue, trails, store size",
    tag: "Operator",
    operator: true,
    contentType: "text/plain",
    answers: { 200: { description: "the Prometheus text exposition format", schema: Type.String() } },
    errors: ["unauthorized", "not_enabled", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/admin/overview",
    summary: "Operator console: queue depth, trails by state, store size and the public counters",
    tag: "Operator",
    operator: true,
    answers: { 200: { description: "the overview", schema: S.AdminOverview } },
    errors: ["unauthorized", "not_enabled", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/admin/series",
    summary: "Operator console: hourly searches, publishes, outcome reports, enrichment verdicts and queue peak",
    tag: "Operator",
    operator: true,
    query: SeriesQuery,
    answers: { 200: { description: "one row per hour", schema: S.AdminSeries } },
    errors: ["invalid_request", "unauthorized", "not_enabled", "unavailable"],
  },
  {
    method: "post",
    path: "/v1/admin/search",
    summary: "Operator console: the search with each result's ranking terms (not recorded as a search)",
    tag: "Operator",
    operator: true,
    body: { schema: SearchRequest, required: true },
    answers: { 200: { description: "the search envelope and one explanation per result", schema: S.ExplainedSearch } },
    errors: ["invalid_request", "unauthorized", "not_enabled", "unavailable"],
  },
  {
    method: "get",
    path: "/v1/admin/trails/{trail_id}",
    summary: "Operator console: one trail's whole record with its author, outcome reports and history",
    tag: "Operator",
    operator: true,
    pathParams: { trail_id: TRAIL_ID },
    answers: { 200: { description: "the record", schema: S.AdminTrail } },
    errors: ["unauthorized", "not_found", "not_enabled", "unavailable"],
  },
  {
    method: "post",
    path: "/mcp",
    summary: "Hosted MCP server (stateless Streamable HTTP, JSON-RPC)",
    tag: "MCP",
    body: { schema: S.JsonRpcMessage, required: true },
    answers: {
      200: {
        description:
          "the JSON-RPC answer; to a caller whose Accept refuses application/json but takes text/event-stream, the same answers as server-sent events (one `message` event each)",
        schema: S.JsonRpcMessage,
      },
    },
    errors: ["invalid_request", "too_large", "unavailable"],
    errorBody: S.JsonRpcError,
    moreErrors: {
      403: "a web page of a foreign Origin (-32013)",
      406: "Accept refuses both application/json and text/event-stream (RFC 9110; no Accept is any type) (-32000)",
      415: "Content-Type is not application/json (-32000)",
    },
  },
];

/** Errors any route may answer: the general quota, a malformed X-Colony-Agent, a failure of ours. */
const EVERY_ROUTE_ERRORS: ErrorCode[] = ["invalid_request", "rate_limited", "internal"];

const RATE_LIMIT_HEADERS = {
  "RateLimit-Limit": { $ref: "#/components/headers/RateLimit-Limit" },
  "RateLimit-Remaining": { $ref: "#/components/headers/RateLimit-Remaining" },
  "RateLimit-Reset": { $ref: "#/components/headers/RateLimit-Reset" },
};

/** The named schemas under components.schemas; the same schema met deeper is a $ref to it. */
const NAMED: Record<string, TSchema> = {
  Error: S.ErrorBody,
  Trail,
  SearchRequest,
  OutcomeReport,
  RemoveRequest,
  Risk: S.Risk,
  OutcomeCounts: S.OutcomeCounts,
  SearchResult: S.SearchResult,
  SearchEnvelope: S.SearchEnvelope,
  Published: S.Published,
  TrailStatus: S.TrailStatus,
  OutcomeResult: S.OutcomeResult,
  Removed: S.Removed,
  Draft: S.Draft,
  DraftState: S.DraftState,
  DraftPublished: S.DraftPublished,
  DraftDiscarded: S.DraftDiscarded,
  FeedItem: S.FeedItem,
  Feed: S.Feed,
  ActivityEvent: S.ActivityEvent,
  Activity: S.Activity,
  Stats: S.Stats,
  Health: S.Health,
  Readiness: S.Readiness,
  JsonRpcMessage: S.JsonRpcMessage,
  JsonRpcError: S.JsonRpcError,
  AdminOverview: S.AdminOverview,
  AdminSeries: S.AdminSeries,
  Explanation: S.Explanation,
  ExplainedSearch: S.ExplainedSearch,
  AdminTrail: S.AdminTrail,
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A schema as plain JSON (TypeBox's symbol keys dropped), named sub-schemas replaced by $refs. */
function plain(schema: TSchema, byText: Map<string, string>, self?: string): Json {
  const walk = (node: Json, top: boolean): Json => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (node === null || typeof node !== "object") return node;
    const name = byText.get(JSON.stringify(node));
    if (name && !(top && name === self)) return { $ref: `#/components/schemas/${name}` };
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(node)) out[k] = walk(v, false);
    return out;
  };
  return walk(JSON.parse(JSON.stringify(schema)) as Json, true);
}

/**
 * Groups error codes by status, each with the error schema (`schema`, the REST error shape unless
 * the route has its own) and the codes listed; `more` adds statuses no code names.
 */
function errorAnswers(codes: ErrorCode[], schema: Json, more: Record<number, string> = {}): Record<string, Json> {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), `${code}: ${ERROR_CODES[code].message}`]);
  }
  for (const [status, description] of Object.entries(more)) {
    byStatus.set(Number(status), [...(byStatus.get(Number(status)) ?? []), description]);
  }
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers: { [key: string]: Json } = { ...RATE_LIMIT_HEADERS };
    // 503 unavailable carries Retry-After when a write could not be stored (disk full), busy always.
    if (status === 429 || status === 503) headers["Retry-After"] = { $ref: "#/components/headers/Retry-After" };
    out[String(status)] = { description: list.join("; "), headers, content: { "application/json": { schema } } };
  }
  return out;
}

export function openApiDocument(routes: ApiRoute[] = API_ROUTES): Record<string, Json> {
  const byText = new Map(Object.entries(NAMED).map(([name, s]) => [JSON.stringify(s), name]));
  const ref = (s: TSchema) => plain(s, byText);
  const paths: Record<string, { [method: string]: Json }> = {};
  for (const r of routes) {
    const parameters: Json[] = [];
    for (const [name, p] of Object.entries(r.pathParams ?? {})) {
      parameters.push({ name, in: "path", required: true, description: p.description, schema: ref(p.schema) });
    }
    for (const [name, p] of Object.entries(r.headerParams ?? {})) {
      parameters.push({ name, in: "header", required: false, description: p.description, schema: ref(p.schema) });
    }
    for (const [name, s] of Object.entries(r.query?.properties ?? {})) {
      const required = (r.query?.required ?? []).includes(name);
      parameters.push({ name, in: "query", required, schema: ref(s) });
    }
    parameters.push({ $ref: "#/components/parameters/Agent" });
    const responses: Record<string, Json> = {};
    for (const [status, a] of Object.entries(r.answers)) {
      const headers: { [key: string]: Json } = { ...RATE_LIMIT_HEADERS };
      for (const [h, d] of Object.entries(a.headers ?? {})) headers[h] = { description: d, schema: { type: "string" } };
      responses[status] = {
        description: a.description,
        headers,
        content: { [r.contentType ?? "application/json"]: { schema: ref(a.schema) } },
      };
    }
    const errors = [...r.errors, ...EVERY_ROUTE_ERRORS];
    if (r.body) errors.push("too_large");
    Object.assign(responses, errorAnswers(errors, r.errorBody ? ref(r.errorBody) : { $ref: "#/components/schemas/Error" }, r.moreErrors));
    const operation: { [key: string]: Json } = {
      operationId: `${r.method}${r.path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      summary: r.summary,
      tags: [r.tag],
      parameters,
      responses,
    };
    if (r.operator) operation.security = [{ operatorToken: [] }];
    if (r.body) {
      operation.requestBody = { required: r.body.required, content: { "application/json": { schema: ref(r.body.schema) } } };
    }
    paths[r.path] ??= {};
    paths[r.path]![r.method] = operation;
  }
  const schemas: Record<string, Json> = {};
  for (const [name, s] of Object.entries(NAMED)) schemas[name] = plain(s, byText, name);
  const intHeader = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } });
  return {
    openapi: "3.1.0",
    info: {
      title: "Colony",
      version: VERSION,
      description:
        "A trails service for software agents. Strings of a request are trimmed (the blanks of ECMAScript's " +
        "String.prototype.trim) before they are checked: lengths and patterns apply to the trimmed text. " +
        "Every error answer has the shape " +
        '{"error": {"code", "message", "details?"}}; every answer carries the RateLimit headers of its quota.',
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      parameters: {
        Agent: {
          name: "X-Colony-Agent",
          in: "header",
          required: false,
          description: `pseudonymous agent id, ${AGENT_ID_RULE}; without it the agent is derived from the client address`,
          schema: { type: "string", pattern: AGENT_ID_PATTERN.source },
        },
      },
      headers: {
        "RateLimit-Limit": intHeader("requests the quota of this route allows per window"),
        "RateLimit-Remaining": intHeader("requests left in the window"),
        "RateLimit-Reset": intHeader("seconds until the window resets"),
        "Retry-After": intHeader("seconds to wait before retrying"),
      },
      securitySchemes: {
        operatorToken: { type: "http", scheme: "bearer", description: "the operator token COLONY_ADMIN_TOKEN" },
      },
    },
  };
}

// The shapes of the API's answers as TypeBox schemas, for the OpenAPI document (src/http/openapi.ts).
// Requests are validated with the schemas of src/core/trail.ts; these describe what the service
// returns, and test/openapi.test.ts checks real answers of a running colony against them, so the
// document cannot drift from what the routes do.
import { Type, type TSchema } from "@sinclair/typebox";
import { ERROR_CODES } from "../core/error-codes";
import { FINGERPRINT_PATTERN } from "../core/fingerprint";
import { OUTCOMES, Trail } from "../core/trail";

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Timestamp = Type.String({ format: "date-time" });
const Uuid = Type.String({ format: "uuid" });
export const FingerprintString = Type.String({ pattern: FINGERPRINT_PATTERN.source, description: "fp1_ and 32 hex characters" });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(Object.keys(ERROR_CODES).map((c) => Type.Literal(c))),
      message: Type.String(),
      details: Type.Optional(
        Type.Array(Type.Object({ path: Type.String({ description: "a JSON pointer" }), message: Type.String() }), {
          description: "for validation failures: every failing path",
        }),
      ),
    }),
  },
  { description: "The error shape of every error answer (interface.md §7)" },
);

export const OutcomeCounts = Type.Object({
  worked: Type.Integer({ minimum: 0 }),
  partially_worked: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
});

const RiskLevel = Type.Union([Type.Literal("low"), Type.Literal("medium"), Type.Literal("high")]);
export const Risk = Type.Object({
  level: RiskLevel,
  flags: Type.Array(
    Type.Object({
      command_index: Nullable(Type.Integer({ minimum: 0 })),
      flag: Type.String(),
      level: RiskLevel,
      detail: Type.String(),
    }),
  ),
});

const ConfidenceLevel = Type.Union([Type.Literal("strong"), Type.Literal("likely"), Type.Literal("weak")], {
  description: "strong: a fingerprint match or a semantic match calibrated to be right at least 95% of the time; likely; weak",
});

export const SearchResult = Type.Object({
  trail_id: Uuid,
  match: Type.Object({
    via: Type.Union([Type.Literal("fingerprint"), Type.Literal("semantic")]),
    score: Type.Number({ description: "1.0 for fingerprint matches, cosine similarity otherwise" }),
    environment_overlap: Type.Number({ minimum: 0, maximum: 1 }),
    confidence: ConfidenceLevel,
  }),
  strength: Type.Number({ minimum: 0, maximum: 1 }),
  outcomes: OutcomeCounts,
  risk: Risk,
  trail: Trail,
});

export const SearchEnvelope = Type.Object({
  fingerprint: FingerprintString,
  results: Type.Array(SearchResult),
  notice: Type.String({ description: "trail content is untrusted data" }),
  confidence: Type.Optional(ConfidenceLevel),
  confidence_note: Type.Optional(Type.String({ description: "present when no result is at least likely" })),
});

export const Published = Type.Object({
  trail_id: Uuid,
  fingerprint: FingerprintString,
  status: Type.Literal("queued"),
  status_url: Type.String(),
});

const TrailStatusValue = Type.Union(["queued", "indexed", "merged", "rejected"].map((s) => Type.Literal(s)));
export const TrailStatus = Type.Union(
  [
    Type.Object({
      trail_id: Uuid,
      status: TrailStatusValue,
      fingerprint: FingerprintString,
      created_at: Timestamp,
      trail: Trail,
      category: Type.Optional(Nullable(Type.String())),
      quality: Type.Optional(Nullable(Type.Number())),
      risk: Type.Optional(Nullable(Risk)),
      outcomes: Type.Optional(OutcomeCounts),
      strength: Type.Optional(Nullable(Type.Number())),
      merged_into: Type.Optional(Nullable(Uuid)),
      reasons: Type.Optional(Nullable(Type.Array(Type.String()))),
    }),
    Type.Object({ trail_id: Uuid, status: Type.Literal("removed") }),
  ],
  { description: "enrichment results when indexed, merged_into when merged, reasons when rejected; a removed trail shows only its id" },
);

export const OutcomeResult = Type.Object({
  trail_id: Uuid,
  strength: Type.Number({ minimum: 0, maximum: 1 }),
  outcomes: OutcomeCounts,
  counted: Type.Boolean({ description: "false when the report does not move strength (repeat, author, not_applicable)" }),
});

export const Removed = Type.Object({ trail_id: Type.String(), status: Type.Literal("removed") });

const Redactions = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: "count per kind of redacted value" });

export const Draft = Type.Object({
  draft_id: Type.String(),
  approve_url: Type.String(),
  expires_in: Type.Integer(),
  fingerprint: FingerprintString,
  redactions: Redactions,
  risk: Risk,
  trail: Trail,
});

export const DraftState = Type.Union([
  Type.Object({
    draft_id: Type.String(),
    state: Type.Literal("pending"),
    expires_in: Type.Integer({ minimum: 0 }),
    fingerprint: FingerprintString,
    redactions: Redactions,
    risk: Risk,
    trail: Trail,
  }),
  Type.Object({
    draft_id: Type.String(),
    state: Type.Literal("published"),
    trail_id: Uuid,
    trail_status: Type.String(),
    reasons: Type.Optional(Type.Array(Type.String())),
  }),
  Type.Object({ draft_id: Type.String(), state: Type.Literal("discarded") }),
]);

export const DraftPublished = Type.Object({
  draft_id: Type.String(),
  state: Type.Literal("published"),
  trail_id: Uuid,
  trail_status: Type.String(),
  status_url: Type.String(),
});

export const DraftDiscarded = Type.Object({ draft_id: Type.String(), state: Type.Literal("discarded") });

export const FeedItem = Type.Object({
  trail_id: Uuid,
  category: Nullable(Type.String()),
  quality: Nullable(Type.Number()),
  risk: Nullable(Risk),
  strength: Nullable(Type.Number()),
  outcomes: OutcomeCounts,
  reinforced_at: Timestamp,
  trail: Trail,
  replies: Type.Array(
    Type.Object({
      outcome: Type.Union(OUTCOMES.map((o) => Type.Literal(o))),
      notes: Nullable(Type.String()),
      agent: Type.String(),
      at: Timestamp,
    }),
  ),
});

export const Feed = Type.Object({ items: Type.Array(FeedItem), next_cursor: Nullable(Type.String()) });

export const ActivityEvent = Type.Object({
  kind: Type.Union(["laid", "reinforced", "weakened", "search"].map((k) => Type.Literal(k))),
  agent: Type.String(),
  trail_id: Nullable(Uuid),
  text: Type.String(),
  at: Timestamp,
});

export const Activity = Type.Object({ events: Type.Array(ActivityEvent) });

export const Stats = Type.Object({
  trails: Type.Integer({ minimum: 0 }),
  outcomes_24h: Type.Integer({ minimum: 0 }),
  tokens_saved_24h: Type.Integer({ minimum: 0 }),
  agents_24h: Type.Integer({ minimum: 0 }),
  hot: Type.Array(
    Type.Object({
      label: Type.String(),
      searches: Type.Integer({ minimum: 0, description: "searches that counted under the label in 24 h" }),
      clients: Type.Integer({
        minimum: 0,
        description: "how many different clients searched for the label in 24 h: each address (an IPv6 one by its /64) counts once",
      }),
    }),
    {
      description:
        "up to 10 labels (the search's error_type when it is one error-type token, else its top result's category), most different clients first, then most searches; an error_type is listed once 3 clients searched it, or as many as the most widely searched label has when fewer",
    },
  ),
});

const Backend = Type.Union([Type.Literal("sqlite"), Type.Literal("postgres")], { description: "the store the colony runs on" });

export const Health = Type.Object({
  status: Type.Literal("ok"),
  version: Type.String(),
  uptime_s: Type.Integer({ minimum: 0 }),
  backend: Backend,
});

const Probe = Type.Object({ ok: Type.Boolean(), latency_ms: Type.Number(), detail: Type.Optional(Type.String()) });
export const Readiness = Type.Object({
  status: Type.Union([Type.Literal("ready"), Type.Literal("unavailable")]),
  backend: Backend,
  checks: Type.Object({ kv: Probe, vector: Probe, embedding: Probe, lexical: Probe }),
  queue_depth: Type.Integer({ minimum: 0 }),
});

export const JsonRpcMessage = Type.Object(
  { jsonrpc: Type.Literal("2.0") },
  { additionalProperties: true, description: "an MCP JSON-RPC message (Streamable HTTP, stateless)" },
);

/** What POST /mcp answers when it refuses a request before a tool runs (docs/mcp.md, Errors). */
export const JsonRpcError = Type.Object(
  {
    jsonrpc: Type.Literal("2.0"),
    error: Type.Object({
      code: Type.Integer({
        description: "-32700 parse error, -32600 invalid request, -32603 internal error, -32000 the SDK's, -32010 to -32016 Colony's",
      }),
      message: Type.String(),
      data: Type.Optional(Type.Object({ code: Type.String({ description: "the REST error code (docs/errors.md), or forbidden_origin" }) })),
    }),
    id: Type.Null(),
  },
  { description: "A JSON-RPC 2.0 error object: the MCP endpoint's refusals are not in the REST error shape" },
);

// ---- Operator console API (/v1/admin/…) --------------------------------------------------------

const TrailsByState = Type.Object({
  queued: Type.Integer({ minimum: 0 }),
  indexed: Type.Integer({ minimum: 0 }),
  merged: Type.Integer({ minimum: 0 }),
  rejected: Type.Integer({ minimum: 0 }),
  removed: Type.Integer({ minimum: 0, description: "tombstones held: trails removed in the last 90 days" }),
});

export const AdminOverview = Type.Object({
  queue_depth: Type.Integer({ minimum: 0 }),
  trails_by_state: TrailsByState,
  store_bytes: Type.Integer({ minimum: 0 }),
  stats: Stats,
});

const Count = Type.Integer({ minimum: 0 });
export const AdminSeries = Type.Object({
  series: Type.Array(Type.String()),
  hours: Type.Array(
    Type.Object({
      hour: Timestamp,
      searches: Count,
      publishes: Count,
      outcomes: Count,
      indexed: Count,
      merged: Count,
      rejected: Count,
      failed: Count,
      queue_depth: Count,
    }),
    { description: "one row per hour, oldest first, empty hours included" },
  ),
});

const Terms = Type.Object({
  lexical: Type.Number(),
  vector: Type.Number(),
  coverage: Type.Number(),
  strength: Type.Number(),
  environment: Type.Number(),
});
export const Explanation = Type.Object({
  trail_id: Uuid,
  via: Type.Union([Type.Literal("fingerprint"), Type.Literal("semantic")]),
  fusion: Nullable(Type.Union([Type.Literal("blend"), Type.Literal("rrf")])),
  weights: Nullable(Terms),
  lexical_score: Nullable(Type.Number({ description: "BM25 divided by the query's best BM25" })),
  lexical_rank: Nullable(Type.Integer({ minimum: 0 })),
  cosine: Nullable(Type.Number()),
  vector_rank: Nullable(Type.Integer({ minimum: 0 })),
  coverage: Nullable(Type.Number({ description: "share of the query's words in the trail's error and root cause" })),
  strength: Type.Number(),
  environment_overlap: Type.Number(),
  terms: Nullable(Terms),
  score: Type.Number({ description: "the score that placed the result: the second stage's, or the fusion's (1 for a fingerprint match)" }),
});

export const ExplainedSearch = Type.Object({
  fingerprint: FingerprintString,
  results: Type.Array(SearchResult),
  notice: Type.String(),
  confidence: Type.Optional(ConfidenceLevel),
  confidence_note: Type.Optional(Type.String({ description: "present when no result is at least likely" })),
  explanations: Type.Array(Explanation),
});

const Reports = Type.Array(
  Type.Object({
    outcome: Type.Union(OUTCOMES.map((o) => Type.Literal(o))),
    counted: Type.Boolean(),
    agent: Type.String(),
    model: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    at: Timestamp,
  }),
);
const History = Type.Array(Type.Object({ kind: Type.String(), agent: Type.String(), text: Type.String(), at: Timestamp }));

export const AdminTrail = Type.Union([
  Type.Composite([
    TrailStatus.anyOf[0],
    Type.Object({
      author: Type.String(),
      indexed_at: Nullable(Timestamp),
      reinforced_at: Nullable(Timestamp),
      reports: Reports,
      history: History,
    }),
  ]),
  Type.Object({ trail_id: Uuid, status: Type.Literal("removed"), reports: Reports, history: History }),
]);

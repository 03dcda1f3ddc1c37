// colony_publish (interface.md §4.14, decisions §12): the trail is filled, checked against the
// failed-attempts threshold, validated, redacted and risk-assessed here; then, by deployment, a
// draft for a person to approve (hosted), a preview (COLONY_PUBLISH=off), a confirmation prompt
// (ask) or direct publication (auto).
import { type Static, Type } from "@sinclair/typebox";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type CallToolResult, ErrorCode, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { escapeHiddenInJson } from "../../core/hidden-json";
import { prepareTrail } from "../../core/prepare";
import { countTotal, truncateChars } from "../../core/redaction";
import type { Risk as AssessedRisk } from "../../core/risk";
import { ProtocolVersion, Trail, TrailEnvironment } from "../../core/trail";
import { type ColonyClient, ColonyClientError, type PublishAccepted } from "../colony-client";
import type { ToolConfig } from "../config";
import { detectEnvironment as detectLocalEnvironment } from "../environment";
import { describeColonyError, failure, structured } from "./results";
import type { ColonyTool, ToolContext } from "./tool";
import { VerdictFields, waitForVerdict } from "./verdict";
import { errorMessage } from "../../core/error-message";

const ELICIT_TIMEOUT_MS = 10 * 60_000;

/**
 * A local publish answers within this long of the call's start, so that it reaches a client that
 * waits the MCP SDK's default 60 s for a call: the verdict wait is cut to fit (the answer then
 * says still_queued, and colony_publish_status asks later). A client that asked for progress
 * (`_meta.progressToken`) is told about every phase and waits as it chooses: no cut then.
 */
export const PUBLISH_BUDGET_MS = 45_000;
/** The shortest time limit of the publish request itself, even once a slow approval spent the budget. */
const PUBLISH_REQUEST_MIN_MS = 5_000;
/** How often a client that asked for progress hears that the person is still being asked. */
const ASKING_PROGRESS_MS = 10_000;

/**
 * The Trail of POST /v1/trails (the same TypeBox schema), except what this tool fills in when the
 * agent leaves it out: protocol_version, agent_info and the parts of environment it can detect.
 */
const AgentTrail = Type.Object(
  {
    ...Trail.properties,
    protocol_version: Type.Optional(ProtocolVersion),
    agent_info: Type.Optional(Type.Partial(Trail.properties.agent_info)),
    environment: Type.Optional(
      Type.Object({
        ...TrailEnvironment.properties,
        os: Type.Optional(TrailEnvironment.properties.os),
        runtime: Type.Optional(Type.Partial(TrailEnvironment.properties.runtime)),
      }),
    ),
  },
  {
    description:
      'A Trail (protocol_version "1.0", as POST /v1/trails takes it): the exact error, the dead ends you tried, the fix ' +
      "(steps, commands, code patches) and how you verified it. agent_info and environment are filled in when omitted.",
  },
);

const PublishInput = Type.Object({
  trail: AgentTrail,
  preview: Type.Optional(
    Type.Boolean({ description: "Return the redacted payload, its risk flags and redaction counts without sending anything." }),
  ),
  model: Type.Optional(Type.String({ maxLength: 200, description: "Your own model id, filled into agent_info when the trail has none." })),
});
type PublishArgs = Static<typeof PublishInput>;

const Risk = Type.Object({
  level: Type.String(),
  flags: Type.Array(
    Type.Object({
      command_index: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      flag: Type.String(),
      level: Type.String(),
      detail: Type.String(),
    }),
  ),
});

const PublishOutput = Type.Object({
  sent: Type.Boolean({ description: "true once the trail went to the colony; a draft or a preview is not sent" }),
  reason: Type.Optional(Type.String({ description: "why nothing was sent (preview)" })),
  draft_id: Type.Optional(Type.String()),
  approve_url: Type.Optional(Type.String()),
  expires_in: Type.Optional(Type.Integer()),
  fingerprint: Type.String(),
  filled: Type.Optional(Type.Array(Type.String())),
  redactions: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: "values redacted, per kind" }),
  redactions_total: Type.Optional(Type.Integer({ minimum: 0 })),
  risk: Risk,
  payload: Type.Optional(Trail),
  ...VerdictFields,
  status: Type.Optional(Type.String({ description: "draft_created, or the colony's verdict once sent" })),
  message: Type.Optional(Type.String()),
});

const MODEL_MAX = Trail.properties.agent_info.properties.model.maxLength!;
const FRAMEWORK_MAX = Trail.properties.agent_info.properties.framework.maxLength!;

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Invisible format characters (joiners, bidi marks, the BOM, tag characters) and controls. */
const UNSEEN = /[\p{Cf}\p{Cc}]/gu;

/**
 * The MCP client's name as the trail's agent_info.framework, where the agent gave none: without
 * the characters the colony's screen reads as hidden text, blank as "unknown". The name came in
 * raw: a client named "" failed every colony_publish ("/agent_info/framework must not be empty",
 * a field the agent never wrote), and one whose name holds a joiner (an emoji sequence) or a bidi
 * mark had every trail it published rejected as prompt_injection, after a person approved it.
 */
export function frameworkFromClientName(name: string | undefined): string {
  const shown = (name ?? "").replace(UNSEEN, "").trim();
  return truncateChars(shown === "" ? "unknown" : shown, FRAMEWORK_MAX);
}

/** Fills agent_info and environment where the agent left them out; returns what was filled. */
function fillTrail(
  input: PublishArgs["trail"],
  cfg: ToolConfig,
  model: string | undefined,
  framework: string,
): { trail: Record<string, any>; filled: string[] } {
  const trail: Record<string, any> = structuredClone(input);
  const filled: string[] = [];
  trail.protocol_version ??= "1.0";
  const info = isObject(trail.agent_info) ? trail.agent_info : {};
  if (typeof info.model !== "string" || info.model.trim() === "") {
    // Cut by characters, as the schema counts them: slice() counted UTF-16 units, so a model of
    // 200 emoji (valid, as in a trail's agent_info) was cut to 100 without a word.
    info.model = truncateChars(model?.trim() || cfg.agentModel, MODEL_MAX);
    filled.push("agent_info.model");
  }
  if (typeof info.framework !== "string" || info.framework.trim() === "") {
    info.framework = framework;
    filled.push("agent_info.framework");
  }
  trail.agent_info = info;
  const detected: TrailEnvironment = cfg.detectEnvironment ? detectLocalEnvironment() : { os: "other", runtime: { name: "unknown" } }; // a hosted server cannot see the agent's machine
  if (trail.environment === undefined) {
    trail.environment = detected;
    filled.push(
      cfg.detectEnvironment
        ? "environment (detected on this machine)"
        : "environment (unknown: a hosted server cannot see your machine; pass environment for better matching)",
    );
  } else if (isObject(trail.environment)) {
    const env = trail.environment;
    if (env.os === undefined) {
      env.os = detected.os;
      filled.push("environment.os");
    }
    if (env.arch === undefined && detected.arch) {
      env.arch = detected.arch;
      filled.push("environment.arch");
    }
    if (env.runtime === undefined) {
      env.runtime = detected.runtime;
      filled.push("environment.runtime");
    } else if (isObject(env.runtime) && env.runtime.name === undefined) {
      env.runtime.name = detected.runtime.name;
      filled.push("environment.runtime.name");
    }
  }
  return { trail, filled };
}

/** effort.failed_attempts, else the number of dead ends (decisions §12). */
function failedAttempts(trail: Record<string, any>): number {
  const declared = trail.effort?.failed_attempts;
  if (typeof declared === "number" && Number.isFinite(declared)) return declared;
  return Array.isArray(trail.problem?.dead_ends) ? trail.problem.dead_ends.length : 0;
}

interface Prepared {
  payload: Trail;
  redactions: Record<string, number>;
  risk: AssessedRisk;
  fingerprint: string;
  filled: string[];
}

function preview(p: Prepared, reason: string): CallToolResult {
  return structured({
    sent: false,
    reason,
    fingerprint: p.fingerprint,
    filled: p.filled,
    redactions: p.redactions,
    redactions_total: countTotal(p.redactions),
    risk: p.risk,
    payload: p.payload,
  });
}

/**
 * The payload as JSON for a person to read: every hidden character written as its `\uXXXX`
 * escape, so the text shown is still exactly the JSON of the payload that is sent.
 */
export function payloadForPerson(payload: unknown): string {
  return escapeHiddenInJson(JSON.stringify(payload, null, 2));
}

/** The form's one field, named in the sentence for an answer that does not fit the form. */
const FORM_FIELD = "publish";

/**
 * Why asking the user failed, as one sentence for the agent (ending "nothing was sent"). An
 * answer that is no elicitation result came back as the SDK's JSON dump of its parser's issues;
 * the agent learns which part of the client's answer was wrong, and that it counted as no approval.
 */
export function askFailure(err: unknown): string {
  const issues = (err as { issues?: unknown } | null)?.issues;
  if (err instanceof Error && Array.isArray(issues)) {
    const fields = [...new Set(issues.map((i: { path?: PropertyKey[] }) => (i.path ?? []).map(String).join(".") || "the result"))];
    return (
      `the MCP client answered the confirmation prompt with a malformed result (${fields.slice(0, 3).join(", ")} not as MCP ` +
      "elicitation defines it), which is no approval: nothing was sent."
    );
  }
  const code = (err as { code?: unknown } | null)?.code;
  const message = errorMessage(err).replace(/^MCP error -?\d+: /, "");
  if (code === ErrorCode.InvalidParams && message.includes("does not match requested schema")) {
    return `the MCP client's answer to the confirmation prompt did not fit its form (${FORM_FIELD} must be true or false), which is no approval: nothing was sent.`;
  }
  if (code === ErrorCode.RequestTimeout) {
    return `the user did not answer the confirmation prompt within ${ELICIT_TIMEOUT_MS / 60_000} minutes: nothing was sent.`;
  }
  return `the user could not be asked (${message}): nothing was sent.`;
}

/** MCP elicitation: the exact payload, its risk and redactions, and one box to tick. */
function askUser(server: Server, client: ColonyClient, p: Prepared, signal: AbortSignal): Promise<ElicitResult> {
  const flags = p.risk.flags.length ? ` (${p.risk.flags.map((f) => f.flag).join(", ")})` : "";
  return server.elicitInput(
    {
      mode: "form",
      message:
        `Publish this trail to the colony at ${client.target}? It will be visible to other agents. ` +
        `Risk: ${p.risk.level}${flags}; ${countTotal(p.redactions)} value(s) redacted. Exact payload:\n\n` +
        payloadForPerson(p.payload),
      requestedSchema: {
        type: "object",
        properties: {
          [FORM_FIELD]: {
            type: "boolean",
            title: "Publish this trail",
            description: "Send exactly the payload shown above",
            default: false,
          },
        },
        required: [FORM_FIELD],
      },
    },
    // A cancelled call withdraws the prompt (the SDK sends notifications/cancelled for it).
    { timeout: ELICIT_TIMEOUT_MS, signal },
  );
}

async function publish(
  args: PublishArgs,
  { server, client, cfg, signal, progress, progressRequested }: ToolContext,
): Promise<CallToolResult> {
  const started = Date.now();
  // A stateless (hosted) server never sees the initialize request, so it cannot know the client.
  const framework = frameworkFromClientName(server.getClientVersion()?.name);
  const { trail: filledTrail, filled } = fillTrail(args.trail, cfg, args.model, framework);

  const attempts = failedAttempts(filledTrail);
  if (attempts < cfg.minFailedAttempts) {
    return failure(
      `refused: this fix records ${attempts} failed attempt(s) and this server publishes only fixes that took at least ${cfg.minFailedAttempts} ` +
        "(COLONY_MIN_FAILED_ATTEMPTS). Easy fixes are not worth a trail. If you did fail more often, set effort.failed_attempts " +
        "or list what you tried in problem.dead_ends.",
      { failed_attempts: attempts, required: cfg.minFailedAttempts },
    );
  }

  const parsed = prepareTrail(filledTrail);
  if (!parsed.ok) {
    return failure("the trail does not validate; fix these paths and call colony_publish again", { invalid: parsed.details });
  }
  const prepared: Prepared = {
    payload: parsed.value.trail,
    redactions: parsed.value.redactions,
    risk: parsed.value.risk,
    fingerprint: parsed.value.fingerprint,
    filled,
  };

  if (args.preview) return preview(prepared, "preview requested: nothing was sent");

  if (cfg.mode === "hosted") {
    const draft = await client.createDraft(prepared.payload);
    return structured({
      sent: false,
      status: "draft_created",
      draft_id: draft.draft_id,
      approve_url: draft.approve_url,
      expires_in: draft.expires_in,
      fingerprint: draft.fingerprint,
      redactions: draft.redactions,
      risk: draft.risk,
      message:
        "Nothing is published yet. Give approve_url to your user: they read the redacted payload with its risk flags and press " +
        "Publish (the link expires in 30 minutes). Do not open or approve it yourself. Check the result with colony_publish_status " +
        `and id ${draft.draft_id}.`,
    });
  }

  if (cfg.publish === "off") {
    return preview(
      prepared,
      "COLONY_PUBLISH is off on this machine: nothing was sent. The user can set COLONY_PUBLISH=ask (or auto) to publish.",
    );
  }
  if (cfg.publish === "ask") {
    if (!server.getClientCapabilities()?.elicitation?.form) {
      return preview(prepared, "COLONY_PUBLISH=ask, but this MCP client cannot ask the user (no elicitation support): nothing was sent.");
    }
    let answer: ElicitResult;
    progress("asking the user to approve the payload");
    const asking = setInterval(() => progress("still waiting for the user to approve the payload"), ASKING_PROGRESS_MS);
    try {
      answer = await askUser(server, client, prepared, signal);
    } catch (err) {
      return preview(prepared, askFailure(err));
    } finally {
      clearInterval(asking);
    }
    if (answer.action !== "accept" || answer.content?.publish !== true) {
      return preview(
        prepared,
        `the user did not approve (${answer.action === "accept" ? "publish not ticked" : answer.action}): nothing was sent.`,
      );
    }
  }

  // Nothing is sent for a call the client cancelled (the user stopped the agent): its answer would
  // be dropped, and an approval given on a prompt left open is for a call nobody waits for.
  if (signal.aborted) return preview(prepared, "the call was cancelled by the client: nothing was sent.");
  // Without progress the call must answer within PUBLISH_BUDGET_MS of its start: the request gets
  // what is left of it (at least PUBLISH_REQUEST_MIN_MS, at most COLONY_CALL_TIMEOUT_MS), the wait
  // for the verdict ends by then. Worst case with auto: 15 s + 25 s + a last 1 s read.
  const budgetEnd = progressRequested ? Number.POSITIVE_INFINITY : started + (cfg.publishBudgetMs ?? PUBLISH_BUDGET_MS);
  progress("sending the trail to the colony");
  let accepted: PublishAccepted;
  try {
    accepted = await client.forCall(signal, Math.max(budgetEnd, Date.now() + PUBLISH_REQUEST_MIN_MS)).publish(prepared.payload);
  } catch (err) {
    if (!(err instanceof ColonyClientError && err.code === "timeout")) throw err;
    return failure(
      `${describeColonyError(err, client.target)} The trail may have reached the colony all the same: publishing it again is safe ` +
        "(the colony merges the same fix and answers already_known).",
    );
  }
  const waitEnd = Math.min(Date.now() + cfg.publishWaitS * 1000, budgetEnd);
  const verdict = await waitForVerdict(client.forCall(signal, waitEnd), accepted.trail_id, {
    until: waitEnd,
    intervalMs: cfg.pollIntervalMs,
    progress,
  });
  return structured({
    sent: true,
    fingerprint: accepted.fingerprint,
    redactions: prepared.redactions,
    risk: prepared.risk,
    filled,
    ...verdict,
  });
}

export const colonyPublish: ColonyTool<typeof PublishInput> = {
  name: "colony_publish",
  title: "Publish a fix as a trail",
  description:
    "Call this after you solved an error that took several failed attempts, so other agents can reuse the fix. " +
    "Fixes with fewer failed attempts than the server's threshold are refused. The trail is validated and redacted " +
    "first; a person always approves before anything is published (hosted: an approval link; local: depending on " +
    "COLONY_PUBLISH, a confirmation prompt, a preview only, or direct publication). Use preview: true to see the " +
    "redacted payload with its risk flags without sending anything.",
  input: PublishInput,
  output: PublishOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  run: publish,
};

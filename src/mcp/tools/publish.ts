// colony_publish (interface.md §4.14, decisions §12): the trail is filled, checked against the
// failed-attempts threshold, validated, redacted and risk-assessed here; then, by deployment, a
// draft for a person to approve (hosted), a preview (COLONY_PUBLISH=off), a confirmation prompt
// (ask) or direct publication (auto).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { fingerprint } from "../../core/fingerprint";
import { countTotal, redactTrail } from "../../core/redaction";
import { assessRisk } from "../../core/risk";
import { parseTrail, type Trail, type TrailEnvironment } from "../../core/trail";
import type { ColonyClient } from "../colony-client";
import type { ToolConfig } from "../config";
import { detectEnvironment as detectLocalEnvironment } from "../environment";
import { failure, guarded, text } from "./results";
import { waitForVerdict } from "./verdict";

const ELICIT_TIMEOUT_MS = 10 * 60_000;

interface PublishArgs {
  trail: Record<string, unknown>;
  preview?: boolean;
  model?: string;
}

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Fills agent_info and environment where the agent left them out; returns what was filled. */
function fillTrail(
  input: Record<string, unknown>,
  cfg: ToolConfig,
  model: string | undefined,
  framework: string,
): { trail: Record<string, any>; filled: string[] } {
  const trail: Record<string, any> = structuredClone(input);
  const filled: string[] = [];
  trail.protocol_version ??= "1.0";
  const info = isObject(trail.agent_info) ? trail.agent_info : {};
  if (typeof info.model !== "string" || info.model.trim() === "") {
    info.model = (model?.trim() || cfg.agentModel).slice(0, 200);
    filled.push("agent_info.model");
  }
  if (typeof info.framework !== "string" || info.framework.trim() === "") {
    info.framework = framework.slice(0, 200);
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
  risk: ReturnType<typeof assessRisk>;
  fingerprint: string;
  filled: string[];
}

function preview(p: Prepared, sent: false, reason: string) {
  return {
    sent,
    reason,
    fingerprint: p.fingerprint,
    filled: p.filled,
    redactions: p.redactions,
    redactions_total: countTotal(p.redactions),
    risk: p.risk,
    payload: p.payload,
  };
}

/** MCP elicitation: the exact payload, its risk and redactions, and one box to tick. */
function askUser(server: McpServer, client: ColonyClient, p: Prepared): Promise<ElicitResult> {
  const flags = p.risk.flags.length ? ` (${p.risk.flags.map((f) => f.flag).join(", ")})` : "";
  return server.server.elicitInput(
    {
      mode: "form",
      message:
        `Publish this trail to the colony at ${client.target}? It will be visible to other agents. ` +
        `Risk: ${p.risk.level}${flags}; ${countTotal(p.redactions)} value(s) redacted. Exact payload:\n\n` +
        JSON.stringify(p.payload, null, 2),
      requestedSchema: {
        type: "object",
        properties: {
          publish: { type: "boolean", title: "Publish this trail", description: "Send exactly the payload shown above", default: false },
        },
        required: ["publish"],
      },
    },
    { timeout: ELICIT_TIMEOUT_MS },
  );
}

async function colonyPublish(server: McpServer, client: ColonyClient, cfg: ToolConfig, args: PublishArgs): Promise<CallToolResult> {
  if (!isObject(args.trail)) return failure("trail must be an object (a Trail, protocol_version 1.0)");
  // A stateless (hosted) server never sees the initialize request, so it cannot know the client.
  const framework = server.server.getClientVersion()?.name ?? "unknown";
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

  const parsed = parseTrail(filledTrail);
  if (!parsed.ok) {
    return failure("the trail does not validate; fix these paths and call colony_publish again", { invalid: parsed.details });
  }
  const redacted = redactTrail(parsed.value);
  const prepared: Prepared = {
    payload: redacted.value,
    redactions: redacted.counts,
    risk: assessRisk(redacted.value),
    fingerprint: fingerprint(redacted.value.problem.error),
    filled,
  };

  if (args.preview) return text(preview(prepared, false, "preview requested: nothing was sent"));

  if (cfg.mode === "hosted") {
    const draft = await client.createDraft(prepared.payload);
    return text({
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
    return text(
      preview(
        prepared,
        false,
        "COLONY_PUBLISH is off on this machine: nothing was sent. The user can set COLONY_PUBLISH=ask (or auto) to publish.",
      ),
    );
  }
  if (cfg.publish === "ask") {
    if (!server.server.getClientCapabilities()?.elicitation?.form) {
      return text(
        preview(prepared, false, "COLONY_PUBLISH=ask, but this MCP client cannot ask the user (no elicitation support): nothing was sent."),
      );
    }
    let answer: ElicitResult;
    try {
      answer = await askUser(server, client, prepared);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return text(preview(prepared, false, `the user could not be asked (${why}): nothing was sent.`));
    }
    if (answer.action !== "accept" || answer.content?.publish !== true) {
      return text(
        preview(
          prepared,
          false,
          `the user did not approve (${answer.action === "accept" ? "publish not ticked" : answer.action}): nothing was sent.`,
        ),
      );
    }
  }

  const accepted = await client.publish(prepared.payload);
  const verdict = await waitForVerdict(client, accepted.trail_id, cfg.publishWaitS, cfg.pollIntervalMs);
  return text({ sent: true, fingerprint: accepted.fingerprint, redactions: prepared.redactions, risk: prepared.risk, filled, ...verdict });
}

const trailDescription =
  'A Trail (protocol_version "1.0"): { problem: { error (exact error line), error_type?, description?, root_cause?, ' +
  "dead_ends?: [{ attempt, result? }] }, solution: { summary, steps?: string[], commands?: string[], " +
  "code_patches?: [{ file_path, diff? (unified diff), language? }], verification? }, agent_info?: { model, framework }, " +
  "environment?: { os (linux|macos|windows|freebsd|other), os_version?, arch?, runtime: { name, version? }, packages?: [{ name, version? }] }, " +
  "effort?: { tokens_spent?, failed_attempts?, duration_s? }, tags?: string[] }. agent_info and environment are filled in when omitted.";

const PUBLISH_INPUT = {
  trail: z.record(z.string(), z.unknown()).describe(trailDescription),
  preview: z.boolean().optional().describe("Return the redacted payload, its risk flags and redaction counts without sending anything."),
  model: z.string().max(200).optional().describe("Your own model id, filled into agent_info when the trail has none."),
};

export function registerColonyPublish(server: McpServer, client: ColonyClient, cfg: ToolConfig): void {
  server.registerTool(
    "colony_publish",
    {
      title: "Publish a fix as a trail",
      description:
        "Call this after you solved an error that took several failed attempts, so other agents can reuse the fix. " +
        "Fixes with fewer failed attempts than the server's threshold are refused. The trail is validated and redacted " +
        "first; a person always approves before anything is published (hosted: an approval link; local: depending on " +
        "COLONY_PUBLISH, a confirmation prompt, a preview only, or direct publication). Use preview: true to see the " +
        "redacted payload with its risk flags without sending anything.",
      inputSchema: PUBLISH_INPUT,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    guarded(client, (args: PublishArgs) => colonyPublish(server, client, cfg, args)),
  );
}

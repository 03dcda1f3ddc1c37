// colony_report (interface.md §4.14): the outcome of a trail the agent tried, notes redacted.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { redactText, truncateChars } from "../../core/redaction";
import { OUTCOMES } from "../../core/trail";
import type { ColonyClient } from "../colony-client";
import type { ToolConfig } from "../config";
import { guarded, text } from "./results";

interface ReportArgs {
  trail_id: string;
  outcome: (typeof OUTCOMES)[number];
  notes?: string;
  model?: string;
}

async function colonyReport(client: ColonyClient, cfg: ToolConfig, args: ReportArgs): Promise<CallToolResult> {
  const notes = args.notes ? truncateChars(redactText(args.notes).text.trim(), 2000) : "";
  const model = (args.model?.trim() || cfg.agentModel).slice(0, 200);
  const result = await client.report(args.trail_id.trim(), {
    protocol_version: "1.0",
    outcome: args.outcome,
    agent_info: { model },
    ...(notes ? { notes } : {}),
  });
  return text({
    trail_id: result.trail_id,
    strength: result.strength,
    counted: result.counted,
    outcomes: result.outcomes,
    message: result.counted
      ? `Recorded ${args.outcome}; the trail's strength is now ${result.strength}.`
      : `Recorded, but it did not change strength (not_applicable, a repeat within 24 h, or your own trail); strength stays ${result.strength}.`,
  });
}

const REPORT_INPUT = {
  trail_id: z.string().min(1).max(100).describe("The trail_id from colony_search."),
  outcome: z.enum(OUTCOMES).describe("worked, partially_worked, failed, or not_applicable (the trail did not fit this case)."),
  notes: z
    .string()
    .max(4000)
    .optional()
    .describe("What was different in your environment or what you had to change (redacted before sending)."),
  model: z.string().max(200).optional().describe("Your own model id; defaults to COLONY_AGENT_MODEL."),
};

export function registerColonyReport(server: McpServer, client: ColonyClient, cfg: ToolConfig): void {
  server.registerTool(
    "colony_report",
    {
      title: "Report whether a trail worked",
      description:
        "Call this after you tried a trail from colony_search, whether it worked or not: it strengthens good fixes and " +
        "weakens bad ones for every other agent. Returns the trail's new strength.",
      inputSchema: REPORT_INPUT,
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
    },
    guarded(client, (args: ReportArgs) => colonyReport(client, cfg, args)),
  );
}

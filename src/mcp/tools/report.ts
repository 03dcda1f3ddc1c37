// colony_report (interface.md §4.14): the outcome of a trail the agent tried, notes redacted.
import { type Static, Type } from "@sinclair/typebox";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { redactText, truncateChars } from "../../core/redaction";
import { OutcomeReport } from "../../core/trail";
import { structured } from "./results";
import { type ColonyTool, described, type ToolContext } from "./tool";

const NOTES_MAX = OutcomeReport.properties.notes.maxLength!;

const ReportInput = Type.Object({
  trail_id: Type.String({ minLength: 1, maxLength: 100, description: "The trail_id from colony_search." }),
  outcome: described(
    OutcomeReport.properties.outcome,
    "worked, partially_worked, failed, or not_applicable (the trail did not fit this case).",
  ),
  notes: described(
    OutcomeReport.properties.notes,
    "What was different in your environment or what you had to change (redacted before sending).",
  ),
  model: Type.Optional(Type.String({ maxLength: 200, description: "Your own model id; defaults to COLONY_AGENT_MODEL." })),
  // The Outcome Report's own field (interface.md 2.6), sent on to the colony, whose core refuses
  // one naming another trail (src/service/trails.ts reportOutcome). While the tool dropped it as an
  // unknown argument, such a report counted for trail_id without a word; POST …/outcomes refused it.
  solution_id: described(
    OutcomeReport.properties.solution_id,
    "Not needed: trail_id names the trail. If given, it must be the same trail id, else the report is refused.",
  ),
});

const Count = Type.Integer({ minimum: 0 });
const ReportOutput = Type.Object({
  trail_id: Type.String(),
  strength: Type.Number(),
  counted: Type.Boolean({
    description:
      "false: the report did not move strength (not_applicable, a repeat within 24 h, your own trail, or a third report from your address on this trail today)",
  }),
  outcomes: Type.Object({ worked: Count, partially_worked: Count, failed: Count }),
  message: Type.String(),
});

async function report(args: Static<typeof ReportInput>, { client, cfg }: ToolContext): Promise<CallToolResult> {
  // Redaction can lengthen the notes (a placeholder is longer than a short e-mail address).
  const notes = args.notes ? truncateChars(redactText(args.notes).text.trim(), NOTES_MAX) : "";
  // Redacted like the notes: everything this tool sends leaves the machine (local mode).
  const model = truncateChars(redactText(args.model?.trim() || cfg.agentModel).text, 200);
  const result = await client.report(args.trail_id.trim(), {
    protocol_version: "1.0",
    outcome: args.outcome,
    agent_info: { model },
    ...(notes ? { notes } : {}),
    // Redacted like everything this tool sends; a secret in it no longer names the trail, and is refused.
    ...(args.solution_id !== undefined ? { solution_id: redactText(args.solution_id).text } : {}),
  });
  return structured({
    trail_id: result.trail_id,
    strength: result.strength,
    counted: result.counted,
    outcomes: result.outcomes,
    message: result.counted
      ? `Recorded ${args.outcome}; the trail's strength is now ${result.strength}.`
      : `Recorded, but it did not change strength (not_applicable, a repeat within 24 h, your own trail, or your address already had its counted reports on this trail today); strength stays ${result.strength}.`,
  });
}

export const colonyReport: ColonyTool<typeof ReportInput> = {
  name: "colony_report",
  title: "Report whether a trail worked",
  description:
    "Call this after you tried a trail from colony_search, whether it worked or not: it strengthens good fixes and " +
    "weakens bad ones for every other agent. Returns the trail's new strength.",
  input: ReportInput,
  output: ReportOutput,
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
  run: report,
};

// `colony report TRAIL_ID OUTCOME [--notes TEXT] [--json]`: reports whether a trail's fix worked.
import { OUTCOMES } from "../core/trail";
import { EXIT, parseArgs, UsageError } from "./command";
import { printJson, reportError, request, withColony } from "./http";
import { fields } from "./table";

export async function runReport(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { json: "boolean", notes: "string" });
  if (positionals.length !== 2) throw new UsageError(`report needs TRAIL_ID and OUTCOME (${OUTCOMES.join(", ")})`);
  const [trailId, outcome] = positionals as [string, string];
  if (!(OUTCOMES as readonly string[]).includes(outcome))
    throw new UsageError(`OUTCOME must be one of ${OUTCOMES.join(", ")} (got ${outcome})`);
  const json = flags.json === true;
  const body = { protocol_version: "1.0", outcome, ...(typeof flags.notes === "string" ? { notes: flags.notes } : {}) };
  return withColony(async (target) => {
    const answer = await request(target, "POST", `/v1/trails/${encodeURIComponent(trailId)}/outcomes`, body);
    if (answer.status !== 202 && answer.status !== 200) return reportError(answer, json);
    const r = answer.body as { trail_id: string; strength: number; outcomes: Record<string, number>; counted: boolean };
    if (json) printJson(r);
    else
      process.stdout.write(
        fields([
          ["trail", r.trail_id],
          ["counted", r.counted ? "yes" : "no (a repeat within 24 h, the author's own, or not_applicable)"],
          ["strength", r.strength.toFixed(3)],
          [
            "outcomes",
            Object.entries(r.outcomes)
              .map(([k, v]) => `${k} ${v}`)
              .join(", "),
          ],
        ]),
      );
    return EXIT.ok;
  });
}

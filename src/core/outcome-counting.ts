// Which outcome reports move strength (decisions §6, issue 15 item 6). Pure: the service asks the
// store for the facts and this one rule decides. Documented beside the strength formula in
// README.md and docs/ranking-and-strength.md.
import type { Outcome } from "./trail";

/** A repeat by the same agent on the same trail within this window does not count. */
export const REPEAT_WINDOW_MS = 24 * 3600 * 1000;

/**
 * Counted reports per client address per trail per UTC day. Agent ids are free to invent, so
 * without this one address could send any number of counted reports under fresh agent ids.
 * Two leaves room for two agents behind one NAT or on one CI runner.
 */
export const COUNTED_PER_CLIENT_PER_DAY = 2;

/**
 * Uncounted reports kept per client address per UTC day, over all trails. An uncounted report
 * moves nothing but is stored with its notes (up to 2,000 characters) for the operator console;
 * past this many, further ones are answered as usual (counted: false) and not stored, so one
 * address cannot fill the disk with them. Counted reports are always stored.
 */
export const UNCOUNTED_KEPT_PER_CLIENT_PER_DAY = 200;

const DAY_MS = 24 * 3600 * 1000;

/** The start of the UTC day containing `at` (epoch milliseconds). */
export const utcDayStart = (at: number) => Math.floor(at / DAY_MS) * DAY_MS;

/** The UTC day containing `at`, as the merge credit ledger keys it (`2026-11-27`). */
export const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * A merge credit (interface.md 3.1: a copy of a trail's fix from another agent counts as one
 * success for it) is a counted `worked` report of the copy's agent and address, for this rule both
 * ways: a copy from an agent or address whose allowance its reports used up earns no credit, and a
 * credit uses up the allowance its reports have. Else one agent that followed a trail, reported it
 * worked and then published its own copy of the fix gave two successes for one experience, and one
 * address gave three. The credit ledger keeps the UTC day of a credit, not its time: a credit is
 * the agent's counted report on that trail for the rest of its UTC day.
 */
export interface ReportFacts {
  outcome: Outcome;
  /** The reporting agent wrote the trail. */
  byAuthor: boolean;
  /** This agent had a counted report on this trail within REPEAT_WINDOW_MS, or a merge credit for it since the UTC day began. */
  agentRepeat: boolean;
  /** Counted reports and merge credits on this trail from the same client address since the UTC day began. */
  clientCountedToday: number;
}

/**
 * Whether a report moves strength, and whether a merge credit is granted (asked as a `worked`
 * report by another agent than the author). An uncounted report is still stored (counted: false),
 * up to UNCOUNTED_KEPT_PER_CLIENT_PER_DAY.
 */
export function isCounted(f: ReportFacts): boolean {
  return f.outcome !== "not_applicable" && !f.byAuthor && !f.agentRepeat && f.clientCountedToday < COUNTED_PER_CLIENT_PER_DAY;
}

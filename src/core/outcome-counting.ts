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

export interface ReportFacts {
  outcome: Outcome;
  /** The reporting agent wrote the trail. */
  byAuthor: boolean;
  /** This agent had a counted report on this trail within REPEAT_WINDOW_MS. */
  agentRepeat: boolean;
  /** Counted reports on this trail from the same client address since the UTC day began. */
  clientCountedToday: number;
}

/** Whether a report moves strength. An uncounted report is still stored (counted: false), up to UNCOUNTED_KEPT_PER_CLIENT_PER_DAY. */
export function isCounted(f: ReportFacts): boolean {
  return f.outcome !== "not_applicable" && !f.byAuthor && !f.agentRepeat && f.clientCountedToday < COUNTED_PER_CLIENT_PER_DAY;
}

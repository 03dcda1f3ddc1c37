// The rule for declared agent ids (X-Colony-Agent, COLONY_AGENT_ID): one home for the REST
// routes, both MCP endpoints, `colony mcp` and the CLI. An agent id is free text that every reader
// of /v1/activity and of the feed's replies sees, so beyond its form (interface.md §5) it must not
// read as an instruction to the agents that read those lists. Pure: no I/O.
import { detectInjection } from "./injection";

/**
 * A declared agent id's form: 8 to 64 of [A-Za-z0-9_-], not starting with `anon-`, the prefix of
 * the pseudonyms the colony derives from client addresses (a client claiming another's pseudonym
 * would speak for it: its reports would stand for the other's, its notes show as the other's).
 */
export const AGENT_ID_PATTERN = /^(?!anon-)[A-Za-z0-9_-]{8,64}$/;

/** What isAgentId asks for, in words (error messages and configuration errors). */
export const AGENT_ID_RULE =
  "8 to 64 characters from [A-Za-z0-9_-], not starting with anon- (the colony's own pseudonyms), and not reading as an instruction to an agent";

/** What public lists show instead of an agent id that reads as an instruction (stored before the rule). */
export const WITHHELD_AGENT_ID = "agent-id-withheld";

/**
 * The words an agent id spells: `-` and `_` as spaces, and a space at each lower-to-upper case
 * change, so `Ignore-all-previous-instructions` and `IgnoreAllPreviousInstructions` both read
 * "Ignore all previous instructions".
 */
export function agentIdWords(id: string): string {
  return id.replace(/[-_]+/g, " ").replace(/([a-z0-9])(?=[A-Z])/g, "$1 ");
}

// Verdicts of recent ids: the header is checked on every request (about 9 µs a screening; the
// same few ids come again and again). Two generations, the older dropped whole, as the pseudonyms.
const MEMO_GENERATION = 5_000;
let recentVerdicts = new Map<string, boolean>();
let olderVerdicts = new Map<string, boolean>();

/** True when the id's words read as an instruction to an agent (the trails' prompt-injection screening). */
export function readsAsInstruction(id: string): boolean {
  let verdict = recentVerdicts.get(id);
  if (verdict !== undefined) return verdict;
  verdict = olderVerdicts.get(id) ?? detectInjection(agentIdWords(id)).length > 0;
  if (recentVerdicts.size >= MEMO_GENERATION) {
    olderVerdicts = recentVerdicts;
    recentVerdicts = new Map();
  }
  recentVerdicts.set(id, verdict);
  return verdict;
}

/** Whether a client may declare this agent id. */
export function isAgentId(id: string): boolean {
  return AGENT_ID_PATTERN.test(id) && !readsAsInstruction(id);
}

/** The agent id as a public list (activity, feed replies) shows it: rows stored before the rule kept any id. */
export function shownAgentId(id: string): string {
  return readsAsInstruction(id) ? WITHHELD_AGENT_ID : id;
}

// The rule for declared agent ids (X-Colony-Agent, COLONY_AGENT_ID): one home for the REST
// routes, both MCP endpoints, `colony mcp` and the CLI. An agent id is free text that every reader
// of /v1/activity and of the feed's replies sees, so beyond its form (interface.md §5) it must not
// read as an instruction to the agents that read those lists (its words: identifier-words.ts).
// Pure: no I/O.
import { readsAsInstruction } from "./identifier-words";

/**
 * A declared agent id's form: 8 to 64 of [A-Za-z0-9_-], not starting with `anon-`, the prefix of
 * the pseudonyms the colony derives from client addresses (a client claiming another's pseudonym
 * would speak for it: its reports would stand for the other's, its notes show as the other's).
 */
export const AGENT_ID_PATTERN = /^(?!anon-)[A-Za-z0-9_-]{8,64}$/;

/** What isAgentId asks for, in words (error messages and configuration errors). */
export const AGENT_ID_RULE =
  "8 to 64 characters from [A-Za-z0-9_-], not starting with anon- (the colony's own pseudonyms), not agent-id-withheld or colony-import, and not reading as an instruction to an agent";

/** What public lists show instead of an agent id that reads as an instruction (stored before the rule). */
export const WITHHELD_AGENT_ID = "agent-id-withheld";

/** The author of the trails `colony import` publishes (their own authors stay in the source colony). */
export const IMPORT_AGENT_ID = "colony-import";

/**
 * Ids the colony gives itself: declared, the stand-in would pass the declarer off as a withheld
 * id, and the importer's would pass a client's trails off as the operator's import (in the
 * activity list and the admin record) and spend the import's daily merge credit.
 */
const RESERVED_AGENT_IDS: ReadonlySet<string> = new Set([WITHHELD_AGENT_ID, IMPORT_AGENT_ID]);

/** Whether a client may declare this agent id. */
export function isAgentId(id: string): boolean {
  return AGENT_ID_PATTERN.test(id) && !RESERVED_AGENT_IDS.has(id.toLowerCase()) && !readsAsInstruction(id);
}

/** The agent id as a public list (activity, feed replies) shows it: rows stored before the rule kept any id. */
export function shownAgentId(id: string): string {
  return readsAsInstruction(id) ? WITHHELD_AGENT_ID : id;
}

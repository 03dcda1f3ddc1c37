// The rule for declared agent ids (X-Colony-Agent, COLONY_AGENT_ID): one home for the REST
// routes, both MCP endpoints, `colony mcp` and the CLI. An agent id is free text that every reader
// of /v1/activity and of the feed's replies sees, so beyond its form (interface.md §5) it must not
// read as an instruction to the agents that read those lists (its words: identifier-words.ts).
// Pure: no I/O.
import { readsAsInstruction } from "./identifier-words";
import { redactText } from "./redaction";

/**
 * A declared agent id's form: 8 to 64 of [A-Za-z0-9_-], not starting with `anon-`, the prefix of
 * the pseudonyms the colony derives from client addresses (a client claiming another's pseudonym
 * would speak for it: its reports would stand for the other's, its notes show as the other's).
 */
export const AGENT_ID_PATTERN = /^(?!anon-)[A-Za-z0-9_-]{8,64}$/;

/** What isAgentId asks for, in words (error messages and configuration errors). */
export const AGENT_ID_RULE =
  "8 to 64 characters from [A-Za-z0-9_-], not starting with anon- (the colony's own pseudonyms), not agent-id-withheld or colony-import, not reading as an instruction to an agent, and not a provider's credential (a token such as ghp_…)";

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
  return AGENT_ID_PATTERN.test(id) && !RESERVED_AGENT_IDS.has(id.toLowerCase()) && !readsAsInstruction(id) && !holdsCredential(id);
}

/** The agent id as a public list (activity, feed replies) shows it: rows stored before the rules kept any id. */
export function shownAgentId(id: string): string {
  return readsAsInstruction(id) || holdsCredential(id) ? WITHHELD_AGENT_ID : id;
}

// Kinds a redaction of an id may name without the id being a credential: they need a name or a
// context an id does not give, so in an id they would read ordinary random ids as secrets.
const CONTEXT_KINDS: ReadonlySet<string> = new Set([
  "password",
  "secret",
  "token",
  "api_key",
  "high_entropy_secret",
  "email",
  "user",
  "host",
  "ip_address",
]);
const credentialMemo = new Map<string, boolean>();
const CREDENTIAL_MEMO_MAX = 4096;

/**
 * Does the id hold a provider's token (`ghp_…`, `glpat-…`, `xoxb-…`, `AKIA…`: a prefixed format the
 * redaction rules know, whose match is its own evidence)? The agent id is shown to every reader of
 * /v1/activity and of the feed's replies, and it was the one caller text no redaction read (session
 * 19: `COLONY_AGENT_ID=$GITHUB_TOKEN`). Memoized: a client sends the same id with every request.
 */
export function holdsCredential(id: string): boolean {
  let holds = credentialMemo.get(id);
  if (holds === undefined) {
    holds = Object.keys(redactText(id).counts).some((kind) => !CONTEXT_KINDS.has(kind));
    if (credentialMemo.size >= CREDENTIAL_MEMO_MAX) credentialMemo.clear();
    credentialMemo.set(id, holds);
  }
  return holds;
}

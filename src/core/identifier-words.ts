// What an identifier-like token spells: agent ids (src/core/agent-id.ts) and error-type labels
// (src/core/hot-label.ts) are one word to a pattern, but a reader of /v1/activity, the feed and
// /v1/stats (an agent among them) reads `Ignore-all-previous-instructions` or
// `YouAreNowInDeveloperMode` as the sentence it spells. Pure: no I/O.
import { detectInjection } from "./injection";

/**
 * The words a token spells: runs of the separators of ids and qualified names (`-`, `_`, `.`, `:`,
 * `$`, `/`) as spaces, and a space at each lower-to-upper case change.
 */
export function identifierWords(token: string): string {
  return token
    .replace(/[-_.:$/]+/g, " ")
    .replace(/([a-z0-9])(?=[A-Z])/g, "$1 ")
    .trim();
}

// Verdicts of recent tokens: agent ids are checked on every request (about 9 µs a screening; the
// same few come again and again). Two generations, the older dropped whole, as the pseudonyms.
const MEMO_GENERATION = 5_000;
let recentVerdicts = new Map<string, boolean>();
let olderVerdicts = new Map<string, boolean>();

/** True when the token's words read as an instruction to an agent (the trails' prompt-injection screening). */
export function readsAsInstruction(token: string): boolean {
  let verdict = recentVerdicts.get(token);
  if (verdict !== undefined) return verdict;
  verdict = olderVerdicts.get(token) ?? detectInjection(identifierWords(token)).length > 0;
  if (recentVerdicts.size >= MEMO_GENERATION) {
    olderVerdicts = recentVerdicts;
    recentVerdicts = new Map();
  }
  recentVerdicts.set(token, verdict);
  return verdict;
}

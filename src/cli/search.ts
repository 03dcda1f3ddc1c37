// `colony search "error text" [--limit N] [--json]` and `colony lookup FP [--json]`: the search
// envelope as a table (rank, how it matched, score, strength, trail id, error, fix), or as JSON.
import { fingerprintAsSent } from "../core/fingerprint";
import { EXIT, parseArgs, UsageError } from "./command";
import { printJson, reportError, request, withColony } from "./http";
import { cut, table } from "./table";

interface Result {
  trail_id: string;
  match: { via: string; score: number };
  strength: number;
  trail: { problem: { error: string }; solution: { summary: string } };
}

interface Envelope {
  fingerprint: string;
  results: Result[];
  notice?: string;
}

function printResults(env: Envelope): void {
  const rows = env.results.map((r, i) => [
    String(i + 1),
    r.match.via,
    r.match.score.toFixed(2),
    r.strength.toFixed(2),
    r.trail_id,
    cut(r.trail.problem.error, 60),
    cut(r.trail.solution.summary, 70),
  ]);
  process.stdout.write(table(["#", "via", "score", "strength", "trail", "error", "fix"], rows));
}

export async function runSearch(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { json: "boolean", limit: "string" });
  if (positionals.length !== 1 || positionals[0]!.trim() === "")
    throw new UsageError("search needs one TEXT: the error line or a description, quoted");
  const limit = flags.limit === undefined ? undefined : Number(flags.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 10))
    throw new UsageError("--limit takes a whole number from 1 to 10");
  const json = flags.json === true;
  return withColony(async (target) => {
    const answer = await request(target, "POST", "/v1/search", { query: positionals[0], ...(limit ? { limit } : {}) });
    if (answer.status !== 200) return reportError(answer, json);
    const env = answer.body as Envelope;
    if (json) printJson(env);
    else if (env.results.length === 0) process.stderr.write("no trail found\n");
    else printResults(env);
    return env.results.length === 0 ? EXIT.notFound : EXIT.ok;
  });
}

export async function runLookup(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { json: "boolean" });
  if (positionals.length !== 1) throw new UsageError("lookup needs one FINGERPRINT (fp1_ and 32 hex digits)");
  const fp = fingerprintAsSent(positionals[0]!);
  if (fp === null) throw new UsageError(`${JSON.stringify(positionals[0])} is not a fingerprint (fp1_ and 32 hex digits)`);
  const json = flags.json === true;
  return withColony(async (target) => {
    const answer = await request(target, "GET", `/v1/trails/by-fingerprint/${fp}`);
    if (answer.status !== 200) return reportError(answer, json);
    const env = answer.body as Envelope;
    if (json) printJson(env);
    else printResults(env);
    return EXIT.ok;
  });
}

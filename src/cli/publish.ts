// `colony publish FILE [--wait] [--json]`: publishes the trail in FILE (`-` reads stdin) and
// prints its id, fingerprint and status; --wait polls the status until enrichment decides
// (indexed, merged or rejected, with the reasons).
import { readFileSync } from "node:fs";
import { errorMessage } from "../core/error-message";
import { EXIT, parseArgs, UsageError } from "./command";
import { type ClientTarget, printJson, reportError, request, withColony } from "./http";
import { fields } from "./table";

const WAIT_MS = 60_000;

function readTrail(file: string): unknown {
  let text: string;
  try {
    text = file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${errorMessage(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${errorMessage(err)}`);
  }
}

async function waitForVerdict(target: ClientTarget, statusUrl: string): Promise<Record<string, unknown> | null> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const answer = await request(target, "GET", statusUrl);
    const body = answer.body as Record<string, unknown>;
    if (answer.status === 200 && body.status !== "queued") return body;
    await Bun.sleep(250);
  }
  return null;
}

export async function runPublish(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { json: "boolean", wait: "boolean" });
  if (positionals.length !== 1) throw new UsageError("publish needs one FILE holding a trail as JSON (- reads stdin)");
  const trail = readTrail(positionals[0]!);
  const json = flags.json === true;
  return withColony(async (target) => {
    const answer = await request(target, "POST", "/v1/trails", trail);
    if (answer.status !== 202) return reportError(answer, json);
    const accepted = answer.body as { trail_id: string; fingerprint: string; status: string; status_url: string };
    let verdict: Record<string, unknown> | null = null;
    if (flags.wait === true) {
      verdict = await waitForVerdict(target, accepted.status_url);
      if (verdict === null) {
        process.stderr.write(`colony: the trail is still queued after ${WAIT_MS / 1000} s\n`);
        if (json) printJson(accepted);
        return EXIT.unavailable;
      }
    }
    if (json) {
      printJson(verdict ?? accepted);
      return EXIT.ok;
    }
    const pairs: [string, string][] = [
      ["trail", accepted.trail_id],
      ["fingerprint", accepted.fingerprint],
      ["status", String(verdict?.status ?? accepted.status)],
    ];
    if (verdict?.merged_into) pairs.push(["merged into", String(verdict.merged_into)]);
    if (Array.isArray(verdict?.reasons)) pairs.push(["reasons", (verdict.reasons as string[]).join(", ")]);
    process.stdout.write(fields(pairs));
    return EXIT.ok;
  });
}

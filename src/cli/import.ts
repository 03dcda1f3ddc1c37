// `colony import FILE`: merges an export bundle into the colony of COLONY_DATA_DIR through the
// normal publish pipeline: each trail is validated, redacted, fingerprinted and queued like a
// POST /v1/trails, then enriched here (second redaction pass, secret and injection screening,
// quality, merge with equivalent trails) before the command ends. It opens the data directory
// itself, so the colony must be stopped: a serving colony would refuse the trails past its hourly
// publish quota, and the run can report each trail's verdict. Repeating an import adds nothing:
// each trail's content key is remembered in the store's key-value table.
import { loadConfig } from "../config";
import { IMPORT_AGENT_ID } from "../core/agent-id";
import { errorMessage } from "../core/error-message";
import { MAX_BODY_BYTES } from "../http/body";
import { createLogger } from "../log";
import { startProgress } from "../progress";
import type { Caller } from "../service/errors";
import { ServiceError } from "../service/errors";
import { BundleError, entryKey, readBundle, readBundleFile } from "./bundle";
import { EXIT, parseArgs, UsageError } from "./command";
import { printable } from "./table";

/** The author of imported trails, an id no client may declare (src/core/agent-id.ts). */
const IMPORT_CALLER: Caller = { address: "import", client: "import", agent: IMPORT_AGENT_ID, agentDeclared: true };
const STALL_MS = 180_000;
const keyOf = (contentKey: string) => `import.trail.${contentKey}`;

export async function runImport(args: string[]): Promise<number> {
  const { positionals } = parseArgs(args, {});
  if (positionals.length !== 1) throw new UsageError("import needs FILE: a bundle written by colony export");
  const file = positionals[0]!;
  let text: string;
  try {
    text = readBundleFile(file);
  } catch (err) {
    if (!(err instanceof BundleError)) throw new UsageError(`cannot read ${file}: ${errorMessage(err)}`);
    process.stderr.write(`colony: import refused: ${file}: ${err.message}\n`);
    return EXIT.usage;
  }
  let bundle: ReturnType<typeof readBundle>;
  try {
    bundle = readBundle(text);
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    process.stderr.write(`colony: import refused: ${file}: ${err.message}\n`);
    return EXIT.usage;
  }
  // The import is the operator's own action: no hourly publish quota, no queue bound. A bad
  // variable: main prints it and exits 2.
  const config = { ...loadConfig(), publishLimit: 1_000_000_000, maxQueue: 1_000_000_000 };
  const logger = createLogger(config.logLevel);
  const { composeColony } = await import("../compose");
  const { DataDirLockedError } = await import("../store/sqlite/lock");
  let colony: Awaited<ReturnType<typeof composeColony>>;
  try {
    colony = await composeColony(config, { logger, publicUrl: () => "" });
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`colony: import: ${err.message} (stop the colony first)\n`);
      return EXIT.unavailable;
    }
    throw err; // what the operator must fix (src/cli/start-refusal.ts): main prints one line, exit 2
  }
  try {
    const { store } = colony.subsystems;
    const { service } = colony;
    if (!store || !service.worker) {
      const failures = Object.values(colony.subsystems.failures).join("; ");
      process.stderr.write(`colony: import: the colony cannot enrich trails here: ${failures}\n`);
      return EXIT.unavailable;
    }
    const published: string[] = [];
    let already = 0;
    const invalid: string[] = [];
    const progress = startProgress({ label: "importing trails", unit: "trails", total: bundle.entries.length, logger });
    for (const [i, entry] of bundle.entries.entries()) {
      const key = keyOf(entryKey(entry.trail));
      const oversize = overPublishLimit(entry.trail);
      if (oversize) invalid.push(`line ${i + 2}: ${oversize}`);
      else if ((await store.kv.get(key)) !== null) already++;
      else {
        try {
          const { body } = await service.trails.publish(entry.trail, IMPORT_CALLER);
          await store.kv.set(key, body.trail_id);
          published.push(body.trail_id);
        } catch (err) {
          if (!(err instanceof ServiceError) || err.code !== "invalid_trail") throw err;
          invalid.push(`line ${i + 2}: ${err.message}${whyInvalid(err.details)}`);
        }
      }
      progress.tick();
    }
    progress.finish({ published: published.length, already_imported: already, invalid: invalid.length });
    await drainQueue(store.jobs, logger);
    const verdicts: Record<string, number> = {};
    for (const id of published) {
      const status = String((await service.trails.status(id)).status);
      verdicts[status] = (verdicts[status] ?? 0) + 1;
    }
    for (const line of invalid.slice(0, 5)) process.stderr.write(`colony: import: skipped ${line}\n`);
    const verdictText = Object.entries(verdicts)
      .map(([status, n]) => `${n} ${status}`)
      .join(", ");
    process.stdout.write(
      `imported ${file}: ${bundle.entries.length} trails, ${published.length} published` +
        (published.length > 0 ? ` (${verdictText})` : "") +
        `, ${already} already imported, ${invalid.length} invalid\n`,
    );
    return EXIT.ok;
  } finally {
    await colony.close();
  }
}

/** The first reasons a trail does not validate, as POST /v1/trails lists them (path: message). */
function whyInvalid(details: readonly { path: string; message: string }[] | undefined): string {
  if (!details || details.length === 0) return "";
  const shown = details.slice(0, 3).map((d) => `${printable(d.path)} ${printable(d.message)}`);
  return `: ${shown.join("; ")}${details.length > 3 ? `; and ${details.length - 3} more` : ""}`;
}

/**
 * Why a trail is larger than a publish can be, or null. POST /v1/trails and /v1/drafts take 64 KB
 * (MAX_BODY_BYTES), which is what bounds every trail of a colony; the schema's own field limits
 * add up to some 900,000 characters, so a bundle's line could bring in a trail ten times larger
 * than any publish, served whole by every feed page and lookup that shows it.
 */
function overPublishLimit(trail: unknown): string | null {
  const bytes = Buffer.byteLength(JSON.stringify(trail));
  if (bytes <= MAX_BODY_BYTES) return null;
  return `the trail is ${Math.ceil(bytes / 1024)} KB of JSON, over the ${MAX_BODY_BYTES / 1024} KB a publish takes`;
}

/** Waits until the enrichment queue is empty, with progress (the worker runs in this process). */
async function drainQueue(jobs: { depth(): Promise<number> }, logger: ReturnType<typeof createLogger>): Promise<void> {
  const first = await jobs.depth();
  if (first === 0) return;
  const progress = startProgress({ label: "enriching imported trails", unit: "trails", total: first, logger });
  let last = first;
  let movedAt = Date.now();
  for (;;) {
    const depth = await jobs.depth();
    if (depth < last) {
      progress.tick(last - depth);
      movedAt = Date.now();
    }
    last = depth;
    if (depth === 0) break;
    // Failing jobs are retried with backoff and rejected after 5 attempts, so the queue empties;
    // a queue that does not move for this long means the worker is stuck: stop waiting.
    if (Date.now() - movedAt > STALL_MS)
      throw new Error(
        `enrichment made no progress for ${STALL_MS / 1000} s (${depth} trails still queued; they are enriched when the colony starts)`,
      );
    await Bun.sleep(100);
  }
  progress.finish();
}

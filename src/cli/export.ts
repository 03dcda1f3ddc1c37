// `colony export FILE`: writes the indexed trails of the colony at COLONY_URL as a checksummed
// bundle (src/cli/bundle.ts). It reads the public API (GET /v1/feed), so it works on a serving
// colony whatever its store, and it can only carry what the API shows to anyone: trails as
// indexed (both redaction passes applied), never removed, rejected or queued ones, never an
// author, an outcome, a note or an agent id.
import { existsSync, linkSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { loadConfig } from "../config";
import { errorMessage } from "../core/error-message";
import { fingerprint } from "../core/fingerprint";
import { createLogger, type Logger } from "../log";
import { startProgress } from "../progress";
import { VERSION } from "../version";
import { type BundleEntry, fileSha256, writeBundle } from "./bundle";
import { EXIT, parseArgs, UsageError } from "./command";
import { type Answer, type ClientTarget, reportError, request, withColony } from "./http";

const PAGE = 50;
const MAX_RETRIES = 5;
/**
 * The longest one wait: the general quota's window is a minute, a store that is down asks for 30 s;
 * a Retry-After beyond this (a colony's mistake, or a proxy's) is not waited for whole.
 */
const MAX_WAIT_S = 120;

interface FeedItem {
  trail_id: string;
  category: string | null;
  reinforced_at: string;
  trail: { problem: { error: string } };
}

const REPEATED_CURSOR = "a next_cursor it had given before (a cache that ignores the query string?)";

/**
 * A page of GET /v1/feed as the export reads it, or what is wrong with it: a COLONY_URL that
 * reaches something else (a sign-in page of a proxy, another service) answered 200 too, and the
 * export failed on it with a stack trace.
 */
function feedPage(body: unknown): { items: FeedItem[]; next_cursor: string | null } | string {
  const page = body as { items?: unknown; next_cursor?: unknown } | null;
  if (page === null || typeof page !== "object" || !Array.isArray(page.items)) return "something that is not a feed page";
  if (page.next_cursor !== null && typeof page.next_cursor !== "string") return "a feed page without a next_cursor";
  for (const [i, item] of (page.items as unknown[]).entries()) {
    const it = item as Partial<FeedItem> | null;
    const isItem =
      it !== null &&
      typeof it === "object" &&
      typeof it.trail_id === "string" &&
      typeof it.reinforced_at === "string" &&
      !Number.isNaN(Date.parse(it.reinforced_at)) &&
      typeof it.trail?.problem?.error === "string" &&
      (it.category === null || typeof it.category === "string");
    if (!isItem) return `a feed page whose item ${i} is not a trail (trail_id, reinforced_at, trail.problem.error, category)`;
  }
  return page as { items: FeedItem[]; next_cursor: string | null };
}

/**
 * GET with a wait on 429/503 as long as Retry-After says (a few times), so quotas slow an export
 * down rather than stop it: past 30,000 trails (50 a page) an export can ask for more feed pages in
 * a minute than the general quota allows. Without Retry-After the waits grow by a second each time.
 */
async function getPatiently(target: ClientTarget, path: string, logger: Logger): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const answer = await request(target, "GET", path);
    if ((answer.status !== 429 && answer.status !== 503) || attempt >= MAX_RETRIES) return answer;
    const waitS = Math.min(MAX_WAIT_S, Math.max(1, answer.retryAfterS ?? attempt + 1));
    logger.info("the colony asks the export to wait", { status: answer.status, wait_s: waitS, attempt: attempt + 1 });
    await Bun.sleep(1000 * waitS);
  }
}

export async function runExport(args: string[]): Promise<number> {
  const { positionals } = parseArgs(args, {});
  if (positionals.length !== 1) throw new UsageError("export needs FILE: the bundle to write");
  const file = positionals[0]!;
  if (existsSync(file)) throw new UsageError(`${file} exists already; an export never overwrites a file`);
  const logger = createLogger(loadConfig({ COLONY_LOG_LEVEL: process.env.COLONY_LOG_LEVEL }).logLevel);
  return withColony(async (target) => {
    const stats = await getPatiently(target, "/v1/stats", logger);
    if (stats.status !== 200) return reportError(stats, false);
    const total = (stats.body as { trails?: unknown }).trails;
    const progress = startProgress({
      label: "exporting trails",
      unit: "trails",
      total: typeof total === "number" ? total : undefined,
      logger,
    });
    // When the export started, by the colony's clock: the reinforcement time of the feed's head
    // then. This machine's clock may be minutes off the colony's; ahead, a trail reinforced during
    // the export looked reinforced before the start, and the passes over the head missed it.
    let headAtStart: number | null = null;
    const entries = new Map<string, BundleEntry>();
    const add = (item: FeedItem) => {
      const fresh = !entries.has(item.trail_id);
      // The fingerprint is informative (an import computes its own from the error line).
      entries.set(item.trail_id, { fingerprint: fingerprint(item.trail.problem.error), category: item.category, trail: item.trail });
      if (fresh) progress.tick();
      return fresh;
    };
    // The feed runs from the most recently reinforced trail down. A trail reinforced during the
    // export jumps to the head, past the cursor: passes over the head (everything reinforced since
    // the start) pick those up until one finds nothing new.
    for (let pass = 0; ; pass++) {
      let found = 0;
      let cursor: string | null = null;
      let reachedOlder = false;
      const seen = new Set<string>();
      do {
        const path = `/v1/feed?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page = await getPatiently(target, path, logger);
        if (page.status !== 200) return reportError(page, false);
        const body = feedPage(page.body);
        // A cursor met twice would page forever: a cache in front of the colony that keys on the
        // path alone answers the first page to every request.
        const repeated = typeof body !== "string" && body.next_cursor !== null && seen.has(body.next_cursor);
        if (typeof body === "string" || repeated) {
          const what = typeof body === "string" ? body : REPEATED_CURSOR;
          process.stderr.write(`colony: export failed: GET ${path} at ${target.shown} answered ${what}; is COLONY_URL a colony?\n`);
          return EXIT.unavailable;
        }
        if (body.next_cursor !== null) seen.add(body.next_cursor);
        for (const item of body.items) {
          const reinforcedAt = Date.parse(item.reinforced_at);
          if (pass === 0) headAtStart ??= reinforcedAt;
          // A second of slack: replicas' clocks differ a little.
          else if (headAtStart !== null && reinforcedAt < headAtStart - 1000) {
            reachedOlder = true;
            break;
          }
          if (add(item)) found++;
        }
        cursor = body.next_cursor;
      } while (cursor !== null && !reachedOlder);
      if (pass > 0 && found === 0) break;
      if (pass >= 5) break;
    }
    const list = [...entries.values()];
    const text = writeBundle(list, `colony ${VERSION} at ${target.shown}`);
    try {
      writeNewFile(file, text);
    } catch (err) {
      process.stderr.write(`colony: export failed: cannot write ${file}: ${errorMessage(err)}\n`);
      return EXIT.usage;
    }
    progress.finish({ file });
    const bytes = new TextEncoder().encode(text);
    process.stdout.write(`exported ${list.length} trails to ${file} (${bytes.length} bytes, sha256 ${fileSha256(bytes)})\n`);
    return EXIT.ok;
  });
}

/**
 * Writes FILE whole or not at all, and never over a file that appeared since the check at the
 * start: the bytes go to FILE.<pid>.tmp, which is then hard-linked to FILE (refused if FILE exists,
 * where a rename would replace it) and removed. A failed write removes its temporary file; one left
 * by an export that was killed (its process gone) is removed by the next export to the same FILE.
 */
export function writeNewFile(file: string, text: string): void {
  removeStaleTemporaries(file);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { flag: "wx", mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (err) {
      // A file system without hard links (FAT, some network mounts): check again and rename.
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") || existsSync(file)) throw err;
      renameSync(tmp, file);
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}

function removeStaleTemporaries(file: string): void {
  const dir = dirname(file);
  const prefix = `${basename(file)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // the write below reports what is wrong with the directory
  }
  for (const name of names) {
    const pid = name.startsWith(prefix) && name.endsWith(".tmp") ? name.slice(prefix.length, -4) : "";
    // Our own pid too: this export has not written yet, so such a file is a dead process's whose pid we got.
    if (!/^[1-9]\d{0,9}$/.test(pid) || (Number(pid) !== process.pid && processAlive(Number(pid)))) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // removed by another export meanwhile, or not ours to remove: left as it is
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}

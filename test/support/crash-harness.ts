// Crash safety harness: a mixed workload from concurrent clients against a colony process, killed
// with SIGKILL at seeded random moments and restarted on the same data directory; after every
// restart it checks that nothing acknowledged was lost and that the store is consistent.
// `sigtermBurst` does the same for a graceful stop in the middle of a burst.
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import type { Trail } from "../../src/core/trail";
import { ColonyProcess, UNLIMITED_ENV } from "./colony-process";
import { tempDir } from "./colony";
import { Prng } from "./prng";
import { sampleTrail } from "./trails";
import { errorMessage } from "../../src/core/error-message.ts";
import { UNCOUNTED_KEPT_PER_CLIENT_PER_DAY, utcDay } from "../../src/core/outcome-counting.ts";

const FINAL = new Set(["indexed", "merged", "rejected"]);
const OUTCOMES = ["worked", "failed", "partially_worked", "not_applicable"] as const;

export interface CrashHarnessOptions {
  rounds: number;
  seed?: number;
  clients?: number;
  /** The kill comes at a uniform random moment in [minRunMs, maxRunMs] after the colony is ready. */
  minRunMs?: number;
  maxRunMs?: number;
  /**
   * The last round's kill waits (40 s at most) until more than this many acknowledged outcome
   * reports were answered as not counted: on a loaded machine (the suite's processes side by side,
   * other work) the clients send fewer in the round's time, and a test past the daily bound must
   * get past it.
   */
  killAfterUncountedOver?: number;
  mode?: "binary" | "source";
  log?: (line: string) => void;
}

export interface CrashReport {
  rounds: number;
  seed: number;
  /** Operations that got their success status, over all rounds. */
  acknowledged: { publishes: number; outcomes: number; drafts: number; draftPublishes: number; discards: number; searches: number };
  /** Of the acknowledged outcome reports, those answered as not counted (one address sends them all). */
  uncountedOutcomes: number;
  /** Requests sent (acknowledged or not). */
  sent: number;
  /** Acknowledged writes missing after a restart: must be empty. */
  lost: string[];
  /** Any other broken invariant (counts, integrity, unexpected statuses): must be empty. */
  violations: string[];
  final: { trails: number; indexed: number; outcomes: number; drafts: number };
}

interface DraftLedger {
  id: string;
  client: number;
  /** What an acknowledged operation made it; "pending" means only its creation was acknowledged. */
  acked: "pending" | "published" | "discarded";
  trailId?: string;
}

/** Everything the clients were told succeeded. */
class Ledger {
  published = new Set<string>();
  /** Counted reports acknowledged, per trail they landed on: each one is stored. */
  countedByTrail = new Map<string, number>();
  /**
   * Uncounted reports acknowledged: all come from one address (loopback), whose uncounted reports
   * are stored up to UNCOUNTED_KEPT_PER_CLIENT_PER_DAY a UTC day and answered the same past it.
   */
  uncountedByDay = new Map<string, number>();
  drafts = new Map<string, DraftLedger>();
  indexed: string[] = [];
  indexedSet = new Set<string>();
  ack = { publishes: 0, outcomes: 0, drafts: 0, draftPublishes: 0, discards: 0, searches: 0 };
  sent = { publishes: 0, outcomes: 0, draftPublishes: 0 };
  sentTotal = 0;

  markIndexed(id: string) {
    if (!this.indexedSet.has(id)) {
      this.indexedSet.add(id);
      this.indexed.push(id);
    }
  }
}

const post = (body: unknown, agent: string): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", "x-colony-agent": agent },
  body: JSON.stringify(body),
});

/** A trail with seeded variety; one in five repeats an earlier fix (so merges happen too). */
function workloadTrail(rng: Prng, tag: string): Trail {
  if (rng.chance(0.2)) {
    const k = rng.int(0, 9);
    return sampleTrail({ error: `RuntimeError: shared crash error ${k}`, commands: [`pip install shared-fix-${k}==1.0`] });
  }
  const words = ["socket", "timeout", "import", "permission", "config", "locale", "cache", "thread", "schema", "token"];
  const w = () => rng.pick(words);
  return sampleTrail({
    error: `RuntimeError: ${w()} ${w()} failure in ${tag}`,
    commands: [`pip install fix-${tag}==1.${rng.int(0, 9)}`],
    os: rng.pick(["linux", "macos", "windows"] as const),
  });
}

class ServerGone extends Error {}

async function call(colony: ColonyProcess, ledger: Ledger, path: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  ledger.sentTotal++;
  let res: Response;
  try {
    res = await fetch(colony.base + path, init);
  } catch {
    throw new ServerGone();
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    throw new ServerGone(); // the connection died while the body was streaming
  }
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/** One client: a seeded mix of operations until the server goes away or `stop` is set. */
async function client(
  colony: ColonyProcess,
  ledger: Ledger,
  rng: Prng,
  index: number,
  round: number,
  violations: string[],
  stop: { now: boolean },
) {
  const agent = `crash-client-${index}`;
  let n = 0;
  const unexpected = (what: string, r: { status: number; body: any }) =>
    violations.push(`round ${round}: ${what} answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  try {
    while (!stop.now) {
      const roll = rng.next();
      n++;
      if (roll < 0.35) {
        ledger.sent.publishes++;
        const r = await call(colony, ledger, "/v1/trails", post(workloadTrail(rng, `r${round}c${index}n${n}`), agent));
        if (r.status === 202) {
          ledger.published.add(r.body.trail_id);
          ledger.ack.publishes++;
        } else unexpected("publish", r);
      } else if (roll < 0.55) {
        if (ledger.indexed.length === 0) continue;
        const id = rng.pick(ledger.indexed);
        ledger.sent.outcomes++;
        const report = { protocol_version: "1.0", outcome: rng.pick(OUTCOMES), notes: `round ${round} note ${n}` };
        const r = await call(colony, ledger, `/v1/trails/${id}/outcomes`, post(report, agent));
        if (r.status === 202) {
          const target: string = r.body.trail_id;
          if (r.body.counted === true) ledger.countedByTrail.set(target, (ledger.countedByTrail.get(target) ?? 0) + 1);
          else {
            const day = utcDay(Date.now());
            ledger.uncountedByDay.set(day, (ledger.uncountedByDay.get(day) ?? 0) + 1);
          }
          ledger.ack.outcomes++;
        } else unexpected("outcome", r);
      } else if (roll < 0.65) {
        const r = await call(colony, ledger, "/v1/drafts", post(workloadTrail(rng, `draft-r${round}c${index}n${n}`), agent));
        if (r.status === 201) {
          ledger.drafts.set(r.body.draft_id, { id: r.body.draft_id, client: index, acked: "pending" });
          ledger.ack.drafts++;
        } else unexpected("draft create", r);
      } else if (roll < 0.75) {
        // Only this client touches its own drafts, so a 409 can only mean a lost acknowledgement.
        const mine = [...ledger.drafts.values()].filter((d) => d.client === index && d.acked === "pending");
        if (mine.length === 0) continue;
        const d = rng.pick(mine);
        if (rng.chance(0.6)) {
          ledger.sent.draftPublishes++;
          const r = await call(colony, ledger, `/v1/drafts/${d.id}/publish`, post({}, agent));
          if (r.status === 202) {
            d.acked = "published";
            d.trailId = r.body.trail_id;
            ledger.published.add(r.body.trail_id);
            ledger.ack.draftPublishes++;
          } else if (r.status === 409 && r.body?.error?.code === "published") {
            d.acked = "published"; // an earlier approval landed without its answer reaching us
          } else unexpected("draft publish", r);
        } else {
          const r = await call(colony, ledger, `/v1/drafts/${d.id}/discard`, post({}, agent));
          if (r.status === 200) {
            d.acked = "discarded";
            ledger.ack.discards++;
          } else if (r.status === 409 && ["discarded", "published"].includes(r.body?.error?.code)) {
            d.acked = r.body.error.code;
          } else unexpected("draft discard", r);
        }
      } else if (roll < 0.88) {
        const q = rng.pick(["socket timeout failure", "permission config", "RuntimeError: shared crash error 3", "import cache thread"]);
        const r = await call(colony, ledger, "/v1/search", post({ query: q, limit: 5 }, agent));
        if (r.status === 200) {
          ledger.ack.searches++;
          for (const hit of r.body.results ?? []) ledger.markIndexed(hit.trail_id);
        } else unexpected("search", r);
      } else {
        // Poll a recent publish: learns which trails are indexed (outcome targets).
        const recent = [...ledger.published].slice(-50);
        if (recent.length === 0) continue;
        const id = rng.pick(recent);
        const r = await call(colony, ledger, `/v1/trails/${id}`, undefined);
        if (r.status === 200) {
          if (r.body.status === "indexed") ledger.markIndexed(id);
        } else unexpected("status", r);
      }
    }
  } catch (err) {
    if (!(err instanceof ServerGone)) throw err;
  }
}

async function waitForDrain(colony: ColonyProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = (await (await colony.fetch("/readyz")).json()) as { queue_depth: number };
    if (ready.queue_depth === 0) return;
    if (Date.now() > deadline) throw new Error(`queue did not drain in ${timeoutMs} ms: ${ready.queue_depth} left`);
    await Bun.sleep(25);
  }
}

function openReadonly(dataDir: string): Database {
  const db = new Database(join(dataDir, "colony.db"), { readonly: true });
  db.loadExtension(getLoadablePath());
  return db;
}

const count = (db: Database, sql: string): number => (db.query(sql).get() as { n: number }).n;

/** Checks every invariant against a drained, running colony; appends what is wrong. */
async function checkInvariants(
  colony: ColonyProcess,
  dataDir: string,
  ledger: Ledger,
  round: number,
  lost: string[],
  violations: string[],
) {
  const tag = `round ${round}`;
  const db = openReadonly(dataDir);
  try {
    const statusOf = new Map<string, string>();
    for (const row of db.query("SELECT id, status FROM trails").all() as { id: string; status: string }[]) statusOf.set(row.id, row.status);
    for (const id of ledger.published) {
      const s = statusOf.get(id);
      if (s === undefined) lost.push(`${tag}: acknowledged trail ${id} is missing`);
      else if (!FINAL.has(s)) violations.push(`${tag}: trail ${id} is still ${s} after the queue drained`);
      if (s === "indexed") ledger.markIndexed(id);
    }
    const queued = count(db, "SELECT count(*) AS n FROM trails WHERE status = 'queued'");
    const jobs = count(db, "SELECT count(*) AS n FROM jobs");
    if (queued !== 0 || jobs !== 0) violations.push(`${tag}: ${queued} queued trails, ${jobs} jobs after drain`);
    const maxStored = ledger.sent.publishes + ledger.sent.draftPublishes;
    if (statusOf.size > maxStored) violations.push(`${tag}: ${statusOf.size} trails stored but only ${maxStored} publishes sent`);

    // Outcomes: every acknowledged counted report has its row, and the uncounted ones up to the
    // address's daily bound (a report may land without its 202 reaching us, so rows may be more).
    const rows = db
      .query("SELECT t.id AS id, count(*) AS n FROM outcomes o JOIN trails t ON t.seq = o.trail_seq WHERE o.counted = 1 GROUP BY t.id")
      .all() as { id: string; n: number }[];
    const rowsByTrail = new Map(rows.map((r) => [r.id, r.n]));
    for (const [id, acked] of ledger.countedByTrail) {
      const have = rowsByTrail.get(id) ?? 0;
      if (have < acked) lost.push(`${tag}: trail ${id} has ${have} counted outcome rows, ${acked} acknowledged`);
    }
    const uncountedRows = count(db, "SELECT count(*) AS n FROM outcomes WHERE counted = 0");
    const uncountedKept = [...ledger.uncountedByDay.values()].reduce(
      (n, acked) => n + Math.min(acked, UNCOUNTED_KEPT_PER_CLIENT_PER_DAY),
      0,
    );
    if (uncountedRows < uncountedKept)
      lost.push(`${tag}: ${uncountedRows} uncounted outcome rows, ${uncountedKept} acknowledged within the daily bound`);
    const outcomeRows = count(db, "SELECT count(*) AS n FROM outcomes");
    if (outcomeRows > ledger.sent.outcomes) violations.push(`${tag}: ${outcomeRows} outcome rows but ${ledger.sent.outcomes} sent`);
    // Counts on each trail agree with its counted outcome rows (worked also earns merge credits).
    const drift = db
      .query(
        `SELECT t.id AS id FROM trails t WHERE t.status = 'indexed' AND (
           t.failed != (SELECT count(*) FROM outcomes o WHERE o.trail_seq = t.seq AND o.counted = 1 AND o.outcome = 'failed') OR
           t.partially_worked != (SELECT count(*) FROM outcomes o WHERE o.trail_seq = t.seq AND o.counted = 1 AND o.outcome = 'partially_worked') OR
           t.worked != (SELECT count(*) FROM outcomes o WHERE o.trail_seq = t.seq AND o.counted = 1 AND o.outcome = 'worked')
                       + (SELECT count(*) FROM merge_credits m WHERE m.trail_seq = t.seq))`,
      )
      .all() as { id: string }[];
    for (const d of drift.slice(0, 5)) violations.push(`${tag}: trail ${d.id} outcome counts disagree with its outcome rows`);

    // Derived data: one vector, one lexical entry and one laid event per indexed trail.
    const indexed = count(db, "SELECT count(*) AS n FROM trails WHERE status = 'indexed'");
    const vectors = count(db, "SELECT count(*) AS n FROM vec_float");
    const lexical = count(db, "SELECT count(*) AS n FROM lexical_docsize");
    const laid = count(db, "SELECT count(*) AS n FROM events WHERE kind = 'laid'");
    const counter = count(db, "SELECT value AS n FROM counters WHERE name = 'trails_indexed'");
    const figures: Record<string, number> = { indexed, vectors, lexical, laid, counter };
    // Schema 4 keeps a running count of lexical documents beside the index.
    const lexicalDocs = db.query("SELECT value AS n FROM counters WHERE name = 'lexical_docs'").get() as { n: number } | null;
    if (lexicalDocs) figures.lexical_docs_counter = lexicalDocs.n;
    if (new Set(Object.values(figures)).size !== 1) violations.push(`${tag}: derived counts disagree ${JSON.stringify(figures)}`);
    const stats = (await (await colony.fetch("/v1/stats")).json()) as { trails: number };
    if (stats.trails !== indexed) violations.push(`${tag}: /v1/stats says ${stats.trails} trails, ${indexed} indexed`);

    const integrity = (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check;
    if (integrity !== "ok") violations.push(`${tag}: integrity_check: ${integrity}`);
  } finally {
    db.close();
  }

  // Drafts over HTTP: each answers, in the state its last acknowledged operation left it.
  for (const d of ledger.drafts.values()) {
    const r = await colony.fetch(`/v1/drafts/${d.id}`);
    const body = (await r.json()) as any;
    if (r.status !== 200) {
      lost.push(`${tag}: draft ${d.id.slice(0, 6)}… (acknowledged ${d.acked}) answers ${r.status}`);
      continue;
    }
    if (d.acked !== "pending" && body.state !== d.acked) lost.push(`${tag}: draft acknowledged ${d.acked} is ${body.state}`);
    if (d.acked === "published" && d.trailId && body.trail_id !== d.trailId)
      lost.push(`${tag}: draft published as ${d.trailId} names ${body.trail_id}`);
    if (body.state === "published" && body.trail_id) ledger.published.add(body.trail_id); // an unacknowledged approval that landed
    if (body.state !== "pending" && d.acked === "pending") d.acked = body.state;
  }
  // A sample over HTTP agrees with the store.
  for (const id of [...ledger.published].slice(-25)) {
    const r = await colony.fetch(`/v1/trails/${id}`);
    const body = (await r.json()) as any;
    if (r.status !== 200 || !FINAL.has(body.status)) violations.push(`${tag}: GET /v1/trails/${id} answered ${r.status} ${body.status}`);
  }
}

function uncountedTotal(ledger: Ledger): number {
  return [...ledger.uncountedByDay.values()].reduce((a, b) => a + b, 0);
}

export async function runCrashHarness(opts: CrashHarnessOptions): Promise<CrashReport> {
  const seed = opts.seed ?? 1;
  const rng = new Prng(seed);
  const clients = opts.clients ?? 6;
  const minRun = opts.minRunMs ?? 300;
  const maxRun = opts.maxRunMs ?? 1500;
  const log = opts.log ?? (() => {});
  const dataDir = tempDir("colony-crash-rounds-");
  const cacheDir = tempDir("colony-crash-cache-");
  const colony = await ColonyProcess.create({ dataDir, cacheDir, mode: opts.mode, env: { ...UNLIMITED_ENV } });
  const ledger = new Ledger();
  const lost: string[] = [];
  const violations: string[] = [];
  let final = { trails: 0, indexed: 0, outcomes: 0, drafts: 0 };
  try {
    await colony.start();
    for (let round = 1; round <= opts.rounds; round++) {
      const stop = { now: false };
      const workers = Array.from({ length: clients }, (_, i) => client(colony, ledger, rng.fork(), i, round, violations, stop));
      const runMs = rng.int(minRun, maxRun);
      await Bun.sleep(runMs);
      if (round === opts.rounds && opts.killAfterUncountedOver !== undefined) {
        const enoughBy = performance.now() + 40_000;
        while (uncountedTotal(ledger) <= opts.killAfterUncountedOver && performance.now() < enoughBy) await Bun.sleep(20);
      }
      const before = ledger.sentTotal;
      await colony.stop("SIGKILL");
      stop.now = true;
      await Promise.all(workers);
      await colony.start();
      await waitForDrain(colony);
      await checkInvariants(colony, dataDir, ledger, round, lost, violations);
      log(
        `round ${round}: killed after ${runMs} ms (${before} requests so far); acknowledged ${JSON.stringify(ledger.ack)}; ` +
          `lost ${lost.length}, violations ${violations.length}`,
      );
    }
    const db = openReadonly(dataDir);
    final = {
      trails: count(db, "SELECT count(*) AS n FROM trails"),
      indexed: count(db, "SELECT count(*) AS n FROM trails WHERE status = 'indexed'"),
      outcomes: count(db, "SELECT count(*) AS n FROM outcomes"),
      drafts: count(db, "SELECT count(*) AS n FROM drafts"),
    };
    db.close();
    const { exitCode } = await colony.stop("SIGTERM");
    if (exitCode !== 0) violations.push(`final SIGTERM exit code ${exitCode}`);
    const internal = colony.stderr.split("\n").filter((l) => /"level":"error"/.test(l));
    for (const l of internal.slice(0, 5)) violations.push(`error logged: ${l.slice(0, 300)}`);
  } finally {
    if (colony.alive) await colony.stop("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  }
  const uncountedOutcomes = uncountedTotal(ledger);
  return { rounds: opts.rounds, seed, acknowledged: { ...ledger.ack }, uncountedOutcomes, sent: ledger.sentTotal, lost, violations, final };
}

export interface SigtermReport {
  /** Requests whose fetch started before the signal. */
  startedBefore: number;
  /** …of which got a complete HTTP response. */
  answeredBefore: number;
  /** …of which failed at the connection (reset, refused) instead. */
  failedBefore: number;
  /** What each of those failures was, and how long before the signal its request started. */
  failures: string[];
  /** Requests started after the signal (refused connections are expected there). */
  startedAfter: number;
  answeredAfter: number;
  /** Responses that were not a proper answer (unexpected status or unparseable body). */
  improper: string[];
  exitCode: number | null;
  /** Publishes acknowledged in the burst, and how many reached a final state after restart. */
  acknowledged: number;
  finalAfterRestart: number;
  shutdownMs: number;
}

/**
 * Starts a colony, runs a burst of publishes and searches from many clients, sends SIGTERM in the
 * middle of it, and records what every request got; then restarts and lets the queue drain.
 */
export async function sigtermBurst(
  opts: { clients?: number; seed?: number; burstMs?: number; minStarted?: number; mode?: "binary" | "source" } = {},
): Promise<SigtermReport> {
  const rng = new Prng(opts.seed ?? 7);
  const dataDir = tempDir("colony-sigterm-");
  const cacheDir = tempDir("colony-sigterm-cache-");
  const colony = await ColonyProcess.create({ dataDir, cacheDir, mode: opts.mode, env: { ...UNLIMITED_ENV } });
  const report: SigtermReport = {
    startedBefore: 0,
    answeredBefore: 0,
    failedBefore: 0,
    failures: [],
    startedAfter: 0,
    answeredAfter: 0,
    improper: [],
    exitCode: null,
    acknowledged: 0,
    finalAfterRestart: 0,
    shutdownMs: 0,
  };
  const acked: string[] = [];
  try {
    await colony.start();
    let signalled = false;
    let signalAt = Infinity;
    let stopClients = false;
    const one = async (c: Prng, i: number) => {
      for (let n = 0; !stopClients; n++) {
        const before = !signalled;
        const startedAt = performance.now();
        if (before) report.startedBefore++;
        else report.startedAfter++;
        const publish = c.chance(0.6);
        try {
          const res = publish
            ? await fetch(colony.base + "/v1/trails", post(workloadTrail(c, `term-c${i}n${n}`), `term-client-${i}`))
            : await fetch(colony.base + "/v1/search", post({ query: "socket timeout failure", limit: 5 }, `term-client-${i}`));
          const text = await res.text();
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            report.improper.push(`${res.status} unparseable: ${text.slice(0, 100)}`);
            continue;
          }
          if (before) report.answeredBefore++;
          else report.answeredAfter++;
          const ok = publish ? res.status === 202 : res.status === 200;
          if (ok && publish) acked.push(body.trail_id);
          // While draining, 503 unavailable is an honest answer too; nothing else is.
          if (!ok && !(res.status === 503 && ["unavailable", "busy"].includes(body?.error?.code))) {
            report.improper.push(`${res.status} ${text.slice(0, 200)}`);
          }
        } catch (err) {
          if (before) {
            report.failedBefore++;
            const code = (err as { code?: string }).code ?? errorMessage(err);
            report.failures.push(`${code}, sent ${Math.round(signalAt - startedAt)} ms before the signal`);
          }
          if (!before) return; // refused after the signal: this client is done
        }
      }
    };
    const clients = Array.from({ length: opts.clients ?? 16 }, (_, i) => one(rng.fork(), i));
    await Bun.sleep(opts.burstMs ?? 800);
    // On a loaded machine the burst may start fewer requests in its time: the signal then waits
    // (20 s at most) until enough are under way, so the test still stops a busy colony.
    const enoughBy = performance.now() + 20_000;
    while (report.startedBefore < (opts.minStarted ?? 0) && performance.now() < enoughBy) await Bun.sleep(10);
    const t0 = performance.now();
    signalled = true;
    signalAt = performance.now();
    colony.signal("SIGTERM");
    const exitCode = await colony.exited;
    report.shutdownMs = Math.round(performance.now() - t0);
    report.exitCode = exitCode;
    stopClients = true;
    await Promise.all(clients);
    await colony.stop();
    report.acknowledged = acked.length;
    await colony.start();
    await waitForDrain(colony);
    for (const id of acked) {
      const r = await colony.fetch(`/v1/trails/${id}`);
      const body = (await r.json()) as any;
      if (r.status === 200 && FINAL.has(body.status)) report.finalAfterRestart++;
    }
    await colony.stop("SIGTERM");
  } finally {
    if (colony.alive) await colony.stop("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  }
  return report;
}

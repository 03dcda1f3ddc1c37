// Colonies for benchmarks: in-process (to seed data fast through the service) and as a separate
// `bun src/main.ts serve` process (so the load generator never shares its event loop).
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { GLOSSARY_EXPANSION_OPTIONS, setGlossaryExpansion } from "../../src/core/error-glossary";
import { setLexicalStems } from "../../src/core/lexical";
import type { Trail } from "../../src/core/trail";
import type { LexicalIndex } from "../../src/store/ports";
import { startColony, type RunningColony } from "../../src/serve";
import type { Caller } from "../../src/service/errors";
import { ExpansionLexical, type ExpansionSetting, loadNeighbourTable, parseSetting } from "./neighbour-expansion";
import { BUN, REPO_DIR, rssOf } from "./report";

/** Quotas out of the way: benchmarks measure the work, not the limiter. */
export const UNLIMITED = {
  COLONY_RATE_LIMIT: "1000000000",
  COLONY_PUBLISH_LIMIT: "1000000",
  COLONY_DRAFT_LIMIT: "1000000",
  COLONY_MAX_QUEUE: "10000000",
};

// The stemming experiment (bench/RESULTS.md, Session 12): every in-process colony of this run adds
// stem tokens to its lexical documents and queries. Each bench colony starts empty, so nothing was
// indexed the other way. Not for spawned colonies (spawnColony): they tokenize as shipped.
if (process.env.BENCH_LEXICAL_STEMS === "1") setLexicalStems(true);
// The document-expansion experiment (bench/RESULTS.md, Session 14), the same way: each in-process
// colony of this run appends the error glossary's text to the places BENCH_GLOSSARY lists (comma
// separated): its lexical documents (lexical), its embedding inputs (vector), the text a result's
// coverage is counted in (coverage); `skipGeneric` leaves out the identifiers marked generic.
const glossaryOptions = (process.env.BENCH_GLOSSARY ?? "").split(",").filter(Boolean);
if (glossaryOptions.length > 0) {
  const unknown = glossaryOptions.filter((o) => !(GLOSSARY_EXPANSION_OPTIONS as readonly string[]).includes(o));
  if (unknown.length) throw new Error(`BENCH_GLOSSARY lists ${GLOSSARY_EXPANSION_OPTIONS.join(", ")}, not ${unknown.join(", ")}`);
  setGlossaryExpansion(Object.fromEntries(glossaryOptions.map((o) => [o, true])));
}

// The neighbour-expansion experiment (bench/RESULTS.md, Session 19): with
// BENCH_NEIGHBOURS=TABLE.json:minSimilarity,perTerm,weight,filter every in-process colony of this run
// (SQLite only) answers lexical searches from bench/lib/neighbour-expansion.ts's plain-JS copy of its
// index, which adds each rare query word's neighbours in the model's word table (tools/model/neighbour-table.ts).
const neighbours = process.env.BENCH_NEIGHBOURS ? parseNeighbourSwitch(process.env.BENCH_NEIGHBOURS) : null;

function parseNeighbourSwitch(value: string): { table: string; setting: ExpansionSetting } {
  const at = value.lastIndexOf(":");
  if (at < 0) throw new Error(`BENCH_NEIGHBOURS is TABLE.json:minSimilarity,perTerm,weight,filter, not ${value}`);
  return { table: value.slice(0, at), setting: parseSetting(value.slice(at + 1)) };
}

export const benchDir = (prefix = "colony-bench-") => mkdtempSync(join(tmpdir(), prefix));

export async function inProcessColony(dataDir: string, env: Record<string, string> = {}): Promise<RunningColony> {
  const config = loadConfig({
    HOME: process.env.HOME,
    COLONY_PORT: "0",
    COLONY_LOG_LEVEL: "silent",
    ...UNLIMITED,
    // The one setting a bench takes from its own environment: which model to compare.
    ...(process.env.COLONY_MODEL_DIR ? { COLONY_MODEL_DIR: process.env.COLONY_MODEL_DIR } : {}),
    ...env,
    COLONY_DATA_DIR: dataDir,
  });
  const colony = await startColony(config);
  if (neighbours) {
    if (config.databaseUrl) throw new Error("BENCH_NEIGHBOURS runs on SQLite only");
    const expansion = new ExpansionLexical(loadNeighbourTable(neighbours.table));
    expansion.setting = neighbours.setting;
    // A setting that adds nothing (weight 0, query side) leaves the lexical search to the index
    // itself. Otherwise the copy answers: outside a transaction the SQLite store's index is a view
    // whose prototype is the index transactions write to (store/sqlite/store.ts `outside`), and the
    // copy follows that one. (The neighbour coverage ships: every search reads the model's table.)
    const { weight, side } = neighbours.setting;
    if (weight > 0 || side === "document") expansion.install(Object.getPrototypeOf(colony.subsystems.store!.lexical) as LexicalIndex);
  }
  return colony;
}

const seeder = (i: number): Caller => ({
  address: "127.0.0.1",
  client: `anon-bench-${i % 50}`,
  agent: `bench-agent-${i % 50}`,
  agentDeclared: true,
});

/**
 * Publishes trails through the service (validation, redaction, fingerprint, one transaction each)
 * in chunks, draining the enrichment worker after each chunk. Returns the seconds taken and each
 * trail's id, in input order.
 */
export async function seedTrails(
  colony: RunningColony,
  trails: Trail[],
  opts: { chunk?: number; onProgress?: (done: number) => void } = {},
): Promise<{ publishS: number; drainS: number; totalS: number; ids: string[] }> {
  const chunk = opts.chunk ?? 5000;
  const ids: string[] = [];
  let publishMs = 0;
  let drainMs = 0;
  const t0 = performance.now();
  for (let i = 0; i < trails.length; i += chunk) {
    const p0 = performance.now();
    for (let j = i; j < Math.min(trails.length, i + chunk); j++) {
      ids.push((await colony.service.trails.publish(trails[j], seeder(j))).body.trail_id);
    }
    const p1 = performance.now();
    await colony.service.worker!.drain(3600_000);
    drainMs += performance.now() - p1;
    publishMs += p1 - p0;
    opts.onProgress?.(Math.min(trails.length, i + chunk));
  }
  return { publishS: publishMs / 1000, drainS: drainMs / 1000, totalS: (performance.now() - t0) / 1000, ids };
}

export interface ColonyProcess {
  url: string;
  port: number;
  pid: number;
  rss(): Promise<number>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  await s.stop(true);
  return port;
}

async function waitReady(url: string, proc: { exitCode: number | null }, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`process exited with ${proc.exitCode} before ${url} answered`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {}
    await Bun.sleep(50);
  }
  throw new Error(`${url} not ready in ${timeoutMs} ms`);
}

/** `bun src/main.ts serve` on a data dir, quotas lifted; resolves once /readyz is 200. */
export async function spawnColony(dataDir: string, env: Record<string, string> = {}): Promise<ColonyProcess> {
  const port = await freePort();
  const proc = Bun.spawn([BUN, join(REPO_DIR, "src/main.ts"), "serve"], {
    cwd: REPO_DIR,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      COLONY_LOG_LEVEL: "error",
      COLONY_HOST: "127.0.0.1",
      COLONY_PORT: String(port),
      COLONY_DATA_DIR: dataDir,
      ...UNLIMITED,
      ...env,
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${url}/readyz`, proc, 120_000);
  } catch (err) {
    proc.kill("SIGKILL");
    throw err;
  }
  return processHandle(proc, url, port);
}

/** A plain Elysia JSON route in its own bun process: the ceiling of the HTTP stack here. */
export async function spawnPlainElysia(): Promise<ColonyProcess> {
  const port = await freePort();
  const script = `import { Elysia } from "elysia"; new Elysia().get("/x", () => ({ ok: true })).listen({ hostname: "127.0.0.1", port: ${port} });`;
  const proc = Bun.spawn([BUN, "-e", script], { cwd: REPO_DIR, stdout: "ignore", stderr: "inherit" });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/x`, proc, 30_000);
  return processHandle(proc, url, port);
}

/** A served process: SIGTERM to stop, SIGKILL if it has not exited 20 s later. */
function processHandle(proc: Subprocess, url: string, port: number): ColonyProcess {
  return {
    url,
    port,
    pid: proc.pid,
    rss: () => rssOf(proc.pid),
    async stop() {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
      await proc.exited;
      clearTimeout(timer);
    },
  };
}

export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });

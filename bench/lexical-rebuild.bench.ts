// Rebuilding the lexical index after a tokenizer change (service/lexical-rebuild.ts): how long a
// colony of N indexed trails is unready at start. N real-error distractor trails are stored indexed
// (rows and lexical documents, no vectors: the rebuild reads neither), the recorded version is set to
// another one, and the rebuild is timed: emptying the index, reading the trails, tokenizing them and
// indexing them again in batches of 500, on a SQLite file and on PostgreSQL (a local server, started
// by test/support/postgres.ts). Also times the check a start makes when the index is current.
// Run: node_modules/.bin/bun bench/lexical-rebuild.bench.ts [--quick]
import { onBothStores } from "./lib/backend";
import { indexStored } from "../test/support/trail-rows";
import { cpus, loadavg } from "node:os";
import type { Trail } from "../src/core/trail";
import { LEXICAL_VERSION_KEY, lexicalIndexOutdated, rebuildLexicalIndex } from "../src/service/lexical-rebuild";
import type { Store } from "../src/store/ports";
import { distractorTrails } from "./lib/corpus";
import { f1, Figures, log, QUICK, REPO_DIR } from "./lib/report";

const N = QUICK ? 1000 : 5000;
const figures = new Figures("lexical-rebuild");
const pool = distractorTrails(REPO_DIR, N, 23);
log(`${pool.length} trails; ${cpus().length} cores (${cpus()[0]?.model}), load ${loadavg()[0]!.toFixed(2)}`);

async function seed(store: Store, trails: Trail[]): Promise<void> {
  const as = { author: "bench-agent", createdAt: Date.now(), risk: { level: "low" as const, flags: [] }, contentRulesVersion: 1 };
  for (let i = 0; i < trails.length; i += 250) {
    await store.transaction(async (tx) => {
      for (const trail of trails.slice(i, i + 250)) await indexStored(tx, trail, as);
    });
  }
}

async function measure(name: string, store: Store) {
  const s0 = performance.now();
  await seed(store, pool);
  log(`${name}: seeded ${pool.length} indexed trails in ${f1((performance.now() - s0) / 1000)} s`);
  await store.kv.set(LEXICAL_VERSION_KEY, "0");
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await rebuildLexicalIndex({ store });
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const c0 = performance.now();
  const outdated = await lexicalIndexOutdated(store);
  const checkMs = performance.now() - c0;
  log(
    `${name}: rebuilt ${result.trails} trails in ${f1(wallS)} s wall (${Math.round(result.trails / wallS)} trails/s), ${f1(cpuS)} s CPU of this process; the start check after: ${checkMs.toFixed(2)} ms (outdated: ${outdated})`,
  );
  figures.set(name, { trails: result.trails, wall_s: wallS, cpu_s: cpuS, trails_per_s: result.trails / wallS, check_ms: checkMs });
}

await onBothStores("colony-bench-lexical-rebuild-", measure);
figures.set("load_1m", loadavg()[0]);
figures.write();

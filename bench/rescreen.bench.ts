// Re-screening stored trails after a content rules change (docs/content-safety.md §7): how long the
// background pass at start takes. Seeds N distractor trails through the service (publish and real
// enrichment), plus SECRETS trails stored as an older release left them (indexed with a GitHub token
// in a command and the description, their vector and lexical document built from that content),
// sets every trail back to content rules version 0, restarts the colony on the same data directory
// and times the start-time re-screening: clean trails only get the version, the others are
// re-redacted, re-fingerprinted and re-embedded. SQLite, in-process.
// Run: node_modules/.bin/bun bench/rescreen.bench.ts [--quick]
import { storeAsOlderRelease } from "../test/support/trail-rows";
import { benchDir, inProcessColony, removeDir, seedTrails } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { f1, Figures, log, QUICK, REPO_DIR } from "./lib/report";

const N = QUICK ? 1000 : 5000;
const SECRETS = QUICK ? 50 : 250;
const TOKEN = `ghp_${"R8xk2Lq9ZpW4vN7mT3bY6cJ1hF5dS0aGeU2i"}`;

const figures = new Figures("rescreen");
const pool = distractorTrails(REPO_DIR, N + SECRETS, 17);

const dir = benchDir("colony-bench-rescreen-");
try {
  const seeding = await inProcessColony(dir);
  const seeded = await seedTrails(seeding, pool.slice(0, N));
  for (const [i, t] of pool.slice(N).entries()) {
    const withSecret = structuredClone(t);
    withSecret.problem.description = `${withSecret.problem.description ?? ""} The CI token ${TOKEN} was in the remote URL.`;
    withSecret.solution.commands = [`git remote set-url origin https://x-access-token:${TOKEN}@github.com/acme/repo-${i}.git`];
    await storeAsOlderRelease(seeding.subsystems, withSecret);
  }
  seeding.subsystems.db!.exec("UPDATE trails SET content_rules_version = 0");
  const counts = await seeding.subsystems.store!.trails.countByStatus();
  await seeding.stop();
  log(`seeded ${N} trails (${f1(seeded.totalS)} s) and ${SECRETS} holding a secret; statuses ${JSON.stringify(counts)}`);

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const upgraded = await inProcessColony(dir);
  const started = performance.now();
  const result = await upgraded.service.rescreening;
  const wallS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const total = N + SECRETS;
  log(`start to listening: ${f1(started - t0)} ms`);
  log(
    `re-screening ${total} trails: ${f1(wallS)} s wall (${f1(total / wallS)} trails/s), ${f1(cpuS)} s CPU including the start; ${JSON.stringify(result)}`,
  );
  const leftover = upgraded.subsystems.db!.query("SELECT count(*) AS n FROM trails WHERE content LIKE ?").get(`%${TOKEN}%`) as {
    n: number;
  };
  log(`trails still holding the token: ${leftover.n}`);
  await upgraded.stop();

  const again = await inProcessColony(dir);
  const a0 = performance.now();
  await again.service.rescreening;
  log(`a start with nothing to re-screen: ${f1(performance.now() - a0)} ms for the check`);
  await again.stop();
  figures.set("trails", total);
  figures.set("secrets", SECRETS);
  figures.set("wall_s", wallS);
  figures.set("cpu_s", cpuS);
  figures.set("trails_per_s", total / wallS);
  figures.set("result", result);
  figures.set("token_left", leftover.n);
  figures.write();
} finally {
  removeDir(dir);
}

// Memory under many distinct clients (issue 15 item 14): the built binary behind a trusted proxy
// (COLONY_TRUST_PROXY=1), so every request can come from a new client address. A bounded load of
// fingerprint lookups that miss (each a new fingerprint), health checks without an agent id (each
// a new address pseudonym) and searches from new agents, then an idle pause. The colony's RSS
// (VmRSS) before, right after and after the pause; each in-memory structure that grows with
// distinct clients must be bounded, so the idle RSS returns near its start.
//
//   bun bench/memory.bench.ts [--requests 300000] [--connections 64] [--idle-s 130] [--source]
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rssBytes } from "../test/support/binary";
import { tempDir } from "../test/support/colony";
import { ColonyProcess, UNLIMITED_ENV } from "../test/support/colony-process";
import { REPO_DIR } from "./lib/report";

const args = process.argv.slice(2);
const num = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const QUICK = args.includes("--quick") || process.env.BENCH_QUICK === "1";
const REQUESTS = num("requests", QUICK ? 30_000 : 300_000);
const CONNECTIONS = num("connections", 64);
// Two lengths of the general quota's one-minute window: by then its windows are dropped.
const IDLE_S = num("idle-s", QUICK ? 5 : 130);

const dataDir = tempDir("colony-memory-");
const colony = await ColonyProcess.create({
  dataDir,
  mode: args.includes("--source") ? "source" : "binary",
  env: { ...UNLIMITED_ENV, COLONY_TRUST_PROXY: "1", COLONY_LOG_LEVEL: "warn" },
});
await colony.start();
const pid = colony.pid!;
const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** The i-th distinct client address: 10.a.b.c, then IPv6 beyond 16 million. */
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const hex = (i: number) => (i * 2654435761 + 0x9e3779b9).toString(16).padStart(8, "0").slice(-8);

function request(i: number): [string, RequestInit] {
  const headers: Record<string, string> = { "X-Forwarded-For": address(i) };
  const kind = i % 10;
  if (kind < 7) return [`/v1/trails/by-fingerprint/fp1_${hex(i)}${hex(i + 1)}${hex(i + 2)}${hex(i + 3)}`, { headers }];
  if (kind < 9) return ["/healthz", { headers }];
  return [
    "/v1/search",
    {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "X-Colony-Agent": `memory-agent-${i}` },
      body: JSON.stringify({ query: `ModuleNotFoundError: No module named 'pkg${i % 5000}'`, limit: 3 }),
    },
  ];
}

await Bun.sleep(2000);
const start = await rssBytes(pid);
console.log(`start: RSS ${mb(start)} MB`);

let next = 0;
let errors = 0;
const statuses = new Map<number, number>();
const began = performance.now();
let peak = start;
const sampler = setInterval(async () => (peak = Math.max(peak, await rssBytes(pid))), 500);
await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (next < REQUESTS) {
      const [path, init] = request(next++);
      try {
        const res = await colony.fetch(path, init);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      } catch {
        errors++;
      }
    }
  }),
);
clearInterval(sampler);
const seconds = (performance.now() - began) / 1000;
const loaded = await rssBytes(pid);
peak = Math.max(peak, loaded);
console.log(
  `load: ${REQUESTS} requests from ${REQUESTS} addresses in ${seconds.toFixed(1)} s (${Math.round(REQUESTS / seconds)}/s), ` +
    `statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${errors} errors`,
);
console.log(`after load: RSS ${mb(loaded)} MB (peak ${mb(peak)} MB)`);
const EARLY_IDLE_S = Math.min(30, IDLE_S);
await Bun.sleep(EARLY_IDLE_S * 1000);
const earlyIdle = await rssBytes(pid);
console.log(`after ${EARLY_IDLE_S} s idle: RSS ${mb(earlyIdle)} MB`);
await Bun.sleep((IDLE_S - EARLY_IDLE_S) * 1000);
const idle = await rssBytes(pid);
console.log(`after ${IDLE_S} s idle: RSS ${mb(idle)} MB (${idle >= start ? "+" : ""}${mb(idle - start)} MB over start)`);

await colony.stop();
rmSync(dataDir, { recursive: true, force: true });
const figures = {
  requests: REQUESTS,
  start_mb: mb(start),
  loaded_mb: mb(loaded),
  peak_mb: mb(peak),
  idle_30s_mb: mb(earlyIdle),
  idle_mb: mb(idle),
  idle_s: IDLE_S,
};
console.log(JSON.stringify(figures));
if (!QUICK) {
  mkdirSync(join(REPO_DIR, "bench/out"), { recursive: true });
  writeFileSync(join(REPO_DIR, "bench/out/memory.json"), JSON.stringify(figures, null, 2));
}

// Startup of the single binary: time from exec to /readyz 200 with a cold and a warm native
// cache, idle RSS after start, and the binary's size. Builds dist/colony first when it is stale.
//   node_modules/.bin/bun bench/startup.bench.ts [--runs N] [--binary PATH]
// Targets: warm start < 1 s, idle RSS < 150 MB.
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, freePort, isolatedCopy, pollUntilOk, rssBytes, sandboxEnv } from "../test/support/binary";

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf("--runs") + 1] ?? 0) || 5;
const binaryArg = args.includes("--binary") ? args[args.indexOf("--binary") + 1] : undefined;

const source = binaryArg ?? ensureBinary();
const { dir, exe } = isolatedCopy(source);
const cache = join(dir, "cache");

interface Run {
  readyMs: number;
  rssMb: number;
}

async function startOnce(opts: { coldCache: boolean; measureRss: boolean }): Promise<Run> {
  if (opts.coldCache) rmSync(cache, { recursive: true, force: true });
  const data = join(dir, `data-${crypto.randomUUID()}`);
  mkdirSync(data);
  const port = await freePort();
  const t0 = performance.now();
  const proc = Bun.spawn([exe], {
    cwd: dir,
    env: sandboxEnv(dir, {
      COLONY_DATA_DIR: data,
      COLONY_PORT: String(port),
      COLONY_CACHE_DIR: cache,
      COLONY_LOG_LEVEL: "error",
    }),
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    await pollUntilOk(`http://127.0.0.1:${port}/readyz`, 30_000, 2).catch(async (err) => {
      proc.kill("SIGKILL");
      throw new Error(`${err.message}\n${await new Response(proc.stderr).text()}`);
    });
    const readyMs = performance.now() - t0;
    let rssMb = 0;
    if (opts.measureRss) {
      await Bun.sleep(2000); // idle: startup garbage has had a chance to go
      rssMb = (await rssBytes(proc.pid)) / 1e6;
    }
    return { readyMs, rssMb };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(data, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;

try {
  const versionTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = Bun.spawnSync([exe, "version"], { cwd: dir, env: sandboxEnv(dir) });
    if (r.exitCode !== 0) throw new Error(`colony version exited ${r.exitCode}`);
    versionTimes.push(performance.now() - t0);
  }
  const cold: number[] = [];
  for (let i = 0; i < Math.min(runs, 3); i++) cold.push((await startOnce({ coldCache: true, measureRss: false })).readyMs);
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) warm.push((await startOnce({ coldCache: false, measureRss: false })).readyMs);
  const idle = await startOnce({ coldCache: false, measureRss: true });

  const size = statSync(exe).size;
  console.log(`binary            ${source}`);
  console.log(`binary size       ${(size / 1e6).toFixed(1)} MB`);
  console.log(`colony version    ${fmt(versionTimes)}`);
  console.log(`ready, cold cache ${fmt(cold)}`);
  console.log(`ready, warm cache ${fmt(warm)}   target < 1000 ms: ${median(warm) < 1000 ? "met" : "MISSED"}`);
  console.log(`idle RSS          ${idle.rssMb.toFixed(1)} MB   target < 150 MB: ${idle.rssMb < 150 ? "met" : "MISSED"}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

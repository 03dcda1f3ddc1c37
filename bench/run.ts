// `make bench`: runs every bench/*.bench.ts as its own process, one after the other (they measure
// the machine; running them side by side would spoil each other's figures), prints their output,
// and keeps a log of each plus a summary in bench/out/ (gitignored). Each script also runs alone:
//   node_modules/.bin/bun bench/<name>.bench.ts [--quick]
// Usage: bun bench/run.ts [--quick] [--only NAME[,NAME…]] [--skip NAME[,NAME…]] [--all]
//   --quick  small sizes, a smoke run (passed to the scripts as BENCH_QUICK=1)
//   --only   run only these (file names without .bench.ts)
//   --all    also the long soak (bench/soak.bench.ts, normally `make soak`)
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { BUN, OUT_DIR, REPO_DIR } from "./lib/report";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const listArg = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? (argv[i + 1] ?? "").split(",").filter(Boolean) : null;
};
const only = listArg("--only");
// The soak has its own target (`make soak`) and runs for 10 minutes and more: only on request.
const ON_REQUEST = ["soak"];
const skip = [...(listArg("--skip") ?? []), ...(argv.includes("--all") ? [] : ON_REQUEST.filter((n) => !only?.includes(n)))];

// The order of bench/RESULTS.md; scripts not listed here run afterwards, alphabetically.
const ORDER = [
  "startup",
  "transformer-path",
  "embedding",
  "crash",
  "lifecycle",
  "analysis",
  "search-quality",
  "devset",
  "search-speed",
  "feed-stats",
  "mcp",
  "postgres",
  "pg-client",
];
const found = readdirSync(join(REPO_DIR, "bench"))
  .filter((f) => f.endsWith(".bench.ts"))
  .map((f) => f.slice(0, -".bench.ts".length));
const rank = (n: string) => (ORDER.includes(n) ? ORDER.indexOf(n) : ORDER.length);
const names = found.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).filter((n) => (!only || only.includes(n)) && !skip.includes(n));
if (only) for (const n of only) if (!found.includes(n)) console.error(`bench: no bench/${n}.bench.ts (have: ${found.join(", ")})`);
if (names.length === 0) {
  console.error("bench: nothing to run");
  process.exit(2);
}

/** Extra arguments for scripts that take their own size flags. */
const quickArgs: Record<string, string[]> = {
  startup: ["--runs", "2"],
  mcp: ["--trails", "1000", "--rounds", "100"],
  crash: ["--rounds", "3"],
  fuzz: ["--quick"],
  soak: ["--quick"],
};

mkdirSync(OUT_DIR, { recursive: true });
const started = new Date();
console.log(`bench: ${names.join(", ")}${quick ? " (quick)" : ""} on ${started.toISOString()}`);
// Other work on the machine skews every figure: say how busy it was.
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
console.log(`load average at start: ${load()}`);
const git = (...a: string[]) =>
  Bun.spawnSync(["git", ...a], { cwd: REPO_DIR })
    .stdout.toString()
    .trimEnd();
console.log(
  `commit ${git("rev-parse", "--short", "HEAD")}; uncommitted changes in: ${
    git("status", "--porcelain", "--untracked-files=no")
      .split("\n")
      .filter(Boolean)
      .map((l) => l.slice(3))
      .join(", ") || "none"
  }`,
);
const summary: { name: string; exitCode: number; seconds: number; log: string }[] = [];
for (const name of names) {
  const logFile = join(OUT_DIR, `${name}${quick ? ".quick" : ""}.log`);
  console.log(`\n=== ${name} ${"=".repeat(Math.max(0, 70 - name.length))}`);
  const t0 = performance.now();
  const proc = Bun.spawn([BUN, join(REPO_DIR, "bench", `${name}.bench.ts`), ...(quick ? (quickArgs[name] ?? []) : [])], {
    cwd: REPO_DIR,
    env: { ...process.env, ...(quick ? { BENCH_QUICK: "1" } : {}) },
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      output += text;
      sink.write(text);
    }
  };
  await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)]);
  const exitCode = await proc.exited;
  const seconds = (performance.now() - t0) / 1000;
  writeFileSync(logFile, output);
  summary.push({ name, exitCode, seconds, log: logFile });
  console.log(`--- ${name}: ${exitCode === 0 ? "ok" : `FAILED (exit ${exitCode})`} in ${seconds.toFixed(1)} s (load average ${load()})`);
}

writeFileSync(
  join(OUT_DIR, `summary${quick ? ".quick" : ""}.json`),
  JSON.stringify({ started: started.toISOString(), finished: new Date().toISOString(), quick, runs: summary }, null, 2) + "\n",
);
console.log("\nbench summary:");
for (const s of summary)
  console.log(`  ${s.name.padEnd(20)} ${s.exitCode === 0 ? "ok    " : "FAILED"} ${s.seconds.toFixed(1).padStart(7)} s`);
const failed = summary.filter((s) => s.exitCode !== 0);
process.exit(failed.length ? 1 : 0);

// Runs wrk (Debian package `wrk`) and parses its report: requests/s, latency percentiles, errors.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";

export interface WrkResult {
  command: string;
  requestsPerSec: number;
  requests: number;
  p50Ms: number;
  p75Ms: number;
  p90Ms: number;
  p99Ms: number;
  non2xx: number;
  socketErrors: string | null;
}

export function hasWrk(): boolean {
  return Bun.spawnSync(["sh", "-c", "command -v wrk"]).exitCode === 0;
}

function toMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v.trim());
  if (!m) return NaN;
  const x = Number(m[1]);
  return m[2] === "us" ? x / 1000 : m[2] === "ms" ? x : m[2] === "s" ? x * 1000 : x * 60_000;
}

/** A Lua script cycling over requests; each wrk thread starts at its own offset. */
export function cyclingScript(requests: { method: "GET" | "POST"; path: string; body?: string }[]): string {
  const file = join(tmpdir(), `wrk-${process.pid}-${Math.random().toString(36).slice(2)}.lua`);
  const dataFile = file.replace(/\.lua$/, ".tsv");
  // One request per line: method TAB path TAB body (bodies are single-line JSON).
  writeFileSync(dataFile, requests.map((r) => `${r.method}\t${r.path}\t${r.body ?? ""}`).join("\n") + "\n");
  writeFileSync(
    file,
    `local reqs = {}
for line in io.lines("${dataFile}") do
  local m, p, b = line:match("^(%u+)\\t([^\\t]*)\\t(.*)$")
  if b == "" then b = nil end
  reqs[#reqs + 1] = { m, p, b }
end
local i = 0
local headers = { ["Content-Type"] = "application/json", ["X-Colony-Agent"] = "bench-load" }
function setup(thread)
  thread:set("offset", math.random(#reqs))
end
function init(args)
  i = tonumber(offset) or 0
end
function request()
  i = i + 1
  if i > #reqs then i = 1 end
  local r = reqs[i]
  return wrk.format(r[1], r[2], headers, r[3])
end
`,
  );
  return file;
}

/** Whether processes can be pinned to cores (util-linux `taskset`) and the machine has two or more. */
export function canPin(): boolean {
  return navigator.hardwareConcurrency >= 2 && Bun.spawnSync(["sh", "-c", "command -v taskset"]).exitCode === 0;
}

/** Pins every thread of a running process to one core. */
export function pinProcess(pid: number, core: number): void {
  const r = Bun.spawnSync(["taskset", "-a", "-p", "-c", String(core), String(pid)]);
  if (r.exitCode !== 0) throw new Error(`taskset failed: ${r.stderr.toString()}`);
}

export async function runWrk(opts: {
  url: string;
  threads: number;
  connections: number;
  seconds: number;
  script?: string;
  /** Run wrk on this core only (the server under test pinned to another). */
  core?: number;
}): Promise<WrkResult> {
  const cmd = [
    ...(opts.core === undefined ? [] : ["taskset", "-c", String(opts.core)]),
    "wrk",
    `-t${opts.threads}`,
    `-c${opts.connections}`,
    `-d${opts.seconds}s`,
    "--latency",
  ];
  if (opts.script) cmd.push("-s", opts.script);
  cmd.push(opts.url);
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  const err = await new Response(proc.stderr).text();
  if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${err || out}`);
  const pct = (p: string) => toMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m").exec(out)?.[1] ?? "");
  return {
    command: cmd.join(" ").replace(/-s \S+/, "-s <cycling script>"),
    requestsPerSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
    p50Ms: pct("50"),
    p75Ms: pct("75"),
    p90Ms: pct("90"),
    p99Ms: pct("99"),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
    socketErrors: /Socket errors:.*$/m.exec(out)?.[0] ?? null,
  };
}

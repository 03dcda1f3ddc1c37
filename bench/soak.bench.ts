// Load and soak (`make soak`): the built binary under a realistic request mix from wrk at a fixed
// rate, minute by minute: error rate, p50/p99, the colony's RSS (VmRSS from /proc) and the
// enrichment queue depth. Then (or with --find-max only) steps the rate up to find the highest
// rate this machine sustains. Writes bench/out/soak.json and a plot, bench/soak.svg → bench/soak.png.
//
//   bun bench/soak.bench.ts [--minutes 10] [--rate 150] [--connections 32] [--find-max] [--no-max] [--quick]
//
// Fixed rate with plain wrk (wrk2 is not in Debian): every connection waits `delay()` ms (uniform in
// [0, 2d], so connections do not move in lock-step) between its requests, so `connections` connections give about connections × 1000 / (delay + latency)
// requests per second. The achieved rate is measured, not assumed; when the colony cannot keep
// up, the achieved rate falls below the target (that is the saturation signal, along with p99 and
// errors). Latency is measured from when wrk sent the request.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ColonyProcess, UNLIMITED_ENV } from "../test/support/colony-process";
import { tempDir } from "../test/support/colony";
import { rssBytes } from "../test/support/binary";
import { synthesizedQueries, synthesizedTrails } from "./lib/corpus";
import { REPO_DIR } from "./lib/report";

const args = process.argv.slice(2);
const num = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
// --quick (or BENCH_QUICK=1, as `make bench --quick` passes): a one-minute smoke run, no rate
// search, written to soak.quick.json; the committed plot is left alone.
const QUICK = args.includes("--quick") || process.env.BENCH_QUICK === "1";
const MINUTES = num("minutes", QUICK ? 1 : 10);
const RATE = num("rate", 150);
const CONNECTIONS = num("connections", 32);
const FIND_MAX_ONLY = args.includes("--find-max");
const SKIP_MAX = args.includes("--no-max") || QUICK;
const SEED_TRAILS = num("seed-trails", 500);
const OUT_DIR = join(REPO_DIR, "bench/out");

if (Bun.spawnSync(["sh", "-c", "command -v wrk"]).exitCode !== 0) {
  console.error("soak needs wrk (Debian package wrk)");
  process.exit(2);
}

// ---------------------------------------------------------------- the colony and its data

const dataDir = tempDir("colony-soak-");
const colony = await ColonyProcess.create({ dataDir, env: { ...UNLIMITED_ENV, COLONY_LOG_LEVEL: "warn" } });
await colony.start();
const pid = colony.pid!;

async function queueDepth(): Promise<number> {
  const r = (await (await colony.fetch("/readyz")).json()) as { queue_depth: number };
  return r.queue_depth;
}

async function drain(timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await queueDepth()) > 0 && Date.now() < deadline) await Bun.sleep(200);
}

console.log(`seeding ${SEED_TRAILS} trails…`);
const seeds = synthesizedTrails(REPO_DIR, SEED_TRAILS, 11);
const ids: string[] = [];
const fps: string[] = [];
for (const t of seeds) {
  const r = await colony.fetch("/v1/trails", {
    method: "POST",
    headers: { "content-type": "application/json", "x-colony-agent": "soak-seeder" },
    body: JSON.stringify(t),
  });
  const b = (await r.json()) as { trail_id: string; fingerprint: string };
  ids.push(b.trail_id);
  fps.push(b.fingerprint);
}
await drain();
const indexedIds: string[] = [];
for (const id of ids) {
  const s = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as { status: string; fingerprint: string };
  if (s.status === "indexed") indexedIds.push(id);
}
const indexedFps = [...new Set(indexedIds.map((id) => fps[ids.indexOf(id)]!))];
console.log(`seeded: ${indexedIds.length} indexed`);

// ---------------------------------------------------------------- the wrk script

const work = join(tmpdir(), `colony-soak-${process.pid}`);
mkdirSync(work, { recursive: true });
const queries = synthesizedQueries(REPO_DIR, 1000, 5).map((q) => JSON.stringify({ query: q, limit: 5 }));
const publishes = synthesizedTrails(REPO_DIR, 30_000, 23, 100_000).map((t) => JSON.stringify(t));
const drafts = synthesizedTrails(REPO_DIR, 2000, 29, 200_000).map((t) => JSON.stringify(t));
const outcomes = ["worked", "failed", "partially_worked", "worked", "worked"].map((o) =>
  JSON.stringify({ protocol_version: "1.0", outcome: o, notes: "soak" }),
);
const lines = (name: string, xs: string[]) => {
  writeFileSync(join(work, name), xs.join("\n") + "\n");
  return join(work, name);
};
const files = {
  queries: lines("queries.txt", queries),
  publishes: lines("publishes.txt", publishes),
  drafts: lines("drafts.txt", drafts),
  outcomes: lines("outcomes.txt", outcomes),
  ids: lines("ids.txt", indexedIds),
  fps: lines("fps.txt", indexedFps),
};

// The mix, per 100 requests: mostly reads (searches and fingerprint lookups), some writes.
const MIX: [string, number][] = [
  ["search", 40],
  ["fingerprint", 25],
  ["status", 6],
  ["publish", 7],
  ["outcome", 7],
  ["feed", 5],
  ["stats", 3],
  ["activity", 2],
  ["draft", 3],
  ["draft_get", 2],
];

function script(delayMs: number): string {
  const file = join(work, `mix-${delayMs}.lua`);
  const load = (name: string, path: string) => `local ${name} = {}\nfor l in io.lines("${path}") do ${name}[#${name} + 1] = l end\n`;
  writeFileSync(
    file,
    `${load("queries", files.queries)}${load("publishes", files.publishes)}${load("drafts", files.drafts)}${load("outcomes", files.outcomes)}${load("ids", files.ids)}${load("fps", files.fps)}
local mix = { ${MIX.map(([k, w]) => `{"${k}", ${w}}`).join(", ")} }
local threads = {}
local json = { ["Content-Type"] = "application/json" }
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  math.randomseed(tid * 7919 + os.time())
  errors = 0
  statuses = {}
  pub = (tid * 7717) % #publishes
  draft_ids = {}
  last = ""
  headers = { ["Content-Type"] = "application/json", ["X-Colony-Agent"] = "soak-agent-" .. tid }
end
local function choose()
  local r = math.random(100)
  for _, m in ipairs(mix) do
    if r <= m[2] then return m[1] end
    r = r - m[2]
  end
  return "search"
end
function request()
  local kind = choose()
  if kind == "draft_get" and #draft_ids == 0 then kind = "draft" end
  last = kind
  if kind == "search" then return wrk.format("POST", "/v1/search", headers, queries[math.random(#queries)]) end
  if kind == "fingerprint" then return wrk.format("GET", "/v1/trails/by-fingerprint/" .. fps[math.random(#fps)], headers) end
  if kind == "status" then return wrk.format("GET", "/v1/trails/" .. ids[math.random(#ids)], headers) end
  if kind == "publish" then
    pub = pub % #publishes + 1
    return wrk.format("POST", "/v1/trails", headers, publishes[pub])
  end
  if kind == "outcome" then return wrk.format("POST", "/v1/trails/" .. ids[math.random(#ids)] .. "/outcomes", headers, outcomes[math.random(#outcomes)]) end
  if kind == "feed" then return wrk.format("GET", "/v1/feed?limit=20", headers) end
  if kind == "stats" then return wrk.format("GET", "/v1/stats", headers) end
  if kind == "activity" then return wrk.format("GET", "/v1/activity", headers) end
  if kind == "draft" then return wrk.format("POST", "/v1/drafts", headers, drafts[math.random(#drafts)]) end
  local id = table.remove(draft_ids, 1)
  return wrk.format("GET", "/v1/drafts/" .. id, headers)
end
function delay()
  -- Uniform around the mean, so that the connections do not move in lock-step bursts.
  return math.random(0, ${2 * delayMs})
end
function response(status, hdrs, body)
  if status >= 400 then
    errors = errors + 1
    statuses[status] = (statuses[status] or 0) + 1
  end
  if last == "draft" and status == 201 then
    local id = body:match('"draft_id":"([%w_-]+)"')
    if id and #draft_ids < 100 then draft_ids[#draft_ids + 1] = id end
  end
end
function done(summary, latency, requests)
  local errs = 0
  local by = {}
  for _, t in ipairs(threads) do
    errs = errs + t:get("errors")
    for k, v in pairs(t:get("statuses")) do by[#by + 1] = '"' .. k .. '":' .. v end
  end
  io.write(string.format('SOAK {"requests":%d,"duration_us":%d,"errors":%d,"statuses":{%s},"socket_errors":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, errs, table.concat(by, ","),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`,
  );
  return file;
}

interface Segment {
  target_rps: number;
  achieved_rps: number;
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  socket_errors: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  rss_mb: number;
  rss_max_mb: number;
  queue_depth: number;
  queue_max: number;
  /** 1-minute load average of the machine at the end (other work on the box shows here). */
  loadavg: number;
}

/** One wrk run at a target rate; samples RSS and queue depth every 5 s meanwhile. */
async function segment(rate: number, seconds: number): Promise<Segment> {
  const threads = 2;
  const delayMs = Math.max(0, Math.round((CONNECTIONS * 1000) / rate));
  const cmd = ["wrk", `-t${threads}`, `-c${CONNECTIONS}`, `-d${seconds}s`, "--timeout", "10s", "-s", script(delayMs), colony.base];
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  let rssMax = 0;
  let queueMax = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      rssMax = Math.max(rssMax, await rssBytes(pid));
      queueMax = Math.max(queueMax, await queueDepth());
      await Bun.sleep(5000);
    }
  })();
  const out = await new Response(proc.stdout).text();
  const err = await new Response(proc.stderr).text();
  await proc.exited;
  sampling = false;
  await sampler;
  const line = /^SOAK (.*)$/m.exec(out);
  if (!line) throw new Error(`wrk gave no summary:\n${out}\n${err}`);
  const s = JSON.parse(line[1]!);
  const rss = await rssBytes(pid);
  const depth = await queueDepth();
  const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
  return {
    target_rps: rate,
    achieved_rps: Math.round((s.requests / (s.duration_us / 1e6)) * 10) / 10,
    requests: s.requests,
    errors: s.errors,
    statuses: s.statuses,
    socket_errors: s.socket_errors,
    p50_ms: s.p50_us / 1000,
    p90_ms: s.p90_us / 1000,
    p99_ms: s.p99_us / 1000,
    max_ms: s.max_us / 1000,
    rss_mb: mb(rss),
    rss_max_mb: mb(Math.max(rss, rssMax)),
    queue_depth: depth,
    queue_max: Math.max(depth, queueMax),
    loadavg: Number((await Bun.file("/proc/loadavg").text()).split(" ")[0]),
  };
}

// ---------------------------------------------------------------- runs

const P99_LIMIT_MS = 100;
const report: Record<string, unknown> = {
  machine: { cpus: navigator.hardwareConcurrency, note: "loopback; wrk and the colony share the machine" },
  method: "wrk (Debian) with a Lua mix; fixed rate by per-connection delay(); per-minute wrk runs",
  mix: Object.fromEntries(MIX),
  connections: CONNECTIONS,
  seed_trails: indexedIds.length,
};
const fmt = (m: Segment) =>
  `${m.achieved_rps}/s of ${m.target_rps}, ${m.errors} errors, ${m.socket_errors} socket errors, p50 ${m.p50_ms.toFixed(1)} ms, p99 ${m.p99_ms.toFixed(1)} ms, ` +
  `max ${m.max_ms.toFixed(0)} ms, RSS ${m.rss_mb} MB (max ${m.rss_max_mb}), queue ${m.queue_depth} (max ${m.queue_max}), load ${m.loadavg}`;

try {
  if (!FIND_MAX_ONLY) {
    console.log(`soak: ${MINUTES} min at ${RATE} req/s, ${CONNECTIONS} connections`);
    const minutes: (Segment & { minute: number })[] = [];
    for (let m = 1; m <= MINUTES; m++) {
      const s = await segment(RATE, 60);
      minutes.push({ minute: m, ...s });
      console.log(`minute ${m}: ${fmt(s)}`);
    }
    const warm = minutes[0]!.rss_mb;
    const last = minutes[minutes.length - 1]!.rss_mb;
    const peak = Math.max(...minutes.slice(1).map((m) => m.rss_max_mb));
    const errors = minutes.reduce((a, m) => a + m.errors + m.socket_errors, 0);
    const requests = minutes.reduce((a, m) => a + m.requests, 0);
    const summary = {
      requests,
      errors,
      error_rate: requests ? errors / requests : 0,
      rate_rps: Math.round((requests / (MINUTES * 60)) * 10) / 10,
      p99_ms_worst_minute: Math.max(...minutes.map((m) => m.p99_ms)),
      rss_after_warmup_mb: warm,
      rss_end_mb: last,
      rss_peak_after_warmup_mb: peak,
      rss_growth_pct: Math.round(((last - warm) / warm) * 1000) / 10,
      rss_flat: last <= warm * 1.1,
      queue_end: minutes[minutes.length - 1]!.queue_depth,
    };
    report.soak = { target_rps: RATE, minutes, summary };
    console.log(`soak summary: ${JSON.stringify(summary)}`);
  }
  if (!SKIP_MAX) {
    // Step the target rate up until errors, p99 over the limit, or the achieved rate falling short.
    const steps: Segment[] = [];
    let best: Segment | null = null;
    for (const rate of [50, 100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1000]) {
      // A step that fails is tried once more: other work on a shared box causes transient spikes.
      let ok = false;
      let s: Segment | null = null;
      for (let attempt = 1; attempt <= 2 && !ok; attempt++) {
        await drain(120_000);
        s = await segment(rate, 20);
        steps.push(s);
        const publishRate = (s.achieved_rps * 7) / 100;
        ok =
          s.errors === 0 &&
          s.socket_errors === 0 &&
          s.achieved_rps >= rate * 0.95 &&
          s.p99_ms <= P99_LIMIT_MS &&
          s.queue_depth <= publishRate * 5;
        console.log(`step ${rate}/s (attempt ${attempt}): ${fmt(s)} → ${ok ? "sustained" : "not sustained"}`);
      }
      if (!ok) break;
      best = s;
    }
    report.max = {
      rule: `errors 0, achieved ≥ 95% of target, p99 ≤ ${P99_LIMIT_MS} ms, enrichment backlog ≤ 5 s of publishes, over 20 s steps (a failed step is tried twice)`,
      steps,
      highest_sustained_rps: best?.target_rps ?? null,
      at_highest: best,
    };
    console.log(`highest sustainable rate: ${best ? `${best.target_rps} req/s (p99 ${best.p99_ms.toFixed(1)} ms)` : "none"}`);
  }
} finally {
  await colony.stop("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}

mkdirSync(OUT_DIR, { recursive: true });
const outName = QUICK ? "soak.quick.json" : FIND_MAX_ONLY ? "soak-max.json" : "soak.json";
writeFileSync(join(OUT_DIR, outName), JSON.stringify(report, null, 2) + "\n");
console.log(`wrote bench/out/${outName}`);

if (report.soak && QUICK) {
  const s = (report.soak as any).summary;
  process.exit(s.errors === 0 ? 0 : 1);
}
if (report.soak) {
  const { renderSoakSvg } = await import("./lib/soak-plot");
  const svg = renderSoakSvg(report.soak as any);
  const svgPath = join(REPO_DIR, "bench/soak.svg");
  writeFileSync(svgPath, svg);
  const png = join(REPO_DIR, "bench/soak.png");
  const r = Bun.spawnSync(["rsvg-convert", "-w", "1200", "-o", png, svgPath], { stderr: "pipe" });
  if (r.exitCode === 0) console.log("wrote bench/soak.png");
  else console.log("rsvg-convert (Debian librsvg2-bin) not available: wrote bench/soak.svg only");
  const s = (report.soak as any).summary;
  process.exit(s.errors === 0 && s.rss_flat ? 0 : 1);
}

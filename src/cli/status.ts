// `colony status [--json]`: liveness, readiness (each check) and the stats of the colony at
// COLONY_URL. Exit 0 when it is ready, 4 when it is unreachable or not ready.
import { EXIT, parseArgs, UsageError } from "./command";
import { printJson, request, withColony } from "./http";
import { fields } from "./table";

/** One readiness check: "ok", or "failing (why)". */
function checkText(check: unknown): string {
  if (typeof check !== "object" || check === null) return String(check);
  const c = check as { ok?: boolean; error?: string };
  return c.ok === true ? "ok" : `failing${c.error ? ` (${c.error})` : ""}`;
}

export async function runStatus(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { json: "boolean" });
  if (positionals.length > 0) throw new UsageError(`status takes no arguments (got ${positionals.join(" ")})`);
  return withColony(async (target) => {
    const [health, ready, stats] = await Promise.all([
      request(target, "GET", "/healthz"),
      request(target, "GET", "/readyz"),
      request(target, "GET", "/v1/stats"),
    ]);
    const isReady = ready.status === 200;
    if (flags.json === true) {
      printJson({ url: target.shown, health: health.body, readiness: ready.body, stats: stats.status === 200 ? stats.body : null });
      return isReady ? EXIT.ok : EXIT.unavailable;
    }
    const h = health.body as { status?: string; version?: string; uptime_s?: number } | null;
    const r = ready.body as {
      status?: string;
      checks?: Record<string, unknown>;
      queue_depth?: number;
      error?: { message?: string };
    } | null;
    const s = stats.body as { trails?: number; outcomes_24h?: number; agents_24h?: number } | null;
    const pairs: [string, string][] = [
      ["colony", target.shown],
      [
        "health",
        `${h?.status ?? `http ${health.status}`}${h?.version ? `, version ${h.version}` : ""}${h?.uptime_s !== undefined ? `, up ${h.uptime_s} s` : ""}`,
      ],
      ["ready", isReady ? "yes" : `no: ${r?.error?.message ?? `http ${ready.status}`}`],
    ];
    if (r?.checks)
      pairs.push([
        "checks",
        Object.entries(r.checks)
          .map(([name, c]) => `${name} ${checkText(c)}`)
          .join(", "),
      ]);
    if (typeof r?.queue_depth === "number") pairs.push(["queue", `${r.queue_depth} waiting for enrichment`]);
    if (stats.status === 200 && typeof s?.trails === "number") pairs.push(["trails", `${s.trails} indexed`]);
    if (stats.status === 200) pairs.push(["last 24 h", `${s?.outcomes_24h ?? 0} outcomes, ${s?.agents_24h ?? 0} agents`]);
    process.stdout.write(fields(pairs));
    return isReady ? EXIT.ok : EXIT.unavailable;
  });
}

// Hosted MCP search cost: colony_search round trips through POST /mcp (SDK Client over
// Streamable HTTP, a fresh McpServer per request) against POST /v1/search, in the same run, on a
// colony holding 10,000 indexed trails. Target: MCP p50 and p99 within 1.3x of the HTTP API.
// Run: node_modules/.bin/bun bench/mcp.bench.ts [--trails N] [--rounds N]
import { callTool, connectHttp } from "../test/support/mcp.ts";
import { startTestColony } from "../test/support/colony.ts";
import { trailFromCase } from "../test/support/eval-trails.ts";
import { loadSharedEval } from "../test/support/paths.ts";
import type { Trail } from "../src/core/trail.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const TRAILS = arg("--trails", 10_000);
const ROUNDS = arg("--rounds", 400);

// Pronounceable made-up words: every synthetic trail gets its own identifiers, hence its own
// fingerprint, so searches go through the semantic path as they would in a large colony.
const SYL = ["ka", "lo", "mi", "ver", "sto", "dra", "pel", "qui", "zen", "tor", "bal", "nix", "ro", "fu", "gle", "sar"];
const word = (n: number) => {
  let s = "";
  do {
    s += SYL[n % SYL.length];
    n = Math.floor(n / SYL.length);
  } while (n > 0);
  return s;
};

function synthetic(base: Trail, i: number): Trail {
  const w = word(i + 17);
  const t = structuredClone(base);
  t.problem.error = `${t.problem.error} [in ${w}_module.${word(i * 7 + 3)}]`.slice(0, 2000);
  t.problem.root_cause = `${t.problem.root_cause ?? ""} Seen in the ${w} service.`;
  t.solution.summary = `${t.solution.summary} (${w})`;
  t.solution.commands = [...(t.solution.commands ?? []), `echo ${w}`];
  t.effort = { tokens_spent: 1000 + (i % 5000), failed_attempts: 3 };
  return t;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const colony = await startTestColony({
  COLONY_PUBLISH_LIMIT: "1000000",
  COLONY_RATE_LIMIT: "1000000",
  COLONY_MAX_QUEUE: "1000000",
});
try {
  const { cases } = loadSharedEval();
  const bases = cases.map(trailFromCase);
  const caller = { address: "10.0.0.1", client: "anon-bench-seeder", agent: "bench-seeder-01", agentDeclared: true };
  let t0 = performance.now();
  for (let i = 0; i < TRAILS; i++) await colony.service.trails.publish(synthetic(bases[i % bases.length]!, i), caller);
  const publishMs = performance.now() - t0;
  t0 = performance.now();
  await colony.service.worker!.drain();
  const drainMs = performance.now() - t0;
  const stats = (await (await colony.fetch("/v1/stats")).json()) as { trails: number };
  console.log(
    `seeded ${TRAILS} trails: publish ${(publishMs / 1000).toFixed(1)} s, enrichment ${(drainMs / 1000).toFixed(1)} s, indexed ${stats.trails}`,
  );

  const probe = await colony.fetch("/mcp", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  if (probe.status === 404) {
    console.error("POST /mcp is not mounted: mount mcpRoutes(service) in src/compose.ts");
    process.exit(1);
  }

  // Queries an agent would send: the eval variants and paraphrases (none equals a stored error line).
  const queries = cases.flatMap((c) => [c.variant, c.paraphrase].filter((q): q is string => !!q));
  const client = await connectHttp(`${colony.url}/mcp`, { "X-Colony-Agent": "bench-agent-0001" });
  const http = async (q: string) => {
    const res = await colony.fetch("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Colony-Agent": "bench-agent-0001" },
      body: JSON.stringify({ query: q }),
    });
    await res.json();
  };
  const mcp = async (q: string) => {
    const r = await callTool(client, "colony_search", { error: q });
    if (r.isError) throw new Error(r.text);
  };
  for (let i = 0; i < 40; i++) {
    await http(queries[i % queries.length]!);
    await mcp(queries[i % queries.length]!);
  }
  const times = { http: [] as number[], mcp: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    const q = queries[i % queries.length]!;
    // Alternate which goes first so drift and caches favour neither.
    const order: ("http" | "mcp")[] = i % 2 === 0 ? ["http", "mcp"] : ["mcp", "http"];
    for (const kind of order) {
      const s = performance.now();
      await (kind === "http" ? http(q) : mcp(q));
      times[kind].push(performance.now() - s);
    }
  }
  await client.close();
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(26)} p50 ${pct(xs, 50).toFixed(2).padStart(7)} ms   p99 ${pct(xs, 99).toFixed(2).padStart(7)} ms`;
  console.log(`${ROUNDS} rounds of ${queries.length} distinct queries, ${stats.trails} indexed trails`);
  console.log(row("POST /v1/search", times.http));
  console.log(row("MCP colony_search (/mcp)", times.mcp));
  const r50 = pct(times.mcp, 50) / pct(times.http, 50);
  const r99 = pct(times.mcp, 99) / pct(times.http, 99);
  console.log(
    `ratio MCP/HTTP: p50 ${r50.toFixed(2)}x, p99 ${r99.toFixed(2)}x (target <= 1.30x): ${r50 <= 1.3 && r99 <= 1.3 ? "met" : "NOT met"}`,
  );
} finally {
  await colony.dispose();
}

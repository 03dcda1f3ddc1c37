// The configuration reference is true: README's two tables of variables (the colony's and the MCP
// server's) name exactly the variables `colony --help` lists (CONFIG_DOC, MCP_CONFIG_DOC) with the
// same numeric defaults, the code reads those defaults, and every COLONY_* variable the sources
// read is in one of the lists or, for a test hook, documented in docs/cli.md. docs/cli.md's
// `colony migrate` lines are the ones this release prints.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_DOC, loadConfig } from "../src/config";
import { loadMcpConfig, MCP_CONFIG_DOC } from "../src/mcp/config";
import { PG_MIGRATIONS } from "../src/store/postgres/migrations";
import { MIGRATIONS } from "../src/store/sqlite/migrations";
import { REPO_DIR } from "./support/paths";

const readme = readFileSync(join(REPO_DIR, "README.md"), "utf8");

/** The rows `| `NAME` | default | meaning |` of the table whose header's first cell is `header`. */
function tableRows(header: string): Map<string, string> {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`| ${header} |`));
  expect(start).toBeGreaterThan(-1);
  const rows = new Map<string, string>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const [, name, def] = line.split("|").map((c) => c.trim());
    rows.set(name!.replace(/`/g, ""), def!.replace(/`/g, ""));
  }
  return rows;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("README's configuration tables", () => {
  for (const [header, doc] of [
    ["Variable", CONFIG_DOC],
    ["Variable (MCP server)", MCP_CONFIG_DOC],
  ] as const) {
    test(`"${header}": the variables of colony --help, with their numeric defaults`, () => {
      const rows = tableRows(header);
      expect([...rows.keys()].sort()).toEqual(doc.map(([name]) => name).sort());
      for (const [name, def] of doc) {
        if (/^\d+$/.test(def)) expect({ name, readme: rows.get(name) }).toEqual({ name, readme: def });
      }
    });
  }

  test("the numeric defaults listed are the ones the code uses", () => {
    const c = loadConfig({ HOME: "/home/u" });
    const m = loadMcpConfig({});
    const used: Record<string, number> = {
      COLONY_PORT: c.port,
      COLONY_RATE_LIMIT: c.rateLimit,
      COLONY_PUBLISH_LIMIT: c.publishLimit,
      COLONY_DRAFT_LIMIT: c.draftLimit,
      COLONY_MAX_QUEUE: c.maxQueue,
      COLONY_DATABASE_POOL: c.databasePool,
      COLONY_DATABASE_TIMEOUT_MS: c.databaseTimeoutMs,
      COLONY_JOB_LEASE_MS: c.jobLeaseMs,
      COLONY_STORED_PASS_RECHECK_MS: c.storedPassRecheckMs,
      COLONY_MCP_MAX_CONCURRENT: c.mcpMaxConcurrent,
      COLONY_MCP_MAX_CONCURRENT_TOTAL: c.mcpMaxConcurrentTotal,
      COLONY_MIN_FAILED_ATTEMPTS: m.minFailedAttempts,
      COLONY_PUBLISH_WAIT_S: m.publishWaitS,
      COLONY_MCP_PORT: m.mcpPort,
    };
    for (const [name, def] of [...CONFIG_DOC, ...MCP_CONFIG_DOC]) {
      if (/^\d+$/.test(def)) expect({ name, used: used[name] }).toEqual({ name, used: Number(def) });
    }
  });

  test("every COLONY_* variable the sources name is listed (a test hook: in docs/cli.md)", () => {
    const listed = new Set([...CONFIG_DOC, ...MCP_CONFIG_DOC].map(([name]) => name));
    const cli = readFileSync(join(REPO_DIR, "docs/cli.md"), "utf8");
    const named = new Set<string>();
    for (const file of sourceFiles(join(REPO_DIR, "src"))) {
      for (const m of readFileSync(file, "utf8").matchAll(/["'`](COLONY_[A-Z_]+)["'`]/g)) named.add(m[1]!);
    }
    expect(named.size).toBeGreaterThan(20);
    const unlisted = [...named].filter((name) => !listed.has(name) && !cli.includes(`\`${name}=`));
    expect(unlisted).toEqual([]);
  });
});

describe("docs/cli.md's colony migrate examples", () => {
  const cli = readFileSync(join(REPO_DIR, "docs/cli.md"), "utf8");

  test("a fresh PostgreSQL database: every migration, as colony migrate names them", () => {
    const names = PG_MIGRATIONS.map((m) => `${m.version} ${m.name}`).join(", ");
    const last = Math.max(...PG_MIGRATIONS.map((m) => m.version));
    expect(cli).toContain(`PostgreSQL colony@db.internal:5432/colony: schema version 0 -> ${last} (applied ${names})\n`);
  });

  test("a SQLite colony up to date: this release's schema version", () => {
    const last = Math.max(...MIGRATIONS.map((m) => m.version));
    expect(cli).toContain(`SQLite colony in /var/lib/colony: schema version ${last}, up to date (nothing applied)\n`);
  });
});

describe("docs/cli.md's commands", () => {
  test("name every subcommand and option of colony --help, and no other option", () => {
    const help = Bun.spawnSync([join(REPO_DIR, "node_modules/.bin/bun"), join(REPO_DIR, "src/main.ts"), "--help"], {
      cwd: REPO_DIR,
    }).stdout.toString();
    const usage = help.slice(help.indexOf("Usage:"), help.indexOf("Exit codes:"));
    const cli = readFileSync(join(REPO_DIR, "docs/cli.md"), "utf8");
    const options = (text: string) => [...new Set(text.match(/--[a-z][a-z-]+/g))].sort();
    expect(options(cli)).toEqual(options(usage));
    for (const [, command] of usage.matchAll(/^ {2}colony ([a-z]+)/gm))
      expect({ command, documented: cli.includes(`colony ${command}`) }).toEqual({ command, documented: true });
  });
});

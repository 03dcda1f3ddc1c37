#!/usr/bin/env bun
// The `colony` command: the table of subcommands and their parsing, in one place. Each command
// lives in its own module (src/cli/, src/ops/, src/mcp/cli.ts), imported only when it runs.
import { type Command, EXIT, UsageError } from "./cli/command";
import { CONFIG_DOC, ConfigError } from "./config";
import { MCP_CONFIG_DOC } from "./mcp/config";
import { VERSION } from "./version";

const COMMANDS: Command[] = [
  {
    name: "serve",
    usage: ["[serve]"],
    summary: "start a colony (the default); prints `colony listening on URL` when ready",
    async run(args) {
      if (args.length > 0) throw new UsageError(`serve takes no arguments (got ${args.join(" ")})`);
      return (await import("./cli/serve")).runServe();
    },
  },
  {
    name: "mcp",
    usage: ["mcp", "mcp --http [--port N]"],
    summary: "MCP server for COLONY_URL, over stdio or HTTP at 127.0.0.1:N/mcp (docs/mcp.md)",
    async run(args) {
      const port = (await import("./cli/mcp-args")).parseMcpArgs(args);
      await (await import("./mcp/cli")).runMcpCommand(port);
      return undefined;
    },
  },
  {
    name: "backup",
    usage: ["backup FILE"],
    summary: "write a consistent snapshot of COLONY_DATA_DIR while the colony serves",
    run: async (args) => (await import("./ops/backup-cli")).runBackupCommand("backup", args),
  },
  {
    name: "restore",
    usage: ["restore FILE"],
    summary: "replace COLONY_DATA_DIR's database with a verified backup (colony stopped)",
    run: async (args) => (await import("./ops/backup-cli")).runBackupCommand("restore", args),
  },
  {
    name: "migrate",
    usage: ["migrate", "migrate --from-sqlite DIR [--batch N]", "migrate --to-sqlite DIR [--batch N]"],
    summary: "schema migrations alone; copy a stopped colony between DIR and COLONY_DATABASE_URL (docs/scale-out.md)",
    run: async (args) => (await import("./cli/migrate")).runMigrate(args),
  },
  {
    name: "search",
    usage: ['search "ERROR TEXT" [--limit N] [--json]'],
    summary: "search the colony at COLONY_URL (docs/cli.md)",
    run: async (args) => (await import("./cli/search")).runSearch(args),
  },
  {
    name: "lookup",
    usage: ["lookup FINGERPRINT [--json]"],
    summary: "the indexed trails for a fingerprint",
    run: async (args) => (await import("./cli/search")).runLookup(args),
  },
  {
    name: "publish",
    usage: ["publish FILE|- [--wait] [--json]"],
    summary: "publish the trail in FILE (JSON); --wait for the verdict",
    run: async (args) => (await import("./cli/publish")).runPublish(args),
  },
  {
    name: "report",
    usage: ["report TRAIL_ID OUTCOME [--notes TEXT] [--json]"],
    summary: "report worked, partially_worked, failed or not_applicable",
    run: async (args) => (await import("./cli/report")).runReport(args),
  },
  {
    name: "status",
    usage: ["status [--json]"],
    summary: "health, readiness and stats of the colony at COLONY_URL",
    run: async (args) => (await import("./cli/status")).runStatus(args),
  },
  {
    name: "export",
    usage: ["export FILE"],
    summary: "write the indexed trails of the colony at COLONY_URL to a checksummed bundle",
    run: async (args) => (await import("./cli/export")).runExport(args),
  },
  {
    name: "import",
    usage: ["import FILE"],
    summary: "publish a bundle's trails into COLONY_DATA_DIR (colony stopped), idempotent",
    run: async (args) => (await import("./cli/import")).runImport(args),
  },
  {
    name: "version",
    aliases: ["--version"],
    usage: ["version"],
    summary: "print the version",
    async run(args) {
      if (args.length > 0) throw new UsageError(`version takes no arguments (got ${args.join(" ")})`);
      process.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    },
  },
  {
    name: "help",
    aliases: ["--help", "-h"],
    usage: ["--help"],
    summary: "this help",
    async run(args) {
      if (args.length > 0) throw new UsageError(`--help takes no arguments (got ${args.join(" ")})`);
      process.stdout.write(help());
      return EXIT.ok;
    },
  },
];

function help(): string {
  const lines: string[] = [];
  for (const c of COMMANDS) {
    const usages = c.usage.map((u) => `colony ${u}`);
    const [first, ...more] = usages;
    if (first!.length < 28 && more.length === 0) lines.push(`  ${first!.padEnd(28)} ${c.summary}`);
    else lines.push(...usages.map((u) => `  ${u}`), `  ${"".padEnd(28)} ${c.summary}`);
  }
  const width = Math.max(...[...CONFIG_DOC, ...MCP_CONFIG_DOC].map(([name]) => name.length));
  const doc = (rows: (readonly [string, string, string])[]) =>
    rows.map(([name, def, what]) => `  ${name.padEnd(width)} ${what} (default: ${def})`).join("\n");
  return `colony ${VERSION}: a trails service for software agents

Usage:
${lines.join("\n")}

Exit codes: 0 ok, 1 nothing found, 2 usage or configuration error, 3 the colony refused the
request, 4 the colony is unreachable, failing or not ready (docs/cli.md).

Configuration (environment variables):
${doc(CONFIG_DOC)}

MCP server (colony mcp):
${doc(MCP_CONFIG_DOC)}
`;
}

function commandHelp(c: Command): string {
  const [first, ...more] = c.usage.map((u) => `colony ${u}`);
  return `usage: ${[first, ...more].join("\n       ")}\n\n${c.summary}.\nExit codes and environment variables: colony --help.\n`;
}

export async function main(argv: string[]): Promise<void> {
  const [name = "serve", ...rest] = argv;
  const command = COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
  if (!command) {
    process.stderr.write(`colony: unknown command: ${name}\n\n${help()}`);
    process.exit(EXIT.usage);
  }
  // `colony COMMAND --help` (or -h) shows that command's usage: read as an argument, it was an
  // unknown option, or a file name (`colony backup --help` wrote a snapshot to a file "--help").
  const beforeSeparator = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (command.name !== "help" && beforeSeparator.some((a) => a === "--help" || a === "-h")) {
    process.stdout.write(commandHelp(command));
    return;
  }
  try {
    const code = await command.run(rest);
    if (code !== undefined) process.exitCode = code;
  } catch (err) {
    // A bad environment variable, or what a colony cannot start on (src/cli/start-refusal.ts),
    // whichever command met it: one line naming it, exit 2.
    if (err instanceof ConfigError || (await import("./cli/start-refusal")).isStartRefusal(err)) {
      process.stderr.write(`colony: ${err.message}\n`);
      process.exit(EXIT.usage);
    }
    if (!(err instanceof UsageError)) throw err;
    const usage = command.usage.map((u) => `colony ${u}`).join("\n       ");
    process.stderr.write(`colony: ${err.message}\nusage: ${usage}\n`);
    process.exit(EXIT.usage);
  }
}

if (import.meta.main) await main(process.argv.slice(2));

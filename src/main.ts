#!/usr/bin/env bun
// The `colony` command.
import { CONFIG_DOC, ConfigError, loadConfig } from "./config";
import { VERSION } from "./version";
import { MCP_CONFIG_DOC } from "./mcp/config";

const HELP = `colony ${VERSION}: a trails service for software agents

Usage:
  colony [serve]     start a colony (the default)
  colony mcp         MCP server over stdio, talking to COLONY_URL (docs/mcp.md)
  colony mcp --http [--port N]
                     MCP server over HTTP at 127.0.0.1:N/mcp (default COLONY_MCP_PORT, 8090)
  colony backup FILE write a consistent snapshot of COLONY_DATA_DIR while the colony serves
  colony restore FILE replace COLONY_DATA_DIR's database with a verified backup (colony stopped)
  colony version     print the version
  colony --help      this help

Configuration (environment variables):
${CONFIG_DOC.map(([name, def, what]) => `  ${name.padEnd(26)} ${what} (default: ${def})`).join("\n")}

MCP server (colony mcp):
${MCP_CONFIG_DOC.map(([name, def, what]) => `  ${name.padEnd(26)} ${what} (default: ${def})`).join("\n")}
`;

async function serve(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`colony: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { ListenError, startColony } = await import("./serve");
  const { createLogger } = await import("./log");
  const { DataDirLockedError } = await import("./store/sqlite/lock");
  const { DatabaseDamagedError } = await import("./store/sqlite/integrity");
  const logger = createLogger(config.logLevel);
  let colony: Awaited<ReturnType<typeof startColony>>;
  try {
    colony = await startColony(config, { logger });
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`colony: ${err.message}\n`);
      process.exit(1);
    }
    // What the operator must fix (a damaged file, a taken port): one plain line, exit 2.
    if (err instanceof DatabaseDamagedError || err instanceof ListenError) {
      process.stderr.write(`colony: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let signals = 0;
  const shutdown = async (signal: string) => {
    if (++signals > 1) return; // a second signal while draining changes nothing
    logger.info("shutting down", { signal });
    await colony.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

export async function main(argv: string[]): Promise<void> {
  const [command = "serve", ...rest] = argv;
  switch (command) {
    case "serve":
      if (rest.length > 0) break;
      (await import("./mcp/cli")).checkHostedMcpConfig(); // /mcp's variables: a bad one exits 2 before start
      return serve();
    case "mcp":
      if (await (await import("./mcp/cli")).runMcpCommand(rest)) return;
      break;
    case "backup":
    case "restore":
      if (rest.length !== 1) break;
      process.exitCode = await (await import("./ops/backup-cli")).runBackupCommand(command, rest[0]);
      return;
    case "version":
    case "--version":
      process.stdout.write(`${VERSION}\n`);
      return;
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(HELP);
      return;
  }
  process.stderr.write(`colony: unknown command or argument: ${argv.join(" ")}\n\n${HELP}`);
  process.exit(2);
}

if (import.meta.main) await main(process.argv.slice(2));

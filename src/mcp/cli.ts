// `colony mcp [--http [--port N]]`: argument parsing and start-up of the two MCP transports.
// A bad variable stops the process with exit code 2 and a message naming it, like `colony serve`.
import { parseArgs, UsageError } from "../cli/command";
import { ConfigError, loadConfig } from "../config";
import { createLogger } from "../log";
import { hostedToolConfig, loadMcpConfig } from "./config";

function exitOnConfigError<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`colony: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** `colony serve` checks the variables of its /mcp route before it starts. */
export function checkHostedMcpConfig(): void {
  exitOnConfigError(() => hostedToolConfig());
}

/**
 * null: stdio; a number: --http on that port (NaN: COLONY_MCP_PORT). Wrong arguments are a
 * UsageError saying which (it was "unknown arguments: --http --port abc" for any of them).
 */
export function parseMcpArgs(args: string[]): number | null {
  const { flags, positionals } = parseArgs(args, { http: "boolean", port: "string" });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (flags.http !== true) {
    if (flags.port !== undefined) throw new UsageError("--port is for the HTTP server: colony mcp --http --port N");
    return null;
  }
  if (flags.port === undefined) return NaN;
  const value = String(flags.port);
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`--port takes a whole number from 0 to 65535 (got ${JSON.stringify(value)})`);
  }
  return Number(value);
}

/** Runs `colony mcp …`; wrong arguments throw a UsageError (main prints it with the usage). */
export async function runMcpCommand(args: string[]): Promise<void> {
  const port = parseMcpArgs(args);
  const config = exitOnConfigError(() => loadMcpConfig());
  const logger = createLogger(exitOnConfigError(() => loadConfig({ COLONY_LOG_LEVEL: process.env.COLONY_LOG_LEVEL }).logLevel));
  if (port === null) {
    const { runStdio } = await import("./stdio");
    await runStdio(config, logger);
    return;
  }
  const { startStandalone } = await import("./standalone");
  const server = startStandalone(config, { port: Number.isNaN(port) ? config.mcpPort : port, logger });
  const shutdown = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown());
  process.on("SIGINT", () => void shutdown());
}

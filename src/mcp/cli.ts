// `colony mcp [--http [--port N]]`: argument parsing and start-up of the two MCP transports.
// A bad variable stops the process with exit code 2 and a message naming it, like `colony serve`.
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

/** null: stdio; a number: --http on that port (NaN: COLONY_MCP_PORT); undefined: bad arguments. */
export function parseMcpArgs(args: string[]): number | null | undefined {
  if (args.length === 0) return null;
  if (args[0] !== "--http") return undefined;
  const flags = args.slice(1);
  if (flags.length === 0) return NaN;
  const value =
    flags[0] === "--port" && flags.length === 2 ? flags[1] : flags.length === 1 ? /^--port=(.*)$/.exec(flags[0]!)?.[1] : undefined;
  if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) > 65535) return undefined;
  return Number(value);
}

/** Runs `colony mcp …`; false when the arguments are not understood (main prints the help). */
export async function runMcpCommand(args: string[]): Promise<boolean> {
  const port = parseMcpArgs(args);
  if (port === undefined) return false;
  const config = exitOnConfigError(() => loadMcpConfig());
  const logger = createLogger(exitOnConfigError(() => loadConfig({ COLONY_LOG_LEVEL: process.env.COLONY_LOG_LEVEL }).logLevel));
  if (port === null) {
    const { runStdio } = await import("./stdio");
    await runStdio(config, logger);
    return true;
  }
  const { startStandalone } = await import("./standalone");
  const server = startStandalone(config, { port: Number.isNaN(port) ? config.mcpPort : port, logger });
  const shutdown = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown());
  process.on("SIGINT", () => void shutdown());
  return true;
}

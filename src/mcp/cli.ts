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

/** Runs `colony mcp`: over stdio (port null), or `--http` on `port` (NaN: COLONY_MCP_PORT). */
export async function runMcpCommand(port: number | null): Promise<void> {
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

// `colony serve`: starts a colony with the configuration of the environment. Once it listens it
// prints one line on stdout, `colony listening on URL`, for scripts to read (with COLONY_PORT=0 it
// is the only place the chosen port is easy to get); logs stay JSON on stderr.
import { loadConfig } from "../config";

export async function runServe(): Promise<undefined> {
  (await import("../mcp/cli")).checkHostedMcpConfig(); // /mcp's variables: a bad one exits 2 before start
  const config = loadConfig(); // a bad variable: main prints it and exits 2
  const { startColony } = await import("../serve");
  const { createLogger } = await import("../log");
  const { DataDirLockedError } = await import("../store/sqlite/lock");
  const logger = createLogger(config.logLevel);
  let colony: Awaited<ReturnType<typeof startColony>>;
  try {
    colony = await startColony(config, { logger });
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`colony: ${err.message}: stop that colony first, or give this one another COLONY_DATA_DIR\n`);
      process.exit(1);
    }
    throw err; // what the operator must fix (src/cli/start-refusal.ts): main prints one line, exit 2
  }
  process.stdout.write(`colony listening on ${colony.localUrl}\n`);
  let signals = 0;
  const shutdown = async (signal: string) => {
    if (++signals > 1) return; // a second signal while draining changes nothing
    logger.info("shutting down", { signal });
    await colony.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  return undefined;
}

#!/usr/bin/env bun
// The `colony` command.
import { CONFIG_DOC, ConfigError, loadConfig } from "./config";
import { VERSION } from "./version";

const HELP = `colony ${VERSION}: a trails service for software agents

Usage:
  colony [serve]     start a colony (the default)
  colony version     print the version
  colony --help      this help

Configuration (environment variables):
${CONFIG_DOC.map(([name, def, what]) => `  ${name.padEnd(24)} ${what} (default: ${def})`).join("\n")}
`;

async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`colony: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { startColony } = await import("./serve");
  const colony = await startColony(config);
  let signals = 0;
  const shutdown = async (signal: string) => {
    if (++signals > 1) return; // a second signal while draining changes nothing
    process.stderr.write(JSON.stringify({ t: new Date().toISOString(), level: "info", msg: "shutting down", signal }) + "\n");
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
      return serve();
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

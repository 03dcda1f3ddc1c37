// `colony mcp [--http [--port N]]`: its arguments, read at the entry layer (src/mcp/cli.ts starts
// the transports).
import { parseArgs, UsageError } from "./command";

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

// What every `colony` subcommand shares: its entry in the command table of src/main.ts, the exit
// codes (docs/cli.md), and the usage error that main turns into a message, the usage and exit 2.

/** Exit codes of every colony command (docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** Nothing found: no search result, no trail for a fingerprint, an unknown trail id. */
  notFound: 1,
  /** Wrong arguments, an unreadable input file, a bad environment variable. */
  usage: 2,
  /** The colony answered with an error (a refused request: invalid trail, quota, conflict). */
  refused: 3,
  /** The colony could not be reached, failed (5xx) or is not ready. */
  unavailable: 4,
} as const;

export interface Command {
  name: string;
  aliases?: string[];
  /** Usage lines without the leading "colony " (the first also heads the help entry). */
  usage: string[];
  summary: string;
  /** The exit code, or undefined when the command keeps the process running (a server). */
  run(args: string[]): Promise<number | undefined>;
}

/** Wrong arguments: main prints `colony: MESSAGE`, the command's usage, and exits 2. */
export class UsageError extends Error {}

/** Splits arguments into flags (--name or --name=value, in `known`) and positionals. */
export function parseArgs(
  args: string[],
  known: Record<string, "boolean" | "string">,
): { flags: Record<string, string | boolean>; positionals: string[] } {
  const flags: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const kind = known[name];
    if (kind === undefined) throw new UsageError(`unknown option --${name}`);
    if (kind === "boolean") {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
    } else {
      const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined || value === "") throw new UsageError(`--${name} needs a value`);
      flags[name] = value;
    }
  }
  return { flags, positionals };
}

// `colony migrate`: the schema migrations alone (PostgreSQL at COLONY_DATABASE_URL, else the colony
// in COLONY_DATA_DIR), and `--from-sqlite DIR` / `--to-sqlite DIR`: a stopped colony copied between
// its embedded store and PostgreSQL (src/store/copy.ts does the copy; docs/scale-out.md).
import { loadConfig } from "../config";
import { errorMessage } from "../core/error-message";
import { createLogger } from "../log";
import { prepareNatives } from "../platform/native";
import { type CopySide, MigrateError, type MigrateFailure } from "../store/copy-ports";
import { EXIT, parseArgs, UsageError } from "./command";

const DEFAULT_BATCH = 500;
/** For tests of resumption: the copy stops inside this batch's transaction, before its commit, and waits to be killed. */
const PAUSE_VARIABLE = "COLONY_MIGRATE_PAUSE_IN_BATCH";

const EXIT_OF: Record<MigrateFailure, number> = {
  usage: EXIT.usage,
  refused: EXIT.refused,
  unavailable: EXIT.unavailable,
  failed: 1,
};

export async function runMigrate(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { "from-sqlite": "string", "to-sqlite": "string", batch: "string" });
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(" ")}`);
  const from = flags["from-sqlite"] as string | undefined;
  const to = flags["to-sqlite"] as string | undefined;
  if (from && to) throw new UsageError("give --from-sqlite DIR or --to-sqlite DIR, not both");
  const batchText = flags.batch as string | undefined;
  if (batchText !== undefined && !from && !to) throw new UsageError("--batch applies to a copy (--from-sqlite or --to-sqlite)");
  const batchSize = batchText === undefined ? DEFAULT_BATCH : Number(batchText);
  if (!/^\d+$/.test(batchText ?? "1") || batchSize < 1 || batchSize > 100_000) {
    throw new UsageError(`--batch takes a whole number of rows from 1 to 100000 (got ${batchText})`);
  }
  const config = loadConfig(); // a bad variable: main prints it and exits 2
  try {
    if (!from && !to) return await migrateSchema(config);
    if (!config.databaseUrl) {
      throw new MigrateError(
        "usage",
        `${from ? "--from-sqlite copies into" : "--to-sqlite copies from"} the PostgreSQL database named by COLONY_DATABASE_URL, which is not set`,
      );
    }
    return await copy(
      config,
      config.databaseUrl,
      from ? { sqlite: from, direction: "to-postgres" } : { sqlite: to!, direction: "to-sqlite" },
      batchSize,
    );
  } catch (err) {
    if (err instanceof UsageError) throw err;
    if (!(err instanceof MigrateError)) {
      // Whatever stopped it, what was committed stays: running the command again continues.
      process.stderr.write(`colony: migrate failed: ${errorMessage(err)}\n`);
      return 1;
    }
    process.stderr.write(`colony: migrate: ${err.message}\n`);
    return EXIT_OF[err.kind];
  }
}

async function migrateSchema(config: ReturnType<typeof loadConfig>): Promise<number> {
  let result: { description: string; from: number; to: number; applied: { version: number; name: string }[] };
  if (config.databaseUrl) {
    const { migratePostgresDatabase } = await import("../store/postgres/copy-side");
    result = await migratePostgresDatabase(config.databaseUrl);
  } else {
    const { sqliteVec } = prepareNatives({ cacheDir: config.cacheDir });
    const { migrateSqliteDirectory } = await import("../store/sqlite/copy-side");
    try {
      result = migrateSqliteDirectory(config.dataDir, sqliteVec);
    } catch (err) {
      if (err instanceof MigrateError && err.kind === "usage") {
        throw new MigrateError(
          "usage",
          `COLONY_DATABASE_URL is not set, and COLONY_DATA_DIR holds no colony to migrate: ${err.message}. ` +
            "Set COLONY_DATABASE_URL=postgres://… to migrate a PostgreSQL database",
        );
      }
      throw err;
    }
  }
  if (result.applied.length === 0) {
    process.stdout.write(`${result.description}: schema version ${result.to}, up to date (nothing applied)\n`);
  } else {
    const names = result.applied.map((m) => `${m.version} ${m.name}`).join(", ");
    process.stdout.write(`${result.description}: schema version ${result.from} -> ${result.to} (applied ${names})\n`);
  }
  return EXIT.ok;
}

async function copy(
  config: ReturnType<typeof loadConfig>,
  url: string,
  how: { sqlite: string; direction: "to-postgres" | "to-sqlite" },
  batchSize: number,
): Promise<number> {
  const { sqliteVec } = prepareNatives({ cacheDir: config.cacheDir });
  const { openSqliteCopySide } = await import("../store/sqlite/copy-side");
  const { openPostgresCopySide } = await import("../store/postgres/copy-side");
  const { copyColony } = await import("../store/copy");
  const logger = createLogger(config.logLevel);
  const sides: CopySide[] = [];
  try {
    // The source first: a wrong DIR or URL is named before the target is touched.
    if (how.direction === "to-postgres") {
      sides.push(openSqliteCopySide(how.sqlite, sqliteVec, "source"));
      sides.push(await openPostgresCopySide(url, "target"));
    } else {
      sides.push(await openPostgresCopySide(url, "source"));
      sides.push(openSqliteCopySide(how.sqlite, sqliteVec, "target"));
    }
    const [source, target] = sides as [CopySide, CopySide];
    const report = await copyColony(source, target, { batchSize, logger, afterBatchWrite: pauseHook() });
    const width = Math.max(...report.counts.map((c) => c.name.length));
    const lines = report.counts.map((c) => `  ${c.name.padEnd(width)}  ${c.rows}`);
    const head = report.alreadyCopied
      ? `${target.description} already holds a finished copy of ${source.description}: nothing copied`
      : `copied ${source.description} to ${target.description}${report.resumed ? " (resumed)" : ""}`;
    process.stdout.write(
      `${head}\n` +
        `${lines.join("\n")}\n` +
        (report.vectorsCopied ? "" : "no vectors to copy: the colony embeds its trails at its first start on the target\n") +
        "verified: every table holds as many rows as the source\n",
    );
    return EXIT.ok;
  } finally {
    for (const side of sides.reverse())
      await side.close().catch((err) => logger.warn("closing a store failed", { error: errorMessage(err) }));
  }
}

function pauseHook(): ((batch: number) => Promise<void>) | undefined {
  const raw = process.env[PAUSE_VARIABLE];
  if (!raw) return undefined;
  const at = Number(raw);
  return async (batch) => {
    if (batch !== at) return;
    process.stderr.write(`colony: migrate: paused inside batch ${batch} (${PAUSE_VARIABLE})\n`);
    await new Promise(() => setInterval(() => {}, 60_000));
  };
}

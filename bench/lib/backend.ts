// The store a benchmark's colony runs on: `--backend sqlite|postgres|both` (or COLONY_BENCH_BACKEND),
// SQLite by default. PostgreSQL is a throwaway server started here (test/support/postgres.ts), a
// fresh database per colony.
import { getLoadablePath } from "sqlite-vec";
import type { Store } from "../../src/store/ports";
import { openPostgresStore } from "../../src/store/postgres/store";
import { openDatabase } from "../../src/store/sqlite/database";
import { createSqliteStore } from "../../src/store/sqlite/store";
import { type PostgresServer, postgresUnavailable, startPostgres } from "../../test/support/postgres";
import { benchDir, removeDir } from "./colony";
import { args, flag } from "./report";

export const BACKENDS = ["sqlite", "postgres"] as const;
export type Backend = (typeof BACKENDS)[number];

/** The backends asked for on the command line (`--backend both` for the two side by side). */
export function chosenBackends(): Backend[] {
  const asked =
    flag("--backend") ?? args.find((a) => a.startsWith("--backend="))?.slice("--backend=".length) ?? process.env.COLONY_BENCH_BACKEND;
  if (!asked || asked === "sqlite") return ["sqlite"];
  if (asked === "postgres") return ["postgres"];
  if (asked === "both") return ["sqlite", "postgres"];
  throw new Error(`--backend ${asked}: expected sqlite, postgres or both`);
}

let server: Promise<PostgresServer> | null = null;

/** The environment that puts a colony on `backend`: nothing for SQLite, a fresh database's URL for PostgreSQL. */
export async function backendEnv(backend: Backend): Promise<Record<string, string>> {
  if (backend === "sqlite") return {};
  const why = postgresUnavailable();
  if (why) throw new Error(`--backend postgres, but PostgreSQL cannot run here: ${why}`);
  server ??= startPostgres();
  return { COLONY_DATABASE_URL: await (await server).createDatabase() };
}

/** Stops the PostgreSQL server if one was started. */
export async function stopBackends(): Promise<void> {
  if (server) await (await server).stop();
  server = null;
}

/**
 * Runs `measure` on a store over a SQLite file and on one over a fresh PostgreSQL database (a
 * throwaway server), one after the other, then closes both and removes the SQLite directory.
 */
export async function onBothStores(dirPrefix: string, measure: (name: Backend, store: Store) => Promise<void>): Promise<void> {
  const dir = benchDir(dirPrefix);
  const db = openDatabase({ dataDir: dir, sqliteVecPath: getLoadablePath() });
  const pg = await startPostgres();
  const postgres = await openPostgresStore({ url: await pg.createDatabase(), poolSize: 4 });
  try {
    await measure("sqlite", createSqliteStore(db));
    await measure("postgres", postgres);
  } finally {
    await postgres.close();
    db.close();
    await pg.stop();
    removeDir(dir);
  }
}

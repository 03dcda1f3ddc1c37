// The composition root: builds a colony from its configuration. This is the one place that picks
// adapters (the storage engine, the embedding model, the single-process seams, the quota counters)
// and hands them to the service core, the HTTP layer and the hosted MCP endpoint. Nothing under
// src/service, src/http or src/mcp imports an adapter (test/architecture.test.ts checks it).
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config";
import { parseDatabaseUrl } from "./core/database-url";
import { errorMessage } from "./core/error-message";
import type { Embedder } from "./embedding/embedder";
import { createApp } from "./http/app";
import { FingerprintLookups } from "./http/routes/lookup";
import { createFetchHandler } from "./http/server";
import type { Logger } from "./log";
import { hostedToolConfig } from "./mcp/config";
import { hostedErrorShape, mcpRoutes } from "./mcp/hosted";
import { InFlightLimit } from "./mcp/in-flight";
import { MCP_PATH } from "./mcp/jsonrpc-errors";
import { OriginPolicy } from "./mcp/origin";
import { type NativePaths, prepareNatives } from "./platform/native";
import { operatorRoutes } from "./http/routes/operator";
import { PrometheusMetrics } from "./ops/prometheus";
import type { Gauges } from "./service/admin";
import { ColonyService } from "./service/colony";
import { NO_METRICS, type Metrics } from "./service/metrics";
import { Quotas } from "./service/quotas";
import type { Backend, Subsystems } from "./service/subsystems";
import type { PostgresStore } from "./store/postgres/store";
import type { Store, VectorStore } from "./store/ports";
import { SchemaTooNewError } from "./store/schema-version";
import type { Seams } from "./store/seams";
import { singleProcessSeams } from "./store/single-process";
import { DATABASE_FILE, DataDirUnusableError, openDatabase } from "./store/sqlite/database";
import { checkDatabaseFile, DatabaseDamagedError } from "./store/sqlite/integrity";
import { DataDirLockedError, type DataDirLock, lockDataDir } from "./store/sqlite/lock";
import { createSqliteStore } from "./store/sqlite/store";

/** An opened storage engine. */
export interface OpenedStore {
  backend: Backend;
  /** Null when the engine did not open: `failure` says why, readiness reports it. */
  store: Store | null;
  failure: string | null;
  /** The SQLite database, for tests and benchmarks that read it directly; null for other engines. */
  db: Database | null;
  /** Releases the engine (after the services stopped). */
  close(): Promise<void>;
}

/**
 * Picks and opens the storage engine: the one switch between adapters. SQLite in COLONY_DATA_DIR
 * by default; PostgreSQL (src/store/postgres) when COLONY_DATABASE_URL names one.
 * SQLite: every failure is thrown (a data directory in use, damaged, unusable, or of a newer
 * schema). PostgreSQL: a newer schema is thrown; any other failure (a server not reachable)
 * leaves the colony up with the store unavailable, and composeColony keeps trying.
 */
export async function openStore(config: Config, natives: NativePaths, logger: Logger): Promise<OpenedStore> {
  if (config.databaseUrl) {
    const opened = await openPostgres(config, true);
    if (opened.failure) {
      logger.error("PostgreSQL store failed to start; trying again in the background", {
        error: opened.failure,
        database: databaseDescription(config.databaseUrl),
      });
    }
    return opened;
  }
  return openSqliteStore(config.dataDir, natives.sqliteVec);
}

/**
 * The user, hosts and database of COLONY_DATABASE_URL, never its password: what a log line about a
 * server that does not answer names, so that a wrong host or port shows (the client's own error,
 * "Failed to connect", names none).
 */
function databaseDescription(url: string): string {
  return parseDatabaseUrl(url).description;
}

/**
 * PostgreSQL (COLONY_DATABASE_URL): migrated at start under an advisory lock, so replicas started
 * together migrate once. A server that cannot be reached leaves the colony up and unready, and
 * composeColony's `recover` keeps trying.
 */
async function openPostgres(config: Config, atStart: boolean): Promise<OpenedStore> {
  // Imported only here: a SQLite colony never loads the PostgreSQL adapter.
  const { openPostgresStore } = await import("./store/postgres/store");
  try {
    const store = await openPostgresStore({
      url: config.databaseUrl!,
      poolSize: config.databasePool,
      timeoutMs: config.databaseTimeoutMs,
    });
    return { backend: "postgres", store, failure: null, db: null, close: () => store.close() };
  } catch (err) {
    // A newer schema does not change by waiting: refused at start, like SQLite's; so is a login or
    // database the server refuses.
    if (err instanceof SchemaTooNewError && atStart) throw err;
    const errno = (err as { errno?: unknown } | null)?.errno;
    if (atStart && typeof errno === "string" && LOGIN_REFUSED.test(errno)) {
      throw new DatabaseRefusedError(databaseDescription(config.databaseUrl!), errorMessage(err));
    }
    return { backend: "postgres", store: null, failure: `PostgreSQL did not open: ${errorMessage(err)}`, db: null, async close() {} };
  }
}

/**
 * The embedded store in COLONY_DATA_DIR. Every failure here stops the start: unlike a PostgreSQL
 * server, a data directory does not fix itself, so a colony listening on a store that did not open
 * would only ever be unready. The lock comes first: a second colony (or an older or newer binary)
 * never checks, migrates or touches a database that a running colony owns.
 */
function openSqliteStore(dataDir: string, sqliteVecPath: string): OpenedStore {
  prepareDataDir(dataDir);
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw err;
    throw new DataDirUnusableError(dataDir, errorMessage(err));
  }
  let db: Database;
  try {
    // A damaged database stops the start (DatabaseDamagedError) before anything reads it.
    checkDatabaseFile(join(dataDir, DATABASE_FILE), sqliteVecPath);
    db = openDatabase({ dataDir, sqliteVecPath });
  } catch (err) {
    lock.release();
    if (err instanceof DatabaseDamagedError || err instanceof SchemaTooNewError) throw err;
    throw new DataDirUnusableError(dataDir, errorMessage(err));
  }
  const opened = db;
  return {
    backend: "sqlite",
    store: createSqliteStore(opened),
    failure: null,
    db: opened,
    async close() {
      // Fold the WAL into the main file so a stopped colony is one self-contained file.
      try {
        opened.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {}
      opened.close();
      lock.release();
    },
  };
}

/** Creates the data directory (owner-only) when missing; a path that cannot be one is the operator's to fix. */
function prepareDataDir(dataDir: string): void {
  try {
    if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (!statSync(dataDir).isDirectory()) throw new Error("it is not a directory");
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new DataDirUnusableError(dataDir, errorMessage(err));
  }
}

/**
 * The seams where the colony assumes it is the only process on its data (store/seams.ts). One
 * process per data directory today; a multi-process store brings shared versions, chosen here.
 */
export async function chooseSeams(store: Store | null, backend: Backend, jobLeaseMs?: number): Promise<Seams> {
  if (backend === "postgres" && store) {
    const { postgresSeams } = await import("./store/postgres/seams");
    const { boundedQuotas } = await import("./store/postgres/bounded-quotas");
    const pg = store as PostgresStore;
    const seams = postgresSeams(pg.sql, pg.fingerprintFeed, Date.now, jobLeaseMs);
    return { ...seams, quotas: boundedQuotas(seams.quotas, pg.patience) };
  }
  return singleProcessSeams(store?.jobs ?? null);
}

/** The subsystems as the composition root holds them: the service's view plus what closes them. */
export interface ComposedSubsystems extends Subsystems {
  /** The SQLite database (tests and benchmarks); null for other engines or when it did not open. */
  db: Database | null;
  close(): Promise<void>;
}

export interface SubsystemOptions {
  config: Config;
  natives: NativePaths;
  logger: Logger;
}

/**
 * The PostgreSQL server answered and refused COLONY_DATABASE_URL's login or database (SQLSTATE
 * 28000: no such role or no pg_hba.conf entry; 28P01: wrong password; 3D000: no such database). A
 * server that cannot be reached yet may come up, and a colony starts through that; a refusal does
 * not change by waiting, so at start it is the operator's to fix (exit 2, one line), as a newer
 * schema is. Before, the colony listened unready and retried it every 5 s.
 */
export class DatabaseRefusedError extends Error {
  constructor(description: string, reason: string) {
    super(
      `COLONY_DATABASE_URL (${description}) is refused by the PostgreSQL server: ${reason}; ` +
        "fix the user, password or database name in COLONY_DATABASE_URL, or create them on the server",
    );
  }
}

const LOGIN_REFUSED = /^(28000|28P01|3D000)$/;

/** COLONY_MODEL_DIR names a directory that holds no model Colony can load. */
export class ModelDirError extends Error {
  constructor(
    readonly modelDir: string,
    readonly reason: string,
  ) {
    super(`COLONY_MODEL_DIR=${modelDir} does not load: ${reason}`);
  }
}

/**
 * Starts the store, the embedding model and the vector index. What the operator must fix stops the
 * start (openStore's errors, a COLONY_MODEL_DIR that does not load); any other subsystem that
 * fails to start (the built-in model, the vector index, a PostgreSQL server not reachable yet) is
 * recorded, not fatal: the process stays up and /readyz names the failing check.
 */
export async function startSubsystems({ config, natives, logger }: SubsystemOptions): Promise<ComposedSubsystems> {
  // The model first: a COLONY_MODEL_DIR that does not load stops the start before the data
  // directory is created or touched.
  // Imported only now: in the compiled binary the native ONNX binding is extracted first.
  const { loadEmbedder } = await import("./embedding/load");
  const modelDir = config.modelDir ?? natives.modelDir;
  let embedder: Embedder | null = null;
  let modelFailure: string | null = null;
  try {
    embedder = await loadEmbedder(modelDir);
    logger.info("embedding model loaded", { ...embedder.info });
  } catch (err) {
    // The operator's own model directory is theirs to fix: stop the start, naming it.
    if (config.modelDir) throw new ModelDirError(config.modelDir, errorMessage(err));
    modelFailure = `model did not load: ${errorMessage(err)}`;
    logger.error("embedding model failed to load", { error: errorMessage(err), dir: modelDir });
  }
  let opened: OpenedStore;
  try {
    opened = await openStore(config, natives, logger);
  } catch (err) {
    await embedder?.close().catch(() => {});
    throw err;
  }
  return subsystemsOn(opened, embedder, modelFailure, logger);
}

/** The subsystems on an opened store and a loaded model (or their failures); they own both. */
async function subsystemsOn(
  opened: OpenedStore,
  embedder: Embedder | null,
  modelFailure: string | null,
  logger: Logger,
): Promise<ComposedSubsystems> {
  const failures: Subsystems["failures"] = {};
  const { store } = opened;
  if (!store) {
    failures.kv = opened.failure ?? "store did not open";
    failures.vector = "vector store needs the store, which did not open";
  }
  if (modelFailure) failures.embedding = modelFailure;

  let vectors: VectorStore | null = null;
  if (store) {
    if (!embedder) {
      failures.vector = "vector store needs the embedding model, which did not load";
    } else {
      try {
        const { name, revision, dim } = embedder.info;
        vectors = (await store.openVectors({ name: `${name}@${revision}`, dim })).vectors;
      } catch (err) {
        failures.vector = `vector store did not open: ${errorMessage(err)}`;
        logger.error("vector store failed to start", { error: errorMessage(err) });
      }
    }
  }

  const model = embedder;
  return {
    backend: opened.backend,
    db: opened.db,
    store,
    vectors,
    embedder,
    failures,
    async close() {
      await model?.close().catch(() => {});
      await opened.close();
    },
  };
}

export interface ComposeOptions {
  logger: Logger;
  /** Base of approve_url links: COLONY_PUBLIC_URL, else the bound address (known once listening). */
  publicUrl: () => string;
}

/** A colony built and started, not yet listening. */
export interface ComposedColony {
  subsystems: ComposedSubsystems;
  service: ColonyService;
  /** The fetch handler for Bun.serve, with its native routes and drain. */
  handler: ReturnType<typeof createFetchHandler>;
  /** Stops the services and closes the subsystems (after the server stopped). */
  close(): Promise<void>;
  /**
   * Set when the store did not open but may yet (a PostgreSQL server not reachable at start):
   * keeps trying with backoff and resolves with a colony composed on the store once it opens
   * (sharing this one's model), or null once `stopped` answers true. The caller then serves the
   * new colony and retires this one.
   */
  recover: ((stopped: () => boolean) => Promise<ComposedColony | null>) | null;
  /** Stops this colony's services and leaves its model open (a recovered colony took it over). */
  retire(): Promise<void>;
}

/** First wait between attempts to open a store that did not open at start; doubled up to the most. */
const REOPEN_FIRST_DELAY_MS = 250;
const REOPEN_MAX_DELAY_MS = 5_000;

export async function composeColony(config: Config, { logger, publicUrl }: ComposeOptions): Promise<ComposedColony> {
  const natives = prepareNatives({ cacheDir: config.cacheDir });
  const subsystems = await startSubsystems({ config, natives, logger });
  // Loading the model leaves its file bytes (tens of MB) as garbage: collect them now rather
  // than whenever the heap next grows, so an idle colony's footprint is what it really uses.
  Bun.gc(true);
  const colony = await assemble(config, subsystems, { logger, publicUrl });
  if (!subsystems.store && subsystems.backend === "postgres") {
    colony.recover = (stopped) => reopenPostgres(config, subsystems, { logger, publicUrl }, stopped);
  }
  return colony;
}

/**
 * Tries to open PostgreSQL until it opens (or `stopped`), then composes a colony on it with the
 * model already loaded. Logs a failure when its reason changes, not at every attempt.
 */
async function reopenPostgres(
  config: Config,
  unready: ComposedSubsystems,
  opts: ComposeOptions,
  stopped: () => boolean,
): Promise<ComposedColony | null> {
  const { logger } = opts;
  let delay = REOPEN_FIRST_DELAY_MS;
  let lastFailure = unready.failures.kv ?? "";
  while (!stopped()) {
    const until = Date.now() + delay;
    while (!stopped() && Date.now() < until) await Bun.sleep(Math.min(50, until - Date.now()));
    if (stopped()) break;
    delay = Math.min(delay * 2, REOPEN_MAX_DELAY_MS);
    const opened = await openPostgres(config, false);
    let failure = opened.failure;
    if (opened.store) {
      const subsystems = await subsystemsOn(opened, unready.embedder, unready.failures.embedding ?? null, logger);
      try {
        if (subsystems.failures.vector) throw new Error(subsystems.failures.vector);
        const colony = await assemble(config, subsystems, opts);
        if (!stopped()) {
          logger.info("PostgreSQL store opened; the colony is ready", {});
          return colony;
        }
        await colony.retire();
      } catch (err) {
        failure = errorMessage(err);
      }
      await opened.close().catch(() => {}); // the model stays open for the next attempt
    }
    if (failure && failure !== lastFailure) {
      logger.error("PostgreSQL store still not open; trying again", { error: failure, database: databaseDescription(config.databaseUrl!) });
      lastFailure = failure;
    }
  }
  return null;
}

/** Builds the service, the seams and the HTTP layer on started subsystems, and starts the service. */
async function assemble(config: Config, subsystems: ComposedSubsystems, { logger, publicUrl }: ComposeOptions): Promise<ComposedColony> {
  const seams = await chooseSeams(subsystems.store, subsystems.backend, config.jobLeaseMs);
  // Metrics are an operator endpoint: with no operator token there is no /metrics, so nothing is
  // counted (the hot paths then skip even the timing).
  const prometheus: PrometheusMetrics | null = config.adminToken
    ? new PrometheusMetrics((): Promise<Gauges> => service.admin.gauges())
    : null;
  const metrics: Metrics = prometheus ?? NO_METRICS;
  const quotas = new Quotas({ general: config.rateLimit, publish: config.publishLimit, draft: config.draftLimit }, seams.quotas, metrics);
  const service: ColonyService = new ColonyService({ config, logger, subsystems, seams, quotas, publicUrl, metrics });
  await service.start();
  try {
    // Hosted MCP follows this colony's own configuration for high-risk trails; browser pages may
    // call it from the colony's public URL and COLONY_ALLOWED_ORIGINS only; it refuses in JSON-RPC.
    const mcpOrigins = new OriginPolicy([...config.allowedOrigins, ...(config.publicUrl ? [config.publicUrl] : [])]);
    const mcp = mcpRoutes(
      service,
      { ...hostedToolConfig(), allowHighRisk: config.allowHighRisk },
      mcpOrigins,
      new InFlightLimit(config.mcpMaxConcurrent, config.mcpMaxConcurrentTotal),
    );
    const errorShapes = new Map([[MCP_PATH, hostedErrorShape(mcpOrigins)]]);
    const app = createApp(service, logger, [operatorRoutes(service, prometheus), mcp], errorShapes);
    const handler = createFetchHandler({
      config,
      logger,
      app,
      lookups: new FingerprintLookups(service),
      pseudonymSecret: await pseudonymSecret(subsystems.store),
      quotas,
      errorShapes,
      metrics,
    });
    return {
      subsystems,
      service,
      handler,
      async close() {
        await service.stop();
        await subsystems.close();
      },
      recover: null,
      retire: () => service.stop(),
    };
  } catch (err) {
    await service.stop();
    throw err;
  }
}

/**
 * The key of address pseudonyms: made once per colony (its store), so pseudonyms are stable, and
 * the same on every replica, also for replicas started together (the first one stored wins).
 */
export async function pseudonymSecret(store: Store | null): Promise<string> {
  const fresh = randomBytes(32).toString("base64url");
  if (!store) return fresh;
  return (await store.kv.get("pseudonym.secret")) ?? (await store.kv.setIfAbsent("pseudonym.secret", fresh));
}

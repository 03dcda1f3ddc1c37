// Boots a colony: subsystems, service core, HTTP server. Used by `colony serve` and by tests,
// which start real colonies on loopback with port 0.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Config } from "./config";
import { createLogger, type Logger } from "./log";
import { createApp } from "./http/app";
import { createFetchHandler } from "./http/server";
import { routeQuotas } from "./http/route-quotas";
import { FingerprintLookups } from "./http/routes/lookup";
import { ColonyService } from "./service/colony";
import { startSubsystems, type Subsystems } from "./service/subsystems";
import { prepareNatives } from "./platform/native";
import { DATABASE_FILE } from "./store/sqlite/database";
import { checkDatabaseFile } from "./store/sqlite/integrity";

export interface RunningColony {
  url: string;
  port: number;
  service: ColonyService;
  subsystems: Subsystems;
  /** Stops accepting, lets in-flight requests finish, then closes the store. */
  stop(): Promise<void>;
}

/** The port is taken or may not be used: a plain message for the operator, no stack trace. */
export class ListenError extends Error {
  constructor(host: string, port: number, code: string) {
    const why =
      code === "EADDRINUSE"
        ? "is already in use by another process"
        : code === "EACCES"
          ? "may not be used by this user"
          : `cannot be listened on (${code})`;
    super(`port ${port} on ${host} ${why}: stop the other process or choose another COLONY_PORT`);
  }
}

export interface StartOptions {
  logger?: Logger;
}

export async function startColony(config: Config, opts: StartOptions = {}): Promise<RunningColony> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const natives = prepareNatives({ cacheDir: config.cacheDir });
  // A damaged database stops the start (DatabaseDamagedError) before anything reads it.
  if (!config.databaseUrl) checkDatabaseFile(join(config.dataDir, DATABASE_FILE), natives.sqliteVec);
  // Imported only now: in the compiled binary the native ONNX binding is extracted above first.
  const { loadEmbedder } = await import("./embedding/load");
  const subsystems = await startSubsystems({
    dataDir: config.dataDir,
    sqliteVecPath: natives.sqliteVec,
    database: config.databaseUrl ? { url: config.databaseUrl, poolSize: config.databasePool } : null,
    modelDir: config.modelDir ?? natives.modelDir,
    loadEmbedder,
    logger,
  });
  // Loading the model leaves its file bytes (tens of MB) as garbage: collect them now rather
  // than whenever the heap next grows, so an idle colony's footprint is what it really uses.
  Bun.gc(true);
  let boundUrl = "";
  const publicUrl = () => config.publicUrl ?? boundUrl;
  const service = new ColonyService({ config, logger, subsystems, publicUrl });
  await service.start();
  const app = createApp(service, config, logger);
  const lookups = new FingerprintLookups(service);
  const handler = createFetchHandler({
    config,
    logger,
    app,
    lookups,
    pseudonymSecret: await pseudonymSecret(subsystems),
    routeQuota: routeQuotas(service),
  });
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({ hostname: config.host, port: config.port, fetch: handler, routes: handler.routes });
  } catch (err) {
    await service.stop();
    await subsystems.close();
    const code = (err as { code?: unknown }).code;
    throw typeof code === "string" && /^E[A-Z]+$/.test(code) ? new ListenError(config.host, config.port, code) : err;
  }
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  const reachableHost = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  boundUrl = `http://${reachableHost.includes(":") ? `[${reachableHost}]` : reachableHost}:${server.port}`;
  logger.info("colony listening", { url, data_dir: config.dataDir, public_url: publicUrl() });
  let stopping: Promise<void> | null = null;
  return {
    url,
    port: server.port!,
    service,
    subsystems,
    stop() {
      stopping ??= (async () => {
        await handler.drain(); // answer what clients already sent, closing their connections
        await server.stop(false);
        await service.stop();
        await subsystems.close();
        logger.info("colony stopped");
      })();
      return stopping;
    },
  };
}

/** The key of address pseudonyms: made once per data directory, so pseudonyms are stable. */
async function pseudonymSecret(s: Subsystems): Promise<string> {
  const fresh = randomBytes(32).toString("base64url");
  if (!s.store) return fresh;
  const stored = await s.store.kv.get("pseudonym.secret");
  if (stored) return stored;
  await s.store.kv.set("pseudonym.secret", fresh);
  return fresh;
}

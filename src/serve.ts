// Boots a colony: builds it (src/compose.ts), then listens. Used by `colony serve` and by tests,
// which start real colonies on loopback with port 0.
import { type ComposedSubsystems, composeColony } from "./compose";
import type { createFetchHandler } from "./http/server";
import type { Config } from "./config";
import { errorResponse, serverFallbacks } from "./http/errors";
import { ListenError } from "./http/listen-error";
import { createLogger, type Logger } from "./log";
import type { ColonyService } from "./service/colony";

export { ListenError };

export interface RunningColony {
  url: string;
  port: number;
  /** Where a client on this machine reaches it (127.0.0.1 when listening on every address). */
  localUrl: string;
  service: ColonyService;
  subsystems: ComposedSubsystems;
  /** Stops accepting, lets in-flight requests finish, then closes the store. */
  stop(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
}

export async function startColony(config: Config, opts: StartOptions = {}): Promise<RunningColony> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  let boundUrl = "";
  const publicUrl = () => config.publicUrl ?? boundUrl;
  // The colony being served: replaced once, when a store that did not open at start opens later
  // (composeColony's `recover`); the server itself stays.
  let colony = await composeColony(config, { logger, publicUrl });
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      fetch: (request, srv) => colony.handler(request, srv),
      routes: delegatedRoutes(colony.handler.routes, () => colony.handler.routes),
      ...serverFallbacks(logger, errorResponse),
    });
  } catch (err) {
    await colony.close();
    throw ListenError.from(err, config.host, config.port);
  }
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  const reachableHost = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  boundUrl = `http://${reachableHost.includes(":") ? `[${reachableHost}]` : reachableHost}:${server.port}`;
  // A colony on PostgreSQL keeps nothing in COLONY_DATA_DIR: the log names where its data is.
  const store = config.databaseUrl ? { backend: "postgres" } : { backend: "sqlite", data_dir: config.dataDir };
  logger.info("colony listening", { url, ...store, public_url: publicUrl() });
  let stopping: Promise<void> | null = null;
  const recovering = colony
    .recover?.(() => stopping !== null)
    .then(
      async (recovered) => {
        if (!recovered) return;
        const unready = colony;
        colony = recovered;
        await unready.retire();
      },
      (err) => logger.error("reopening the store failed; the colony stays unready", { error: String(err) }),
    );
  return {
    url,
    port: server.port!,
    localUrl: boundUrl,
    get service() {
      return colony.service;
    },
    get subsystems() {
      return colony.subsystems;
    },
    stop() {
      stopping ??= (async () => {
        await recovering;
        await colony.handler.drain(); // answer what clients already sent, closing their connections
        await server.stop(false);
        await colony.close();
        logger.info("colony stopped");
      })();
      return stopping;
    },
  };
}

type Routes = ReturnType<typeof createFetchHandler>["routes"];

/** Bun's native routes, each calling the same route of whichever colony is served at the time. */
function delegatedRoutes(shape: Routes, current: () => Routes): Routes {
  const routes: Record<string, Record<string, unknown>> = {};
  for (const [path, methods] of Object.entries(shape)) {
    routes[path] = {};
    for (const method of Object.keys(methods)) {
      routes[path][method] = (request: never, srv: never) => (current() as any)[path][method](request, srv);
    }
  }
  return routes as unknown as Routes;
}

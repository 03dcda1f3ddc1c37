// Boots a colony: builds it (src/compose.ts), then listens. Used by `colony serve` and by tests,
// which start real colonies on loopback with port 0.
import { type ComposedSubsystems, composeColony } from "./compose";
import type { Config } from "./config";
import { createLogger, type Logger } from "./log";
import type { ColonyService } from "./service/colony";

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
  let boundUrl = "";
  const publicUrl = () => config.publicUrl ?? boundUrl;
  const colony = await composeColony(config, { logger, publicUrl });
  const { service, subsystems, handler } = colony;
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({ hostname: config.host, port: config.port, fetch: handler, routes: handler.routes });
  } catch (err) {
    await colony.close();
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
    localUrl: boundUrl,
    service,
    subsystems,
    stop() {
      stopping ??= (async () => {
        await handler.drain(); // answer what clients already sent, closing their connections
        await server.stop(false);
        await colony.close();
        logger.info("colony stopped");
      })();
      return stopping;
    },
  };
}

// Ports for the servers tests start (colony binaries, throwaway PostgreSQL servers, proxies).
//
// A port found free by binding port 0 is released before the server that gets it binds it, so
// another process may take it in between: an outgoing connection's ephemeral port (the kernel hands
// those out from the same range, /proc/sys/net/ipv4/ip_local_port_range, 32768–60999 on Linux), or
// another lane of tools/test.sh asking at the same moment. In a lane (COLONY_TEST_LANE, set by
// tools/test.sh) ports come from that lane's own range below the ephemeral one, so neither can
// happen; outside one (a file run alone, a bench) the kernel chooses, as before.
import { createServer } from "node:net";

/** Each lane's range: LANE_PORT_BASE + lane × LANE_PORTS onwards. Below 32768, above common services. */
const LANE_PORT_BASE = 20_000;
const LANE_PORTS = 2_000;
const lane = Number.parseInt(process.env.COLONY_TEST_LANE ?? "", 10);
/**
 * The next port of this lane's range to try (a lane is one test process); from a random point, so
 * that two suites run at once on one machine (two checkouts) seldom try the same ports together.
 */
let next = Math.floor(Math.random() * LANE_PORTS);

/** Whether 127.0.0.1:port can be bound now (a server left over, or another program, may hold it). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 no server holds now. */
export async function freePort(): Promise<number> {
  if (Number.isInteger(lane) && lane >= 0 && lane < 6) {
    for (let tried = 0; tried < LANE_PORTS; tried++) {
      const port = LANE_PORT_BASE + lane * LANE_PORTS + (next++ % LANE_PORTS);
      if (await bindable(port)) return port;
    }
    throw new Error(`no free port in test lane ${lane}'s range`);
  }
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port!;
  await server.stop(true);
  return port;
}

// A server that cannot listen (a port taken or forbidden, an address not of this machine): a plain
// message for the operator naming the setting to change, no stack trace (main exits 2). Used by
// `colony serve` and the standalone MCP server (`colony mcp --http`).

export class ListenError extends Error {
  constructor(host: string, port: number, code: string, portSetting = "COLONY_PORT") {
    if (code === "EADDRNOTAVAIL") {
      super(`COLONY_HOST=${host} is not an address of this machine: give one of its addresses, 0.0.0.0 or :: (every address)`);
      return;
    }
    if (code === "EACCES") {
      // Stopping another process would not help: ports below 1024 need privileges on Linux.
      super(
        `port ${port} on ${host} may not be used by this user (ports below 1024 need root or CAP_NET_BIND_SERVICE): choose another ${portSetting}`,
      );
      return;
    }
    const why = code === "EADDRINUSE" ? "is already in use by another process" : `cannot be listened on (${code})`;
    super(`port ${port} on ${host} ${why}: stop the other process or choose another ${portSetting}`);
  }

  /** Bun.serve's error as a ListenError when it is a listen failure (an errno code), else itself. */
  static from(err: unknown, host: string, port: number, portSetting?: string): unknown {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && /^E[A-Z]+$/.test(code) ? new ListenError(host, port, code, portSetting) : err;
  }
}

import { describe, expect, test } from "bun:test";
import { ListenError } from "./listen-error";

describe("ListenError: what the operator should change", () => {
  test("a port taken: stop the other process or choose another port", () => {
    expect(new ListenError("127.0.0.1", 8080, "EADDRINUSE").message).toBe(
      "port 8080 on 127.0.0.1 is already in use by another process: stop the other process or choose another COLONY_PORT",
    );
  });

  // Before, a privileged port said "stop the other process", which there is none of.
  test("a port this user may not listen on: why, and choose another port", () => {
    expect(new ListenError("0.0.0.0", 80, "EACCES").message).toBe(
      "port 80 on 0.0.0.0 may not be used by this user (ports below 1024 need root or CAP_NET_BIND_SERVICE): choose another COLONY_PORT",
    );
    expect(new ListenError("127.0.0.1", 443, "EACCES", "COLONY_MCP_PORT (or --port N)").message).toEndWith(
      "choose another COLONY_MCP_PORT (or --port N)",
    );
  });

  test("an address not of this machine names COLONY_HOST", () => {
    expect(new ListenError("192.0.2.1", 8080, "EADDRNOTAVAIL").message).toStartWith("COLONY_HOST=192.0.2.1 is not an address");
  });
});

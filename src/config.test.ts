import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "./config";

describe("loadConfig", () => {
  test("embedded defaults", () => {
    const c = loadConfig({ HOME: "/home/u" });
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(8080);
    expect(c.publicUrl).toBeNull(); // derived from the bound address at start
    expect(c.rateLimit).toBe(600);
    expect(c.publishLimit).toBe(30);
    expect(c.draftLimit).toBe(30);
    expect(c.maxQueue).toBe(1000);
    expect(c.trustProxy).toEqual({ kind: "off" });
    expect(c.adminToken).toBeNull();
    expect(c.modelDir).toBeNull();
    expect(c.cacheDir).toBe("/home/u/.cache/colony");
    expect(c.logLevel).toBe("info");
    expect(c.dataDir.endsWith("/colony_data")).toBe(true);
  });

  test("reads every variable", () => {
    const c = loadConfig({
      COLONY_HOST: "0.0.0.0",
      COLONY_PORT: "9000",
      COLONY_DATA_DIR: "/var/lib/colony",
      COLONY_PUBLIC_URL: "https://colony.example.org/",
      COLONY_ADMIN_TOKEN: "0123456789abcdef-secret",
      COLONY_RATE_LIMIT: "100",
      COLONY_PUBLISH_LIMIT: "5",
      COLONY_DRAFT_LIMIT: "6",
      COLONY_MAX_QUEUE: "7",
      COLONY_TRUST_PROXY: "1",
      COLONY_MODEL_DIR: "/models/minilm",
      COLONY_CACHE_DIR: "/tmp/cc",
      COLONY_LOG_LEVEL: "WARN",
    });
    expect(c).toMatchObject({
      host: "0.0.0.0",
      port: 9000,
      dataDir: "/var/lib/colony",
      publicUrl: "https://colony.example.org",
      adminToken: "0123456789abcdef-secret",
      rateLimit: 100,
      publishLimit: 5,
      draftLimit: 6,
      maxQueue: 7,
      trustProxy: { kind: "hops", hops: 1 },
      modelDir: "/models/minilm",
      cacheDir: "/tmp/cc",
      logLevel: "warn",
    });
  });

  const bad: [string, string, RegExp][] = [
    ["COLONY_PORT", "80a", /whole number from 0 to 65535/],
    ["COLONY_PORT", "70000", /whole number/],
    ["COLONY_RATE_LIMIT", "0", /from 1/],
    ["COLONY_MAX_QUEUE", "-1", /whole number/],
    ["COLONY_TRUST_PROXY", "maybe", /hop count.*CIDR/],
    ["COLONY_TRUST_PROXY", "33", /1 to 32/],
    ["COLONY_TRUST_PROXY", "10.0.0.0/33", /CIDR/],
    ["COLONY_TRUST_PROXY", "10.0.0.1, fd00::/129", /CIDR/],
    ["COLONY_TRUST_PROXY", "10.0.0.1,,10.0.0.2", /CIDR/],
    ["COLONY_TRUST_PROXY", "proxy.internal", /CIDR/],
    ["COLONY_PUBLIC_URL", "colony.local", /absolute http/],
    ["COLONY_PUBLIC_URL", "ftp://x", /absolute http/],
    ["COLONY_LOG_LEVEL", "loud", /debug, info/],
    ["COLONY_ADMIN_TOKEN", "short", /at least 16/],
    ["COLONY_HOST", "bad host!", /host name/],
    ["COLONY_DATABASE_URL", "mysql://u@h/d", /postgres:\/\/ or postgresql:\/\/.*not a postgres/],
    [
      "COLONY_DATABASE_URL",
      "postgres://u:pw@db1,db2/c?target_session_attrs=standby",
      /several.*target_session_attrs=standby is not supported/,
    ],
    ["COLONY_DATABASE_URL", "postgres://u:pw@db1,,db2/c", /host 2 of the list is empty/],
    ["COLONY_DATABASE_TIMEOUT_MS", "10s", /whole number from 0/],
  ];
  for (const [name, value, accepts] of bad) {
    test(`${name}=${value} is refused naming the variable`, () => {
      let err: unknown;
      try {
        loadConfig({ [name]: value });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe(name);
      expect((err as Error).message).toContain(name);
      expect((err as Error).message).toMatch(accepts);
    });
  }

  test("a database URL with several hosts is accepted as written; the timeout has a default", () => {
    const url = "postgres://colony:pw@db1:5432,db2:5432/colony?target_session_attrs=read-write";
    expect(loadConfig({ COLONY_DATABASE_URL: url })).toMatchObject({ databaseUrl: url, databaseTimeoutMs: 10_000 });
    expect(loadConfig({ COLONY_DATABASE_TIMEOUT_MS: "2500" }).databaseTimeoutMs).toBe(2500);
  });

  test("a refused database URL's password never appears in the error message", () => {
    expect(() => loadConfig({ COLONY_DATABASE_URL: "postgres://u:hunter2@a,,b/c" })).toThrow(/<hidden>/);
    expect(() => loadConfig({ COLONY_DATABASE_URL: "postgres://u:hunter2@a,,b/c" })).not.toThrow(/hunter2/);
  });

  test("the admin token never appears in the error message", () => {
    expect(() => loadConfig({ COLONY_ADMIN_TOKEN: "tiny" })).toThrow(/<hidden>/);
  });
});

import { describe, expect, test } from "bun:test";
import { ConfigError } from "../config";
import { hostedToolConfig, loadMcpConfig, localToolConfig, standaloneToolConfig } from "./config";

describe("loadMcpConfig", () => {
  test("defaults of interface.md §4.14 and decisions §12", () => {
    expect(loadMcpConfig({})).toEqual({
      colonyUrl: "http://127.0.0.1:8080",
      apiKey: null,
      publish: "off",
      minFailedAttempts: 3,
      allowHighRisk: false,
      agentId: null,
      agentModel: "unknown",
      publishWaitS: 25,
      mcpPort: 8090,
      allowedOrigins: [],
      maxConcurrent: 32,
    });
  });

  test("reads every variable", () => {
    const c = loadMcpConfig({
      COLONY_URL: "https://colony.example.org/",
      COLONY_API_KEY: "k",
      COLONY_PUBLISH: "ASK",
      COLONY_MIN_FAILED_ATTEMPTS: "0",
      COLONY_ALLOW_HIGH_RISK: "1",
      COLONY_AGENT_ID: "agent_id-0001",
      COLONY_AGENT_MODEL: "claude-x",
      COLONY_PUBLISH_WAIT_S: "5",
      COLONY_MCP_PORT: "9100",
      COLONY_ALLOWED_ORIGINS: "https://Inspector.example.com/, http://localhost:6274",
      COLONY_MCP_MAX_CONCURRENT: "4",
    });
    expect(c).toEqual({
      colonyUrl: "https://colony.example.org",
      apiKey: "k",
      publish: "ask",
      minFailedAttempts: 0,
      allowHighRisk: true,
      agentId: "agent_id-0001",
      agentModel: "claude-x",
      publishWaitS: 5,
      mcpPort: 9100,
      allowedOrigins: ["https://inspector.example.com", "http://localhost:6274"],
      maxConcurrent: 4,
    });
    for (const bad of ["0", "-1", "1.5", "10001", "many"]) {
      expect(() => loadMcpConfig({ COLONY_MCP_MAX_CONCURRENT: bad })).toThrow(ConfigError);
    }
  });

  // The length was counted in UTF-16 units, the schema counts characters: a model name of 200
  // emoji (valid as a trail's agent_info.model) stopped the server as "over 200 characters".
  test("COLONY_AGENT_MODEL is held to 200 characters as the trail's schema counts them", () => {
    expect(loadMcpConfig({ COLONY_AGENT_MODEL: "🤖".repeat(200) }).agentModel).toBe("🤖".repeat(200));
    expect(hostedToolConfig({ COLONY_AGENT_MODEL: "🤖".repeat(200) }).agentModel).toBe("🤖".repeat(200));
    expect(() => loadMcpConfig({ COLONY_AGENT_MODEL: "🤖".repeat(201) })).toThrow(ConfigError);
  });

  test("a refused COLONY_URL is echoed without its user and password", () => {
    // The refusal goes to stderr, which MCP clients keep in their log files.
    // A password holding `/`, `#` or `?` (a generated one, not percent-encoded) makes the URL
    // unparsable, and the part after that character was taken for the path: it was echoed whole.
    // So was a user and password written without a scheme (`bob:pw@host` parses as scheme `bob:`).
    for (const url of [
      "ftp://bob:hunter2-pass@colony.example",
      "colony://bob:hunter2-pass@x",
      "https://bob:hunter2/pass@colony.example",
      "https://bob:hun#ter2-pass@colony.example/",
      "https://bob:hun?ter2-pass@colony.example",
      "bob:hunter2-pass@colony.example:8080",
    ]) {
      let err: unknown;
      try {
        loadMcpConfig({ COLONY_URL: url });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toStartWith("COLONY_URL=");
      expect((err as Error).message).not.toContain("hunter2");
      expect((err as Error).message).not.toContain("ter2-pass");
      expect((err as Error).message).toContain("<credentials>@");
    }
  });

  test("a bad value names its variable", () => {
    const cases: [string, string][] = [
      ["COLONY_URL", "colony.local"],
      ["COLONY_PUBLISH", "yes"],
      ["COLONY_ALLOWED_ORIGINS", "https://ok.example.com, https://app.example.com/path"],
      ["COLONY_ALLOWED_ORIGINS", "inspector.example.com"],
      ["COLONY_ALLOWED_ORIGINS", "*"],
      ["COLONY_MIN_FAILED_ATTEMPTS", "-1"],
      ["COLONY_ALLOW_HIGH_RISK", "true"],
      ["COLONY_AGENT_ID", "has space in it"],
      ["COLONY_AGENT_ID", "anon-my-laptop"],
      ["COLONY_AGENT_MODEL", "m".repeat(201)],
      ["COLONY_PUBLISH_WAIT_S", "1.5"],
      ["COLONY_MCP_PORT", "70000"],
    ];
    for (const [name, value] of cases) {
      let err: unknown;
      try {
        loadMcpConfig({ [name]: value });
      } catch (e) {
        err = e;
      }
      expect({ name, isConfigError: err instanceof ConfigError, variable: (err as ConfigError)?.variable }).toEqual({
        name,
        isConfigError: true,
        variable: name,
      });
    }
  });

  test("the hosted route reads only its own variables", () => {
    const hosted = hostedToolConfig({
      COLONY_PUBLISH: "bogus",
      COLONY_URL: "bogus",
      COLONY_MIN_FAILED_ATTEMPTS: "2",
      COLONY_ALLOW_HIGH_RISK: "1",
    });
    expect(hosted).toMatchObject({ mode: "hosted", minFailedAttempts: 2, allowHighRisk: true, detectEnvironment: false });
    expect(() => hostedToolConfig({ COLONY_MIN_FAILED_ATTEMPTS: "x" })).toThrow(ConfigError);
  });

  test("stdio is local and detects the environment; --http publishes through drafts", () => {
    const cfg = loadMcpConfig({ COLONY_PUBLISH: "auto" });
    expect(localToolConfig(cfg)).toMatchObject({ mode: "local", publish: "auto", detectEnvironment: true, publishWaitS: 25 });
    expect(standaloneToolConfig(cfg)).toMatchObject({ mode: "hosted", detectEnvironment: false });
  });
});

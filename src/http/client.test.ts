import { expect, test } from "bun:test";
import { ServiceError } from "../service/errors";
import { clientAddress, identify, pseudonym } from "./client";

test("X-Forwarded-For is ignored unless the proxy is trusted", () => {
  const h = new Headers({ "x-forwarded-for": "203.0.113.9, 10.0.0.1" });
  expect(clientAddress({ headers: h }, "127.0.0.1", false)).toBe("127.0.0.1");
  expect(clientAddress({ headers: h }, "127.0.0.1", true)).toBe("203.0.113.9");
  expect(clientAddress({ headers: new Headers() }, "127.0.0.1", true)).toBe("127.0.0.1");
});

test("agent ids: 8 to 64 of [A-Za-z0-9_-]", () => {
  for (const ok of ["agent_01", "A-b_c-d_", "x".repeat(64)]) {
    expect(identify(new Headers({ "x-colony-agent": ok }), "a", "s")).toEqual({ address: "a", agent: ok, agentDeclared: true });
  }
  for (const bad of ["short", "x".repeat(65), "has space1", "semi;colon", "ünïcode12", ""]) {
    expect(() => identify(new Headers({ "x-colony-agent": bad }), "a", "s")).toThrow(ServiceError);
  }
});

test("without an agent id the agent is a keyed pseudonym, never the address", () => {
  const id = identify(new Headers(), "198.51.100.7", "secret-1");
  expect(id.agentDeclared).toBe(false);
  expect(id.agent).toMatch(/^anon-[A-Za-z0-9_-]{16}$/);
  expect(id.agent).not.toContain("198.51");
  expect(pseudonym("198.51.100.7", "secret-1")).toBe(id.agent);
  expect(pseudonym("198.51.100.7", "secret-2")).not.toBe(id.agent);
  expect(pseudonym("198.51.100.8", "secret-1")).not.toBe(id.agent);
});

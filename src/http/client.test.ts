import { describe, expect, test } from "bun:test";
import { ServiceError } from "../service/errors";
import { clientAddress, identify, MAX_PSEUDONYMS, pseudonym, pseudonymMemoSize } from "./client";
import { clientNetwork, parseTrustProxy, type TrustProxy } from "../core/proxy-trust";

const trust = (setting: string): TrustProxy => parseTrustProxy(setting)!;
const address = (xff: string | null, peer: string | null, setting: string) =>
  clientAddress({ headers: new Headers(xff === null ? {} : { "x-forwarded-for": xff }) }, peer, trust(setting));

describe("client address behind proxies (COLONY_TRUST_PROXY)", () => {
  test("off: X-Forwarded-For is ignored", () => {
    for (const off of ["", "0", "off", "false", "no"]) expect(address("203.0.113.9", "127.0.0.1", off)).toBe("127.0.0.1");
  });

  test("a spoofed left-most entry never wins: one proxy appends the real peer, which is used", () => {
    // The client sent "X-Forwarded-For: 1.2.3.4"; our proxy appended the address it saw.
    for (const one of ["1", "true", "yes", "on"]) expect(address("1.2.3.4, 198.51.100.7", "10.0.0.2", one)).toBe("198.51.100.7");
    expect(address("1.2.3.4, 5.6.7.8, 198.51.100.7", "10.0.0.2", "1")).toBe("198.51.100.7");
  });

  test("a hop count takes the entry that many hops away; a short chain gives its left-most", () => {
    expect(address("1.2.3.4, 198.51.100.7, 10.0.0.3", "10.0.0.2", "2")).toBe("198.51.100.7");
    expect(address("198.51.100.7", "10.0.0.2", "3")).toBe("198.51.100.7");
  });

  test("a proxy list skips listed proxies from the right (IPv4 and IPv6, addresses and CIDRs)", () => {
    const list = "10.0.0.0/8, 2001:db8::/32, 192.0.2.1";
    expect(address("1.2.3.4, 198.51.100.7, 10.1.2.3, 192.0.2.1", "10.0.0.2", list)).toBe("198.51.100.7");
    expect(address("1.2.3.4, 2001:db8:ffff::9, 2001:db8::1", "2001:db8::2", list)).toBe("1.2.3.4");
    expect(address("1.2.3.4, 2606:4700::1111", "[2001:db8::2]:443", list)).toBe("2606:4700::/64");
    // An IPv4 peer seen on a dual-stack socket matches its IPv4 block.
    expect(address("1.2.3.4, 198.51.100.7", "::ffff:10.0.0.2", list)).toBe("198.51.100.7");
    // Every entry a proxy: the left-most is all there is.
    expect(address("10.9.9.9, 10.0.0.3", "10.0.0.2", list)).toBe("10.9.9.9");
  });

  test("an IPv6 client is its /64 network, however the address is written; IPv4-mapped is IPv4", () => {
    for (const [written, network] of [
      ["2001:db8:7:9:a::1", "2001:db8:7:9::/64"],
      ["2001:0DB8:0007:0009:ffff:ffff:1.2.3.4", "2001:db8:7:9::/64"],
      ["2001:db8:7:9::", "2001:db8:7:9::/64"],
      ["2001:db8::1", "2001:db8::/64"],
      ["2001:0:0:5::1", "2001:0:0:5::/64"],
      ["fe80::1%eth0", "fe80::/64"],
      ["::1", "::/64"],
      ["::ffff:198.51.100.60", "198.51.100.60"],
      ["198.51.100.60", "198.51.100.60"],
      ["unknown", "unknown"],
      ["not:an:address", "not:an:address"],
    ]) {
      expect(clientNetwork(written!)).toBe(network!);
    }
    // The peer itself too, with no proxy trusted.
    expect(address(null, "2001:db8:7:9:a::1", "off")).toBe("2001:db8:7:9::/64");
  });

  test("with a list, a peer that is not a listed proxy is the client whatever it forwards", () => {
    expect(address("10.0.0.5, 1.2.3.4", "198.51.100.7", "10.0.0.0/8")).toBe("198.51.100.7");
  });

  test("ports are dropped; no header or an empty one gives the peer", () => {
    expect(address("1.2.3.4, 198.51.100.7:5123", "10.0.0.2", "1")).toBe("198.51.100.7");
    expect(address("[2606:4700::1111]:80", "10.0.0.2", "1")).toBe("2606:4700::/64");
    expect(address(null, "10.0.0.2", "1")).toBe("10.0.0.2");
    expect(address(" , ", "10.0.0.2", "1")).toBe("10.0.0.2");
  });

  test("bad settings are refused (the caller names the variable: src/config.test.ts)", () => {
    for (const bad of ["maybe", "33", "-1", "10.0.0.0/33", "::/129", "10.0.0.1/8/2", "10.0.0.1,,10.0.0.2", "proxy.local", "10.0.0.0/x"]) {
      expect(parseTrustProxy(bad)).toBeNull();
    }
  });
});

test("agent ids: 8 to 64 of [A-Za-z0-9_-], not the colony's own anon- prefix", () => {
  for (const ok of ["agent_01", "A-b_c-d_", "x".repeat(64), "my-anon-agent", "Anon-agent-01", "anonymous-01"]) {
    expect(identify(new Headers({ "x-colony-agent": ok }), "a", "s")).toEqual({
      address: "a",
      client: pseudonym("a", "s"),
      agent: ok,
      agentDeclared: true,
    });
  }
  for (const bad of ["short", "x".repeat(65), "has space1", "semi;colon", "ünïcode12", "", pseudonym("b", "s"), "anon-agent-01"]) {
    expect(() => identify(new Headers({ "x-colony-agent": bad }), "a", "s")).toThrow(ServiceError);
  }
});

test("without an agent id the agent is a keyed pseudonym, never the address", () => {
  const id = identify(new Headers(), "198.51.100.7", "secret-1");
  expect(id.agentDeclared).toBe(false);
  expect(id.agent).toMatch(/^anon-[A-Za-z0-9_-]{16}$/);
  expect(id.agent).not.toContain("198.51");
  expect(id.client).toBe(id.agent); // the address pseudonym, also kept when an agent id is declared
  expect(pseudonym("198.51.100.7", "secret-1")).toBe(id.agent);
  expect(pseudonym("198.51.100.7", "secret-2")).not.toBe(id.agent);
  expect(pseudonym("198.51.100.8", "secret-1")).not.toBe(id.agent);
});

test("1,000,000 distinct addresses keep the pseudonym memo at its bound; a frequent client keeps its entry", () => {
  const frequent = pseudonym("192.0.2.1", "memo-secret");
  for (let i = 0; i < 1_000_000; i++) {
    pseudonym(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, "memo-secret");
    if (i % 1000 === 0) {
      expect(pseudonym("192.0.2.1", "memo-secret")).toBe(frequent);
      expect(pseudonymMemoSize()).toBeLessThanOrEqual(MAX_PSEUDONYMS);
    }
  }
  expect(pseudonymMemoSize()).toBeGreaterThan(MAX_PSEUDONYMS / 2);
}, 30_000);

// Outcome manipulation (issue 15 item 6): one client address cannot move a trail's strength with
// many reports under fresh agent ids, over HTTP or through the hosted MCP colony_report tool.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { COUNTED_PER_CLIENT_PER_DAY, isCounted, utcDayStart } from "../src/core/outcome-counting";
import { strength } from "../src/core/strength";
import { callTool, connectHttp } from "./support/mcp";
import { startTestColony, type TestColony } from "./support/colony";
import { agent, json, sampleTrail } from "./support/trails";

let colony: TestColony;

// Behind a trusted proxy (one hop) the client is the last X-Forwarded-For entry: one loopback
// test can then speak from several addresses.
const ADMIN = "outcome-manipulation-operator";
const from = (address: string, agentId: string) => ({ ...agent(agentId), "X-Forwarded-For": address });

async function publish(error: string): Promise<string> {
  const res = await colony.fetch("/v1/trails", json(sampleTrail({ error }), from("203.0.113.1", "agent-outcome-author")));
  expect(res.status).toBe(202);
  return ((await res.json()) as any).trail_id;
}

const report = (id: string, outcome: string, headers: Record<string, string>) =>
  colony.fetch(`/v1/trails/${id}/outcomes`, json({ protocol_version: "1.0", outcome }, headers));

beforeAll(async () => {
  colony = await startTestColony({ COLONY_TRUST_PROXY: "1", COLONY_RATE_LIMIT: "100000", COLONY_ADMIN_TOKEN: ADMIN });
});
afterAll(() => colony.dispose());

describe("counted reports per client address", () => {
  test("sixty failed reports from one address under sixty agent ids: only the first two count", async () => {
    const id = await publish("ValueError: outcome manipulation over http");
    await colony.service.worker!.drain();
    const start = ((await (await colony.fetch(`/v1/trails/${id}`)).json()) as any).strength as number;
    const counted: boolean[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await report(id, "failed", from("198.51.100.7", `agent-sock-puppet-${String(i).padStart(2, "0")}`));
      expect(res.status).toBe(202);
      counted.push(((await res.json()) as any).counted);
    }
    expect(counted.filter(Boolean).length).toBe(COUNTED_PER_CLIENT_PER_DAY);
    expect(counted.slice(0, COUNTED_PER_CLIENT_PER_DAY)).toEqual([true, true]);
    const after = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as any;
    expect(after.outcomes.failed).toBe(COUNTED_PER_CLIENT_PER_DAY);
    // Two failures' worth, not sixty (sixty drove a 0.51 trail to 0.05 before the rule).
    expect(after.strength).toBeCloseTo(strength({ worked: 0, partially_worked: 0, failed: 2 }, after.quality), 9);
    expect(after.strength).toBeGreaterThan(start - 0.25);

    // Another address still counts, and so does a declared-agent-free report from a third.
    expect(((await (await report(id, "worked", from("198.51.100.8", "agent-honest-0001"))).json()) as any).counted).toBe(true);
    expect(((await (await report(id, "worked", { "X-Forwarded-For": "198.51.100.9" })).json()) as any).counted).toBe(true);

    // Every report is stored, with the address pseudonym, never the address.
    const rows = await colony.query("SELECT o.client, o.counted FROM outcomes o JOIN trails t ON t.seq = o.trail_seq WHERE t.id = $1", id);
    expect(rows.length).toBe(62);
    expect(rows.filter((r) => !r.counted).length).toBe(60 - COUNTED_PER_CLIENT_PER_DAY);
    for (const r of rows) {
      expect(r.client).toMatch(/^anon-[A-Za-z0-9_-]{16}$/);
      expect(r.client).not.toContain("198.51");
    }
    expect(new Set(rows.map((r) => r.client)).size).toBe(3);
  });

  test("an IPv6 client is its /64 network: thirty addresses of one network count as one address", async () => {
    // One home or one server on IPv6 holds a /64 (2^64 addresses): the rule per address counted
    // each of them, so thirty reports from thirty addresses of one network all counted.
    const id = await publish("ValueError: outcome manipulation from one IPv6 network");
    await colony.service.worker!.drain();
    const counted: boolean[] = [];
    for (let i = 1; i <= 30; i++) {
      const res = await report(id, "failed", from(`2001:db8:7:9:${i.toString(16)}::1`, `agent-v6-puppet-${String(i).padStart(2, "0")}`));
      expect(res.status).toBe(202);
      counted.push(((await res.json()) as any).counted);
    }
    expect(counted.filter(Boolean).length).toBe(COUNTED_PER_CLIENT_PER_DAY);
    // The same network written another way (leading zeros, capitals, IPv4 tail) is the same client.
    const same = await report(id, "failed", from("2001:0DB8:0007:0009:ffff:ffff:1.2.3.4", "agent-v6-puppet-31"));
    expect(((await same.json()) as any).counted).toBe(false);
    // A neighbouring network is another client; an IPv4-mapped address is its IPv4 address.
    expect(((await (await report(id, "worked", from("2001:db8:7:a::1", "agent-v6-other-01"))).json()) as any).counted).toBe(true);
    for (const address of ["198.51.100.60", "::ffff:198.51.100.60", "198.51.100.60"]) {
      await report(id, "worked", from(address, `agent-v4-mapped-${address.length}`));
    }
    const rows = await colony.query(
      "SELECT o.client, o.counted FROM outcomes o JOIN trails t ON t.seq = o.trail_seq WHERE t.id = $1 AND o.outcome = 'worked' AND o.agent LIKE 'agent-v4-mapped-%'",
      id,
    );
    expect(new Set(rows.map((r) => r.client)).size).toBe(1);
    expect(rows.filter((r) => r.counted).length).toBe(COUNTED_PER_CLIENT_PER_DAY);
  });

  test("an IPv6 network shares one publish quota", async () => {
    const limited = await startTestColony({ COLONY_TRUST_PROXY: "1", COLONY_RATE_LIMIT: "100000", COLONY_PUBLISH_LIMIT: "3" });
    try {
      const codes: number[] = [];
      for (let i = 1; i <= 5; i++) {
        const trail = sampleTrail({ error: `ValueError: IPv6 publish quota ${i}` });
        codes.push((await limited.fetch("/v1/trails", json(trail, from(`2001:db8:5::${i}`, "agent-v6-publisher")))).status);
      }
      expect(codes).toEqual([202, 202, 202, 429, 429]);
      const other = await limited.fetch(
        "/v1/trails",
        json(sampleTrail({ error: "ValueError: IPv6 other network" }), from("2001:db8:6::1", "agent-v6-publisher")),
      );
      expect(other.status).toBe(202);
    } finally {
      await limited.dispose();
    }
  });

  test("the hosted MCP colony_report path obeys the same rule", async () => {
    const id = await publish("ValueError: outcome manipulation over mcp");
    await colony.service.worker!.drain();
    const counted: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      const client = await connectHttp(`${colony.url}/mcp`, from("198.51.100.20", `agent-mcp-puppet-${i}`));
      try {
        const r = await callTool(client, "colony_report", { trail_id: id, outcome: "failed" });
        expect(r.isError).toBe(false);
        counted.push(r.structured.counted);
      } finally {
        await client.close();
      }
    }
    expect(counted).toEqual([true, true, false, false, false, false]);
    // The HTTP route from the same address shares the allowance.
    expect(((await (await report(id, "failed", from("198.51.100.20", "agent-http-puppet"))).json()) as any).counted).toBe(false);
  });
});

describe("the counting rule (src/core/outcome-counting.ts)", () => {
  const base = { outcome: "worked" as const, byAuthor: false, agentRepeat: false, clientCountedToday: 0 };
  test("counts a fresh report; not_applicable, the author, a repeat and a used-up address do not count", () => {
    expect(isCounted(base)).toBe(true);
    expect(isCounted({ ...base, clientCountedToday: COUNTED_PER_CLIENT_PER_DAY - 1 })).toBe(true);
    expect(isCounted({ ...base, clientCountedToday: COUNTED_PER_CLIENT_PER_DAY })).toBe(false);
    expect(isCounted({ ...base, outcome: "not_applicable" })).toBe(false);
    expect(isCounted({ ...base, byAuthor: true })).toBe(false);
    expect(isCounted({ ...base, agentRepeat: true })).toBe(false);
  });
  test("the allowance restarts at the UTC day boundary", () => {
    const t = Date.parse("2026-03-04T23:59:59.999Z");
    expect(utcDayStart(t)).toBe(Date.parse("2026-03-04T00:00:00Z"));
    expect(utcDayStart(t + 1)).toBe(Date.parse("2026-03-05T00:00:00Z"));
  });
});

describe("concurrent reports", () => {
  // The count of a client's counted reports was read and the new report inserted in one
  // transaction, but on PostgreSQL concurrent transactions each read the count before any
  // inserted: 8 failed reports sent at once from one address were all counted (the rule allows 2).
  test("eight failed reports sent at once from one address: two count", async () => {
    const id = await publish("ValueError: outcome manipulation by a concurrent burst");
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => report(id, "failed", from("198.51.100.20", `agent-burst-puppet-${i}`))),
    );
    const counted = await Promise.all(answers.map(async (r) => (expect(r.status).toBe(202), ((await r.json()) as any).counted)));
    expect(counted.filter(Boolean).length).toBe(COUNTED_PER_CLIENT_PER_DAY);
    const after = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as any;
    expect(after.outcomes.failed).toBe(COUNTED_PER_CLIENT_PER_DAY);
  });

  // review14: merge credits count among an address's two (see "merge credits" below), also when the
  // copies and the reports arrive at once, on either replica.
  test("eight agents of one address each report and publish a copy at once: two successes in all", async () => {
    const error = "ValueError: outcome manipulation by reports and copies at once";
    const id = await publish(error);
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => [
        report(id, "worked", from("198.51.100.21", `agent-copy-burst-${i}`)),
        colony.fetch("/v1/trails", json(sampleTrail({ error }), from("198.51.100.21", `agent-copy-burst-${i}`))),
      ]).flat(),
    );
    for (const r of answers) expect(r.status).toBe(202);
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    const after = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as any;
    expect(after.outcomes.worked).toBe(COUNTED_PER_CLIENT_PER_DAY);
  });

  // A report that could count locked its trail's row first, then the shared counters; one that
  // could not (not_applicable) took the counters first, then the trail's row through its foreign
  // key: crossing orders. On PostgreSQL sixty reports sent at once deadlocked one pair a second,
  // and the colony's connections waited 10 s behind them (58 of 60 answered 503 unavailable).
  test("sixty reports on one trail at once, counted and uncounted mixed: all answered 202 at once", async () => {
    const id = await publish("ValueError: outcome manipulation by a mixed concurrent burst");
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        report(id, i % 2 ? "not_applicable" : "worked", from(`198.51.100.${40 + (i % 5)}`, `agent-mixed-burst-${i}`)),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(60).fill(202));
    expect(performance.now() - started).toBeLessThan(5000);
    const after = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as any;
    expect(after.outcomes.worked).toBe(5 * COUNTED_PER_CLIENT_PER_DAY);
  }, 30_000);

  // A report read its trail before its transaction: removed meanwhile, the report's insert broke
  // the outcomes' foreign key (500 internal on PostgreSQL) where decisions §6 says 404.
  test("reports sent while the trail is removed: each is 202 or 404 not_found, never an error", async () => {
    for (let round = 0; round < 3; round++) {
      const id = await publish(`ValueError: outcome reports racing the removal, round ${round}`);
      await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
      const reports = Array.from({ length: 30 }, (_, i) =>
        report(id, i % 2 ? "not_applicable" : "worked", from(`198.51.100.${50 + (i % 10)}`, `agent-removal-race-${i}`)),
      );
      const removal = colony.fetch(`/v1/trails/${id}`, { method: "DELETE", headers: { Authorization: `Bearer ${ADMIN}` } });
      expect((await removal).status).toBe(200);
      for (const r of await Promise.all(reports)) {
        expect([202, 404]).toContain(r.status);
        if (r.status === 404) expect(((await r.json()) as any).error.code).toBe("not_found");
      }
      expect(
        (await colony.query("SELECT count(*) AS n FROM outcomes o LEFT JOIN trails t ON t.seq = o.trail_seq WHERE t.seq IS NULL"))[0].n,
      ).toBe(0);
    }
  }, 30_000);
});

describe("merge credits", () => {
  // A merged trail counts as one success for the trail it merged into, once a day per agent. One
  // address published the same fix again and again, each time under a fresh X-Colony-Agent, and
  // every copy credited: 20 publishes raised a trail from 0 to 20 worked (720 a day at the default
  // publish quota), past the two counted reports an address is allowed.
  test("twenty copies of a fix from one address under twenty agent ids credit once; another address credits too", async () => {
    const trail = sampleTrail({ error: "ValueError: merge credits from sock puppets" });
    const first = await colony.fetch("/v1/trails", json(trail, from("203.0.113.1", "agent-merge-author")));
    const id = ((await first.json()) as any).trail_id as string;
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    for (let i = 0; i < 20; i++) {
      const res = await colony.fetch("/v1/trails", json(trail, from("198.51.100.30", `agent-merge-puppet-${String(i).padStart(2, "0")}`)));
      expect(res.status).toBe(202);
      await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    }
    const after = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as any;
    expect(after.status).toBe("indexed");
    expect(after.outcomes.worked).toBe(1);
    const merged = await colony.query(
      "SELECT count(*) AS n FROM trails WHERE status = 'merged' AND merged_into = $1 AND client IS NOT NULL",
      id,
    );
    expect(Number(merged[0].n)).toBe(20);

    // Another address's copy still credits, and so does a draft approved from a third address.
    await colony.fetch("/v1/trails", json(trail, from("198.51.100.31", "agent-merge-honest")));
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    expect(((await (await colony.fetch(`/v1/trails/${id}`)).json()) as any).outcomes.worked).toBe(2);
    const draft = (await (await colony.fetch("/v1/drafts", json(trail, from("198.51.100.30", "agent-merge-drafter")))).json()) as any;
    expect(
      (
        await colony.fetch(`/v1/drafts/${draft.draft_id}/publish`, {
          method: "POST",
          headers: from("198.51.100.32", "agent-merge-approver"),
        })
      ).status,
    ).toBe(202);
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    expect(((await (await colony.fetch(`/v1/trails/${id}`)).json()) as any).outcomes.worked).toBe(3);
  });

  // review14: a merge credit and a counted report were two ledgers that never saw each other. One
  // agent that followed a trail, reported it worked and then published its own copy of the fix
  // (the colony_publish flow after a solved error) gave the trail two successes for one
  // experience; one address gave three (two agents' reports, a third agent's copy), past its two.
  test("a merge credit and a counted report are one allowance: per agent, and per address", async () => {
    const settle = () => Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    const worked = async (id: string) => ((await (await colony.fetch(`/v1/trails/${id}`)).json()) as any).outcomes.worked as number;
    const publishCopy = async (trail: object, headers: Record<string, string>) => {
      const res = await colony.fetch("/v1/trails", json(trail, headers));
      expect(res.status).toBe(202);
      const copyId = ((await res.json()) as any).trail_id as string;
      await settle();
      expect(((await (await colony.fetch(`/v1/trails/${copyId}`)).json()) as any).status).toBe("merged");
      return copyId;
    };

    // Report first, then a copy from the same agent: the copy merges without a credit.
    const trail = sampleTrail({ error: "ValueError: one experience counted twice through a merge" });
    const first = await colony.fetch("/v1/trails", json(trail, from("203.0.113.1", "agent-merge-author")));
    const id = ((await first.json()) as any).trail_id as string;
    await settle();
    const reported = (await (await report(id, "worked", from("198.51.100.40", "agent-merge-follower"))).json()) as any;
    expect(reported.counted).toBe(true);
    await publishCopy(trail, from("198.51.100.40", "agent-merge-follower"));
    expect(await worked(id)).toBe(1);

    // A copy first (credited), then a report from the same agent, through its own copy's id: a repeat.
    const copyId = await publishCopy(trail, from("198.51.100.41", "agent-merge-copier"));
    expect(await worked(id)).toBe(2);
    const again = (await (await report(copyId, "worked", from("198.51.100.41", "agent-merge-copier"))).json()) as any;
    expect(again.counted).toBe(false);
    expect(await worked(id)).toBe(2);

    // One address: two agents' counted reports, then a third agent's copy: no credit past the two.
    for (const who of ["agent-merge-nat-1", "agent-merge-nat-2"]) {
      expect(((await (await report(id, "worked", from("198.51.100.42", who))).json()) as any).counted).toBe(true);
    }
    await publishCopy(trail, from("198.51.100.42", "agent-merge-nat-3"));
    expect(await worked(id)).toBe(4);

    // And the other way round: an address's credit, then two more agents' reports: one counts.
    await publishCopy(trail, from("198.51.100.43", "agent-merge-ci-1"));
    expect(await worked(id)).toBe(5);
    const counted = [];
    for (const who of ["agent-merge-ci-2", "agent-merge-ci-3"]) {
      counted.push(((await (await report(id, "worked", from("198.51.100.43", who))).json()) as any).counted);
    }
    expect(counted).toEqual([true, false]);
    expect(await worked(id)).toBe(6);
  });
});

describe("the colony's own pseudonyms cannot be claimed", () => {
  // Without X-Colony-Agent a client is `anon-` + a keyed hash of its address, shown in the activity
  // list and in feed replies. Any client could send that name as its X-Colony-Agent: its reports
  // then stood for the victim's (a victim's later report on the trail was "a repeat" and did not
  // count; notes appeared as the victim's replies).
  test("an X-Colony-Agent starting with anon- is refused; the victim's report still counts", async () => {
    const first = await publish("ValueError: pseudonym claimed by another address (first)");
    const second = await publish("ValueError: pseudonym claimed by another address (second)");
    await Promise.all(colony.replicas.map((r) => r.service.worker!.drain()));
    const victim = { "X-Forwarded-For": "198.51.100.40" };
    expect((await report(first, "worked", victim)).status).toBe(202);
    const events = ((await (await colony.fetch("/v1/activity?limit=50")).json()) as any).events as { agent: string; trail_id: string }[];
    const name = events.find((e) => e.trail_id === first)!.agent;
    expect(name).toMatch(/^anon-[A-Za-z0-9_-]{16}$/);

    const claimed = await report(second, "worked", { ...agent(name), "X-Forwarded-For": "198.51.100.41" });
    expect(claimed.status).toBe(400);
    expect(((await claimed.json()) as any).error.code).toBe("invalid_request");
    for (const id of ["anon-0123456789abcdef", "anon-agent-01"]) {
      const res = await colony.fetch("/v1/search", json({ query: "ValueError" }, agent(id)));
      expect(res.status).toBe(400);
    }
    // The MCP endpoint refuses it the same way (JSON-RPC -32012).
    const mcp = await colony.fetch("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...agent(name) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect([mcp.status, ((await mcp.json()) as any).error.code]).toEqual([400, -32012]);

    expect(((await (await report(second, "worked", victim)).json()) as any).counted).toBe(true);
    // Ids that merely contain the word stay valid.
    expect((await colony.fetch("/v1/search", json({ query: "ValueError" }, agent("my-anon-agent")))).status).toBe(200);
    expect((await colony.fetch("/v1/search", json({ query: "ValueError" }, agent("Anon-agent-01")))).status).toBe(200);
  });
});

// Feed, activity and stats over real HTTP (interface.md 2.8–2.10, 4.10–4.12; decisions §9).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { countedIn, startTestColony, type TestColony } from "./support/colony";
import { agent, agentAt, json, sampleTrail } from "./support/trails";

let colony: TestColony;
const ids: string[] = [];

async function publish(error: string, runtime = "python", agentId = "agent-feed-author") {
  const t = sampleTrail({ error, commands: [`echo ${ids.length}`] });
  t.environment.runtime = { name: runtime, version: runtime === "node" ? "20.1.0" : "3.11.4" };
  const res = await colony.fetch("/v1/trails", json(t, agent(agentId)));
  const id = ((await res.json()) as any).trail_id as string;
  ids.push(id);
  return id;
}

const report = (id: string, outcome: string, agentId: string, notes?: string) =>
  colony.fetch(`/v1/trails/${id}/outcomes`, json({ protocol_version: "1.0", outcome, ...(notes ? { notes } : {}) }, agentAt(agentId)));

const feed = async (query = "") => {
  const res = await colony.fetch(`/v1/feed${query}`);
  return { res, body: (await res.json()) as any };
};

beforeAll(async () => {
  colony = await startTestColony({ COLONY_TRUST_PROXY: "1" });
  for (let i = 0; i < 6; i++)
    await publish(`ValueError: feed case number ${["one", "two", "three", "four", "five", "six"][i]}`, i % 2 ? "node" : "python");
  await colony.service.worker!.drain();
});
afterAll(() => colony.dispose());

describe("feed", () => {
  test("items carry the trail, enrichment, outcomes and the 3 latest replies; newest reinforcement first", async () => {
    await Bun.sleep(5);
    for (const [i, who] of ["agent-reply-0001", "agent-reply-0002", "agent-reply-0003", "agent-reply-0004"].entries()) {
      await report(ids[0]!, i === 1 ? "failed" : "worked", who, `note ${i}`);
      await Bun.sleep(2);
    }
    await report(ids[0]!, "worked", "agent-reply-0005"); // no notes: not a reply
    const { res, body } = await feed();
    expect(res.status).toBe(200);
    const first = body.items[0];
    expect(first.trail_id).toBe(ids[0]); // its latest counted worked report moved it up
    expect(Object.keys(first).sort()).toEqual(
      ["category", "outcomes", "quality", "reinforced_at", "replies", "risk", "strength", "trail", "trail_id"].sort(),
    );
    expect(first.outcomes).toEqual({ worked: 4, partially_worked: 0, failed: 1 });
    expect(first.replies.map((r: any) => r.notes)).toEqual(["note 3", "note 2", "note 1"]);
    expect(first.replies[0]).toEqual({ outcome: "worked", notes: "note 3", agent: "agent-reply-0004", at: expect.any(String) });
    const times = body.items.map((i: any) => Date.parse(i.reinforced_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  test("paging with the opaque cursor never repeats or skips, also while new trails arrive", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const { body } = await feed(`?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...body.items.map((i: any) => i.trail_id));
      cursor = body.next_cursor;
      if (page++ === 0) {
        await publish("ValueError: arrives during paging");
        await colony.service.worker!.drain();
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(new Set(ids.slice(0, 6)));
    const all = await feed("?limit=50");
    expect(all.body.next_cursor).toBeNull();
    expect(all.body.items.length).toBe(7);
  });

  test("category and runtime filters", async () => {
    const node = await feed("?runtime=node&limit=50");
    expect(node.body.items.length).toBe(3);
    expect(node.body.items.every((i: any) => i.trail.environment.runtime.name === "node")).toBe(true);
    const category = node.body.items[0].category;
    const byCategory = await feed(`?category=${category}&limit=50`);
    expect(byCategory.body.items.length).toBeGreaterThan(0);
    expect(byCategory.body.items.every((i: any) => i.category === category)).toBe(true);
    // Not a category: 400 naming the categories (session 18; an empty feed before).
    const unknown = await feed("?category=no-such-category");
    expect([unknown.res.status, unknown.body.error.details]).toEqual([
      400,
      [{ path: "/category", message: expect.stringContaining("is not a category; one of dependency, build,") }],
    ]);
    // Any case and fullwidth forms, as the runtime filter takes any spelling (session 13: a
    // client writing "Dependency" got an empty feed, without a word).
    const fullwidth = [...category].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join("");
    for (const spelling of [category.toUpperCase(), category[0].toUpperCase() + category.slice(1), fullwidth]) {
      const res = await feed(`?category=${encodeURIComponent(spelling)}&limit=50`);
      expect([spelling, res.body.items.length]).toEqual([spelling, byCategory.body.items.length]);
    }
  });

  test("the runtime filter finds every spelling of the runtime (session 11 audit)", async () => {
    // The colony treats nodejs, Node.js and node as one runtime everywhere else (canonicalRuntime);
    // the filter compared the stored name as written, so ?runtime=node missed the other two.
    const c = await startTestColony();
    try {
      const runtimes = ["nodejs", "Node.js", "node", "python3", "Python", "deno"];
      const laid = new Map<string, string>();
      for (const [i, runtime] of runtimes.entries()) {
        const t = sampleTrail({
          error: `ValueError: runtime spelling case ${["one", "two", "three", "four", "five", "six"][i]}`,
          commands: [`echo ${i}`],
        });
        t.environment.runtime = { name: runtime, version: "20.1.0" };
        const res = await c.fetch("/v1/trails", json(t, agent("agent-runtime-spellings")));
        expect(res.status).toBe(202);
        laid.set(((await res.json()) as any).trail_id, runtime);
        await Bun.sleep(2); // distinct reinforcement times, so the order below is the laying order
      }
      await c.service.worker!.drain();
      const names = async (query: string) => {
        const res = await c.fetch(`/v1/feed${query}`);
        expect(res.status).toBe(200);
        return ((await res.json()) as any).items.map((i: any) => laid.get(i.trail_id));
      };
      for (const asked of ["node", "nodejs", "Node.js", "NODE"])
        expect(await names(`?runtime=${encodeURIComponent(asked)}`)).toEqual(["node", "Node.js", "nodejs"]);
      expect(await names("?runtime=python")).toEqual(["Python", "python3"]);
      expect(await names("?runtime=cpython")).toEqual(["Python", "python3"]);
      expect(await names("?runtime=deno")).toEqual(["deno"]);
      expect(await names("?runtime=constructor")).toEqual([]);
      // Paging across spellings neither repeats nor skips.
      const first = (await (await c.fetch("/v1/feed?runtime=node&limit=2")).json()) as any;
      expect(first.items.map((i: any) => laid.get(i.trail_id))).toEqual(["node", "Node.js"]);
      const rest = await names(`?runtime=node&limit=2&cursor=${first.next_cursor}`);
      expect(rest).toEqual(["nodejs"]);
    } finally {
      await c.dispose();
    }
  });

  test("filters read names as trails are read: width, compatibility forms and invisible characters folded; a look-alike category is 400 (session 18)", async () => {
    // `?runtime=ｐｙｔｈｏｎ` found only trails whose runtime was written in that width, and
    // `?runtime=python` not them; `?category=dеpendency` (a Cyrillic е) got an empty feed without a word.
    const c = await startTestColony();
    try {
      // (A trail holding invisible characters is rejected by screening, so none is laid here.)
      const runtimes = ["python", "ｐｙｔｈｏｎ", "PYTHON", "𝐏𝐲𝐭𝐡𝐨𝐧3", "pyth\u043en"];
      const laid = new Map<string, string>();
      for (const [i, runtime] of runtimes.entries()) {
        const t = sampleTrail({
          error: `ValueError: runtime width case ${["one", "two", "three", "four", "five"][i]}`,
          commands: [`echo ${i}`],
        });
        t.environment.runtime = { name: runtime, version: "3.11.4" };
        const res = await c.fetch("/v1/trails", json(t, agent("agent-runtime-widths")));
        expect(res.status).toBe(202);
        laid.set(((await res.json()) as any).trail_id, runtime);
        await Bun.sleep(2);
      }
      await c.service.worker!.drain();
      const names = async (query: string) => {
        const res = await c.fetch(`/v1/feed${query}`);
        expect([query, res.status]).toEqual([query, 200]);
        return ((await res.json()) as any).items.map((i: any) => laid.get(i.trail_id));
      };
      const pythons = ["𝐏𝐲𝐭𝐡𝐨𝐧3", "PYTHON", "ｐｙｔｈｏｎ", "python"];
      for (const asked of ["python", "ｐｙｔｈｏｎ", "PY\u2060THON", "ⓟⓨⓣⓗⓞⓝ", "cpython"]) {
        expect([asked, await names(`?runtime=${encodeURIComponent(asked)}`)]).toEqual([asked, pythons]);
      }
      expect(await names(`?runtime=${encodeURIComponent("pyth\u043en")}`)).toEqual(["pyth\u043en"]);
      const { items } = (await (await c.fetch("/v1/feed?limit=1")).json()) as any;
      const category: string = items[0].category;
      const lookAlike = category.replace(/e/, "\u0435");
      expect(lookAlike).not.toBe(category);
      for (const asked of [lookAlike, `${category}s`, `${category}\u0000`.slice(0, -1) + "x"]) {
        const res = await c.fetch(`/v1/feed?category=${encodeURIComponent(asked)}`);
        const body = (await res.json()) as any;
        expect([asked, res.status, body.error.code, body.error.details[0].path]).toEqual([asked, 400, "invalid_request", "/category"]);
      }
      // The refusal changes nothing: the next request is answered as before.
      expect((await names(`?category=${encodeURIComponent(`${category.toUpperCase()}\u200b`)}&limit=50`)).length).toBe(5);
    } finally {
      await c.dispose();
    }
  });

  test("bad parameters are 400 invalid_request", async () => {
    for (const q of ["?limit=0", "?limit=51", "?limit=abc", "?cursor=garbage", "?cursor=" + Buffer.from("[1,2.5]").toString("base64url")]) {
      const { res, body } = await feed(q);
      expect(res.status).toBe(400);
      expect(body.error.code).toBe("invalid_request");
    }
  });

  // A number in the query was read from bare ASCII digits only: `?limit=%205` (a blank the core
  // trims from every other string) was "must be a whole number", and `?limit=-1` too, where the
  // same -1 in a JSON body is "must be at least 1".
  test("a number in the query is trimmed as every string, and a negative one is refused as out of range", async () => {
    expect((await feed("?limit=%205")).body.items.length).toBeGreaterThan(0);
    expect((await colony.fetch("/v1/activity?limit=%092%C2%A0")).status).toBe(200);
    for (const [q, message] of [
      ["?limit=-1", "must be at least 1"],
      ["?limit=-0", "must be at least 1"],
      ["?limit=1.5", "must be a whole number"],
      ["?limit=1e1", "must be a whole number"],
      ["?limit=0x10", "must be a whole number"],
      [
        "?limit=%EF%BC%95",
        "must be a whole number (the value sent reads as 5 but is written with other characters than ASCII digits, or invisible ones: send 5 in ASCII digits)",
      ], // fullwidth 5
      ["?limit=%D9%A3", "must be a whole number"], // Arabic-Indic 3
      ["?limit=9007199254740993", "must be a whole number"],
    ]) {
      const { res, body } = await feed(q);
      expect({ q, status: res.status, details: body.error.details }).toEqual({ q, status: 400, details: [{ path: "/limit", message }] });
    }
  });

  // The router kept the last of a repeated key: `?limit=1&limit=50` read as 50, two categories as
  // the second alone, without a word.
  test("a parameter given more than once is 400 naming it; an unknown one repeated is ignored", async () => {
    for (const [q, path] of [
      ["?limit=1&limit=50", "/limit"],
      ["?category=dependency&category=runtime", "/category"],
      ["?runtime=node&limit=5&runtime=python", "/runtime"],
    ] as const) {
      const { res, body } = await feed(q);
      expect([q, res.status]).toEqual([q, 400]);
      expect(body.error.code).toBe("invalid_request");
      expect(body.error.details).toEqual([{ path, message: "is given 2 times; give it once" }]);
    }
    const activity = await colony.fetch("/v1/activity?limit=2&limit=3");
    expect(activity.status).toBe(400);
    expect(((await activity.json()) as any).error.details[0].path).toBe("/limit");
    const tracked = await feed("?limit=2&utm_source=a&utm_source=b");
    expect(tracked.res.status).toBe(200);
    expect(tracked.body.items).toHaveLength(2);
    expect((await feed("?__proto__=1&__proto__=2&limit=1")).body.items).toHaveLength(1);
  });

  test("removed trails leave the feed", async () => {
    const c = await startTestColony({ COLONY_ADMIN_TOKEN: "operator-token-0123456789" });
    try {
      const res = await c.fetch("/v1/trails", json(sampleTrail()));
      const id = ((await res.json()) as any).trail_id;
      await c.service.worker!.drain();
      expect(((await (await c.fetch("/v1/feed")).json()) as any).items.length).toBe(1);
      await c.fetch(`/v1/trails/${id}`, { method: "DELETE", headers: { Authorization: "Bearer operator-token-0123456789" } });
      expect(((await (await c.fetch("/v1/feed")).json()) as any).items).toEqual([]);
      expect(((await (await c.fetch("/v1/stats")).json()) as any).trails).toBe(0);
    } finally {
      await c.dispose();
    }
  });
});

describe("activity", () => {
  test("laid, reinforced, weakened and search events, newest first; default limit 20", async () => {
    // 13 events so far; ten searches make 23, more than the default page
    // from ten addresses: `hot` counts each address once per label
    for (let i = 0; i < 10; i++) {
      const from = { ...agent("agent-searcher2"), "X-Forwarded-For": `198.51.100.${i + 1}` };
      await colony.fetch("/v1/search", json({ query: "ValueError: feed case number two" }, from));
    }
    await colony.fetch(
      "/v1/search",
      json({ query: "ValueError: feed case number two", error_type: "ValueError" }, agent("agent-searcher1")),
    );
    const { body } = await (async () => {
      const res = await colony.fetch("/v1/activity?limit=50");
      return { body: (await res.json()) as any };
    })();
    const kinds = new Set(body.events.map((e: any) => e.kind));
    for (const k of ["laid", "reinforced", "weakened", "search"]) expect(kinds.has(k)).toBe(true);
    expect(body.events[0].kind).toBe("search");
    expect(body.events[0].agent).toBe("agent-searcher1");
    for (const e of body.events) {
      expect(Object.keys(e).sort()).toEqual(["agent", "at", "kind", "text", "trail_id"]);
      expect(e.text).not.toContain("feed case number two");
    }
    const def = (await (await colony.fetch("/v1/activity")).json()) as any;
    expect(def.events.length).toBe(20);
    for (const q of ["?limit=0", "?limit=51", "?limit=x"]) expect((await colony.fetch(`/v1/activity${q}`)).status).toBe(400);
  });
});

describe("stats", () => {
  test("counts indexed trails, outcomes, tokens saved, agents, hot labels", async () => {
    const res = await colony.fetch("/v1/stats");
    expect(res.status).toBe(200);
    const s = (await res.json()) as any;
    expect(s.trails).toBe(7);
    expect(s.outcomes_24h).toBe(5);
    // four counted worked reports on a trail with effort.tokens_spent 12000
    expect(s.tokens_saved_24h).toBe(4 * 12000);
    // author, 5 reporters, 2 searchers
    expect(s.agents_24h).toBe(8);
    // labelled by error_type, else by the category of the top result; ranked by addresses, and an
    // error_type from fewer than three addresses not shown (here another label has ten)
    expect(s.hot).toEqual([{ label: expect.any(String), searches: 10, clients: 10 }]);
    expect(await colony.query(`SELECT DISTINCT label FROM ${countedIn(colony, "search_hourly")} WHERE label = 'ValueError'`)).toEqual([
      { label: "ValueError" },
    ]);
  });
});

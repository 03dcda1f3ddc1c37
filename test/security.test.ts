// Security review, pinned by tests: quotas cannot be dodged by spoofed client-address headers,
// the operator token is compared in constant time and never logged, draft ids are unguessable and
// an unknown id tells nothing, the approval page cannot be framed and runs no inline content, trail
// content never reaches the logs, and what the colony writes to disk is owner-only.
// (The approval page's behaviour in a real browser is covered by test/approve.browser.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ColonyProcess, UNLIMITED_ENV } from "./support/colony-process";
import { spawnColony, startTestColony, tempDir, type TestColony } from "./support/colony";
import { REPO_DIR } from "./support/paths";
import { json, sampleTrail } from "./support/trails";

const SPOOF_HEADERS = (i: number): Record<string, string> => ({
  "X-Forwarded-For": `203.0.113.${i}`,
  "X-Real-IP": `198.51.100.${i}`,
  Forwarded: `for=192.0.2.${i}`,
  "True-Client-IP": `192.0.2.${100 + i}`,
  "CF-Connecting-IP": `192.0.2.${200 + i}`,
});

describe("quotas and spoofed client addresses", () => {
  async function statuses(colony: TestColony, path: string, n: number, body: () => unknown) {
    const out: { status: number; code?: string }[] = [];
    for (let i = 0; i < n; i++) {
      const res = await colony.fetch(path, json(body(), SPOOF_HEADERS(i)));
      const b = (await res.json()) as any;
      out.push({ status: res.status, code: b?.error?.code });
    }
    return out;
  }

  test("publish and draft quotas count the socket peer, whatever X-Forwarded-For and friends say", async () => {
    const colony = await startTestColony({ COLONY_PUBLISH_LIMIT: "2", COLONY_DRAFT_LIMIT: "2", COLONY_RATE_LIMIT: "1000" });
    try {
      let k = 0;
      const trail = () => sampleTrail({ error: `QuotaError: spoof ${k++}`, commands: [`pip install spoof==${k}`] });
      const pubs = await statuses(colony, "/v1/trails", 4, trail);
      expect(pubs.map((p) => p.status)).toEqual([202, 202, 429, 429]);
      expect(pubs[3]!.code).toBe("publish_limited");
      const drafts = await statuses(colony, "/v1/drafts", 4, trail);
      expect(drafts.map((p) => p.status)).toEqual([201, 201, 429, 429]);
      expect(drafts[3]!.code).toBe("draft_limited");
    } finally {
      await colony.dispose();
    }
  });

  test("the general quota ignores every spoofable header too", async () => {
    const colony = await startTestColony({ COLONY_RATE_LIMIT: "3" });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 5; i++) codes.push((await colony.fetch("/v1/stats", { headers: SPOOF_HEADERS(i) })).status);
      expect(codes).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await colony.dispose();
    }
  });

  test("with COLONY_TRUST_PROXY the same requests count per forwarded address (so the test above can fail)", async () => {
    const colony = await startTestColony({ COLONY_PUBLISH_LIMIT: "2", COLONY_DRAFT_LIMIT: "2", COLONY_TRUST_PROXY: "1" });
    try {
      let k = 0;
      const trail = () => sampleTrail({ error: `QuotaError: proxied ${k++}`, commands: [`pip install proxied==${k}`] });
      expect((await statuses(colony, "/v1/trails", 4, trail)).map((p) => p.status)).toEqual([202, 202, 202, 202]);
      expect((await statuses(colony, "/v1/drafts", 4, trail)).map((p) => p.status)).toEqual([201, 201, 201, 201]);
    } finally {
      await colony.dispose();
    }
  });
});

describe("X-Forwarded-For behind a trusted proxy (COLONY_TRUST_PROXY)", () => {
  // A proxy appends the address it received the request from: a client behind it controls every
  // entry to the left of that one, and must not be able to pick its quota key with them.
  const viaProxy = (spoofed: string) => ({ "X-Forwarded-For": `${spoofed}, 198.51.100.7` });

  for (const setting of ["1", "127.0.0.1, ::1, 10.0.0.0/8"]) {
    test(`COLONY_TRUST_PROXY=${setting}: spoofed left-most entries share the real client's quota`, async () => {
      const colony = await startTestColony({ COLONY_RATE_LIMIT: "3", COLONY_TRUST_PROXY: setting });
      try {
        const codes: number[] = [];
        for (let i = 0; i < 5; i++) codes.push((await colony.fetch("/v1/stats", { headers: viaProxy(`203.0.113.${i}`) })).status);
        expect(codes).toEqual([200, 200, 200, 429, 429]);
        // Another real client behind the same proxy has its own quota.
        expect((await colony.fetch("/v1/stats", { headers: { "X-Forwarded-For": "1.2.3.4, 198.51.100.8" } })).status).toBe(200);
      } finally {
        await colony.dispose();
      }
    });
  }

  test("a bad COLONY_TRUST_PROXY stops the process with exit 2 and a message naming the variable", async () => {
    for (const bad of ["maybe", "10.0.0.0/40"]) {
      const p = spawnColony(["serve"], { COLONY_TRUST_PROXY: bad, COLONY_PORT: "0" });
      expect(await p.exited).toBe(2);
      const err = await new Response(p.stderr).text();
      expect(err).toContain("COLONY_TRUST_PROXY");
      expect(err).toContain("CIDR");
      expect(err.trim().split("\n")).toHaveLength(1);
    }
  });
});

describe("operator token", () => {
  const TOKEN = "operator-token-0123456789abcdef";
  let colony: TestColony;
  beforeAll(async () => {
    colony = await startTestColony({ COLONY_ADMIN_TOKEN: TOKEN });
  });
  afterAll(() => colony.dispose());

  test("the comparison hashes both sides and uses timingSafeEqual, never string equality", () => {
    // One check for every operator endpoint (removal, /metrics, the console's admin API).
    const source = readFileSync(join(REPO_DIR, "src/service/operator.ts"), "utf8");
    const start = source.indexOf("export function authorizeOperator(");
    expect(start).toBeGreaterThan(0);
    const body = source.slice(start, source.indexOf("\n}\n", start));
    expect(body).toMatch(/createHash\("sha256"\)\.update\(presented\)\.digest\(\)/);
    expect(body).toMatch(/createHash\("sha256"\)\.update\(token\)\.digest\(\)/);
    expect(body).toMatch(/timingSafeEqual\(a, b\)/);
    expect(body).not.toMatch(/presented\s*[!=]==?\s*token|token\s*[!=]==?\s*presented/);
    expect(body).not.toMatch(/\.startsWith\(|\.localeCompare\(/);
  });

  test("every wrong token (empty, short, long, one character off, other scheme) is the same 401", async () => {
    const wrong = [
      "",
      "Bearer ",
      "Bearer x",
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}X`,
      `Bearer X${TOKEN.slice(1)}`,
      `Basic ${TOKEN}`,
      `Bearer-${TOKEN}`,
      `Bearer\t${TOKEN}`,
      TOKEN,
    ];
    const bodies = new Set<string>();
    for (const auth of wrong) {
      const res = await colony.fetch(`/v1/trails/${crypto.randomUUID()}`, {
        method: "DELETE",
        headers: auth ? { Authorization: auth } : {},
      });
      expect(res.status).toBe(401);
      bodies.add(await res.text());
    }
    expect(bodies.size).toBe(1);
    const right = await colony.fetch(`/v1/trails/${crypto.randomUUID()}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(right.status).toBe(404); // authorized; the trail does not exist
  });

  test("the scheme is case-insensitive and may be followed by several spaces (RFC 9110 §11.1)", async () => {
    for (const auth of [`bearer ${TOKEN}`, `BEARER ${TOKEN}`, `BeArEr ${TOKEN}`, `Bearer   ${TOKEN}`]) {
      const res = await colony.fetch(`/v1/trails/${crypto.randomUUID()}`, { method: "DELETE", headers: { Authorization: auth } });
      expect(res.status).toBe(404); // authorized; the trail does not exist
    }
  });

  test("timing sanity: a mismatch in the first or the last character costs the same", () => {
    const trails = colony.service.trails as unknown as { authorizeOperator(a: string | null): void };
    const first = `Bearer X${TOKEN.slice(1)}`;
    const last = `Bearer ${TOKEN.slice(0, -1)}X`;
    const sample = (auth: string) => {
      const t0 = performance.now();
      for (let i = 0; i < 200; i++) {
        try {
          trails.authorizeOperator(auth);
        } catch {}
      }
      return performance.now() - t0;
    };
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < 60; r++) {
      a.push(sample(first));
      b.push(sample(last));
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
    const ratio = median(a) / median(b);
    expect(ratio).toBeGreaterThan(0.67);
    expect(ratio).toBeLessThan(1.5);
  });
});

describe("drafts", () => {
  let colony: TestColony;
  beforeAll(async () => {
    colony = await startTestColony({ COLONY_DRAFT_LIMIT: "1000000", COLONY_RATE_LIMIT: "1000000" });
  });
  afterAll(() => colony.dispose());

  test("1,000 draft ids: base64url, ≥ 128 bits, all distinct, symbols evenly spread", async () => {
    const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "security-test", agentDeclared: true };
    const ids: string[] = [];
    for (let i = 0; i < 1000; i++)
      ids.push((await colony.service.drafts.create(sampleTrail({ error: `DraftIdError: ${i}` }), caller)).body.draft_id);
    expect(new Set(ids).size).toBe(1000);
    const counts = new Map<string, number>();
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(id, "base64url").length * 8).toBeGreaterThanOrEqual(128);
      for (const ch of id) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    // A cryptographic source spreads over all 64 symbols; a counter, a timestamp or a hex id would not.
    const total = ids.reduce((n, id) => n + id.length, 0);
    expect(counts.size).toBe(64);
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan((total / 64) * 0.7);
      expect(n).toBeLessThan((total / 64) * 1.3);
    }
  });

  test("never-existed, expired and malformed ids: identical answers, similar timing", async () => {
    const created = (await (await colony.fetch("/v1/drafts", json(sampleTrail({ error: "ExpiredDraftError: x" })))).json()) as any;
    await colony.query("UPDATE drafts SET expires_at = 0 WHERE state = 'pending'");
    const kinds = {
      never: "Q".repeat(32),
      expired: created.draft_id as string,
      malformed: "..%2F..%2Fetc%2Fpasswd",
      short: "abc",
    };
    const answers = new Set<string>();
    for (const id of Object.values(kinds)) {
      const res = await colony.fetch(`/v1/drafts/${id}`);
      const headers = [...res.headers.keys()]
        .filter((k) => !["date", "ratelimit-remaining", "ratelimit-reset", "content-length"].includes(k))
        .sort();
      answers.add(`${res.status} ${headers.join(",")} ${res.headers.get("cache-control")} ${await res.text()}`);
    }
    expect(answers.size).toBe(1);
    expect([...answers][0]!.startsWith("404 ")).toBe(true);

    // Timed on each process answering (replicas directly, not through the proxy, which would send
    // each kind to the same replica every round and time the replicas against each other).
    for (const replica of colony.replicas) {
      // Each round asks for the four kinds, in an order that turns from round to round, and each
      // time is taken against its round's mean: the machine's load (other test processes run side
      // by side) moves a whole round, not one kind, and no kind always goes first.
      const entries = Object.entries(kinds);
      const times: Record<string, number[]> = { never: [], expired: [], malformed: [], short: [] };
      const againstRound: Record<string, number[]> = { never: [], expired: [], malformed: [], short: [] };
      for (let r = 0; r < 150; r++) {
        const round: [string, number][] = [];
        for (let i = 0; i < entries.length; i++) {
          const [k, id] = entries[(r + i) % entries.length]!;
          const t0 = performance.now();
          await (await fetch(`${replica.url}/v1/drafts/${id}`)).arrayBuffer();
          round.push([k, performance.now() - t0]);
        }
        const mean = round.reduce((n, [, t]) => n + t, 0) / round.length;
        for (const [k, t] of round) {
          times[k]!.push(t);
          againstRound[k]!.push(t - mean);
        }
      }
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
      const medians = Object.values(againstRound).map(median);
      const fastest = Math.min(...Object.values(times).map(median));
      // Loopback noise is ~0.1 ms; a lookup that did real work for known ids would show.
      expect(Math.max(...medians) - Math.min(...medians)).toBeLessThan(Math.max(0.5, fastest * 0.5));
    }
  });
});

describe("approval page", () => {
  test("cannot be framed, loads only same-origin script and style, is never cached", async () => {
    const colony = await startTestColony();
    try {
      const res = await colony.fetch("/approve.html");
      expect(res.status).toBe(200);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).not.toContain("unsafe-eval");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("cache-control")).toBe("no-store");
      const html = await res.text();
      // Scripts only from files, no inline handlers (the CSP would block them anyway).
      for (const tag of html.match(/<script\b[^>]*>/gi) ?? []) expect(tag).toMatch(/\bsrc="[^"]+"/);
      expect(html).not.toMatch(/<script\b[^>]*>[^<\s]/i);
      expect(html).not.toMatch(/\son[a-z]+\s*=/i);
      for (const path of ["/approve.js", "/approve.css"]) {
        const r = await colony.fetch(path);
        expect(r.headers.get("content-security-policy")).toBe(csp);
        expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      }
    } finally {
      await colony.dispose();
    }
  });
});

describe("logs (a colony process at COLONY_LOG_LEVEL=debug)", () => {
  test("no trail content, query text, outcome notes, draft id or operator token reaches stderr", async () => {
    const tag = Math.random().toString(36).slice(2, 10);
    const M = {
      error: `MarkerErrorQ${tag}: zebra crossing failed`,
      description: `descriptionmarker${tag}`,
      command: `commandmarker${tag}`,
      query: `querymarker${tag}`,
      errorType: `ErrortypeMarker${tag}`,
      notes: `notesmarker${tag}`,
      draft: `draftmarker${tag}`,
      token: `operator-token-${tag}-right`,
      wrong: `operator-token-${tag}-wrong`,
    };
    const dataDir = tempDir("colony-security-logs-");
    const colony = await ColonyProcess.create({
      dataDir,
      mode: "source",
      env: { ...UNLIMITED_ENV, COLONY_LOG_LEVEL: "debug", COLONY_ADMIN_TOKEN: M.token },
    });
    await colony.start();
    let draftId = "";
    try {
      const trail = sampleTrail({ error: M.error, commands: [`pip install ${M.command}==1.0`] });
      trail.problem.description = `The ${M.description} step fails.`;
      const pub = (await (await colony.fetch("/v1/trails", json(trail, { "X-Colony-Agent": "security-author" }))).json()) as any;
      for (let i = 0; i < 200; i++) {
        const s = (await (await colony.fetch(`/v1/trails/${pub.trail_id}`)).json()) as any;
        if (s.status !== "queued") break;
        await Bun.sleep(50);
      }
      const search = await colony.fetch("/v1/search", json({ query: `${M.query} ${M.error}`, error_type: M.errorType }));
      expect(search.status).toBe(200);
      const outcome = await colony.fetch(
        `/v1/trails/${pub.trail_id}/outcomes`,
        json({ protocol_version: "1.0", outcome: "worked", notes: M.notes }, { "X-Colony-Agent": "security-reporter" }),
      );
      expect(outcome.status).toBe(202);
      const draftTrail = sampleTrail({ error: `DraftError: ${M.draft}` });
      draftId = ((await (await colony.fetch("/v1/drafts", json(draftTrail))).json()) as any).draft_id;
      expect((await colony.fetch(`/v1/drafts/${draftId}`)).status).toBe(200);
      expect((await colony.fetch(`/v1/drafts/${draftId}/publish`, { method: "POST" })).status).toBe(202);
      expect(
        (await colony.fetch(`/v1/trails/${crypto.randomUUID()}`, { method: "DELETE", headers: { Authorization: `Bearer ${M.wrong}` } }))
          .status,
      ).toBe(401);
      expect(
        (await colony.fetch(`/v1/trails/${pub.trail_id}`, { method: "DELETE", headers: { Authorization: `Bearer ${M.token}` } })).status,
      ).toBe(200);
      await Bun.sleep(300); // let the worker log whatever it logs about the draft's trail
    } finally {
      await colony.stop("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    }
    const log = colony.stderr;
    // Logging was really on: one line per request at least, and debug lines.
    expect(log.split("\n").filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(8);
    for (const [name, marker] of Object.entries(M)) {
      if (log.includes(marker)) throw new Error(`the ${name} marker reached the log`);
    }
    expect(draftId.length).toBeGreaterThan(20);
    expect(log).not.toContain(draftId);
    expect(log.toLowerCase()).not.toContain(tag); // nothing derived from any marker either
  }, 60_000);
});

describe("files on disk", () => {
  test("data directory 0700; colony.db, -wal, -shm, colony.lock 0600; extracted natives owner-only", async () => {
    const parent = tempDir("colony-security-perms-");
    const dataDir = join(parent, "data");
    const cacheDir = join(parent, "cache");
    const colony = await ColonyProcess.create({ dataDir, cacheDir, env: { ...UNLIMITED_ENV } });
    await colony.start();
    try {
      expect((await colony.fetch("/v1/trails", json(sampleTrail({ error: "PermissionProbeError: x" })))).status).toBe(202);
      const mode = (p: string) => statSync(p).mode & 0o777;
      expect(mode(dataDir)).toBe(0o700);
      const names = readdirSync(dataDir);
      for (const f of ["colony.db", "colony.db-wal", "colony.db-shm", "colony.lock"]) expect(names).toContain(f);
      for (const f of names) {
        if (mode(join(dataDir, f)) & 0o077) throw new Error(`${f} is ${mode(join(dataDir, f)).toString(8)}`);
      }
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? [join(dir, n), ...walk(join(dir, n))] : [join(dir, n)]));
      const extracted = walk(cacheDir);
      expect(extracted.some((p) => p.endsWith(".so") || p.endsWith(".node") || /\.so\.\d/.test(p))).toBe(true);
      for (const p of [cacheDir, ...extracted]) {
        if (mode(p) & 0o077) throw new Error(`${p} is ${mode(p).toString(8)}`);
      }
    } finally {
      await colony.stop("SIGTERM");
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);
});

// GET /metrics on a real colony: an operator endpoint (501 without COLONY_ADMIN_TOKEN, 401 for a
// missing or wrong token), Prometheus text with requests per route template and status, search
// phases, enrichment verdicts, quota refusals, queue depth, trails by state and store size.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PrometheusMetrics } from "../src/ops/prometheus";
import { startTestColony, type TestColony } from "./support/colony";
import { json, sampleTrail } from "./support/trails";

const TOKEN = "metrics-test-operator-token";
let colony: TestColony;

beforeAll(async () => {
  colony = await startTestColony({ COLONY_ADMIN_TOKEN: TOKEN, COLONY_PUBLISH_LIMIT: "1" });
}, 60_000);

afterAll(() => colony?.dispose());

/** Samples of the exposition text: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/**
 * Every replica's /metrics, read from each directly as Prometheus does (its counters are its own
 * process's), combined as a `sum without (instance)` query would: counters, histogram buckets,
 * sums and counts add up; the colony's gauges come from the shared store, so every replica must
 * report the same value (NaN when they differ); process gauges are the first replica's.
 */
async function scrape(): Promise<{ text: string; values: Map<string, number> }> {
  const texts: string[] = [];
  for (const replica of colony.replicas) {
    const res = await fetch(`${replica.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    texts.push(await res.text());
  }
  const values = new Map<string, number>();
  for (const [name, value] of texts.flatMap((t) => [...samples(t)])) {
    const prior = values.get(name);
    if (prior === undefined) values.set(name, value);
    else if (/_(total|bucket|sum|count)(\{|$)/.test(name)) values.set(name, prior + value);
    else if (name.startsWith("colony_") && prior !== value) values.set(name, Number.NaN);
  }
  return { text: texts.join("\n"), values };
}

const waitIndexed = async (id: string) => {
  for (let i = 0; i < 200; i++) {
    const r = (await (await colony.fetch(`/v1/trails/${id}`)).json()) as any;
    if (r.status !== "queued") return r.status;
    await Bun.sleep(50);
  }
  throw new Error("trail stayed queued");
};

describe("GET /metrics", () => {
  test("is an operator endpoint: 401 without or with a wrong token", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong-token-of-some-length" }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const res = await colony.fetch("/metrics", { headers });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe("unauthorized");
    }
  });

  test("is 501 not_enabled without COLONY_ADMIN_TOKEN", async () => {
    const off = await startTestColony();
    try {
      const res = await off.fetch("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(501);
      expect(((await res.json()) as any).error.code).toBe("not_enabled");
    } finally {
      await off.dispose();
    }
  });

  test("counts requests by route template and status, search phases, verdicts, quota refusals and the store", async () => {
    const before = (await scrape()).values;
    expect(before.get('colony_enrichment_outcomes_total{outcome="indexed"}')).toBe(0);
    expect(before.get('colony_quota_rejections_total{quota="publish_limited"}')).toBe(0);

    const published = (await (await colony.fetch("/v1/trails", json(sampleTrail()))).json()) as any;
    expect(await waitIndexed(published.trail_id)).toBe("indexed");
    // The publish quota is 1: the second publish is refused.
    expect((await colony.fetch("/v1/trails", json(sampleTrail({ error: "Error: EACCES" })))).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await colony.fetch(`/v1/trails/by-fingerprint/${published.fingerprint}`)).status).toBe(200);
    expect((await colony.fetch(`/v1/trails/by-fingerprint/fp1_${"0".repeat(32)}`)).status).toBe(404);
    expect((await colony.fetch("/v1/search", json({ query: "ImportError: cannot import name yaml" }))).status).toBe(200);

    const { text, values } = await scrape();
    const lookup = 'route="/v1/trails/by-fingerprint/:fp"';
    expect(values.get(`colony_http_requests_total{method="GET",${lookup},status="200"}`)).toBe(3);
    expect(values.get(`colony_http_requests_total{method="GET",${lookup},status="404"}`)).toBe(1);
    expect(values.get(`colony_http_request_duration_seconds_count{method="GET",${lookup},status="200"}`)).toBe(3);
    expect(values.get(`colony_http_request_duration_seconds_bucket{method="GET",${lookup},status="200",le="+Inf"}`)).toBe(3);
    expect(values.get('colony_http_requests_total{method="POST",route="/v1/trails",status="202"}')).toBe(1);
    expect(values.get('colony_http_requests_total{method="POST",route="/v1/trails",status="429"}')).toBe(1);
    // Never a raw path (a path may hold a draft id or a fingerprint).
    expect(text).not.toContain(published.fingerprint);
    for (const phase of ["embed", "lexical", "vector", "rank"]) {
      expect(values.get(`colony_search_phase_duration_seconds_count{phase="${phase}"}`)).toBeGreaterThanOrEqual(1);
    }
    expect(values.get('colony_enrichment_outcomes_total{outcome="indexed"}')).toBe(1);
    expect(values.get('colony_quota_rejections_total{quota="publish_limited"}')).toBe(1);
    expect(values.get('colony_trails{state="indexed"}')).toBe(1);
    expect(values.get('colony_trails{state="queued"}')).toBe(0);
    expect(values.get("colony_queue_depth")).toBe(0);
    expect(values.get("colony_store_bytes")).toBeGreaterThan(4096);
    expect(values.get("process_resident_memory_bytes")).toBeGreaterThan(10_000_000);
    expect(values.get('colony_trails{state="removed"}')).toBe(0);
    const removed = await colony.fetch(`/v1/trails/${published.trail_id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(removed.status).toBe(200);
    const after = (await scrape()).values;
    expect([after.get('colony_trails{state="removed"}'), after.get('colony_trails{state="indexed"}')]).toEqual([1, 0]);
  });
});

describe("queue depth series", () => {
  test("the sampler records the queue's hourly peak, shown in the series and in /metrics", async () => {
    const held = await startTestColony({ COLONY_ADMIN_TOKEN: TOKEN });
    try {
      await held.service.worker!.stop(); // hold the queue
      const admin = held.service.admin;
      await admin.sampleQueue(); // empty: nothing is written
      for (const error of ["Error: EACCES one", "Error: EACCES two", "Error: EACCES three"]) {
        expect((await held.fetch("/v1/trails", json(sampleTrail({ error })))).status).toBe(202);
        await admin.sampleQueue();
      }
      const peak = async () => {
        const body = (await (
          await held.fetch("/v1/admin/series?hours=2", { headers: { authorization: `Bearer ${TOKEN}` } })
        ).json()) as any;
        return Math.max(...body.hours.map((h: any) => h.queue_depth));
      };
      expect(await peak()).toBe(3);
      expect((await held.subsystems.store!.stats.series(0)).filter((p) => p.name === "queue_depth").length).toBeGreaterThan(0);
      const values = samples(await (await held.fetch("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } })).text());
      expect(values.get("colony_queue_depth")).toBe(3);
      expect(values.get('colony_trails{state="queued"}')).toBe(3);
    } finally {
      await held.dispose();
    }
  });
});

describe("Prometheus adapter", () => {
  test("request histograms are cumulative over the buckets, with sum and count", async () => {
    const m = new PrometheusMetrics(async () => ({
      queue_depth: 2,
      trails_by_state: { queued: 2, indexed: 5, merged: 1, rejected: 0, removed: 0 },
      store_bytes: 1234,
    }));
    m.request("GET", "/healthz", 200, 0.00005);
    m.request("GET", "/healthz", 200, 0.003);
    m.request("GET", "/healthz", 200, 7);
    m.request("GET", "/healthz", 503, 0.2);
    const values = samples(await m.render());
    const bucket = (le: string) =>
      values.get(`colony_http_request_duration_seconds_bucket{method="GET",route="/healthz",status="200",le="${le}"}`);
    expect([bucket("0.0001"), bucket("0.0025"), bucket("0.005"), bucket("2.5"), bucket("+Inf")]).toEqual([1, 1, 2, 2, 3]);
    expect(values.get('colony_http_request_duration_seconds_sum{method="GET",route="/healthz",status="200"}')).toBeCloseTo(7.00305, 6);
    expect(values.get('colony_http_requests_total{method="GET",route="/healthz",status="503"}')).toBe(1);
    expect(values.get('colony_trails{state="indexed"}')).toBe(5);
    expect(values.get("colony_queue_depth")).toBe(2);
    expect(values.get("colony_store_bytes")).toBe(1234);
  });
});

// A web page the user visits must not be able to write into a colony the user's browser can
// reach (on the user's machine, or on a network the page's server cannot reach): agents have no
// credentials, so the network is the colony's only fence. A cross-site fetch with a JSON
// Content-Type needs a CORS preflight the colony never grants, but `text/plain`, a form encoding
// or no Content-Type at all is a "simple" request the browser sends without asking; the colony
// parsed any body as JSON, so such a page could publish trails, report outcomes (from as many
// addresses as it has visitors) and record searches. A body from a browser (it sends Origin)
// must now declare JSON.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { browserUnavailable, launchBrowser } from "./support/browser";
import { startTestColony, type TestColony } from "./support/colony";
import { sampleTrail } from "./support/trails";

let colony: TestColony;
beforeAll(async () => {
  colony = await startTestColony({ COLONY_RATE_LIMIT: "100000" });
});
afterAll(() => colony.dispose());

const trailCount = async () => Number((await colony.query("SELECT count(*) AS n FROM trails"))[0].n);
const draftCount = async () => Number((await colony.query("SELECT count(*) AS n FROM drafts"))[0].n);
const EVIL = "https://evil.example";

describe("bodies a browser sends must declare JSON", () => {
  test("text/plain, a form encoding or no Content-Type with an Origin: 400 invalid_request, nothing stored", async () => {
    const before = await trailCount();
    const draftsBefore = await draftCount();
    const body = JSON.stringify(sampleTrail({ error: "ValueError: cross-site publish" }));
    for (const type of ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", null]) {
      const headers: Record<string, string> = { origin: EVIL };
      if (type) headers["content-type"] = type;
      for (const path of ["/v1/trails", "/v1/drafts", "/v1/search"]) {
        const res = await colony.fetch(path, { method: "POST", headers, body });
        expect([path, type, res.status]).toEqual([path, type, 400]);
        const error = ((await res.json()) as any).error;
        expect(error.code).toBe("invalid_request");
        expect(error.message).toContain("application/json");
      }
    }
    expect(await trailCount()).toBe(before);
    expect(await draftCount()).toBe(draftsBefore);
  });

  test("the same requests without an Origin (curl, scripts, agents) and JSON with any Origin are served as before", async () => {
    const body = (n: number) => JSON.stringify(sampleTrail({ error: `ValueError: non-browser publish ${n}` }));
    expect((await colony.fetch("/v1/trails", { method: "POST", headers: { "content-type": "text/plain" }, body: body(1) })).status).toBe(
      202,
    );
    expect((await colony.fetch("/v1/trails", { method: "POST", body: body(2) })).status).toBe(202);
    const typed = { "content-type": "application/json; charset=utf-8", origin: EVIL };
    expect((await colony.fetch("/v1/trails", { method: "POST", headers: typed, body: body(3) })).status).toBe(202);
    const vendor = { "content-type": "application/vnd.colony+json", origin: EVIL };
    expect((await colony.fetch("/v1/search", { method: "POST", headers: vendor, body: '{"query":"x"}' })).status).toBe(200);
    // A POST without a body (the approval page's publish and discard) has nothing to declare.
    expect(
      (await colony.fetch("/v1/drafts/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/discard", { method: "POST", headers: { origin: EVIL } })).status,
    ).toBe(404);
  });
});

const noBrowser = browserUnavailable();
describe.skipIf(noBrowser !== null)("a real browser on another site", () => {
  test("a page's no-cors fetches and a text/plain form cannot publish, make drafts or search", async () => {
    const before = await trailCount();
    const draftsBefore = await draftCount();
    const target = colony.url.replace("127.0.0.1", "localhost"); // another site than the page's
    const trail = JSON.stringify(sampleTrail({ error: "ValueError: published by a web page" }));
    const page = `<!doctype html><body><form id="f" method="post" enctype="text/plain" action="${target}/v1/trails" target="sink">
<input name='${trail.slice(0, -1)},"x":"' value='"}'></form><iframe name="sink"></iframe><script>
const trail = ${JSON.stringify(trail)};
(async () => {
  await fetch("${target}/v1/trails", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: trail });
  await fetch("${target}/v1/drafts", { method: "POST", mode: "no-cors", body: new Blob([trail]) });
  await fetch("${target}/v1/search", { method: "POST", mode: "no-cors", body: JSON.stringify({ query: "cross-site search", error_type: "PageSearch" }) });
  document.getElementById("f").submit();
  document.title = "sent";
})();
</script></body>`;
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(page, { headers: { "content-type": "text/html" } }),
    });
    const browser = await launchBrowser();
    try {
      const tab = await browser.newPage();
      const sent: string[] = [];
      tab.on("request", (r) => sent.push(`${r.method()} ${new URL(r.url()).pathname}`));
      await tab.goto(`http://127.0.0.1:${server.port}/`);
      await tab.waitForFunction(() => document.title === "sent");
      await tab.waitForLoadState("networkidle");
      // The browser did send them (so the test can fail): four requests reached the colony.
      expect(sent.filter((s) => s.startsWith("POST /v1/")).length).toBe(4);
    } finally {
      await browser.close();
      server.stop(true);
    }
    expect(await trailCount()).toBe(before);
    expect(await draftCount()).toBe(draftsBefore);
    const stats = (await (await colony.fetch("/v1/stats")).json()) as any;
    expect(stats.hot.map((h: any) => h.label)).not.toContain("PageSearch");
  }, 60_000);
});

// The API reference page in a real browser (Debian's Chromium through playwright-core): it renders
// /openapi.json with every route, asks nothing of any other origin, and breaks no CSP rule.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { launchBrowser, watchPage } from "./support/browser";
import { screenshotPath } from "./support/paths";
import { startTestColony, type TestColony } from "./support/colony";

let colony: TestColony;
let browser: Browser;

beforeAll(async () => {
  [colony, browser] = await Promise.all([startTestColony(), launchBrowser()]);
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await colony?.dispose();
});

describe("API reference page", () => {
  test("lists every route of the document, loads nothing from elsewhere, keeps the CSP", async () => {
    const doc = (await (await colony.fetch("/openapi.json")).json()) as any;
    const page = await browser.newPage();
    const problems = await watchPage(page);
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    const direct = await colony.fetch("/docs");
    expect(direct.status).toBe(200);
    expect(direct.headers.get("content-security-policy")).toContain("script-src 'self'");
    await page.goto(`${colony.url}/docs`);
    await page.waitForSelector("section.operation");
    const headings = await page.locator("section.operation h3").allTextContents();
    for (const [path, item] of Object.entries(doc.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) {
        expect(headings.some((h) => h.startsWith(method.toUpperCase()) && h.includes(path))).toBe(true);
      }
    }
    // Keyboard: the first Tab reaches the skip link, and the navigation links are real links.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to the routes");
    // The schemas are rendered, and a field of the Trail is shown with its limit.
    await page.locator("#op-post-v1-search details summary").click();
    await expect(page.locator("#op-post-v1-search").textContent()).resolves.toContain("query");
    expect(await page.locator("#schema-Trail").textContent()).toContain("protocol_version");
    expect(await page.locator("nav a").count()).toBeGreaterThan(15);
    await page.screenshot({ path: screenshotPath("api-reference.png", true) });
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((u) => !u.startsWith(colony.url))).toEqual([]);
    expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
    await page.close();
  }, 30_000);
});

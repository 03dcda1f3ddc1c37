// Launches Debian's Chromium for the browser tests through playwright-core (no browser download:
// `apt-get install -y chromium` provides /usr/bin/chromium). COLONY_CHROMIUM overrides the path.
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.COLONY_CHROMIUM ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    // A missing browser is a failure, not a skip: the page's security is only proven in a browser.
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: run \`apt-get install -y chromium\` (or set COLONY_CHROMIUM)`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** What a page reported that a clean page never should: console errors, page errors, CSP violations. */
export interface PageProblems {
  console: string[];
  pageErrors: string[];
  cspViolations: string[];
}

/**
 * Records console errors, uncaught exceptions and CSP violations of a page. The violations are
 * caught by an init script (runs before any page script) and reported back through console.
 */
export async function watchPage(page: Page): Promise<PageProblems> {
  const problems: PageProblems = { console: [], pageErrors: [], cspViolations: [] };
  page.on("console", (msg) => {
    const text = msg.text();
    if (text.startsWith("__csp_violation__ ")) problems.cspViolations.push(text.slice(18));
    else if (msg.type() === "error") problems.console.push(text);
  });
  page.on("pageerror", (err) => problems.pageErrors.push(err.message));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      console.log(`__csp_violation__ ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  return problems;
}

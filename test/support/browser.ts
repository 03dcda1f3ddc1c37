// Launches Chromium or Chrome for the browser tests through playwright-core (no browser download).
// The browser is COLONY_TEST_BROWSER when set, else the first of chromium, chromium-browser,
// google-chrome, google-chrome-stable on PATH. `make test` installs Debian's chromium when it runs
// as root with apt-get; without a browser the browser tests are skipped, said in one line.
import { accessSync, constants } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";

const BROWSER_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/** The browser the tests launch, or undefined when none is set or found. */
export const BROWSER_PATH: string | undefined =
  process.env.COLONY_TEST_BROWSER || BROWSER_NAMES.map((name) => Bun.which(name)).find((p): p is string => !!p);

/** Why the browser tests cannot run here (one line), or null when they can. */
export function browserUnavailable(): string | null {
  if (BROWSER_PATH !== undefined) return null; // a wrong COLONY_TEST_BROWSER fails in launchBrowser, loudly
  return `no Chromium or Chrome on PATH (${BROWSER_NAMES.join(", ")}) and COLONY_TEST_BROWSER is unset; run make test as root on Debian to install chromium, or set COLONY_TEST_BROWSER=path`;
}

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
  const path = BROWSER_PATH;
  if (path === undefined) throw new Error(`browser tests cannot run: ${browserUnavailable()}`);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`COLONY_TEST_BROWSER=${path} is not an executable file`);
  }
  return chromium.launch({ executablePath: path, args: CHROMIUM_ARGS });
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

import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { requireTool } from "./require-tool.ts";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";

// Debian's Chromium (installed by .ci/run) driven by playwright-core; without it the test fails,
// naming the package.
const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** A headless Chromium and one page of the given height (1280 wide). */
export async function openBrowser(height = 720): Promise<{ browser: Browser; page: Page }> {
  requireTool("chromium");
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return { browser, page: await browser.newPage({ viewport: { width: 1280, height } }) };
}

/** A dev server (dashboard on) on `repository` and a headless Chromium page; `close` stops both. */
export async function openDashboard(repository: string): Promise<{ server: TestServer; browser: Browser; page: Page; close: () => Promise<void> }> {
  const server = await startServer({ repository, dashboard: true });
  const { browser, page } = await openBrowser();
  return { server, browser, page, close: async () => void (await browser.close(), await server.close()) };
}

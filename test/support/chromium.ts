import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { requireTool } from "./require-tool.ts";

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

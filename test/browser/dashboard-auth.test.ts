import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { requireTool } from "../support/require-tool.ts";

const ADMIN_KEY = "dashboard-admin-key-123";

describe("dev dashboard behind --admin-key-file (headless Chromium)", () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    requireTool("chromium");
    server = await startServer({ repository: tempRepository("simple"), dashboard: true, adminKeys: [ADMIN_KEY], apiKeys: ["some-api-key"] });
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("asks for the admin key, then streams the table and sends the key with its button clicks", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.locator("#key-form").isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.locator("#rows tr").count()).toBe(0);
    await page.fill("#key", ADMIN_KEY);
    await page.click('#key-form button[type="submit"]');
    const row = page.locator('tr[data-function="simple"]');
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    await row.locator('button[data-action="load"]').click();
    await expect.poll(async () => (await row.locator(".state span").textContent()) ?? "", { timeout: 15_000 }).toBe("READY");
    expect(await page.locator("#key-form").isVisible()).toBe(false);
    await page.close();
  }, 40_000);
});

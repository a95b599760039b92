import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { startServer } from "../support/start-server.ts";
import type { TestServer } from "../support/start-server.ts";
import { tempRepository } from "../support/spawn-server.ts";

// Debian's Chromium (installed by .ci/run) driven by playwright-core; under CI this runs (and
// fails) without it. The screenshot lands in test-output/ for a person to look at.
const CHROMIUM = "/usr/bin/chromium";
const run = existsSync(CHROMIUM) || Boolean(process.env.CI);

describe.runIf(run)("dev dashboard in headless Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple", "mlp"), dashboard: true, traceRate: 1 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const row = (name: string) => page.locator(`tr[data-function="${name}"]`);

  it("lists the functions, shows a burst in the numbers and the timeline, and unloads on click", async () => {
    await page.goto(`${server.url}/`);
    await expect.poll(() => row("mlp").count()).toBe(1);
    await expect.poll(() => row("simple").count()).toBe(1);
    expect(await row("mlp").locator(".state span").textContent()).toBe("UNAVAILABLE");

    const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.5) }] });
    const burst = async () => {
      await Promise.all(Array.from({ length: 40 }, () => fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body })));
    };
    await burst();
    await expect.poll(async () => (await row("mlp").locator(".state span").textContent()) ?? "", { timeout: 10_000 }).toBe("READY");
    // Throughput is a rate between two snapshots: keep the burst going until the page shows it.
    await expect
      .poll(
        async () => {
          await burst();
          return Number((await row("mlp").locator("td.throughput").textContent()) ?? 0);
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);

    mkdirSync("test-output", { recursive: true });
    await page.screenshot({ path: "test-output/dashboard.png", fullPage: true });

    await row("mlp").locator('button[data-action="unload"]').click();
    await expect.poll(async () => (await row("mlp").locator(".state span").textContent()) ?? "", { timeout: 10_000 }).toBe("UNAVAILABLE");
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { openBrowser } from "../support/chromium.ts";

// The screenshot lands in test-output/ for a person to look at.

describe("dev dashboard in headless Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple", "mlp"), dashboard: true, traceRate: 1 });
    ({ browser, page } = await openBrowser());
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const row = (name: string) => page.locator(`tr[data-function="${name}"]`);
  const state = async (name: string) => (await row(name).locator(".state span").textContent()) ?? "";

  /**
   * Pixels the timeline canvas paints as execution bars, right of the track labels: the bars are
   * hsl(210, 70 %, 30–70 %) blue; labels are near-grey #334 and the background white.
   */
  const barPixels = () =>
    page.evaluate(() => {
      const canvas = document.getElementById("timeline") as HTMLCanvasElement;
      const { data } = canvas.getContext("2d")!.getImageData(180, 0, canvas.width - 180, canvas.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i + 2]! - data[i]! > 60 && data[i + 3]! > 0) n++;
      return n;
    });

  it("lists the functions, shows a burst in the numbers and the batch timeline, and parks, loads and unloads on click", async () => {
    await page.goto(`${server.url}/`);
    await expect.poll(() => row("mlp").count()).toBe(1);
    await expect.poll(() => row("simple").count()).toBe(1);
    expect(await state("mlp")).toBe("COLD"); // lazy, never loaded: the next request loads it
    expect(await barPixels()).toBe(0); // nothing has run yet: an empty timeline

    const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.5) }] });
    const burst = async () => {
      await Promise.all(Array.from({ length: 40 }, () => fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body })));
    };
    await burst();
    await expect.poll(() => state("mlp"), { timeout: 10_000 }).toBe("READY");
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
    // The batch timeline: one track for mlp's instance, with the bursts' executions drawn on it.
    await expect.poll(barPixels, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.locator("#timeline").getAttribute("height")).toBe(String(1 * 28 + 20));

    mkdirSync("test-output", { recursive: true });
    await page.screenshot({ path: "test-output/dashboard.png", fullPage: true });

    await row("mlp").locator('button[data-action="park"]').click();
    await expect.poll(() => state("mlp"), { timeout: 10_000 }).toBe("PARKED");
    await row("mlp").locator('button[data-action="load"]').click();
    await expect.poll(() => state("mlp"), { timeout: 10_000 }).toBe("READY");
    await row("mlp").locator('button[data-action="unload"]').click();
    await expect.poll(() => state("mlp"), { timeout: 10_000 }).toBe("COLD"); // lazy mode: an unload leaves it cold, the next request loads it
    expect(await state("simple")).toBe("COLD"); // the clicks reached mlp only; simple still loads on demand
  }, 60_000);
});

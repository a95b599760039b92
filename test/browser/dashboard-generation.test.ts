import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { openBrowser } from "../support/chromium.ts";

// The dashboard's generator picture (slots per iteration, a colour per sequence) and every
// function's plots over the last minutes, in Debian's Chromium.

describe("dev dashboard: generators and plots", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("tiny_gpt", "simple"), dashboard: true, controlMode: "explicit", loadModels: ["tiny_gpt", "simple"] });
    ({ browser, page } = await openBrowser(900));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Pixels of a canvas that are neither background nor grey text: drawn data. */
  const colouredPixels = (selector: string) =>
    page.evaluate((s) => {
      const canvas = document.querySelector(s) as HTMLCanvasElement | null;
      if (!canvas) return -1;
      const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
        if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) n++;
      }
      return n;
    }, selector);

  it("draws a generator's slots as sequences come and go, and a function's plots on click", async () => {
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.locator("tr.bus canvas").count()).toBe(1);
    await expect.poll(() => page.locator("tr.bus .legend").textContent()).toMatch(/tiny_gpt · continuous batching · 0 running \/ 32 slots/);
    const completions = Array.from({ length: 12 }, (_, i) =>
      fetch(`${server.url}/v1/completions`, { method: "POST", body: JSON.stringify({ model: "tiny_gpt", prompt: `request ${i}`, max_tokens: 20 + 10 * i, ignore_eos: true }) }),
    );
    await Promise.all(completions);
    await expect.poll(() => colouredPixels("tr.bus canvas"), { timeout: 10_000 }).toBeGreaterThan(500);

    const body = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) }, { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Array(16).fill(2) }] });
    for (let second = 0; second < 3; second++) {
      await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body })));
      await new Promise((r) => setTimeout(r, 1000));
    }
    await page.locator('tr[data-function="simple"] td.name').click();
    await expect.poll(() => page.locator("tr.plots canvas").count()).toBe(3);
    await expect.poll(() => colouredPixels("tr.plots .plot:first-child canvas"), { timeout: 10_000 }).toBeGreaterThan(20);
    await page.screenshot({ path: "test-output/dashboard-generation.png", fullPage: true });
  });
});

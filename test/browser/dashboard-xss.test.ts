import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddressInfo } from "node:net";
import { createServer } from "node:http";
import type { Server } from "node:http";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { ModelStats } from "../../runtime/metrics/mod.ts";
import type { MetricsEntry, TraceEvent } from "../../runtime/metrics/mod.ts";
import { dashboardHandlers } from "../../runtime/http/dashboard/dashboard-routes.ts";
import { createRouter } from "../../runtime/http/router.ts";
import type { AppContext } from "../../runtime/http/route-handlers.ts";
import { requestListener } from "../../adapters/node/request-listener.ts";
import { requireTool } from "../support/require-tool.ts";

// The repository API refuses names like these, so the snapshot is built here, in-process: the
// page must stay safe whatever strings the server hands it (a name from a scan, a state, a label).
const PAYLOAD = `<img src=x onerror="window.__xss=1;fetch('/v2/repository/models/simple/unload',{method:'POST'})">`;
const STATE = `<svg onload="window.__xss=2">`;

describe("dev dashboard renders server-provided strings as text (headless Chromium)", () => {
  let server: Server;
  let url: string;
  let browser: Browser;
  const controlCalls: string[] = [];

  beforeAll(async () => {
    requireTool("chromium");
    const entry: MetricsEntry = { name: PAYLOAD, version: `1<script>window.__xss=3</script>`, state: STATE, instances: 1, targetInstances: 1, pending: 0, stats: new ModelStats(), memory: { host: 0, device: 0 } };
    const trace: TraceEvent[] = [
      { name: "process_name", ph: "M", pid: 1, tid: 0, ts: 0, args: { name: PAYLOAD } } as TraceEvent,
      { name: "execute", cat: "execution", ph: "X", pid: 1, tid: 0, ts: 0, dur: 1000, args: { rows: 1 } } as TraceEvent,
    ];
    // The dashboard's routes through the real router; any control call the page makes is recorded, never run.
    const ctx = { models: { redact: (text: string) => text }, log: { error() {} } } as unknown as AppContext;
    const dashboard = requestListener(createRouter(ctx, dashboardHandlers({ entries: () => [entry], trace: () => ({ traceEvents: trace }), now: () => 1, intervalMs: 200 })));
    server = createServer((incoming, outgoing) => {
      if (!incoming.url?.startsWith("/v2/repository/")) return dashboard(incoming, outgoing);
      controlCalls.push(incoming.url);
      outgoing.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    (server as unknown as { closeAllConnections?: () => void })?.closeAllConnections?.();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it("shows a name like <img onerror=…> literally, creates no element from it and runs no script", async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${url}/`);
    expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'self'/);
    const row = page.locator("#rows tr").first();
    await expect.poll(() => page.locator("#rows tr").count(), { timeout: 10_000 }).toBe(1);
    expect(await row.getAttribute("data-function")).toBe(PAYLOAD);
    expect(await row.locator("td").first().textContent()).toBe(`${PAYLOAD} v1<script>window.__xss=3</script>`);
    expect(await row.locator(".state span").textContent()).toBe(STATE);
    // Several refreshes later, still nothing ran.
    await expect.poll(() => page.evaluate(() => document.getElementById("status")!.textContent), { timeout: 10_000 }).toMatch(/^live/);
    expect(await page.locator("#rows img, #rows svg, #rows script").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(controlCalls).toEqual([]);
    await page.close();
  }, 30_000);

  it("a button still acts on the function by its exact name, URL-encoded", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}/`);
    await expect.poll(() => page.locator("#rows tr").count(), { timeout: 10_000 }).toBe(1);
    await page.locator('#rows button[data-action="park"]').click();
    await expect.poll(() => controlCalls.length, { timeout: 10_000 }).toBe(1);
    expect(decodeURIComponent(controlCalls[0]!)).toBe(`/v2/repository/models/${PAYLOAD}/park`);
    await page.close();
  }, 30_000);
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { openDashboard } from "../support/chromium.ts";

// A rollout on the page: each of its two versions says its side and that side's share now.
describe("dev dashboard: a rollout (headless Chromium)", () => {
  let server: TestServer;
  let page: Page;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const repo = tempRepository("simple");
    cpSync(join(repo, "simple", "1"), join(repo, "simple", "2"), { recursive: true });
    const file = join(repo, "simple", "function.yaml");
    writeFileSync(file, `${readFileSync(file, "utf8")}\nrollout: { canary: { version: 2, percent: 30 } }\n`);
    ({ server, page, close } = await openDashboard(repo));
  }, 60_000);

  afterAll(async () => await close?.());

  const labels = () => page.locator('tr[data-function="simple"] td.name small').allTextContents();

  it("shows the canary's and the stable version's shares, and a change made through the API", async () => {
    await page.goto(`${server.url}/`);
    await expect.poll(labels, { timeout: 10_000 }).toEqual(["v1 · stable 70 %", "v2 · canary 30 %"]);
    const changed = await fetch(`${server.url}/v2/repository/models/simple/rollout`, { method: "POST", body: '{"percent": 50}', headers: { "content-type": "application/json" } });
    expect(changed.status).toBe(200);
    await expect.poll(labels, { timeout: 10_000 }).toEqual(["v1 · stable 50 %", "v2 · canary 50 %"]);
  });
});

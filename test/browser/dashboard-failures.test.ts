import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { openDashboard } from "../support/chromium.ts";


// What is broken shows on the page: a function whose function.yaml does not parse (it has no
// version to measure) and one whose model is not ONNX, each with its reason in its row and in its
// detail panel; /v1/functions carries the same reasons.
describe("dev dashboard: functions that fail (headless Chromium)", () => {
  let server: TestServer;
  let page: Page;
  let close: (() => Promise<void>) | undefined;
  let repo: string;

  beforeAll(async () => {
    repo = tempRepository("simple");
    cpSync(join(repo, "simple"), join(repo, "typo"), { recursive: true });
    writeFileSync(join(repo, "typo", "function.yaml"), readFileSync(join(repo, "simple", "function.yaml"), "utf8").replace("max_batch_size: 8", "max_batch_sise: 8"));
    cpSync(join(repo, "simple"), join(repo, "text"), { recursive: true });
    writeFileSync(join(repo, "text", "1", "model.onnx"), "a text file saved as model.onnx\n");
    ({ server, page, close } = await openDashboard(repo));
  }, 60_000);

  afterAll(async () => await close?.());

  const row = (name: string) => page.locator(`tr[data-function="${name}"]`);
  const reasonUnder = (name: string) => row(name).locator("xpath=following-sibling::tr[1][contains(@class, 'reason')]");

  it("lists every function, a failed one with its reason (file:line where it has one) in its row and its detail panel", async () => {
    // The text model fails when a request loads it.
    expect((await fetch(`${server.url}/v2/models/text/infer`, { method: "POST", body: "{}" })).status).toBeGreaterThanOrEqual(400);
    await page.goto(`${server.url}/`);
    for (const name of ["simple", "text", "typo"]) await expect.poll(() => row(name).count(), { timeout: 10_000 }).toBe(1);

    expect(await row("typo").locator(".state span").textContent()).toBe("FAILED");
    expect(await reasonUnder("typo").textContent()).toBe("typo/function.yaml:2: max_batch_sise: unknown field; did you mean 'max_batch_size'?");
    await expect.poll(() => row("text").locator(".state span").textContent(), { timeout: 10_000 }).toBe("FAILED");
    expect(await reasonUnder("text").textContent()).toMatch(/^failed to load 'text' version 1: .*text\/1\/model\.onnx: .*protobuf parsing failed/);
    expect(await row("text").locator(".state span").getAttribute("title")).toMatch(/protobuf parsing failed/);
    expect(await reasonUnder("simple").count()).toBe(0);

    // The detail panel (click the name) says it too, where the plots would be.
    await row("typo").locator("td.name").click();
    await expect.poll(() => page.locator("tr.plots .why").textContent()).toBe("not serving: typo/function.yaml:2: max_batch_sise: unknown field; did you mean 'max_batch_size'?");
    expect(await page.content()).not.toContain(repo); // names relative to the repository, never the absolute path
  });

  it("/v1/functions carries the reason of a function whose config does not parse", async () => {
    const { functions } = (await (await fetch(`${server.url}/v1/functions`)).json()) as { functions: { name: string; kind: string; error?: string }[] };
    expect(functions.find((f) => f.name === "typo")).toMatchObject({ kind: "unknown", error: "typo/function.yaml:2: max_batch_sise: unknown field; did you mean 'max_batch_size'?" });
    expect(functions.find((f) => f.name === "simple")).not.toHaveProperty("error");
  });
});

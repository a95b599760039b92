import { afterEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";
import { loadNative } from "../../native/index.ts";

// In-process (the test reads this process's RSS, where the onnxruntime worker threads live):
// vitest.config.ts keeps this file out of the Bun/Deno runs.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MiB = 1024 * 1024;
const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.25) }] });
const index = async (url: string) => ((await (await fetch(`${url}/v2/repository/index`, { method: "POST" })).json()) as { name: string; state: string }[]).map((r) => `${r.name} ${r.state}`);

describe("memory after a park", () => {
  it("with the native addon, malloc_trim runs after each park and the process's RSS really drops", async () => {
    const native = loadNative();
    expect(native, "native/build/Release/tensorfn_native.node is missing: `npm ci` builds it (node native/build.mjs, needs node-gyp and a C++ compiler)").toBeDefined();
    const trims: boolean[] = [];
    const node = createNodePlatform();
    // A full collection before the trim where bytes were dropped (those the optimised form replaced), so they are free for it.
    const order: string[] = [];
    const platform = {
      ...node,
      log: { info() {}, warn() {}, error() {} },
      collectGarbage: () => void (order.push("collect"), node.collectGarbage!()),
      trimMemory: () => void (order.push("trim"), trims.push(native!.trimMemory())),
    };
    // Three copies of mlp (a 12 MiB file; bench/results/lifecycle.md: about 67 MiB per READY copy, 15 MiB parked).
    const repo = tempRepository("mlp");
    for (const name of ["mlp_b", "mlp_c"]) cpSync(join(repo, "mlp"), join(repo, name), { recursive: true });
    server = await startServer({ repository: repo, platform });
    const names = ["mlp", "mlp_b", "mlp_c"];
    for (const name of names) expect((await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body })).status).toBe(200);
    expect(await index(server.url)).toEqual(names.map((n) => `${n} READY`));
    const ready = process.memoryUsage().rss;

    for (const name of names) expect((await fetch(`${server.url}/v2/repository/models/${name}/park`, { method: "POST" })).status).toBe(200);
    expect(await index(server.url)).toEqual(names.map((n) => `${n} PARKED`));
    // A trim when the sessions are released; a collection and a trim once the optimised form replaced the bytes.
    await expect.poll(() => trims.length, { timeout: 10_000 }).toBe(names.length * 2);
    expect(trims).toContain(true); // some trim gave pages back to the OS
    expect(order).toEqual(names.flatMap(() => ["trim", "collect", "trim"]));
    // Conservative: at least each session's own copy of the 12 MiB weights comes back. Read again
    // for a few seconds: in a loaded window (CI runs files side by side) the drop can show late;
    // memory that stays pinned still fails this.
    await expect.poll(() => (ready - process.memoryUsage().rss) / MiB, { timeout: 5_000, interval: 250 }).toBeGreaterThan(names.length * 12);

    // A later park drops no bytes (the form stays kept): a trim, no full collection stalling the event loop.
    order.length = 0;
    expect((await fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body })).status).toBe(200);
    expect((await fetch(`${server.url}/v2/repository/models/mlp/park`, { method: "POST" })).status).toBe(200);
    await expect.poll(() => order.length, { timeout: 10_000 }).toBe(1);
    expect(order).toEqual(["trim"]);
  });

  it("a shutdown collects and trims once for all the versions it releases, not once per version", async () => {
    const order: string[] = [];
    const node = createNodePlatform();
    const platform = { ...node, log: { info() {}, warn() {}, error() {} }, collectGarbage: () => void order.push("collect"), trimMemory: () => void order.push("trim") };
    const repo = tempRepository("mlp");
    for (const name of ["mlp_b", "mlp_c"]) cpSync(join(repo, "mlp"), join(repo, name), { recursive: true });
    server = await startServer({ repository: repo, platform });
    for (const name of ["mlp", "mlp_b", "mlp_c"]) expect((await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body })).status).toBe(200);
    expect(order).toEqual([]);
    await server.close();
    server = undefined;
    expect(order).toEqual(["collect", "trim"]);
  });

  it("without node-gyp, the addon build says it did not build and why, and does not fail `npm ci`", () => {
    // PATH without node-gyp: the same script `npm ci` runs (package.json "install"), as on a machine that cannot build.
    const run = spawnSync(process.execPath, ["native/build.mjs"], { encoding: "utf8", env: { ...process.env, PATH: "/nonexistent" } });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^native: addon not built \(.*node-gyp.*\); parked memory is released to the OS less eagerly, and no GPU telemetry\n$/);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";

// In-process (the fake clock drives the autoscaler tick and the batch window): vitest.config.ts
// keeps this file out of the Bun/Deno runs. The instances are real onnxruntime sessions.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const body = (k: number) =>
  JSON.stringify({
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i + k) },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: range(16, () => 1) },
    ],
  });

/** Lets the tick that `advance` fired finish its synchronous part and reschedule itself. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("autoscaling on real sessions", () => {
  it("scales out when requests pile up, answers them, and scales back in after the stable window", async () => {
    // Requests wait 10 s (fake) for a fuller batch, so they stay in flight while the autoscaler
    // ticks every 1 s: 3 in flight at target_concurrency 1 wants 3 instances (a panic: ≥ 2 × 1).
    const repo = tempRepository("simple");
    const yaml = join(repo, "simple", "function.yaml");
    writeFileSync(yaml, readFileSync(yaml, "utf8").replace(/^dynamic_batching:.*\n/m, "")); // replaced below
    appendFileSync(
      yaml,
      "dynamic_batching: { max_queue_delay_microseconds: 10000000 }\nscale: { min_instances: 1, max_instances: 3, target_concurrency: 1 }\n",
    );
    const clock = new FakeClock();
    const logs: string[] = [];
    const log = { info: (m: string) => void logs.push(m), warn: (m: string) => void logs.push(m), error: (m: string) => void logs.push(m) };
    server = await startServer({ repository: repo, clock, autoscaleIntervalMs: 1000, platform: { ...createNodePlatform(), log } });
    const url = server.url;
    const instances = async () => (await (await fetch(`${url}/v2/models/simple`)).json()).parameters.instance_count as number;
    const queued = () => server!.runtime!.models.metricsEntries().find((e) => e.name === "simple")?.pending ?? 0;

    // Warm: the first request loads the function; it waits out its own batch window.
    const warm = fetch(`${url}/v2/models/simple/infer`, { method: "POST", body: body(0) });
    await expect.poll(queued, { timeout: 20_000 }).toBe(1);
    clock.advance(10_000);
    expect((await warm).status).toBe(200);
    await settle();
    expect(await instances()).toBe(1);

    const pending = [1, 2, 3].map((k) => fetch(`${url}/v2/models/simple/infer`, { method: "POST", body: body(k) }).then(async (r) => ({ status: r.status, body: await r.json() })));
    await expect.poll(queued).toBe(3);
    clock.advance(1000);
    await expect.poll(instances, { timeout: 20_000 }).toBe(3);
    expect(logs).toContainEqual(expect.stringMatching(/simple v1: scaling 1 → 3 instances \(in flight: 3, panic\)/));
    const { model_stats } = await (await fetch(`${url}/v2/models/simple/stats`)).json();
    expect(model_stats[0].instance_count).toBe(3);

    clock.advance(10_000); // the batch window ends: the three run and answer
    const answers = await Promise.all(pending);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    answers.forEach((a, k) => expect(a.body.outputs[0].data).toEqual(range(16, (i) => i + k + 2)));

    // Idle now: panic holds the count for a stable window (60 s), then the average falls to 0.
    for (let i = 0; i < 100 && !logs.some((m) => /scaling 3 → 1/.test(m)); i++) {
      clock.advance(1000);
      await settle();
    }
    expect(logs).toContainEqual(expect.stringMatching(/simple v1: scaling 3 → 1 instances \(in flight: 0\)/));
    await expect.poll(instances, { timeout: 20_000 }).toBe(1);
    expect(clock.now()).toBeGreaterThan(60_000);
  });
});

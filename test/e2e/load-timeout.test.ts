import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { gatedOnnxRuntime } from "../support/gated-backend.ts";
import { FakeClock } from "../support/fake-clock.ts";

// In-process (the backend is the test's): vitest.config.ts keeps this file out of the Bun/Deno runs.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** `simple` on a worker thread: `auto` would time it in-process first, a load the gate counts too. */
function workerRepository(): string {
  const repository = tempRepository("simple");
  appendFileSync(join(repository, "simple", "function.yaml"), "parameters: { execution_thread: { string_value: worker } }\n");
  return repository;
}

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const body = JSON.stringify({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: range(16, () => 1) },
  ],
});
const infer = (url: string) => fetch(`${url}/v2/models/simple/infer`, { method: "POST", body });
const stateOf = async (url: string) => ((await (await fetch(`${url}/v2/repository/index`, { method: "POST" })).json()) as { state: string }[]).map((r) => r.state);

describe("--load-timeout-secs (loadTimeoutMs)", () => {
  it("answers 503 naming the load when an on-demand load outlasts it, then serves once the load finishes", async () => {
    // The load cannot finish before the gate opens, so 1 ms is always too short: no race to win.
    const gated = gatedOnnxRuntime();
    server = await startServer({ repository: workerRepository(), backends: gated.backends, loadTimeoutMs: 1 });
    const [first, second] = await Promise.all([infer(server.url), infer(server.url)]);
    expect([first.status, second.status]).toEqual([503, 503]);
    expect((await first.json()).error).toMatch(/timed out after 1 ms waiting for 'simple' version 1 to load/);
    // The load keeps going after the 503s (1 ms may end before it reaches the backend), and the
    // two concurrent first requests shared it: one load, held at the gate.
    await expect.poll(() => gated.seen.loads).toBe(1);
    expect(await stateOf(server.url)).toEqual(["LOADING"]);

    gated.open();
    await expect.poll(() => stateOf(server!.url), { timeout: 20_000 }).toEqual(["READY"]);
    const res = await infer(server.url);
    expect(res.status).toBe(200);
    expect((await res.json()).outputs[0].data).toEqual(range(16, (i) => i + 1));
    expect(gated.seen.loads).toBe(1);
  });

  it("measures the wait on the injected clock: 503 once the fake clock passes the timeout, not before", async () => {
    const gated = gatedOnnxRuntime();
    const clock = new FakeClock();
    server = await startServer({ repository: workerRepository(), backends: gated.backends, clock, loadTimeoutMs: 60_000 });
    const pending = infer(server.url);
    await expect.poll(() => gated.seen.loads).toBe(1);
    let settled = false;
    void pending.finally(() => (settled = true));
    clock.advance(59_999);
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    clock.advance(1);
    const res = await pending;
    expect(res.status).toBe(503);
    expect((await res.json()).error).toMatch(/timed out after 60000 ms waiting for 'simple' version 1 to load/);
    gated.open();
  });

  it("lets a request wait for a load that finishes within the timeout", async () => {
    const gated = gatedOnnxRuntime();
    server = await startServer({ repository: workerRepository(), backends: gated.backends, loadTimeoutMs: 60_000 });
    const pending = infer(server.url);
    await expect.poll(() => stateOf(server!.url)).toEqual(["LOADING"]);
    gated.open();
    const res = await pending;
    expect(res.status).toBe(200);
    expect((await res.json()).outputs[1].data).toEqual(range(16, (i) => i - 1));
  });
});

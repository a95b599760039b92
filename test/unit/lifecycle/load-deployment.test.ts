import { beforeEach, describe, expect, it } from "vitest";
import type { Backend } from "../../../runtime/backends/mod.ts";
import { loadDeployment } from "../../../runtime/lifecycle/load-deployment.ts";
import { MAIN_FIRST_MAX_BYTES, PlacementMemory } from "../../../runtime/lifecycle/execution-thread.ts";
import { ModelStats } from "../../../runtime/metrics/mod.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { declared, timedBackend } from "./_timed-backend.ts";

const quiet = { info() {}, warn() {}, error() {} };
const load = (backend: Backend, bytes: Uint8Array, yaml?: string) =>
  loadDeployment({ declared: declared(yaml), version: 1, bytes, backend, services: { clock: new FakeClock(), log: quiet }, cpuCount: 2, stats: new ModelStats(), placements: memory });
let memory = new PlacementMemory();
beforeEach(() => void (memory = new PlacementMemory()));
const threadParameters = (parameters: Record<string, { string_value: string }>) =>
  Object.fromEntries(Object.entries(parameters).filter(([key]) => key.startsWith("execution_thread")));

describe("loadDeployment() with execution_thread auto", () => {
  it("loads the bytes it measured before (a wake from PARKED) straight onto the thread it chose, without timing them again, and reports the first measurement", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 40, maxBatchUs: 300 });
    const bytes = new Uint8Array(16);
    const first = await load(backend, bytes);
    expect(seen).toMatchObject({ threads: ["worker", "main"], timings: 4 }); // batch 1 (close to the threshold: timed three times), then batch 8
    await first.close();

    const again = await load(backend, bytes);
    expect(seen).toMatchObject({ threads: ["worker", "main", "main"], timings: 4 });
    expect(threadParameters(again.config.parameters)).toEqual(threadParameters(first.config.parameters));
    expect(threadParameters(again.config.parameters)).toEqual({
      execution_thread: { string_value: "main" },
      execution_thread_requested: { string_value: "auto" },
      execution_thread_measured_us: { string_value: "40.0" },
      execution_thread_measured_max_batch_us: { string_value: "300.0" },
    });
  });

  it("keeps a worker choice for the same bytes: one load, no timing", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 2000 });
    const bytes = new Uint8Array(16);
    await (await load(backend, bytes)).close();
    const again = await load(backend, bytes);
    expect(seen).toMatchObject({ threads: ["worker", "worker"], timings: 2 });
    expect(again.config.parameters.execution_thread_measured_us).toEqual({ string_value: "2000.0" });
  });

  it("places the same content read again (a reload, a copy under another name) by the first measurement; other content measures again", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 2000 });
    await (await load(backend, new Uint8Array(4096).fill(1))).close();
    const copy = await load(backend, new Uint8Array(4096).fill(1), "max_batch_size: 8\ndynamic_batching: { max_queue_delay_microseconds: 500 }\n");
    expect(seen.timings).toBe(2);
    expect(copy.config.parameters.execution_thread_measured_us).toEqual({ string_value: "2000.0" });
    await copy.close();
    const other = new Uint8Array(4096).fill(1);
    other[61 * 7] = 2;
    await (await load(backend, other)).close();
    expect(seen.timings).toBe(4);
  });

  it("times the largest batch again when it is within a factor of two of its threshold (6 ms), where noise decides", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 40, maxBatchUs: 5000 });
    const deployment = await load(backend, new Uint8Array(16));
    expect(seen.timings).toBe(5); // batch 1 three times, the largest batch twice
    expect(deployment.config.parameters.execution_thread).toEqual({ string_value: "main" });
    await deployment.close();
  });

  it("copies of one model loading at once (a server starting) wait for the first measurement instead of each timing its own", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 40, maxBatchUs: 300 });
    const copies = await Promise.all([1, 2, 3].map(() => load(backend, new Uint8Array(4096).fill(1))));
    expect(seen.timings).toBe(4); // one measurement: batch 1 three times (close to the threshold), then batch 8
    expect(copies.map((d) => d.config.parameters.execution_thread)).toEqual(Array(3).fill({ string_value: "main" }));
    expect(seen.threads).toEqual(["worker", "worker", "worker", "main", "main", "main"]);
    await Promise.all(copies.map((d) => d.close()));
  });

  it("a copy whose measurement failed elsewhere measures for itself", async () => {
    const memory = new PlacementMemory();
    const bytes = new Uint8Array(64);
    const failing = memory.measureOnce(bytes, "k", () => Promise.reject(new Error("aborted")));
    const waiting = memory.measureOnce(bytes, "k", async () => ({ batch1Us: 900 }));
    await expect(failing).rejects.toThrow("aborted");
    await expect(waiting).resolves.toEqual({ batch1Us: 900 });
    expect(memory.recall(bytes, "k")).toEqual({ batch1Us: 900 });
  });

  it("without a memory (none given), measures every load", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 2000 });
    const bytes = new Uint8Array(16);
    const once = () => loadDeployment({ declared: declared(), version: 1, bytes, backend, services: { clock: new FakeClock(), log: quiet }, cpuCount: 2, stats: new ModelStats() });
    await (await once()).close();
    await (await once()).close();
    expect(seen.timings).toBe(4);
  });

  it("measures again when the config changed", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 40, maxBatchUs: 300 });
    const bytes = new Uint8Array(16);
    await (await load(backend, bytes, "max_batch_size: 8\n")).close();
    const changed = await load(backend, bytes, "max_batch_size: 64\n");
    expect(seen.timings).toBe(8);
    expect(changed.config.parameters.execution_thread_measured_max_batch_us).toEqual({ string_value: "300.0" });
  });
});

describe("loadDeployment() with execution_thread auto while the server starts (quietLoop)", () => {
  const starting = (backend: Backend, bytes: Uint8Array, quietLoop = true) =>
    loadDeployment({ declared: declared(), version: 1, bytes, backend, services: { clock: new FakeClock(), log: quiet }, cpuCount: 2, stats: new ModelStats(), placements: memory, quietLoop });

  it("creates and times a small model on the event loop first, and keeps it there when it measures cheap: one session, no worker", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 40, maxBatchUs: 300 }, { workerThreads: true });
    const deployment = await starting(backend, new Uint8Array(16));
    expect(seen).toMatchObject({ threads: ["main"], released: 0 });
    expect(new Set(seen.timedOn)).toEqual(new Set(["main"]));
    expect(deployment.config.parameters.execution_thread).toEqual({ string_value: "main" });
    await deployment.close();
  });

  it("moves one that measures too slow to a worker", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 4000 }, { workerThreads: true });
    const deployment = await starting(backend, new Uint8Array(16));
    expect(seen).toMatchObject({ threads: ["main", "worker"], timedOn: ["main"], released: 1 });
    expect(deployment.config.parameters.execution_thread).toEqual({ string_value: "worker" });
    expect(deployment.config.parameters.execution_thread_measured_us).toEqual({ string_value: "4000.0" });
    await deployment.close();
  });

  it("moves one whose probe fails to a worker, where auto is safe", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 40, failsOn: "main" }, { workerThreads: true });
    const deployment = await starting(backend, new Uint8Array(16));
    expect(seen.threads).toEqual(["main", "worker"]);
    expect(deployment.config.parameters.execution_thread).toEqual({ string_value: "worker" });
    await deployment.close();
  });

  it("loads a model over MAIN_FIRST_MAX_BYTES, or any model once the server serves, or on a backend without workers, as before", async () => {
    const big = timedBackend({ batch1Us: 4000 }, { workerThreads: true });
    await (await starting(big.backend, new Uint8Array(MAIN_FIRST_MAX_BYTES + 1))).close();
    expect(big.seen.threads).toEqual(["worker"]);
    const serving = timedBackend({ batch1Us: 40, maxBatchUs: 300 }, { workerThreads: true });
    await (await starting(serving.backend, new Uint8Array(16), false)).close();
    expect(serving.seen.threads).toEqual(["worker", "main"]);
    const noWorkers = timedBackend({ batch1Us: 40, maxBatchUs: 300 });
    await (await starting(noWorkers.backend, new Uint8Array(32))).close(); // other bytes: not placed by the memory
    expect(noWorkers.seen.threads).toEqual(["worker", "main"]);
  });
});

describe("loadDeployment() with onnxruntime's on/off parameters", () => {
  it("asks every instance's load for weights_in_place, wake_unpacked and allow_spinning as given; unset when not given", async () => {
    const asked: [boolean | undefined, boolean | undefined, boolean | undefined][] = [];
    const { backend: timed } = timedBackend({ batch1Us: 2000 });
    const backend: Backend = { ...timed, load: (model, options) => (asked.push([options.weightsInPlace, options.wakeUnpacked, options.allowSpinning]), timed.load(model, options)) };
    const yamls = ['parameters: { weights_in_place: true, wake_unpacked: "1", allow_spinning: "true" }\ninstance_group: [{ count: 2 }]\n', 'parameters: { weights_in_place: "false", wake_unpacked: false, allow_spinning: false }\n', ""];
    for (const yaml of yamls) {
      const deployment = await loadDeployment({ declared: declared(`max_batch_size: 8\n${yaml}`), version: 1, bytes: new Uint8Array(16), backend, services: { clock: new FakeClock(), log: quiet }, cpuCount: 2, stats: new ModelStats() });
      await deployment.close();
    }
    // weights_in_place and wake_unpacked are off unless on (they only apply to a kept optimised form); allow_spinning unset leaves the backend's default.
    expect(asked).toEqual([[true, true, true], [true, true, true], [false, false, false], [false, false, undefined]]);
  });
});

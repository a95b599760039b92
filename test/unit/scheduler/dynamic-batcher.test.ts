import { describe, expect, it } from "vitest";
import { DynamicBatcher } from "../../../runtime/scheduler/mod.ts";
import type { ModelInstance, ScheduledRequest } from "../../../runtime/scheduler/mod.ts";
import type { Tensor } from "../../../runtime/mod.ts";
import { RuntimeError } from "../../../runtime/mod.ts";
import { FakeClock } from "../../support/fake-clock.ts";

/** An instance that doubles `x`, records each batch's rows, and finishes when the test says so. */
class FakeInstance implements ModelInstance {
  batches: number[][] = [];
  #pending: (() => void)[] = [];
  readonly options: { manual?: boolean; failOn?: number };
  constructor(options: { manual?: boolean; failOn?: number } = {}) {
    this.options = options;
  }

  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    const x = feeds.x!.data as Float32Array;
    this.batches.push([...x]);
    if (this.options.failOn !== undefined && x.includes(this.options.failOn)) return Promise.reject(new Error("bad row"));
    const result = { y: { datatype: "FP32" as const, shape: [...feeds.x!.shape], data: x.map((v) => v * 2) } };
    if (!this.options.manual) return Promise.resolve(result);
    return new Promise((resolve) => this.#pending.push(() => resolve(result)));
  }

  finishAll(): void {
    for (const finish of this.#pending.splice(0)) finish();
  }
}

function request(value: number, rows = 1, key = "x:1"): ScheduledRequest {
  return { feeds: { x: { datatype: "FP32", shape: [rows, 1], data: new Float32Array(rows).fill(value) } }, batchSize: rows, shapeKey: key };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("DynamicBatcher", () => {
  it("`enqueue()` with maxBatchSize 1 runs each request alone (no batching)", async () => {
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 1, clock: new FakeClock() });
    const results = await Promise.all([1, 2, 3].map((v) => batcher.enqueue(request(v))));
    expect(instance.batches).toEqual([[1], [2], [3]]);
    expect(results.map((r) => [...(r.y!.data as Float32Array)])).toEqual([[2], [4], [6]]);
  });

  it("`enqueue()` still runs a request whose own batch exceeds the batcher's limit, alone", async () => {
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 1, clock: new FakeClock() });
    const result = await batcher.enqueue(request(5, 4));
    expect(result.y!.shape).toEqual([4, 1]);
  });

  it("`enqueue()` forms one batch of the requests queued while the instance was busy, and splits results per request", async () => {
    const instance = new FakeInstance({ manual: true });
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock() });
    const first = batcher.enqueue(request(1));
    const rest = [2, 3, 4].map((v) => batcher.enqueue(request(v)));
    instance.finishAll();
    await first;
    await settle();
    instance.finishAll();
    const results = await Promise.all(rest);
    expect(instance.batches).toEqual([[1], [2, 3, 4]]);
    expect(results.map((r) => [...(r.y!.data as Float32Array)])).toEqual([[4], [6], [8]]);
  });

  it("`enqueue()` waits up to the queue delay for a fuller batch, then dispatches what it has", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 4, maxQueueDelayMs: 1, clock });
    const pending = [batcher.enqueue(request(1)), batcher.enqueue(request(2))];
    await settle();
    expect(instance.batches).toEqual([]);
    clock.advance(1);
    await Promise.all(pending);
    expect(instance.batches).toEqual([[1, 2]]);
  });

  it("`enqueue()` dispatches at once when the batch reaches the maximum, without waiting for the delay", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 3, maxQueueDelayMs: 1000, clock });
    await Promise.all([1, 2, 3].map((v) => batcher.enqueue(request(v))));
    expect(instance.batches).toEqual([[1, 2, 3]]);
  });

  it("`enqueue()` never mixes requests with different shapes in one batch", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 1, clock });
    const pending = [batcher.enqueue(request(1, 1, "a")), batcher.enqueue(request(2, 1, "b")), batcher.enqueue(request(3, 1, "b"))];
    await settle();
    clock.advance(1);
    await Promise.all(pending);
    expect(instance.batches).toEqual([[1], [2, 3]]);
  });

  it("`enqueue()` rejects with CANCELLED when the signal aborts while queued, and the rest still run", async () => {
    const instance = new FakeInstance({ manual: true });
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 1, clock: new FakeClock() });
    const running = batcher.enqueue(request(1));
    const controller = new AbortController();
    const cancelled = batcher.enqueue(request(2), { signal: controller.signal });
    const after = batcher.enqueue(request(3));
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ code: "CANCELLED" });
    instance.finishAll();
    await running;
    await settle();
    instance.finishAll();
    await after;
    expect(instance.batches).toEqual([[1], [3]]);
  });

  it("`enqueue()` fails only the request that broke a shared batch", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance({ failOn: 2 });
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 4, maxQueueDelayMs: 1, clock });
    const pending = [1, 2, 3].map((v) => batcher.enqueue(request(v)).then(() => "ok", (e: RuntimeError) => e.code));
    await settle();
    clock.advance(1);
    expect(await Promise.all(pending)).toEqual(["ok", "INTERNAL", "ok"]);
  });

  it("`stop()` refuses new work and resolves after in-flight requests finish", async () => {
    const instance = new FakeInstance({ manual: true });
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 1, clock: new FakeClock() });
    const running = batcher.enqueue(request(1));
    let stopped = false;
    const stopping = batcher.stop().then(() => (stopped = true));
    await expect(batcher.enqueue(request(2))).rejects.toMatchObject({ code: "UNAVAILABLE" });
    await settle();
    expect(stopped).toBe(false);
    instance.finishAll();
    await running;
    await stopping;
    expect(batcher.inflight()).toBe(0);
  });

  it("`enqueue()` overlaps executions across instances", async () => {
    const a = new FakeInstance({ manual: true });
    const b = new FakeInstance({ manual: true });
    const batcher = new DynamicBatcher({ instances: [a, b], maxBatchSize: 1, clock: new FakeClock() });
    const pending = [batcher.enqueue(request(1)), batcher.enqueue(request(2))];
    await settle();
    expect(a.batches.length + b.batches.length).toBe(2);
    a.finishAll();
    b.finishAll();
    await Promise.all(pending);
  });
});

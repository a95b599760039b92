import { describe, expect, it } from "vitest";
import { DynamicBatcher } from "../../runtime/scheduler/mod.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { FakeInstance, fakeRequest, settle } from "../support/fake-instance.ts";
import { instanceSchedulerContract, schedulerBasicsContract, schedulerContract } from "./scheduler-contract.ts";

schedulerContract("DynamicBatcher", (setup) => new DynamicBatcher(setup));
instanceSchedulerContract("DynamicBatcher", (setup) => new DynamicBatcher(setup));
schedulerBasicsContract("DynamicBatcher", (instance) => new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock() }));

describe("DynamicBatcher: which outputs an execution fetches", () => {
  it("`enqueue()` asks the instance for the union of its requests' outputs, and for all of them when one request needs all", async () => {
    const instance = new FakeInstance({ manual: true });
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock() });
    const first = batcher.enqueue(fakeRequest(1, { outputs: ["y"] }));
    const subsets = [batcher.enqueue(fakeRequest(2, { outputs: ["y"] })), batcher.enqueue(fakeRequest(3, { outputs: ["z", "y"] }))];
    instance.finish();
    await first;
    await settle();
    const withAll = [batcher.enqueue(fakeRequest(4, { outputs: ["z"] })), batcher.enqueue(fakeRequest(5))];
    instance.finish();
    await Promise.all(subsets);
    await settle();
    instance.finish();
    await Promise.all(withAll);
    expect(instance.executions).toEqual([[1], [2, 3], [4, 5]]);
    expect(instance.fetched).toEqual([["y"], ["y", "z"], undefined]);
  });
});

describe("DynamicBatcher: whether to wait at all", () => {
  it("`enqueue()` stops waiting out the delay for a lone request once waits keep gaining nothing (closed loop, c=1)", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock });
    const waits: number[] = [];
    for (let i = 0; i < 16; i++) {
      const start = clock.now();
      const done = batcher.enqueue(fakeRequest(i)).then(() => waits.push(clock.now() - start));
      await settle();
      clock.advance(0.5);
      await done;
    }
    // The first waits pay the delay (the config asked for it); then a lone request leaves at once,
    // except every eighth, which probes whether traffic changed.
    expect(waits.slice(0, 3)).toEqual([0.5, 0.5, 0.5]);
    expect(waits.slice(8).filter((w) => w === 0).length).toBeGreaterThanOrEqual(7);
  });

  it("`enqueue()` keeps waiting while waits gain requests", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock });
    for (let i = 0; i < 10; i++) {
      const pending = [batcher.enqueue(fakeRequest(1))];
      await settle();
      clock.advance(0.2);
      pending.push(batcher.enqueue(fakeRequest(2)));
      await settle();
      clock.advance(0.3);
      await Promise.all(pending);
    }
    expect(instance.executions.every((e) => e.length === 2)).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { completeConfig } from "../../../runtime/config/mod.ts";
import { createScheduler } from "../../../runtime/scheduler/mod.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { FakeInstance, fakeRequest, settle } from "../../support/fake-instance.ts";
import { declared, sig } from "../config/_helpers.ts";

const config = (yaml: string) => completeConfig(declared(yaml), { inputs: [sig("x:FP32:[-1,1]")], outputs: [sig("y:FP32:[-1,1]")] });

describe("createScheduler()", () => {
  it("without dynamic_batching, runs every request alone (Triton's default scheduler)", async () => {
    const instance = new FakeInstance({ manual: true });
    const scheduler = createScheduler(config("max_batch_size: 8\n"), { instances: [instance], clock: new FakeClock() });
    const pending = [1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v)));
    for (let i = 0; i < 3; i++) {
      await settle();
      instance.finish();
    }
    await Promise.all(pending);
    expect(instance.executions).toEqual([[1], [2], [3]]);
  });

  it("with dynamic_batching, batches up to max_batch_size and waits out max_queue_delay_microseconds", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const scheduler = createScheduler(config("max_batch_size: 2\ndynamic_batching: { max_queue_delay_microseconds: 1000 }\n"), { instances: [instance], clock });
    const pending = [1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v)));
    await settle();
    expect(instance.executions).toEqual([[1, 2]]); // full at 2: at once
    clock.advance(1);
    await Promise.all(pending);
    expect(instance.executions).toEqual([[1, 2], [3]]);
  });

  it("maps Triton's priority levels and queue policies: a full level refuses, another still has room", async () => {
    const yaml = ["max_batch_size: 1", "dynamic_batching:", "  priority_levels: 2", "  default_priority_level: 2", "  priority_queue_policy:", "    2: { max_queue_size: 1 }", ""].join("\n");
    const instance = new FakeInstance({ manual: true });
    const scheduler = createScheduler(config(yaml), { instances: [instance], clock: new FakeClock() });
    const running = scheduler.enqueue(fakeRequest(1));
    await settle();
    const queued = scheduler.enqueue(fakeRequest(2));
    await expect(scheduler.enqueue(fakeRequest(3))).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(scheduler.hasRoom(1)).toBe(true);
    expect(scheduler.hasRoom(2)).toBe(false);
    instance.finish();
    await running;
    await settle();
    instance.finish();
    await queued;
  });
});

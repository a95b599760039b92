import { describe, expect, it } from "vitest";
import { responses } from "../../runtime/scheduler/mod.ts";
import type { InstanceScheduler, Scheduler } from "../../runtime/scheduler/mod.ts";
import type { LevelPolicy } from "../../runtime/scheduler/mod.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { FakeInstance, fakeRequest, settle } from "../support/fake-instance.ts";

/** What every scheduler under contract can be built from: Triton's dynamic_batching semantics. */
export interface ContractSetup {
  instances: FakeInstance[];
  clock: FakeClock;
  maxBatchSize: number;
  preferredBatchSizes?: number[];
  maxQueueDelayMs?: number;
  preserveOrdering?: boolean;
  levels?: LevelPolicy[];
  defaultLevel?: number;
}

const policy = (p: Partial<LevelPolicy> = {}): LevelPolicy => ({
  timeoutAction: "REJECT",
  defaultTimeoutMs: 0,
  allowTimeoutOverride: false,
  maxQueueSize: 0,
  ...p,
});

const values = (r: { y?: { data: unknown } }) => [...(r.y!.data as Float32Array)];

/**
 * The scheduler contract: one suite that the dynamic batcher runs today and the sequence,
 * continuous and ensemble schedulers will run as they arrive. Everything on a fake clock.
 */
export function schedulerContract(name: string, create: (setup: ContractSetup) => Scheduler): void {
  function build(overrides: Partial<ContractSetup> & { manual?: boolean; failOn?: number; instanceCount?: number } = {}) {
    const { manual, failOn, instanceCount = 1, ...rest } = overrides;
    const instances = Array.from({ length: instanceCount }, () => new FakeInstance({ manual, failOn }));
    const setup: ContractSetup = { instances, clock: new FakeClock(), maxBatchSize: 8, ...rest };
    return { ...setup, scheduler: create(setup) };
  }

  describe(`${name} (scheduler contract)`, () => {
    describe("batch formation", () => {
      it("`enqueue()` with max batch 1 runs each request alone", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1 });
        const results = await Promise.all([1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v))));
        expect(instances[0]!.executions).toEqual([[1], [2], [3]]);
        expect(results.map(values)).toEqual([[2], [4], [6]]);
      });

      it("`enqueue()` runs a request larger than the batch limit alone, whole", async () => {
        const { scheduler } = build({ maxBatchSize: 1 });
        const result = await scheduler.enqueue(fakeRequest(5, { rows: 4 }));
        expect(result.y!.shape).toEqual([4, 1]);
      });

      it("`enqueue()` batches the requests that queued while the instance was busy and splits results per request", async () => {
        const { scheduler, instances } = build({ manual: true });
        const first = scheduler.enqueue(fakeRequest(1));
        const rest = [2, 3, 4].map((v) => scheduler.enqueue(fakeRequest(v)));
        instances[0]!.finish();
        await first;
        await settle();
        instances[0]!.finish();
        expect((await Promise.all(rest)).map(values)).toEqual([[4], [6], [8]]);
        expect(instances[0]!.executions).toEqual([[1], [2, 3, 4]]);
      });

      it("`enqueue()` counts a request's own batch dimension and never exceeds the maximum", async () => {
        const { scheduler, instances, clock } = build({ maxBatchSize: 4, maxQueueDelayMs: 1 });
        const pending = [fakeRequest(1, { rows: 3 }), fakeRequest(2, { rows: 2 }), fakeRequest(3, { rows: 2 })].map((r) => scheduler.enqueue(r));
        await settle();
        clock.advance(1);
        await settle();
        clock.advance(1);
        await Promise.all(pending);
        expect(instances[0]!.executions).toEqual([[1, 1, 1], [2, 2, 3, 3]]);
      });

      it("`enqueue()` waits up to the queue delay for a fuller batch, then dispatches what it has", async () => {
        const { scheduler, instances, clock } = build({ maxBatchSize: 4, maxQueueDelayMs: 5 });
        const pending = [scheduler.enqueue(fakeRequest(1)), scheduler.enqueue(fakeRequest(2))];
        await settle();
        clock.advance(4);
        await settle();
        expect(instances[0]!.executions).toEqual([]);
        clock.advance(1);
        await Promise.all(pending);
        expect(instances[0]!.executions).toEqual([[1, 2]]);
      });

      it("`enqueue()` dispatches at once when the batch is full, without waiting for the delay", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 3, maxQueueDelayMs: 1000 });
        await Promise.all([1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v))));
        expect(instances[0]!.executions).toEqual([[1, 2, 3]]);
      });

      it("`enqueue()` dispatches the largest preferred size as soon as it forms", async () => {
        const { scheduler, instances, clock } = build({ maxBatchSize: 8, preferredBatchSizes: [2, 4], maxQueueDelayMs: 1000 });
        const pending = [1, 2, 3, 4, 5].map((v) => scheduler.enqueue(fakeRequest(v)));
        await settle();
        expect(instances[0]!.executions).toEqual([[1, 2, 3, 4]]);
        clock.advance(1000);
        await Promise.all(pending);
        expect(instances[0]!.executions).toEqual([[1, 2, 3, 4], [5]]);
      });

      it("`enqueue()` takes a smaller preferred size when the delay expires", async () => {
        const { scheduler, instances, clock } = build({ maxBatchSize: 8, preferredBatchSizes: [2, 4], maxQueueDelayMs: 10 });
        const pending = [1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v)));
        await settle();
        clock.advance(10);
        await settle();
        clock.advance(10);
        await Promise.all(pending);
        expect(instances[0]!.executions).toEqual([[1, 2], [3]]);
      });

      it("`enqueue()` never mixes requests with different shapes in one batch", async () => {
        const { scheduler, instances, clock } = build({ maxQueueDelayMs: 1 });
        const pending = [fakeRequest(1, { shapeKey: "a" }), fakeRequest(2, { shapeKey: "b" }), fakeRequest(3, { shapeKey: "b" })].map((r) =>
          scheduler.enqueue(r),
        );
        await settle();
        clock.advance(1);
        await Promise.all(pending);
        expect(instances[0]!.executions).toEqual([[1], [2, 3]]);
      });

      it("`enqueue()` overlaps executions across instances", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true, instanceCount: 2 });
        const pending = [scheduler.enqueue(fakeRequest(1)), scheduler.enqueue(fakeRequest(2))];
        await settle();
        expect(instances.map((i) => i.busy)).toEqual([1, 1]);
        instances.forEach((i) => i.finish(true));
        await Promise.all(pending);
      });
    });

    describe("ordering", () => {
      it("`enqueue()` with preserve ordering delivers in dispatch order when a later batch finishes first", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true, instanceCount: 2, preserveOrdering: true });
        const order: number[] = [];
        const pending = [1, 2].map((v) => scheduler.enqueue(fakeRequest(v)).then(() => order.push(v)));
        await settle();
        const [a, b] = instances[0]!.executions[0]![0] === 1 ? instances : [instances[1]!, instances[0]!];
        b!.finish();
        await settle();
        expect(order).toEqual([]);
        a!.finish();
        await Promise.all(pending);
        expect(order).toEqual([1, 2]);
      });
    });

    describe("priorities and queue policies", () => {
      it("`enqueue()` serves a more important level first", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true, levels: [policy(), policy()], defaultLevel: 2 });
        const pending = [scheduler.enqueue(fakeRequest(0))];
        await settle();
        pending.push(scheduler.enqueue(fakeRequest(1)), scheduler.enqueue(fakeRequest(2, { priority: 1 })));
        for (let i = 0; i < 3; i++) {
          instances[0]!.finish();
          await settle();
        }
        await Promise.all(pending);
        expect(instances[0]!.executions).toEqual([[0], [2], [1]]);
      });

      it("`enqueue()` refuses at once with UNAVAILABLE when the level's queue is full", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true, levels: [policy({ maxQueueSize: 1 })] });
        const running = scheduler.enqueue(fakeRequest(1));
        await settle();
        const queued = scheduler.enqueue(fakeRequest(2));
        await expect(scheduler.enqueue(fakeRequest(3))).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/Exceeds maximum queue size/) });
        instances[0]!.finish(true);
        await running;
        await settle();
        instances[0]!.finish(true);
        await queued;
      });

      it("`hasRoom()` says false once every level is full, and per level when given a priority", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true, levels: [policy({ maxQueueSize: 1 }), policy({ maxQueueSize: 1 })] });
        const running = scheduler.enqueue(fakeRequest(1));
        await settle();
        expect(scheduler.hasRoom()).toBe(true);
        const first = scheduler.enqueue(fakeRequest(2, { priority: 1 }));
        expect([scheduler.hasRoom(), scheduler.hasRoom(1), scheduler.hasRoom(2)]).toEqual([true, false, true]);
        const second = scheduler.enqueue(fakeRequest(3, { priority: 2 }));
        expect(scheduler.hasRoom()).toBe(false);
        for (let i = 0; i < 3; i++) {
          instances[0]!.finish(true);
          await settle();
        }
        await Promise.all([running, first, second]);
        expect(scheduler.hasRoom()).toBe(true);
      });

      it("`enqueue()` rejects a request whose timeout expires in the queue (REJECT)", async () => {
        const { scheduler, instances, clock } = build({ maxBatchSize: 1, manual: true, levels: [policy({ defaultTimeoutMs: 5 })] });
        const running = scheduler.enqueue(fakeRequest(1));
        await settle();
        const late = scheduler.enqueue(fakeRequest(2));
        clock.advance(5);
        await expect(late).rejects.toMatchObject({ code: "UNAVAILABLE", message: "Request timeout expired" });
        instances[0]!.finish(true);
        await running;
        expect(instances[0]!.executions).toEqual([[1]]);
      });

      it("`enqueue()` moves an expired request behind punctual ones (DELAY) and still runs it", async () => {
        const { scheduler, instances, clock } = build({ maxBatchSize: 1, manual: true, levels: [policy({ timeoutAction: "DELAY", defaultTimeoutMs: 5 })] });
        const pending = [scheduler.enqueue(fakeRequest(1))];
        await settle();
        pending.push(scheduler.enqueue(fakeRequest(2)));
        clock.advance(5);
        pending.push(scheduler.enqueue(fakeRequest(3)));
        for (let i = 0; i < 3; i++) {
          instances[0]!.finish();
          await settle();
        }
        await Promise.all(pending);
        expect(instances[0]!.executions).toEqual([[1], [3], [2]]);
      });

      it("`enqueue()` lets a request shorten its timeout only where the policy allows it", async () => {
        const allow = build({ maxBatchSize: 1, manual: true, levels: [policy({ defaultTimeoutMs: 100, allowTimeoutOverride: true })] });
        const deny = build({ maxBatchSize: 1, manual: true, levels: [policy({ defaultTimeoutMs: 100 })] });
        for (const { scheduler } of [allow, deny]) {
          void scheduler.enqueue(fakeRequest(1));
          await settle();
        }
        const shortened = allow.scheduler.enqueue(fakeRequest(2, { timeoutMs: 10 }));
        const ignored = deny.scheduler.enqueue(fakeRequest(2, { timeoutMs: 10 }));
        const lengthened = allow.scheduler.enqueue(fakeRequest(3, { timeoutMs: 1000 }));
        const outcome = (p: Promise<unknown>) => p.then(() => "ran", () => "expired");
        const results = [outcome(shortened), outcome(ignored), outcome(lengthened)];
        allow.clock.advance(10);
        deny.clock.advance(10);
        await settle();
        allow.clock.advance(90);
        await settle();
        for (const { instances } of [allow, deny]) for (let i = 0; i < 3; i++) (instances[0]!.finish(true), await settle());
        expect(await Promise.all(results)).toEqual(["expired", "ran", "expired"]);
      });
    });

    describe("cancellation, failures and draining", () => {
      it("`enqueue()` rejects with CANCELLED when the signal aborts while queued, and the slot goes to the next request", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true, levels: [policy({ maxQueueSize: 1 })] });
        const running = scheduler.enqueue(fakeRequest(1));
        await settle();
        const controller = new AbortController();
        const cancelled = scheduler.enqueue(fakeRequest(2), { signal: controller.signal });
        controller.abort();
        await expect(cancelled).rejects.toMatchObject({ code: "CANCELLED" });
        const next = scheduler.enqueue(fakeRequest(3));
        instances[0]!.finish();
        await running;
        await settle();
        instances[0]!.finish();
        await next;
        expect(instances[0]!.executions).toEqual([[1], [3]]);
      });

      it("requests sharing one signal (a connection's): an abort cancels those still queued, not the one running, nor those that ran before", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true });
        const controller = new AbortController();
        const outcome = (p: Promise<unknown>) => p.then(() => "ran", (e: { code: string }) => e.code);
        const first = outcome(scheduler.enqueue(fakeRequest(1), { signal: controller.signal }));
        await settle();
        const second = outcome(scheduler.enqueue(fakeRequest(2), { signal: controller.signal }));
        instances[0]!.finish();
        await settle();
        // 2 runs now; 3 and 4 wait under the same signal, 5 under none.
        const waiting = [3, 4].map((v) => outcome(scheduler.enqueue(fakeRequest(v), { signal: controller.signal })));
        const unsignalled = outcome(scheduler.enqueue(fakeRequest(5)));
        await settle();
        controller.abort();
        await settle();
        instances[0]!.finish();
        await settle();
        instances[0]!.finish();
        expect(await Promise.all([first, second, ...waiting, unsignalled])).toEqual(["ran", "ran", "CANCELLED", "CANCELLED", "ran"]);
        expect(instances[0]!.executions).toEqual([[1], [2], [5]]);
      });

      it("`enqueue()` fails only the request that broke a shared batch", async () => {
        const { scheduler, clock } = build({ maxBatchSize: 4, maxQueueDelayMs: 1, failOn: 2 });
        const pending = [1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v)).then(() => "ok", (e: { code: string }) => e.code));
        await settle();
        clock.advance(1);
        expect(await Promise.all(pending)).toEqual(["ok", "INTERNAL", "ok"]);
      });

      it("`queued` counts requests waiting to execute, not the ones executing", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true });
        const pending = [1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v)));
        await settle();
        expect({ queued: scheduler.queued, inflight: scheduler.inflight() }).toEqual({ queued: 2, inflight: 3 });
        instances[0]!.finish();
        await settle();
        expect(scheduler.queued).toBe(1);
        for (let i = 0; i < 2; i++) {
          instances[0]!.finish();
          await settle();
        }
        await Promise.all(pending);
        expect({ queued: scheduler.queued, inflight: scheduler.inflight() }).toEqual({ queued: 0, inflight: 0 });
      });

      it("`stop()` refuses new work and resolves after in-flight requests finish", async () => {
        const { scheduler, instances } = build({ maxBatchSize: 1, manual: true });
        const running = scheduler.enqueue(fakeRequest(1));
        let stopped = false;
        const stopping = scheduler.stop().then(() => (stopped = true));
        await expect(scheduler.enqueue(fakeRequest(2))).rejects.toMatchObject({ code: "UNAVAILABLE" });
        await settle();
        expect(stopped).toBe(false);
        instances[0]!.finish(true);
        await running;
        await stopping;
        expect(scheduler.inflight()).toBe(0);
      });
    });
  });
}

/**
 * What a scheduler with instances of its own adds (dynamic, sequence and continuous batching; not
 * an ensemble): the deployment grows and shrinks its instances while requests flow.
 */
export function instanceSchedulerContract(name: string, create: (setup: ContractSetup) => InstanceScheduler): void {
  const build = (instanceCount: number) => {
    const instances = Array.from({ length: instanceCount }, () => new FakeInstance({ manual: true }));
    const setup: ContractSetup = { instances, clock: new FakeClock(), maxBatchSize: 1 };
    return { ...setup, scheduler: create(setup) };
  };

  describe(`${name} (instance scheduler contract)`, () => {
    it("`pool.add()` puts the new instance to work on queued requests at once", async () => {
      const { scheduler, instances } = build(1);
      const pending = [1, 2].map((v) => scheduler.enqueue(fakeRequest(v)));
      await settle();
      const added = new FakeInstance({ manual: true });
      scheduler.pool.add(added);
      await settle();
      expect(added.executions).toEqual([[2]]);
      expect(scheduler.pool.count).toBe(2);
      instances[0]!.finish();
      added.finish();
      await Promise.all(pending);
    });

    it("`pool.remove()` hands back a free instance at once and a busy one after its batch, and refuses the last", async () => {
      const { scheduler, instances } = build(2);
      const running = scheduler.enqueue(fakeRequest(1));
      await settle();
      const busy = instances.find((i) => i.busy > 0)!;
      const free = instances.find((i) => i.busy === 0)!;
      expect(await scheduler.pool.remove()).toBe(free);
      expect(scheduler.pool.count).toBe(1);
      await expect(scheduler.pool.remove()).rejects.toThrow("last instance");
      scheduler.pool.add(free);
      const later = scheduler.pool.remove();
      // Whichever instance is free goes first: the one just added back.
      expect(await later).toBe(free);
      let handed: FakeInstance | undefined;
      scheduler.pool.add(free);
      const afterBatch = scheduler.enqueue(fakeRequest(2));
      await settle();
      const second = scheduler.pool.remove().then((i) => (handed = i as FakeInstance));
      await settle();
      expect(handed).toBeUndefined(); // both busy: it waits for one to finish its batch
      busy.finish();
      await running;
      await second;
      expect(handed).toBe(busy);
      free.finish();
      await afterBatch;
      expect(scheduler.pool.count).toBe(1);
    });
  });
}

/**
 * What every scheduler does, whatever it schedules on (the dynamic batcher on instances, an
 * ensemble on other functions): answer each request with its own outputs, count what is in
 * flight, and drain on stop. `build` gives a scheduler whose work runs on `instance`, a FakeInstance
 * that doubles `x` into `y` (with `manual`, finishing only when told).
 */
export function schedulerBasicsContract(name: string, build: (instance: FakeInstance) => Scheduler): void {
  describe(`${name} (basic scheduler contract)`, () => {
    it("`enqueue()` answers each request with its own outputs", async () => {
      const scheduler = build(new FakeInstance());
      const results = await Promise.all([1, 2, 3].map((v) => scheduler.enqueue(fakeRequest(v))));
      expect(results.map(values)).toEqual([[2], [4], [6]]);
    });

    it("streams: a request read through `responses()` yields its one answer, then ends", async () => {
      const scheduler = build(new FakeInstance());
      const got = [];
      for await (const r of responses(scheduler, fakeRequest(4))) got.push(values(r));
      expect(got).toEqual([[8]]);
    });

    it("`inflight()` counts requests until they are answered; `queued` never counts more than that", async () => {
      const instance = new FakeInstance({ manual: true });
      const scheduler = build(instance);
      const pending = scheduler.enqueue(fakeRequest(1));
      await settle();
      expect(scheduler.inflight()).toBe(1);
      expect(scheduler.queued).toBeLessThanOrEqual(1);
      expect(scheduler.hasRoom()).toBe(true);
      instance.finish(true);
      await pending;
      expect(scheduler.inflight()).toBe(0);
      expect(scheduler.queued).toBe(0);
    });

    it("`stop()` refuses new work with UNAVAILABLE and resolves once what was in flight is answered", async () => {
      const instance = new FakeInstance({ manual: true });
      const scheduler = build(instance);
      const running = scheduler.enqueue(fakeRequest(1));
      await settle();
      let stopped = false;
      const stopping = scheduler.stop().then(() => (stopped = true));
      await expect(scheduler.enqueue(fakeRequest(2))).rejects.toMatchObject({ code: "UNAVAILABLE" });
      await settle();
      expect(stopped).toBe(false);
      instance.finish(true);
      expect(values(await running)).toEqual([2]);
      await stopping;
    });
  });
}

import { describe, expect, it } from "vitest";
import { ResourceLimiter } from "../../../runtime/scheduler/resource-limiter.ts";
import type { ResourceNeeds } from "../../../runtime/scheduler/resource-limiter.ts";

const needs = (resources: [string, number, boolean?][], device = "cpu", priority = 0): ResourceNeeds => ({
  resources: resources.map(([name, count, global = false]) => ({ name, count, global })),
  device,
  priority,
});
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("ResourceLimiter", () => {
  it("sizes each pool to the largest count any registered instance asks for, per device unless global, unless overridden", () => {
    const limiter = new ResourceLimiter([{ name: "R2", count: 8, device: "gpu1" }, { name: "R3", count: 2 }]);
    limiter.register(needs([["R1", 4], ["R2", 4]], "gpu0"));
    limiter.register(needs([["R1", 1], ["R2", 5], ["G", 3, true]], "gpu0"));
    limiter.register(needs([["G", 7, true], ["R3", 10]], "gpu1"));
    expect(limiter.poolSize("R1", "gpu0")).toBe(4);
    expect(limiter.poolSize("R2", "gpu0")).toBe(5);
    expect(limiter.poolSize("R2", "gpu1")).toBe(8);
    expect(limiter.poolSize("G")).toBe(7);
    expect(limiter.poolSize("R3", "gpu1")).toBe(2);
  });

  it("lets an instance execute only while its resources are free, and frees them on release", async () => {
    const limiter = new ResourceLimiter([{ name: "R", count: 1 }]);
    const a = limiter.register(needs([["R", 1]]));
    const b = limiter.register(needs([["R", 1]]));
    const order: string[] = [];
    const releaseA = await a.acquire();
    const bGranted = b.acquire().then((release) => (order.push("b"), release));
    await settle();
    expect(order).toEqual([]);
    expect(limiter.waiting).toBe(1);
    order.push("a done");
    releaseA();
    (await bGranted)();
    expect(order).toEqual(["a done", "b"]);
  });

  it("counts devices apart for per-device resources and together for global ones", async () => {
    const limiter = new ResourceLimiter();
    const gpu0 = limiter.register(needs([["R", 1]], "gpu0"));
    const gpu1 = limiter.register(needs([["R", 1]], "gpu1"));
    await Promise.all([gpu0.acquire(), gpu1.acquire()]); // one R on each device: both run
    const g0 = limiter.register(needs([["G", 1, true]], "gpu0"));
    const g1 = limiter.register(needs([["G", 1, true]], "gpu1"));
    await g0.acquire();
    let second = false;
    void g1.acquire().then(() => (second = true));
    await settle();
    expect(second).toBe(false);
  });

  it("gives instances of priority 2 half the turns of those of priority 1 when they compete", async () => {
    const limiter = new ResourceLimiter([{ name: "R", count: 1 }]);
    const turns: string[] = [];
    // Two instances of each priority, each always back for its next turn: three wait whenever R frees.
    const loop = async (priority: number) => {
      const claim = limiter.register(needs([["R", 1]], "cpu", priority));
      while (turns.length < 60) {
        const release = await claim.acquire();
        turns.push(String(priority));
        await settle();
        release();
      }
    };
    await Promise.all([loop(1), loop(1), loop(2), loop(2)]);
    const ones = turns.slice(0, 60).filter((t) => t === "1").length;
    expect(ones).toBeGreaterThanOrEqual(38);
    expect(ones).toBeLessThanOrEqual(42);
  });

  it("makes a large request wait its turn rather than letting small ones pass it forever", async () => {
    const limiter = new ResourceLimiter();
    const small = limiter.register(needs([["R", 1]]));
    const large = limiter.register(needs([["R", 2]])); // the pool is 2
    const first = await small.acquire();
    let largeRan = false;
    const largeDone = large.acquire().then((release) => ((largeRan = true), release));
    let smallAgain = false;
    void small.acquire().then(() => (smallAgain = true)); // would fit beside the first, but it is large's turn
    await settle();
    expect([largeRan, smallAgain]).toEqual([false, false]);
    first();
    (await largeDone)();
    await settle();
    expect(smallAgain).toBe(true);
  });
});

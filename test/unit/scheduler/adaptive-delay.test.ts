import { describe, expect, it } from "vitest";
import { AdaptiveDelay } from "../../../runtime/scheduler/mod.ts";

const window = 10;
const feed = (a: AdaptiveDelay, latencyMs: number, full = false) => {
  for (let i = 0; i < window; i++) a.observe([latencyMs], full);
};

describe("AdaptiveDelay", () => {
  it("grows the delay while p99 has headroom and batches are not full", () => {
    const a = new AdaptiveDelay({ targetMs: 20, initialDelayMs: 0, window });
    feed(a, 5);
    expect(a.delayMs).toBe(1);
    feed(a, 5);
    expect(a.delayMs).toBe(2);
  });

  it("halves the delay when p99 exceeds the target", () => {
    const a = new AdaptiveDelay({ targetMs: 20, initialDelayMs: 8, window });
    feed(a, 25);
    expect(a.delayMs).toBe(4);
  });

  it("holds the delay when batches are already full or p99 is close to the target", () => {
    const a = new AdaptiveDelay({ targetMs: 20, initialDelayMs: 4, window });
    feed(a, 5, true);
    expect(a.delayMs).toBe(4);
    feed(a, 18);
    expect(a.delayMs).toBe(4);
  });

  it("never waits longer than half the target", () => {
    const a = new AdaptiveDelay({ targetMs: 20, initialDelayMs: 50, window });
    expect(a.delayMs).toBe(10);
    for (let i = 0; i < 5; i++) feed(a, 1);
    expect(a.delayMs).toBe(10);
  });

  it("reads p99 from the window, so one outlier in a hundred does not count", () => {
    const a = new AdaptiveDelay({ targetMs: 20, initialDelayMs: 4, window: 100 });
    a.observe([100], false);
    for (let i = 0; i < 99; i++) a.observe([5], false);
    expect(a.delayMs).toBe(5);
  });
});

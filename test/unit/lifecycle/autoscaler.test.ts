import { describe, expect, it } from "vitest";
import { Autoscaler, DEFAULT_AUTOSCALER } from "../../../runtime/lifecycle/autoscaler.ts";

const settings = { ...DEFAULT_AUTOSCALER, targetConcurrency: 4, minInstances: 1, maxInstances: 8 };

describe("Autoscaler (Knative KPA)", () => {
  it("keeps one instance for light traffic and never goes below min or above max", () => {
    const a = new Autoscaler(settings);
    expect(a.tick(0, 2, 1)).toBe(1);
    const big = new Autoscaler(settings);
    let desired = 1;
    for (let t = 0; t <= 120_000; t += 2000) desired = big.tick(t, 100, desired);
    expect(desired).toBe(8);
  });

  it("scales on the stable window's average: 12 in flight for a minute at target 4 → 3 instances", () => {
    const a = new Autoscaler(settings);
    let desired = 3;
    for (let t = 0; t <= 60_000; t += 2000) desired = a.tick(t, 12, desired);
    expect(desired).toBe(3);
    expect(a.panicking).toBe(false);
  });

  it("panics on a burst: scales up at once on the short window, where the stable one would wait", () => {
    const a = new Autoscaler(settings);
    const calm = new Autoscaler({ ...settings, panicThreshold: Infinity });
    for (let t = 0; t < 60_000; t += 2000) {
      a.tick(t, 2, 1);
      calm.tick(t, 2, 1);
    }
    // Panic window (6 s): 2, 2, 40 in flight → 14.7 → 4 instances; stable window (60 s): 3.3 → 1.
    expect(a.tick(60_000, 40, 1)).toBe(4);
    expect(calm.tick(60_000, 40, 1)).toBe(1);
    expect(a.panicking).toBe(true);
  });

  it("does not scale down while panicking, then settles after a stable window", () => {
    const a = new Autoscaler(settings);
    let desired = a.tick(0, 40, 1);
    expect(desired).toBe(8);
    desired = a.tick(2000, 0, desired);
    expect(desired).toBe(8);
    for (let t = 4000; t <= 130_000; t += 2000) desired = a.tick(t, 0, desired);
    expect(a.panicking).toBe(false);
    expect(desired).toBe(1);
  });
});

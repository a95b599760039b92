import { describe, expect, it } from "vitest";
import { ArrivalOutlook } from "../../../runtime/scheduler/dynamic/arrival-outlook.ts";

/** Indices (1-based) of the candidates `worthWaiting()` lets wait, out of `n`, each wait gaining `gains(i)`. */
function probes(outlook: ArrivalOutlook, n: number, gains: (i: number) => boolean = () => false): number[] {
  const waited: number[] = [];
  for (let i = 1; i <= n; i++) {
    if (!outlook.worthWaiting()) continue;
    waited.push(i);
    outlook.waited(gains(i));
  }
  return waited;
}

describe("ArrivalOutlook", () => {
  it("keeps waiting while waits pay", () => {
    expect(probes(new ArrivalOutlook(), 20, () => true)).toHaveLength(20);
  });

  it("stops waiting when waits gain nothing (a closed loop at c=1), probing ever more rarely up to one in 128", () => {
    const outlook = new ArrivalOutlook();
    const waited = probes(outlook, 1000);
    // The optimistic start gives up after a few empty waits…
    const first = waited.filter((i) => i <= 10);
    expect(first.length).toBeGreaterThanOrEqual(5);
    expect(first.length).toBeLessThanOrEqual(7);
    // …then probes after 8, 16, 32, 64, then every 128 declined candidates.
    const gaps = waited.slice(first.length).map((i, k, all) => i - (k === 0 ? first.at(-1)! : all[k - 1]!));
    expect(gaps.slice(0, 5)).toEqual([8, 16, 32, 64, 128]);
    expect(gaps.slice(5).every((g) => g === 128)).toBe(true);
  });

  it("a probe that gains brings waiting back at once", () => {
    const outlook = new ArrivalOutlook();
    probes(outlook, 500);
    // Traffic changes: every wait gains from now on; the next probe notices within 128 candidates.
    const waited = probes(outlook, 300, () => true);
    expect(waited[0]).toBeLessThanOrEqual(128);
    expect(waited.length).toBe(300 - waited[0]! + 1);
  });
});

import { describe, expect, it } from "vitest";
import { Rollout, rolloutVersions } from "../../../runtime/lifecycle/rollout.ts";
import { planRollout } from "../../../runtime/lifecycle/rollout-analysis.ts";
import { Shadow, SHADOW_MAX_BYTES } from "../../../runtime/lifecycle/rollout-shadow.ts";
import type { InferRequest } from "../../../runtime/core/mod.ts";

describe("rolloutVersions()", () => {
  it("serves the policy's versions, the canary and the stable one", () => {
    const canary = (version: number) => ({ canary: { version, percent: 10 } });
    expect(rolloutVersions(canary(2), [2], [1, 2])).toEqual({ served: [1, 2], stable: 1 }); // latest: 1
    expect(rolloutVersions(canary(2), [1, 2, 3], [1, 2, 3])).toEqual({ served: [1, 2, 3], stable: 3 }); // a canary below the newest
    expect(rolloutVersions(canary(3), [2, 3], [1, 2, 3])).toEqual({ served: [2, 3], stable: 2 });
    expect(rolloutVersions(canary(4), [3], [1, 3])).toEqual({ problem: "rollout.canary.version: no version folder 4 (found: 1, 3)" });
    expect(rolloutVersions(canary(1), [1], [1])).toMatchObject({ problem: "rollout.canary.version 1: a rollout needs another version folder to serve beside its canary (found: 1)" });
  });
});

describe("Rollout", () => {
  it("spreads unkeyed requests exactly and keyed ones by their hash, a canary key staying as the share grows", () => {
    const rollout = new Rollout({ canary: { version: 2, percent: 7 } }, 1, 0);
    const unkeyed = Array.from({ length: 1000 }, () => rollout.choose());
    expect(unkeyed.filter((v) => v === 2).length).toBe(70);
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
    const at7 = keys.map((k) => rollout.choose(k));
    expect(keys.map((k) => rollout.choose(k))).toEqual(at7); // sticky
    expect(Math.abs(at7.filter((v) => v === 2).length / 5000 - 0.07)).toBeLessThan(0.015);
    expect(rollout.change({ percent: 30 }, 0).event).toBe("set");
    const at30 = keys.map((k) => rollout.choose(k));
    at7.forEach((v, i) => v === 2 && expect(at30[i]).toBe(2));
    expect(rollout.change({ promote: true }, 0).event).toBe("promote");
    expect(new Set(keys.map((k) => rollout.choose(k)))).toEqual(new Set([2]));
    expect(rollout.change({ abort: true }, 0).event).toBe("abort");
    expect(new Set([rollout.choose(), rollout.choose("k1")])).toEqual(new Set([1]));
    expect(rollout.view(0)).toMatchObject({ stable: 1, canary: 2, percent: 0 });
  });
});

describe("planRollout()", () => {
  const analysis = { max_error_rate: 0.01, max_p99_ratio: 1.2, slow_windows: 2, min_requests: 200, window_s: 60, steps: [10, 25, 50, 100] };
  const side = (requests: number, errors: number, p99Ms?: number) => ({ requests, errors, answered: requests - errors, p99Ms });
  it("waits for min_requests, aborts on errors at once and on latency at the window's end, else steps to the next share", () => {
    expect(planRollout(analysis, 10, 1_000, side(199, 50), side(2000, 0, 5))).toEqual({ kind: "wait" });
    expect(planRollout(analysis, 10, 1_000, side(200, 3), side(2000, 0, 5))).toMatchObject({ kind: "abort", reason: "error_rate", detail: "3 of 200 canary requests failed (1.50 %, max_error_rate 1.00 %)" });
    expect(planRollout(analysis, 10, 59_000, side(400, 0, 50), side(4000, 0, 5))).toEqual({ kind: "wait" }); // the window still runs
    expect(planRollout(analysis, 10, 60_000, side(400, 0, 6.5), side(4000, 0, 5))).toEqual({ kind: "hold", reason: "p99_ratio", detail: "canary p99 6.50 ms against stable 5.00 ms (1.30×, max_p99_ratio 1.2), slow window 1 of 2" });
    expect(planRollout(analysis, 10, 60_000, side(400, 0, 6.5), side(4000, 0, 5), 1)).toMatchObject({ kind: "abort", reason: "p99_ratio" }); // the second in a row
    expect(planRollout({ ...analysis, slow_windows: 1 }, 10, 60_000, side(400, 0, 6.5), side(4000, 0, 5))).toMatchObject({ kind: "abort", reason: "p99_ratio" });
    expect(planRollout(analysis, 10, 60_000, side(400, 0, 0.5), side(4000, 0, 0.2))).toMatchObject({ kind: "step", percent: 25 }); // within P99_SLACK_MS
    expect(planRollout(analysis, 10, 60_000, side(400, 2, 5.5), side(4000, 0, 5))).toMatchObject({ kind: "step", percent: 25 });
    expect(planRollout(analysis, 50, 60_000, side(400, 0, 5), side(4000, 0, 5))).toMatchObject({ kind: "step", percent: 100 });
    expect(planRollout(analysis, 100, 60_000, side(400, 0, 5), side(4000, 0, 5))).toEqual({ kind: "wait" }); // promoted: done
    expect(planRollout(analysis, 0, 60_000, side(400, 100, 5), side(4000, 0, 5))).toEqual({ kind: "wait" }); // aborted: done
  });
});

describe("Rollout.analyse()", () => {
  const analysis = { max_error_rate: 0.01, max_p99_ratio: 2, slow_windows: 2, min_requests: 100, window_s: 1, steps: [10, 50, 100] };
  /** One window of 100 canary and 900 stable answers, the canary's two slowest taking `slowMs`. */
  const windowOf = (rollout: Rollout, slowMs: number) => {
    for (let i = 0; i < 900; i++) rollout.recorder(1)!(1);
    for (let i = 0; i < 100; i++) rollout.recorder(2)!(i < 2 ? slowMs : 1);
  };
  it("holds the share for one slow window, judging a fresh one; steps after a good one; aborts at the second slow one in a row", () => {
    const rollout = new Rollout({ canary: { version: 2, percent: 10 }, analysis }, 1, 0);
    windowOf(rollout, 50);
    expect(rollout.analyse(1_000)).toMatchObject({ event: "hold", reason: "p99_ratio", percent: 10 });
    expect(rollout.view(1_000).window).toMatchObject({ slow_before: 1, canary: { requests: 0 } }); // a fresh window, the slow one counted
    windowOf(rollout, 1);
    expect(rollout.analyse(1_999)).toBeUndefined(); // that window still runs
    expect(rollout.analyse(2_000)).toMatchObject({ event: "step", percent: 50 });
    expect(rollout.view(2_000).window?.slow_before).toBe(0);
    windowOf(rollout, 50);
    expect(rollout.analyse(3_000)).toMatchObject({ event: "hold" }); // a step starts the count anew
    windowOf(rollout, 50);
    expect(rollout.analyse(4_000)).toMatchObject({ event: "abort", reason: "p99_ratio", percent: 0 });
    expect(rollout.events()).toEqual([
      { event: "hold", reason: "p99_ratio", count: 2 },
      { event: "step", reason: "analysis", count: 1 },
      { event: "abort", reason: "p99_ratio", count: 1 },
    ]);
  });
});

describe("Shadow", () => {
  it("drops a copy past max_pending or past the bytes the copies may hold, and frees them as they settle", () => {
    const shadow = new Shadow({ version: 2, percent: 100, max_pending: 8 });
    const big: InferRequest = { inputs: [{ name: "x", tensor: { datatype: "UINT8", shape: [100 * 2 ** 20], data: new Uint8Array(100 * 2 ** 20) } }], parameters: {} };
    const first = shadow.take(big, []);
    const second = shadow.take(big, []);
    expect(first?.bytes).toBe(100 * 2 ** 20);
    expect(second).toBeDefined();
    expect(shadow.take(big, [])).toBeUndefined(); // 300 MiB would pass SHADOW_MAX_BYTES
    expect(shadow.figures.dropped).toBe(1);
    shadow.settle(first!, []);
    expect(shadow.take(big, [])).toBeDefined();
    expect(SHADOW_MAX_BYTES).toBe(256 * 2 ** 20);
  });
});

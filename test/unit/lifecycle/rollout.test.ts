import { describe, expect, it } from "vitest";
import { Rollout, rolloutVersions } from "../../../runtime/lifecycle/rollout.ts";

describe("rolloutVersions()", () => {
  it("serves the policy's versions, the canary and the stable one", () => {
    const canary = (version: number) => ({ canary: { version, percent: 10 } });
    expect(rolloutVersions(canary(2), [2], [1, 2])).toEqual({ served: [1, 2], stable: 1 }); // latest: 1
    expect(rolloutVersions(canary(2), [1, 2, 3], [1, 2, 3])).toEqual({ served: [1, 2, 3], stable: 3 }); // a canary below the newest
    expect(rolloutVersions(canary(3), [2, 3], [1, 2, 3])).toEqual({ served: [2, 3], stable: 2 });
    expect(rolloutVersions(canary(4), [3], [1, 3])).toEqual({ problem: "rollout.canary.version: no version folder 4 (found: 1, 3)" });
    expect(rolloutVersions(canary(1), [1], [1])).toMatchObject({ problem: expect.stringMatching(/needs a second version folder/) });
  });
});

describe("Rollout", () => {
  it("spreads unkeyed requests exactly and keyed ones by their hash, a canary key staying as the share grows", () => {
    const rollout = new Rollout({ canary: { version: 2, percent: 7 } }, 1);
    const unkeyed = Array.from({ length: 1000 }, () => rollout.choose());
    expect(unkeyed.filter((v) => v === 2).length).toBe(70);
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
    const at7 = keys.map((k) => rollout.choose(k));
    expect(keys.map((k) => rollout.choose(k))).toEqual(at7); // sticky
    expect(Math.abs(at7.filter((v) => v === 2).length / 5000 - 0.07)).toBeLessThan(0.015);
    expect(rollout.change({ percent: 30 })).toBe("set");
    const at30 = keys.map((k) => rollout.choose(k));
    at7.forEach((v, i) => v === 2 && expect(at30[i]).toBe(2));
    expect(rollout.change({ promote: true })).toBe("promote");
    expect(new Set(keys.map((k) => rollout.choose(k)))).toEqual(new Set([2]));
    expect(rollout.change({ abort: true })).toBe("abort");
    expect(new Set([rollout.choose(), rollout.choose("k1")])).toEqual(new Set([1]));
    expect(rollout.view).toEqual({ stable: 1, canary: 2, percent: 0 });
  });
});

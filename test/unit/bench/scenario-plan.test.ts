import { describe, expect, it } from "vitest";
import { COMPARE_ROUNDS, plannedSeconds, planSteps, SWEEP_ROUNDS } from "../../../bench/suites/scenarios/served.ts";
import type { Target } from "../../../bench/suites/scenarios/served.ts";

const target = (name: Target["name"]): Target => ({ name, url: `http://${name}`, pid: 1 });
const targets = { tensorfn: target("tensorfn"), naive: target("naive"), handwritten: target("handwritten"), bare: target("bare") };
const key = (s: ReturnType<typeof planSteps>[number]) => `${s.target.name} ${s.model} ${s.concurrency} ${s.encoding ?? "binary"}${s.probe ? " probe" : ""}${s.round ? ` round ${s.round}` : ""}${s.repeat ? ` repeat ${s.repeat}` : ""}`;

describe("planSteps()", () => {
  const steps = planSteps(targets);
  const keys = steps.map(key);

  it("plans every step a target of issue 11 needs, each once", () => {
    expect(new Set(keys).size).toBe(keys.length);
    for (const model of ["simple", "mlp"]) {
      for (const c of [1, 8, 32]) {
        for (const encoding of ["json", "binary"]) {
          for (const name of ["handwritten", "naive", "tensorfn"]) {
            for (let repeat = 1; repeat <= COMPARE_ROUNDS; repeat++) expect(keys).toContain(`${name} ${model} ${c} ${encoding} repeat ${repeat}`);
            // Measured in rounds, not once more in a window of its own.
            expect(keys).not.toContain(`${name} ${model} ${c} ${encoding}`);
          }
        }
      }
    }
    expect(keys).toEqual(expect.arrayContaining(["bare simple 1 binary repeat 1", "tensorfn mlp 32 json probe", "tensorfn resnet_batched 64 binary", "tensorfn mlp_single 32 binary", "tensorfn mlp_adaptive 1 binary", "tensorfn mlp_batched 1 binary"]));
    for (const c of [8, 32, 64]) {
      for (let round = 1; round <= SWEEP_ROUNDS; round++) {
        expect(keys).toContain(`tensorfn mlp_adaptive ${c} binary round ${round}`);
        for (const d of ["mlp_batched", "mlp_batched_250us", "mlp_batched_500us", "mlp_batched_1000us", "mlp_batched_2000us", "mlp_batched_5000us"]) expect(keys).toContain(`tensorfn ${d} ${c} binary round ${round}`);
      }
    }
  });

  it("runs the adaptive sweep in rounds of every static delay and adaptive, each round starting one function further along", () => {
    const at = keys.indexOf("tensorfn mlp_batched 32 binary round 1");
    const sweep = ["mlp_batched", "mlp_batched_250us", "mlp_batched_500us", "mlp_batched_1000us", "mlp_batched_2000us", "mlp_batched_5000us", "mlp_adaptive"];
    const round = (r: number) => sweep.map((_, i) => `tensorfn ${sweep[(i + r - 1) % sweep.length]} 32 binary round ${r}`);
    expect(keys.slice(at, at + 3 * sweep.length)).toEqual([...round(1), ...round(2), ...round(3)]);
    expect(keys[at + sweep.length]).toBe("tensorfn mlp_batched_250us 32 binary round 2");
    expect(SWEEP_ROUNDS).toBeGreaterThanOrEqual(5);
  });

  it("runs the three servers of a target-1 point back to back, each round rotated one place, and the bare round trip after simple c=1 binary in each", () => {
    const servers = ["handwritten", "naive", "tensorfn"];
    const order = (r: number) => servers.map((_, i) => servers[(i + r - 1) % servers.length]!);
    const round = (r: number) => order(r).map((name) => `${name} mlp 8 json repeat ${r}`);
    const at = keys.indexOf("handwritten mlp 8 json repeat 1");
    expect(keys.slice(at, at + 3 * COMPARE_ROUNDS)).toEqual(Array.from({ length: COMPARE_ROUNDS }, (_, i) => round(i + 1)).flat());
    // Every server runs first in one round (COMPARE_ROUNDS is 3).
    expect(new Set(Array.from({ length: COMPARE_ROUNDS }, (_, i) => order(i + 1)[0]))).toEqual(new Set(servers));
    for (let r = 1; r <= COMPARE_ROUNDS; r++) expect(keys[keys.indexOf(`${order(r).at(-1)} simple 1 binary repeat ${r}`) + 1]).toBe(`bare simple 1 binary repeat ${r}`);
    expect(keys[keys.indexOf("tensorfn mlp_batched 1 binary") + 1]).toBe("tensorfn mlp_adaptive 1 binary");
  });

  it("keeps the served steps under ten and a half minutes, and --quick at a quarter of that", () => {
    expect(plannedSeconds(steps)).toBeLessThanOrEqual(630);
    expect(plannedSeconds(planSteps(targets, 0.25))).toBeCloseTo(plannedSeconds(steps) / 4);
  });
});

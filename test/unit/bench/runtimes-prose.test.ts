import { describe, expect, it } from "vitest";
import { roundSpread, runtimesProse } from "../../../bench/suites/runtimes/runtimes-prose.ts";
import type { Hops, RuntimesRun, ServedStep } from "../../../bench/suites/runtimes/runtimes-prose.ts";

const step = (rounds: number[], computeUsPerExecution: number | null = null): ServedStep => ({ inferPerS: Math.max(...rounds), p50Ms: 1, rounds, computeUsPerExecution });
const hops = (runtime: string, roundTripUs: number, mlpWorkerUs: number, timeout500usUs: number, timeout2msUs: number): Hops => ({ runtime, roundTripUs, mlpMainUs: mlpWorkerUs, mlpWorkerUs, timeout500usUs, timeout2msUs });

/** The run bench/results/runtimes.md shows (2026-11-29): best-of-two figures, with second rounds 5 % apart. */
function lastRun(): RuntimesRun {
  const pair = (best: number, c?: number) => step([best, best * 0.95], c);
  return {
    served: {
      node: { "mlp@1": pair(361.0), "mlp@32": pair(5019.5, 310), "resnet@1": pair(64.3), "resnet@32": pair(83.2) },
      bun: { "mlp@1": pair(466.3), "mlp@32": pair(8909.0), "resnet@1": pair(64.3), "resnet@32": pair(85.0) },
      deno: { "mlp@1": pair(294.6), "mlp@32": pair(8029.6), "resnet@1": pair(64.3), "resnet@32": pair(86.0) },
    },
    hops: [hops("node", 85.0, 469.6, 1095, 2100), hops("bun", 15.8, 419.0, 1085, 2090), hops("deno", 113.3, 444.8, 2098, 3099)],
    mlpQueueDelayUs: 500,
  };
}

describe("runtimesProse()", () => {
  it("computes every figure it prints from the run: model time, ratios, spread, timer lateness", () => {
    const text = runtimesProse(lastRun()).join(" ");
    expect(text).toContain("mlp at concurrency 32, 0.31 ms of model time per batch in Node's server) Bun served 1.77× and Deno served 1.60× Node's rate");
    expect(text).toContain("within this run's noise of each other (ratios 1.00, 1.02, 1.00, 1.03)");
    expect(text).toMatch(/moved by up to 5 % \((Node|Bun|Deno) (mlp|resnet)@\d+\)/);
    expect(text).toContain("Deno at mlp@1 (0.82× Node)");
    expect(text).toContain("at most 98 µs apart");
    expect(text).toContain("about 1.0 ms later than the others'");
    expect(text).toContain("`max_queue_delay_microseconds: 500`");
    expect(text).toContain("a 0.5 ms timer took 1.1 ms under Node, 1.1 ms under Bun, 2.1 ms under Deno");
    expect(text).not.toMatch(/±15|about 0\.3 ms/);
  });

  it("claims no HTTP advantage, and no Deno gap, when the run does not show them", () => {
    const run = lastRun();
    run.served.bun!["mlp@32"] = step([5100, 5000]);
    run.served.deno!["mlp@32"] = step([5050, 4990]);
    run.served.deno!["mlp@1"] = step([355, 350]);
    const text = runtimesProse(run).join(" ");
    expect(text).toContain("At mlp@32, where the HTTP layer weighs most, Bun served 1.02× Node and Deno served 1.01× Node: within this run's round-to-round spread");
    expect(text).not.toContain("parse HTTP in native code");
    expect(text).not.toContain("Deno at mlp@1");
    expect(text).not.toContain("timers");
  });

  it("does not blame Deno's timers when they are not late, and names every other miss", () => {
    const run = lastRun();
    run.hops = [hops("node", 85, 470, 1095, 2100), hops("bun", 16, 419, 1085, 2090), hops("deno", 113, 445, 1100, 2105)];
    run.served.bun!["resnet@1"] = step([50, 49]);
    const text = runtimesProse(run).join(" ");
    expect(text).toContain("Deno at mlp@1 ran 0.82× Node; the hops table does not single out a cause in this run (timer lateness 5 µs beyond the others");
    expect(text).toContain("Even where the model dominates (resnet), Bun resnet@1 at 0.78× differ from Node");
    expect(text).toContain("Also more than 10 % below Node in this run, with no explanation measured here: Bun resnet@1 (0.78×).");
  });
});

describe("roundSpread()", () => {
  it("is the largest (max − min) ÷ min between rounds of one step, and undefined with one round", () => {
    const run = lastRun();
    run.served.deno!["resnet@32"] = step([100, 80]);
    expect(roundSpread(run)).toEqual({ percent: 25, where: "Deno resnet@32" });
    expect(roundSpread({ served: { node: { "mlp@1": step([1]) } }, hops: [], mlpQueueDelayUs: 0 })).toBeUndefined();
  });
});

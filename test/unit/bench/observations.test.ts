import { describe, expect, it } from "vitest";
import type { Encoding, Measured } from "../../../bench/suites/scenarios/measure-step.ts";
import { observations } from "../../../bench/suites/scenarios/observations.ts";
import type { ScenarioResults } from "../../../bench/suites/scenarios/scenario-results.ts";
import { latency, measured, RUN } from "./_measured.ts";

const cores = (server: number) => ({ self: 0.2, server, serverMain: server, other: 0 });

/** Target 1's steps (tensorfn ahead everywhere unless overridden), simple at c=1 and the bare floor. */
function results(overrides: Measured[] = [], extra: Partial<ScenarioResults> = {}): ScenarioResults {
  const served: Measured[] = [];
  for (const model of ["simple", "mlp"]) {
    for (const c of [1, 8, 32]) {
      for (const encoding of ["json", "binary"] as Encoding[]) {
        served.push(measured("handwritten", model, c, 1000, { encoding, cores: cores(0.1) }), measured("tensorfn", model, c, 1100, { encoding, cores: cores(0.1) }));
      }
    }
  }
  served.push(measured("bare", "simple", 1, 7000, { latencyMs: latency(0.08, 0.3) }));
  return {
    ...RUN,
    raw: {
      mlp: { model: "mlp", points: [], best: { batch: 8, runs: 10, seconds: 1, inferPerS: 20000, runP50Ms: 0.4, selfCores: 1, otherCores: 0 } },
      resnet: { model: "resnet", points: [], best: { batch: 16, runs: 10, seconds: 1, inferPerS: 100, runP50Ms: 160, selfCores: 1, otherCores: 0 } },
      simple: latency(0.013, 0.07),
      workerHop: latency(0.033, 0.1),
      worker: { mlp: [], resnet: [] },
    },
    served: [...overrides, ...served],
    ...extra,
  };
}

const paragraph = (r: ScenarioResults, title: string) => observations(r).find((t) => t.startsWith(`**${title}`));

describe("observations()", () => {
  it("names each target-1 point tensorfn missed, with both servers' CPU per request", () => {
    const slow = measured("tensorfn", "simple", 1, 800, { encoding: "json", cores: cores(0.12) });
    const text = paragraph(results([slow]), "Behind the hand-written server");
    expect(text).toContain("simple c=1 JSON 0.80× (150 / 100 µs)");
    expect(text).not.toContain("binary");
    expect(paragraph(results(), "Behind the hand-written server")).toBeUndefined();
  });

  it("explains a wake from PARKED with this run's numbers, and says nothing without them", () => {
    const coldStarts = [{ model: "resnet", rawMs: 46, rawFreshMs: 736, fromParkedMs: 493, reps: 5 }];
    const text = paragraph(results([], { coldStarts }), "Wake from PARKED");
    expect(text).toContain("resnet 493.0 ms against 46.0 ms raw (736.0 ms in a fresh process)");
    expect(text).toContain("bench/studies/hugepage-wake.sh");
    expect(paragraph(results(), "Wake from PARKED")).toBeUndefined();
  });

  it("places simple's execution where the run's /config says it computed", () => {
    const simple = measured("tensorfn", "simple", 1, 7000, { latencyMs: latency(0.14, 0.5) });
    const inline = paragraph(results([simple], { placements: { simple: "main" } }), "Per-request overhead");
    expect(inline).toContain("on the event loop (`execution_thread` chose main)");
    expect(inline).not.toContain("postMessage");
    const worker = paragraph(results([simple], { placements: { simple: "worker" } }), "Per-request overhead");
    expect(worker).toContain("the hop to the ORT worker thread and back (a bare postMessage round trip: 33 µs p50 here)");
  });
});

describe("observations() on readiness", () => {
  const probed = (p99: number) =>
    measured("tensorfn", "mlp", 32, 4000, { encoding: "json", probes: { ready: latency(3, p99), readyCount: 200, metrics: latency(5, 20), metricsCount: 15, errors: 0, firstError: null } });

  it("explains a readiness p99 over the goal with the probed window's numbers, and stays quiet when it is met", () => {
    const text = observations(results([probed(14.5)])).find((t) => t.startsWith("**Readiness under load"));
    expect(text).toContain("p50 3.00 ms, p99 14.50 ms while mlp answered 4000 req/s to 32 JSON clients");
    expect(observations(results([probed(6)])).some((t) => t.startsWith("**Readiness under load"))).toBe(false);
  });

  it("explains an adaptive miss where the law formed far larger batches than the best static delay, from the run's numbers", () => {
    const stats = (rows: number, queue: number) => ({ inferenceCount: 0, executionCount: 0, successCount: 0, failCount: 0, avgBatchSize: rows, queueUsPerRequest: queue, requestUsPerRequest: null, computeUsPerExecution: null, computeInputUsPerExecution: null, computeInferUsPerExecution: null, computeOutputUsPerExecution: null });
    const sweep = (model: string, inferPerS: number, rows: number, queue: number) => measured("tensorfn", model, 64, inferPerS, { round: 1, latencyMs: latency(8, 15), server: stats(rows, queue) });
    const steps = [sweep("mlp_adaptive", 7065, 57.2, 1366), sweep("mlp_batched_250us", 7599, 28.6, 1942), sweep("mlp_batched_5000us", 6173, 59.1, 1691)];
    const text = paragraph(results(steps), "Adaptive at c=64");
    expect(text).toContain("reached 0.93 of it");
    expect(text).toContain("larger batches did not pay here: the best delay's, 2.0× smaller, left as soon as the instance was free");
    expect(text).toContain("5000 µs (59.1 rows), answered 6173 infer/s (adaptive ÷ it: 1.14)");
    // Within the goal (≥ 0.95 of the best), nothing to explain.
    const close = [sweep("mlp_adaptive", 7300, 57.2, 1366), ...steps.slice(1)];
    expect(paragraph(results(close), "Adaptive at c=64")).not.toContain("did not pay");
  });
});

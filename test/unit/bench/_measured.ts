import type { Measured } from "../../../bench/suites/scenarios/measure-step.ts";

/** A latency summary with the given p50 and p99 (the other percentiles follow them). */
export const latency = (p50: number, p99: number) => ({ p50, p90: p99, p95: p99, p99, avg: p50, max: p99 });

/** One measured step as the bench records it: 3 s, binary, no errors, typical cores; `extra` overrides. */
export function measured(target: string, model: string, concurrency: number, inferPerS: number, extra: Partial<Measured> = {}): Measured {
  return {
    target,
    model,
    concurrency,
    windowS: 3,
    requests: Math.round(inferPerS * 3),
    inferPerS,
    latencyMs: latency(1, 2),
    errors: 0,
    firstError: null,
    server: null,
    cores: { self: 0.2, server: 1.5, serverMain: 0.6, other: 0 },
    encoding: "binary",
    ...extra,
  };
}

/** When, where and what a test run of the bench measured (ScenarioResults' identifying fields). */
export const RUN = {
  startedAt: "2026-01-01T00:00:00.000Z",
  seconds: 500,
  machine: { nproc: 2, cpuModel: "test", node: "v20.0.0", onnxruntimeNode: "1.30.0", loadAverage: "0 0 0" },
  subject: { serverRoot: "/repo", commit: "abc1234", dirty: false, runtime: "Node v20.0.0" },
};

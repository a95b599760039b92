import type { StepSamples } from "./load-generator.ts";
import { summarizeLatencies } from "./percentiles.ts";
import type { Percentiles } from "./percentiles.ts";

/** The client-side numbers of one step. */
export interface ClientSummary {
  windowS: number;
  /** Successful requests that finished inside the window. */
  requests: number;
  reqPerS: number;
  /** `reqPerS` × batch size, as perf_analyzer counts it. */
  inferPerS: number;
  /** Over successful requests started (or scheduled) inside the window; `undefined` if none. */
  latencyMs: Percentiles | undefined;
  /** Failed requests started (or scheduled) inside the window. */
  errors: number;
  firstError: string | undefined;
}

/**
 * Throughput counts answers that arrived inside the window; latency and errors cover every request
 * sent (or scheduled) inside it, waiting for the late ones, so a slow tail is never cut off.
 */
export function summarizeStep(step: StepSamples, batchSize: number): ClientSummary {
  const { windowStart, windowEnd } = step;
  const windowS = Math.max(1e-9, (windowEnd - windowStart) / 1000);
  let requests = 0;
  let errors = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  let firstErrorAt = Infinity;
  for (const sample of step.samples) {
    if (sample.error === undefined && sample.end >= windowStart && sample.end <= windowEnd) requests++;
    if (sample.start < windowStart || sample.start >= windowEnd) continue;
    if (sample.error === undefined) {
      latencies.push(sample.end - sample.start);
    } else {
      errors++;
      if (sample.end < firstErrorAt) [firstErrorAt, firstError] = [sample.end, sample.error];
    }
  }
  const reqPerS = requests / windowS;
  return { windowS, requests, reqPerS, inferPerS: reqPerS * batchSize, latencyMs: summarizeLatencies(latencies), errors, firstError };
}

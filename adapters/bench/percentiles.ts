/** Latency percentiles of one step, in the unit of the samples (milliseconds here). */
export interface Percentiles {
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  avg: number;
  max: number;
}

/**
 * The nearest-rank percentile `p` (0–100] of ascending `sorted`: the smallest sample with at
 * least p% of the samples at or below it. `undefined` for no samples.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Exact percentiles of `samples` (sorted in a copy); `undefined` for none. */
export function summarizeLatencies(samples: ArrayLike<number>): Percentiles | undefined {
  if (samples.length === 0) return undefined;
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    p50: percentile(sorted, 50)!,
    p90: percentile(sorted, 90)!,
    p95: percentile(sorted, 95)!,
    p99: percentile(sorted, 99)!,
    avg: sum / sorted.length,
    max: sorted[sorted.length - 1]!,
  };
}

import type { RolloutAnalysis } from "../config/mod.ts";

/**
 * A canary p99 within this of the stable one's is never a regression, whatever the ratio: a model
 * answering in 0.2 ms has a p99 that jitters by half of that from window to window.
 */
export const P99_SLACK_MS = 1;

/** Answered requests each side needs before its p99 is compared: of fewer, the p99 is the slowest one, a GC pause. */
export const P99_MIN_SAMPLES = 100;

/** Latencies a window keeps per side; beyond it, a uniform sample of them (Vitter's algorithm R). */
const KEPT_LATENCIES = 20_000;

/** One version's requests in the current window. */
export class WindowSide {
  requests = 0;
  /** Server-side failures (a client's bad request is not the version's fault). */
  errors = 0;
  readonly #latencies: number[] = [];

  record(ms: number, failed: boolean): void {
    this.requests++;
    if (failed) return void this.errors++;
    const kept = this.#latencies;
    if (kept.length < KEPT_LATENCIES) kept.push(ms);
    else {
      const at = Math.floor(Math.random() * (this.requests - this.errors));
      if (at < KEPT_LATENCIES) kept[at] = ms;
    }
  }

  /** The 99th percentile of the answered requests' latency (ms), undefined before any. */
  p99(): number | undefined {
    if (this.#latencies.length === 0) return undefined;
    const sorted = Float64Array.from(this.#latencies).sort();
    return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
  }

  get figures(): SideFigures {
    return { requests: this.requests, errors: this.errors, answered: this.requests - this.errors, p99Ms: this.p99() };
  }
}

export interface SideFigures {
  requests: number;
  errors: number;
  answered: number;
  p99Ms: number | undefined;
}

/** What one look at the window calls for. */
export type RolloutPlan =
  | { kind: "wait" }
  | { kind: "abort"; reason: "error_rate" | "p99_ratio"; detail: string }
  /** The canary's p99 is over the ratio in fewer than `slow_windows` windows in a row: judge a new window at the same share. */
  | { kind: "hold"; reason: "p99_ratio"; detail: string }
  | { kind: "step"; percent: number; detail: string };

/**
 * The analysis, pure: the canary's figures against the stable one's over the window so far.
 * Errors abort as soon as the canary has `min_requests` (a canary failing 5 % is not left at its
 * share until the window ends); latency is judged, and the share stepped up, once the window has
 * run its length with `min_requests` on the canary: a slow canary is aborted in its
 * `slow_windows`-th window in a row (`slowBefore` is how many came before this one at this share).
 * Nothing is judged at 0 % or past the last step.
 */
export function planRollout(analysis: RolloutAnalysis, percent: number, elapsedMs: number, canary: SideFigures, stable: SideFigures, slowBefore = 0): RolloutPlan {
  const next = analysis.steps.find((s) => s > percent);
  if (percent <= 0 || next === undefined || canary.requests < analysis.min_requests) return { kind: "wait" };
  const errorRate = canary.errors / canary.requests;
  if (errorRate > analysis.max_error_rate) {
    return { kind: "abort", reason: "error_rate", detail: `${canary.errors} of ${canary.requests} canary requests failed (${pct(errorRate)}, max_error_rate ${pct(analysis.max_error_rate)})` };
  }
  if (elapsedMs < analysis.window_s * 1000) return { kind: "wait" };
  const comparable = canary.answered >= P99_MIN_SAMPLES && stable.answered >= P99_MIN_SAMPLES && stable.p99Ms! > 0;
  const ratio = comparable ? canary.p99Ms! / stable.p99Ms! : undefined;
  if (ratio !== undefined && ratio > analysis.max_p99_ratio && canary.p99Ms! - stable.p99Ms! > P99_SLACK_MS) {
    const slow = slowBefore + 1;
    const detail = `canary p99 ${ms(canary.p99Ms!)} against stable ${ms(stable.p99Ms!)} (${ratio.toFixed(2)}×, max_p99_ratio ${analysis.max_p99_ratio}), slow window ${slow} of ${analysis.slow_windows}`;
    return slow >= analysis.slow_windows ? { kind: "abort", reason: "p99_ratio", detail } : { kind: "hold", reason: "p99_ratio", detail };
  }
  const latency = ratio === undefined ? `p99 not compared (under ${P99_MIN_SAMPLES} answers on a side)` : `p99 ${ratio.toFixed(2)}× the stable one`;
  return { kind: "step", percent: next, detail: `${canary.requests} canary requests, ${pct(errorRate)} failed, ${latency}` };
}

const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
const ms = (x: number) => `${x.toFixed(2)} ms`;

import type { GenerationObserver } from "../scheduler/mod.ts";
import type { Histogram } from "./model-stats.ts";

/** vLLM's buckets (seconds) for time to first token, inter-token latency and request latency. */
export const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
export const E2E_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

const histogramOf = (bounds: readonly number[]): Histogram => ({ buckets: bounds.map(() => 0), sum: 0, count: 0 });
function observe(h: Histogram, bounds: readonly number[], ms: number): void {
  const seconds = ms / 1000;
  const i = bounds.findIndex((le) => seconds <= le);
  if (i >= 0) h.buckets[i]!++;
  h.sum += seconds;
  h.count++;
}

/**
 * A generator's counters and histograms, as vLLM's metrics count them (the families in
 * prometheus.ts take vLLM's names so its dashboards work); the scheduler reports into it. Its
 * gauges (running, waiting, KV cache use, prefix-cache counters) are read from the scheduler at
 * scrape time instead.
 */
export class GenerationStats implements GenerationObserver {
  readonly #changed: () => void;
  promptTokens = 0;
  generationTokens = 0;
  preemptions = 0;
  /** Requests ended, by why (stop, length, abort: vLLM's finished_reason). */
  readonly requests = new Map<string, number>();
  readonly ttft = histogramOf(TTFT_BUCKETS);
  readonly itl = histogramOf(ITL_BUCKETS);
  readonly e2e = histogramOf(E2E_BUCKETS);

  /** `changed`: the owner's revision moves (a scrape re-renders this version). */
  constructor(changed: () => void) {
    this.#changed = changed;
  }

  preempted(): void {
    this.preemptions++;
    this.#changed();
  }

  token(timing: { first?: number; gap?: number }): void {
    this.generationTokens++;
    if (timing.first !== undefined) observe(this.ttft, TTFT_BUCKETS, timing.first);
    if (timing.gap !== undefined) observe(this.itl, ITL_BUCKETS, timing.gap);
    this.#changed();
  }

  finished(report: { promptTokens: number; e2eMs: number; outcome: "done" | "cancelled"; reason?: string }): void {
    this.promptTokens += report.promptTokens;
    observe(this.e2e, E2E_BUCKETS, report.e2eMs);
    const reason = report.outcome === "cancelled" ? "abort" : (report.reason ?? "length");
    this.requests.set(reason, (this.requests.get(reason) ?? 0) + 1);
    this.#changed();
  }
}

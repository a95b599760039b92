import type { DispatchReason, ExecutionTiming, SchedulerObserver, SequenceEvent } from "../scheduler/mod.ts";
import { GenerationStats } from "./generation-stats.ts";

/** A cumulative duration statistic, as Triton reports it. */
export interface Duration {
  count: number;
  ns: number;
}

interface BatchDurations {
  compute_input: Duration;
  compute_infer: Duration;
  compute_output: Duration;
}

/** Triton's failure reasons (`nv_inference_request_failure{reason}`). */
export type FailureReason = "REJECTED" | "CANCELED" | "BACKEND" | "OTHER";

/** Lifecycle transitions counted per version, with why (`tensorfn_lifecycle_events_total`); `restart` is an instance replaced after its thread died. */
export type LifecycleEvent = "load" | "park" | "unload" | "restart";

/** Upper bounds, in seconds, of the cold-start histogram (a load until READY). */
export const COLD_START_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Upper bounds, in seconds, of the latency histograms (request and queue). */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A cumulative histogram: counts per bucket (not cumulative across buckets), sum in seconds. */
export interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

const zero = (): Duration => ({ count: 0, ns: 0 });
const emptyHistogram = (): Histogram => ({ buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 });

function observe(h: Histogram, ms: number, bounds = LATENCY_BUCKETS): void {
  const seconds = ms / 1000;
  const i = bounds.findIndex((le) => seconds <= le);
  if (i >= 0) h.buckets[i]!++;
  h.sum += seconds;
  h.count++;
}
const toNs = (ms: number) => Math.round(ms * 1e6);

function add(d: Duration, ms: number, count = 1): void {
  d.count += count;
  d.ns += toNs(ms);
}

/**
 * Statistics of one deployment in Triton's statistics-extension form. The scheduler feeds it
 * queue and compute phases; the deployment feeds whole-request success and failure durations.
 * `inference_count` counts rows (a batch-8 request adds 8) and `execution_count` counts model
 * executions, so their ratio is the average batch size.
 */
export class ModelStats implements SchedulerObserver {
  #inferenceCount = 0;
  #executionCount = 0;
  #lastInference = 0;
  readonly #success = zero();
  readonly #fail = zero();
  readonly #queue = zero();
  readonly #computeInput = zero();
  readonly #computeInfer = zero();
  readonly #computeOutput = zero();
  readonly #cacheHit = zero();
  readonly #cacheMiss = zero();
  /** Handler calls by step and outcome ("execute/ok"…), with their time. */
  readonly #handler = new Map<string, Duration>();
  readonly #batches = new Map<number, BatchDurations>();
  readonly #failures = new Map<FailureReason, number>();
  /** Executions by why their batch left when it did (`tensorfn_batch_dispatches_total`). */
  readonly #dispatches = new Map<DispatchReason, number>();
  #rateLimited = 0;
  /** Sequences by what happened to them (`tensorfn_sequences_total`). */
  readonly #sequences = new Map<SequenceEvent, number>();
  readonly #requestHistogram = emptyHistogram();
  readonly #queueHistogram = emptyHistogram();
  /** A generator's tokens, requests and latencies (vLLM's metrics); the scheduler reports into it. */
  readonly generation = new GenerationStats(() => this.#revision++);
  /** Seconds the last load of this version took (`nv_model_load_duration_secs`). */
  loadSeconds = 0;
  #revision = 0;
  #everLoaded = false;

  /** Moves on with every change: a scrape re-renders a version's lines only when it moved. */
  get revision(): number {
    return this.#revision;
  }

  /** Whether this version has been loaded since the server started (Triton exports metrics only for those). */
  get everLoaded(): boolean {
    return this.#everLoaded;
  }
  readonly #events = new Map<string, number>();
  readonly #coldStarts: Histogram = { buckets: COLD_START_BUCKETS.map(() => 0), sum: 0, count: 0 };

  /** A load finished after `ms` (from disk or from PARKED): a cold start. */
  loaded(ms: number, from: "disk" | "parked"): void {
    this.#everLoaded = true;
    this.loadSeconds = ms / 1000;
    observe(this.#coldStarts, ms, COLD_START_BUCKETS);
    this.transition("load", from);
  }

  /** Counts a park or unload and why (idle, budget, api, reload, policy, removed, shutdown). */
  transition(event: LifecycleEvent, reason: string): void {
    this.#revision++;
    const key = `${event}/${reason}`;
    this.#events.set(key, (this.#events.get(key) ?? 0) + 1);
  }

  dequeued(queueMs: number): void {
    this.#revision++;
    add(this.#queue, queueMs);
    observe(this.#queueHistogram, queueMs);
  }

  executed(t: ExecutionTiming): void {
    this.#revision++;
    this.#inferenceCount += t.rows;
    this.#executionCount++;
    if (t.reason) this.#dispatches.set(t.reason, (this.#dispatches.get(t.reason) ?? 0) + 1);
    // Each request of the batch waited for the loop's turn like it waited in the scheduler's
    // queue (Triton's `queue` counts "scheduling or other queues"); its count is the dequeue's.
    if (t.waitMs > 0) this.#queue.ns += toNs(t.waitMs * t.requests);
    add(this.#computeInput, t.inputMs);
    add(this.#computeInfer, t.inferMs);
    add(this.#computeOutput, t.outputMs);
    let batch = this.#batches.get(t.rows);
    if (!batch) this.#batches.set(t.rows, (batch = { compute_input: zero(), compute_infer: zero(), compute_output: zero() }));
    add(batch.compute_input, t.inputMs);
    add(batch.compute_infer, t.inferMs);
    add(batch.compute_output, t.outputMs);
  }

  /** Told of every request's end (a rollout's analysis watches its two versions so). */
  outcome?: (ms: number, failure?: FailureReason) => void;

  /** A request answered; `ms` is its whole time in the server after decoding. */
  succeeded(ms: number): void {
    this.outcome?.(ms);
    this.#revision++;
    add(this.#success, ms);
    observe(this.#requestHistogram, ms);
    this.#lastInference = Date.now();
  }

  failed(ms: number, reason: FailureReason = "OTHER"): void {
    this.outcome?.(ms, reason);
    this.#revision++;
    add(this.#fail, ms);
    this.#failures.set(reason, (this.#failures.get(reason) ?? 0) + 1);
  }

  /**
   * A request answered from the response cache after a lookup of `ms`. As in Triton it counts in
   * `queue` (waiting nothing) and in `success` (the deployment reports that), never in
   * inference_count, execution_count or compute.
   */
  cacheHit(ms: number): void {
    this.#revision++;
    add(this.#cacheHit, ms);
    add(this.#queue, 0);
  }

  /** One handler call (`import`, `initialize`, `execute`, `finalize`) of `ms`, and how it ended. */
  handlerCall(step: string, ms: number, outcome: "ok" | "error" | "timeout"): void {
    this.#revision++;
    const key = `${step}/${outcome}`;
    let d = this.#handler.get(key);
    if (!d) this.#handler.set(key, (d = zero()));
    add(d, ms);
  }

  /** A cache lookup that found nothing, plus the insert of the answer afterwards: `ms` in all. */
  cacheMiss(ms: number): void {
    this.#revision++;
    add(this.#cacheMiss, ms);
  }

  /** A request refused by the function's rate_limit on arrival: a REJECTED failure that took no time. */
  rateLimited(): void {
    this.#revision++;
    this.failed(0, "REJECTED");
    this.#rateLimited++;
  }

  /** A sequence started, ended, was released for idleness or started over. */
  sequence(event: SequenceEvent): void {
    this.#revision++;
    this.#sequences.set(event, (this.#sequences.get(event) ?? 0) + 1);
  }

  /** What Prometheus exposes beyond the Triton statistics: failures by reason and latency histograms. */
  metrics() {
    return {
      failures: new Map(this.#failures),
      dispatches: new Map(this.#dispatches),
      rateLimited: this.#rateLimited,
      sequences: new Map(this.#sequences),
      requestHistogram: { ...this.#requestHistogram, buckets: [...this.#requestHistogram.buckets] },
      queueHistogram: { ...this.#queueHistogram, buckets: [...this.#queueHistogram.buckets] },
      loadSeconds: this.loadSeconds,
      events: [...this.#events].map(([key, count]) => ({ event: key.split("/")[0]!, reason: key.split("/")[1]!, count })),
      coldStarts: { ...this.#coldStarts, buckets: [...this.#coldStarts.buckets] },
      handler: [...this.#handler].map(([key, d]) => ({ step: key.split("/")[0]!, outcome: key.split("/")[1]!, count: d.count, ns: d.ns })),
    };
  }

  /** One entry of `model_stats`. */
  toJSON(name: string, version: string) {
    return {
      name,
      version,
      last_inference: this.#lastInference,
      inference_count: this.#inferenceCount,
      execution_count: this.#executionCount,
      inference_stats: {
        success: { ...this.#success },
        fail: { ...this.#fail },
        queue: { ...this.#queue },
        compute_input: { ...this.#computeInput },
        compute_infer: { ...this.#computeInfer },
        compute_output: { ...this.#computeOutput },
        cache_hit: { ...this.#cacheHit },
        cache_miss: { ...this.#cacheMiss },
      },
      response_stats: {},
      // Ours, for functions with a handler: calls per step ({count, ns}) by how they ended.
      ...(this.#handler.size > 0 ? { handler_stats: handlerStats(this.#handler) } : {}),
      batch_stats: [...this.#batches.entries()]
        .sort(([a], [b]) => a - b)
        .map(([batch_size, d]) => ({
          batch_size,
          compute_input: { ...d.compute_input },
          compute_infer: { ...d.compute_infer },
          compute_output: { ...d.compute_output },
        })),
      memory_usage: [],
    };
  }
}

function handlerStats(calls: Map<string, Duration>): Record<string, Record<string, Duration>> {
  const out: Record<string, Record<string, Duration>> = {};
  for (const [key, d] of calls) {
    const [step, outcome] = key.split("/") as [string, string];
    (out[step] ??= {})[outcome] = { ...d };
  }
  return out;
}

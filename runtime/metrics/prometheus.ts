import { Registry } from "prom-client";
import { DISPATCH_REASONS } from "../scheduler/mod.ts";
import type { ModelStats } from "./model-stats.ts";
import { COLD_START_BUCKETS, LATENCY_BUCKETS } from "./model-stats.ts";
import type { Histogram } from "./model-stats.ts";

/** One served version, as the metrics see it at scrape time. */
export interface MetricsEntry {
  name: string;
  version: string;
  state: string;
  instances: number;
  /** What the autoscaler last wanted (equal to `instances` when it has not acted). */
  targetInstances: number;
  /** Requests queued, not yet executing. */
  pending: number;
  stats: ModelStats;
  /** Bytes accounted against the budgets. */
  memory: { host: number; device: number };
  /** Whether the version answers from the response cache (Triton exports the cache families only for those). */
  cacheEnabled?: boolean;
}

/** Where the metrics come from; called on every scrape. */
export interface MetricsSource {
  entries(): MetricsEntry[];
  budgets: { host?: number; device?: number };
  /** The response cache's own figures, when the server has one (`--cache-size`). */
  cache?: () => { entries: number; bytes: number; capacity: number; evictions: number };
}

export interface Prometheus {
  readonly contentType: string;
  render(): Promise<string>;
}

type Labels = Record<string, string | number>;
type Value = { labels: Labels; value: number; metricName?: string };

const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
const STATES = ["UNAVAILABLE", "LOADING", "READY", "PARKED", "UNLOADING", "FAILED"];

/**
 * Prometheus exposition with Triton's family names, types and labels, plus our `tensorfn_*`
 * families. Every value is read at scrape time from the same per-version statistics that
 * `/v2/models/stats` serves, so the two never disagree. Latency histograms are off unless
 * `histogramLatencies` (Triton's `--metrics-config histogram_latencies=true`).
 */
export function createPrometheus(source: MetricsSource, options: { histogramLatencies?: boolean } = {}): Prometheus {
  const registry = new Registry();
  const family = (name: string, type: "counter" | "gauge" | "histogram", help: string, values: (e: MetricsEntry[]) => Value[]) => {
    registry.registerMetric({
      name,
      help,
      type,
      get: () => ({ name, help, type, values: values(source.entries()), aggregator: "sum" }),
      reset: () => {},
    } as never);
  };
  const per = (pick: (e: MetricsEntry) => number) => (entries: MetricsEntry[]) =>
    entries.map((e) => ({ labels: { model: e.name, version: e.version }, value: pick(e) }));
  const stat = (e: MetricsEntry) => e.stats.toJSON(e.name, e.version);
  const us = (ns: number) => Math.round(ns / 1000);

  family("nv_inference_request_success", "counter", "Number of successful inference requests, all batch sizes", per((e) => stat(e).inference_stats.success.count));
  family("nv_inference_request_failure", "counter", "Number of failed inference requests, all batch sizes", (entries) =>
    entries.flatMap((e) =>
      ["REJECTED", "CANCELED", "BACKEND", "OTHER"].map((reason) => ({
        labels: { model: e.name, version: e.version, reason },
        value: e.stats.metrics().failures.get(reason as never) ?? 0,
      })),
    ),
  );
  family("nv_inference_count", "counter", "Number of inferences performed (a batch of n counts n)", per((e) => stat(e).inference_count));
  family("nv_inference_exec_count", "counter", "Number of model executions performed (a batch counts 1)", per((e) => stat(e).execution_count));
  family("tensorfn_batch_dispatches_total", "counter", `Executions by why the dynamic batcher sent the batch when it did (${DISPATCH_REASONS.join(", ")})`, (entries) =>
    entries.flatMap((e) => [...e.stats.metrics().dispatches].map(([reason, value]) => ({ labels: { model: e.name, version: e.version, reason }, value }))),
  );
  family("nv_inference_pending_request_count", "gauge", "Instantaneous number of requests queued, not yet executing", per((e) => e.pending));
  family("nv_inference_request_duration_us", "counter", "Cumulative inference request duration in microseconds", per((e) => us(stat(e).inference_stats.success.ns)));
  family("nv_inference_queue_duration_us", "counter", "Cumulative inference queuing duration in microseconds", per((e) => us(stat(e).inference_stats.queue.ns)));
  family("nv_inference_compute_input_duration_us", "counter", "Cumulative compute input duration in microseconds", per((e) => us(stat(e).inference_stats.compute_input.ns)));
  family("nv_inference_compute_infer_duration_us", "counter", "Cumulative compute inference duration in microseconds", per((e) => us(stat(e).inference_stats.compute_infer.ns)));
  family("nv_inference_compute_output_duration_us", "counter", "Cumulative inference compute output duration in microseconds", per((e) => us(stat(e).inference_stats.compute_output.ns)));
  family("nv_model_load_duration_secs", "gauge", "Model load time in seconds", per((e) => e.stats.metrics().loadSeconds));
  // Triton's response-cache families, for the versions that use the cache.
  const cached = (pick: (e: MetricsEntry) => number) => (entries: MetricsEntry[]) => per(pick)(entries.filter((e) => e.cacheEnabled));
  family("nv_cache_num_hits_per_model", "counter", "Number of response cache hits per model", cached((e) => stat(e).inference_stats.cache_hit.count));
  family("nv_cache_num_misses_per_model", "counter", "Number of response cache misses per model", cached((e) => stat(e).inference_stats.cache_miss.count));
  family("nv_cache_hit_duration_per_model", "counter", "Total response cache hit duration per model, in microseconds", cached((e) => us(stat(e).inference_stats.cache_hit.ns)));
  family("nv_cache_miss_duration_per_model", "counter", "Total response cache miss (lookup and insert) duration per model, in microseconds", cached((e) => us(stat(e).inference_stats.cache_miss.ns)));
  family("tensorfn_handler_calls_total", "counter", "Handler calls by step (import, initialize, execute, finalize) and outcome (ok, error, timeout)", (entries) =>
    entries.flatMap((e) => e.stats.metrics().handler.map((h) => ({ labels: { model: e.name, version: e.version, step: h.step, outcome: h.outcome }, value: h.count }))),
  );
  family("tensorfn_handler_duration_us", "counter", "Cumulative handler call duration in microseconds, by step and outcome", (entries) =>
    entries.flatMap((e) => e.stats.metrics().handler.map((h) => ({ labels: { model: e.name, version: e.version, step: h.step, outcome: h.outcome }, value: us(h.ns) }))),
  );
  const cache = source.cache;
  if (cache) {
    type Figures = ReturnType<NonNullable<MetricsSource["cache"]>>;
    const server = (pick: (f: Figures) => number) => () => [{ labels: {}, value: pick(cache()) }];
    family("tensorfn_cache_entries", "gauge", "Answers held by the response cache", server((f) => f.entries));
    family("tensorfn_cache_bytes", "gauge", "Bytes held by the response cache (outputs and keys)", server((f) => f.bytes));
    family("tensorfn_cache_capacity_bytes", "gauge", "The response cache's size (--cache-size)", server((f) => f.capacity));
    family("tensorfn_cache_evictions_total", "counter", "Answers the response cache dropped to make room", server((f) => f.evictions));
  }

  if (options.histogramLatencies) {
    family("tensorfn_request_duration_seconds", "histogram", "Successful request duration inside the server", (entries) =>
      entries.flatMap((e) => histogram("tensorfn_request_duration_seconds", e, e.stats.metrics().requestHistogram)),
    );
    family("tensorfn_queue_duration_seconds", "histogram", "Time requests waited in the scheduler queue", (entries) =>
      entries.flatMap((e) => histogram("tensorfn_queue_duration_seconds", e, e.stats.metrics().queueHistogram)),
    );
  }

  family("tensorfn_deployment_state", "gauge", "1 for the state each function version is in", (entries) =>
    entries.flatMap((e) => STATES.map((state) => ({ labels: { model: e.name, version: e.version, state }, value: e.state === state ? 1 : 0 }))),
  );
  family("tensorfn_instances", "gauge", "Model instances (sessions) serving each version now", per((e) => e.instances));
  family("tensorfn_instances_target", "gauge", "Instances the autoscaler wants for each version", per((e) => e.targetInstances));
  family("tensorfn_parked_bytes", "gauge", "Model bytes kept in host memory for parked versions", per((e) => (e.state === "PARKED" ? e.memory.host : 0)));
  family("tensorfn_memory_bytes", "gauge", "Bytes accounted to each version against the memory budgets", (entries) =>
    entries.flatMap((e) => [
      { labels: { model: e.name, version: e.version, memory: "host" }, value: e.memory.host },
      { labels: { model: e.name, version: e.version, memory: "device" }, value: e.memory.device },
    ]),
  );
  family("tensorfn_memory_budget_bytes", "gauge", "Memory budgets (absent when unlimited)", () =>
    (["host", "device"] as const).filter((m) => source.budgets[m] !== undefined).map((m) => ({ labels: { memory: m }, value: source.budgets[m]! })),
  );
  family("tensorfn_lifecycle_events_total", "counter", "Loads (from disk or parked), parks and unloads, with why", (entries) =>
    entries.flatMap((e) =>
      e.stats.metrics().events.map((x) => ({ labels: { model: e.name, version: e.version, event: x.event, reason: x.reason }, value: x.count })),
    ),
  );
  family("tensorfn_cold_start_seconds", "histogram", "Time from the start of a load to READY (from disk or parked)", (entries) =>
    entries.flatMap((e) => histogram("tensorfn_cold_start_seconds", e, e.stats.metrics().coldStarts, COLD_START_BUCKETS)),
  );
  family("tensorfn_rate_limit_rejections_total", "counter", "Requests refused with 429 by the function's rate_limit (also counted as REJECTED failures)", per((e) => e.stats.metrics().rateLimited));
  family("tensorfn_batch_size", "histogram", "Rows per model execution", (entries) =>
    entries.flatMap((e) => {
      const counts = new Map(stat(e).batch_stats.map((b) => [b.batch_size, b.compute_infer.count]));
      const h: Histogram = { buckets: BATCH_BUCKETS.map(() => 0), sum: 0, count: 0 };
      for (const [size, n] of counts) {
        const i = BATCH_BUCKETS.findIndex((le) => size <= le);
        if (i >= 0) h.buckets[i]! += n;
        h.sum += size * n;
        h.count += n;
      }
      return histogram("tensorfn_batch_size", e, h, BATCH_BUCKETS);
    }),
  );
  family("tensorfn_batch_executions_total", "counter", "Model executions by batch size", (entries) =>
    entries.flatMap((e) =>
      stat(e).batch_stats.map((b) => ({ labels: { model: e.name, version: e.version, batch_size: b.batch_size }, value: b.compute_infer.count })),
    ),
  );

  return { contentType: registry.contentType, render: () => registry.metrics() };
}

/** The exposition of one pre-aggregated histogram: cumulative buckets, +Inf, sum, count. */
function histogram(name: string, e: MetricsEntry, h: Histogram, bounds: readonly number[] = LATENCY_BUCKETS): Value[] {
  const labels = { model: e.name, version: e.version };
  let cumulative = 0;
  const values: Value[] = bounds.map((le, i) => {
    cumulative += h.buckets[i]!;
    return { labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` };
  });
  values.push({ labels: { ...labels, le: "+Inf" }, value: h.count, metricName: `${name}_bucket` });
  values.push({ labels, value: h.sum, metricName: `${name}_sum` });
  values.push({ labels, value: h.count, metricName: `${name}_count` });
  return values;
}

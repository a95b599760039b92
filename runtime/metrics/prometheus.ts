// Over 400 lines: every family tensorfn exports is declared here, beside the one writer that keeps
// each version's lines until they change; as one list they show what /metrics holds at a glance.
import { DISPATCH_REASONS, SEQUENCE_EVENTS } from "../scheduler/mod.ts";
import type { ModelStats } from "./model-stats.ts";
import { COLD_START_BUCKETS, LATENCY_BUCKETS } from "./model-stats.ts";
import { E2E_BUCKETS, ITL_BUCKETS, TTFT_BUCKETS } from "./generation-stats.ts";
import type { Histogram } from "./model-stats.ts";
import type { GpuSample } from "./gpu-telemetry.ts";

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
  /** Not in memory but loaded by the next request (lazy mode, or unloaded when idle): what a person watching calls cold. */
  cold?: boolean;
  /** Sequences whose state the version holds now (a sequence batcher's). */
  sequences?: number;
  /** Its side of the function's rollout, with the share of unpinned requests that side gets now. */
  rollout?: { role: "canary" | "stable" | "shadow"; percent: number };
  /** A generator's scheduler now: sequences running and waiting, KV cache use, prefix-cache counters (tokens). */
  generation?: {
    running: number;
    waiting: number;
    kvUsage: number;
    prefix: { queries: number; hits: number };
    mode?: "continuous" | "static";
    /** max_num_seqs. */
    slots?: number;
    /** The last iterations' slots, oldest first (the dashboard's picture; absent when not in memory). */
    recentSlots?: () => number[][];
  };
}

/** Where the metrics come from; called on every scrape. */
export interface MetricsSource {
  entries(): MetricsEntry[];
  budgets: { host?: number; device?: number };
  /** The response cache's own figures, when the server has one (`--cache-size`). */
  cache?: () => { entries: number; bytes: number; capacity: number; evictions: number };
  /**
   * Families others write in the text format (handlers' `ctx.metrics`, the process's own from the
   * platform), appended after tensorfn's by `renderBytesAsync`; each answers "" when it has none.
   */
  extra?: readonly (() => string | Promise<string>)[];
  /** The GPUs' last NVML sample (gpu-telemetry.ts), when the server reads them. */
  gpus?: () => readonly GpuSample[];
  /** Client connections dropped for not taking their answers, where the HTTP server reports them. */
  droppedConnections?: () => number;
  /** Each function's rollout: the canary's share and the changes to it, by event and reason; its shadow's comparisons. */
  rollouts?: () => readonly RolloutFigures[];
}

/** One function's rollout as the metrics read it. */
export interface RolloutFigures {
  name: string;
  /** Undefined for a rollout with a shadow only. */
  canary?: number;
  stable: number;
  percent: number;
  events: readonly { event: string; reason: string; count: number }[];
  shadow?: {
    version: number;
    compared: number;
    failed: number;
    dropped: number;
    outputs: readonly { output: string; compared: number; mismatched: number; maxAbsDiff: number; argmaxAgreed: number; argmaxRows: number }[];
  };
}

export interface Prometheus {
  readonly contentType: string;
  /** The whole exposition, written at once from one snapshot of the statistics. */
  render(): string;
  /** The same as UTF-8 bytes: what a scrape sends (each family's bytes kept until it changes). */
  renderBytes(): Uint8Array;
  /**
   * `renderBytes`, reading the versions in slices of SLICE and yielding to the event loop between
   * them, so a scrape of thousands of busy functions does not hold up the requests meanwhile; then
   * the source's `extra` families.
   */
  renderBytesAsync(): Promise<Uint8Array>;
}

/** Versions read between two yields of an asynchronous scrape. */
const SLICE = 500;

const STATES = ["UNAVAILABLE", "LOADING", "READY", "PARKED", "UNLOADING", "FAILED"];

/** Prometheus's text exposition format, version 0.0.4 (what Triton serves on /metrics). */
const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One version as a scrape sees it: its statistics read once, its own labels formatted once. */
interface Row {
  e: MetricsEntry;
  /** `model="…",version="…"`. */
  labels: string;
  stat: ReturnType<ModelStats["toJSON"]>;
  metrics: ReturnType<ModelStats["metrics"]>;
}
/** A sample's labels beyond the version's own, and a name suffix (`_bucket`, `_sum`, `_count`). */
type Sample = { labels?: Labels; value: number; suffix?: string; row?: Row };
type Labels = Record<string, string | number>;
interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram";
  help: string;
  samples: (rows: Row[]) => Sample[];
  /** The server's own series (budgets, the cache): not per version, written anew on every scrape. */
  server?: boolean;
}

/**
 * Prometheus exposition with Triton's family names, types and labels, plus our `tensorfn_*`
 * families, for the versions that have loaded since the server started (as Triton: a function
 * never loaded has no series; the source leaves those out) and any not UNAVAILABLE. Every value
 * is read at scrape time from the same per-version statistics that `/v2/models/stats` serves, so
 * the two never disagree. Latency histograms are off unless
 * `histogramLatencies` (Triton's `--metrics-config histogram_latencies=true`).
 *
 * Written here rather than through prom-client's Registry: a scrape runs on the event loop
 * between requests, and a readiness probe that arrives meanwhile waits it out. The registry's
 * formatting (labels merged and escaped per line) plus every family reading every version's
 * statistics again made a scrape of 16 versions take 4–6 ms, of 64 17–22 ms; one read per
 * version and this writer: 0.6 and 3 ms (docs/notes/2026-12-scheduling-studies.md, "A scrape's cost on the event loop").
 */
export function createPrometheus(source: MetricsSource, options: { histogramLatencies?: boolean } = {}): Prometheus {
  const families: Family[] = [];
  const family = (name: string, type: Family["type"], help: string, samples: Family["samples"], server = false) => families.push({ name, type, help, samples, server });
  const per = (pick: (r: Row) => number) => (rows: Row[]) => rows.map((row) => ({ row, value: pick(row) }));
  const us = (ns: number) => Math.round(ns / 1000);

  family("nv_inference_request_success", "counter", "Number of successful inference requests, all batch sizes", per((r) => r.stat.inference_stats.success.count));
  family("nv_inference_request_failure", "counter", "Number of failed inference requests, all batch sizes", (rows) =>
    rows.flatMap((row) => ["REJECTED", "CANCELED", "BACKEND", "OTHER"].map((reason) => ({ row, labels: { reason }, value: row.metrics.failures.get(reason as never) ?? 0 }))),
  );
  family("nv_inference_count", "counter", "Number of inferences performed (a batch of n counts n)", per((r) => r.stat.inference_count));
  family("nv_inference_exec_count", "counter", "Number of model executions performed (a batch counts 1)", per((r) => r.stat.execution_count));
  family("tensorfn_batch_dispatches_total", "counter", `Executions by why the dynamic batcher sent the batch when it did (${DISPATCH_REASONS.join(", ")})`, (rows) =>
    rows.flatMap((row) => [...row.metrics.dispatches].map(([reason, value]) => ({ row, labels: { reason }, value }))),
  );
  family("tensorfn_sequences_total", "counter", `Sequences by what happened to them (${SEQUENCE_EVENTS.join(", ")}; idle: released after max_sequence_idle_microseconds)`, (rows) =>
    rows.flatMap((row) => [...row.metrics.sequences].map(([event, value]) => ({ row, labels: { event }, value }))),
  );
  family("tensorfn_sequences_live", "gauge", "Sequences whose state the version holds now (sequence_batching)", (rows) =>
    rows.filter((row) => row.e.sequences !== undefined).map((row) => ({ row, labels: {}, value: row.e.sequences! })),
  );
  family("nv_inference_pending_request_count", "gauge", "Instantaneous number of requests queued, not yet executing", per((r) => r.e.pending));
  family("nv_inference_request_duration_us", "counter", "Cumulative inference request duration in microseconds", per((r) => us(r.stat.inference_stats.success.ns)));
  family("nv_inference_queue_duration_us", "counter", "Cumulative inference queuing duration in microseconds", per((r) => us(r.stat.inference_stats.queue.ns)));
  family("nv_inference_compute_input_duration_us", "counter", "Cumulative compute input duration in microseconds", per((r) => us(r.stat.inference_stats.compute_input.ns)));
  family("nv_inference_compute_infer_duration_us", "counter", "Cumulative compute inference duration in microseconds", per((r) => us(r.stat.inference_stats.compute_infer.ns)));
  family("nv_inference_compute_output_duration_us", "counter", "Cumulative inference compute output duration in microseconds", per((r) => us(r.stat.inference_stats.compute_output.ns)));
  family("nv_model_load_duration_secs", "gauge", "Model load time in seconds", per((r) => r.metrics.loadSeconds));
  // Triton's response-cache families, for the versions that use the cache.
  const cached = (pick: (r: Row) => number) => (rows: Row[]) => per(pick)(rows.filter((r) => r.e.cacheEnabled));
  family("nv_cache_num_hits_per_model", "counter", "Number of response cache hits per model", cached((r) => r.stat.inference_stats.cache_hit.count));
  family("nv_cache_num_misses_per_model", "counter", "Number of response cache misses per model", cached((r) => r.stat.inference_stats.cache_miss.count));
  family("nv_cache_hit_duration_per_model", "counter", "Total response cache hit duration per model, in microseconds", cached((r) => us(r.stat.inference_stats.cache_hit.ns)));
  family("nv_cache_miss_duration_per_model", "counter", "Total response cache miss (lookup and insert) duration per model, in microseconds", cached((r) => us(r.stat.inference_stats.cache_miss.ns)));
  family("tensorfn_handler_calls_total", "counter", "Handler calls by step (import, initialize, execute, finalize; escape: an error that escaped a call, from a timer or an unawaited promise) and outcome (ok, error, timeout)", (rows) =>
    rows.flatMap((row) => row.metrics.handler.map((h) => ({ row, labels: { step: h.step, outcome: h.outcome }, value: h.count }))),
  );
  family("tensorfn_handler_duration_us", "counter", "Cumulative handler call duration in microseconds, by step and outcome", (rows) =>
    rows.flatMap((row) => row.metrics.handler.map((h) => ({ row, labels: { step: h.step, outcome: h.outcome }, value: us(h.ns) }))),
  );
  // A generator's, under vLLM's names and its `model_name` label, so vLLM's dashboards and alerts work
  // (counters with the `_total` their samples have under prometheus_client, which vLLM uses).
  const generators = (pick: (r: Row, g: NonNullable<MetricsEntry["generation"]>) => number | Sample[]) => (rows: Row[]) =>
    rows.filter((r) => r.e.generation).flatMap((row) => {
      const value = pick(row, row.e.generation!);
      return typeof value === "number" ? [{ labels: { model_name: row.e.name }, value }] : value;
    });
  const vllmHistogram = (row: Row, h: Histogram, bounds: readonly number[]) => histogram(row, h, bounds).map((s) => ({ ...s, row: undefined, labels: { model_name: row.e.name, ...s.labels } }));
  family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches", generators((_, g) => g.running));
  family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed", generators((_, g) => g.waiting));
  family("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage", generators((_, g) => g.kvUsage));
  family("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens", generators((_, g) => g.prefix.queries));
  family("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens", generators((_, g) => g.prefix.hits));
  family("vllm:num_preemptions_total", "counter", "Cumulative number of preemptions from the engine", generators((r) => r.e.stats.generation.preemptions));
  family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed", generators((r) => r.e.stats.generation.promptTokens));
  family("vllm:generation_tokens_total", "counter", "Number of generation tokens processed", generators((r) => r.e.stats.generation.generationTokens));
  family("vllm:request_success_total", "counter", "Count of finished requests by finished_reason (stop, length, abort)", generators((r) =>
    [...r.e.stats.generation.requests].map(([finished_reason, value]) => ({ labels: { model_name: r.e.name, finished_reason }, value })),
  ));
  family("vllm:time_to_first_token_seconds", "histogram", "Histogram of time to first token in seconds", generators((r) => vllmHistogram(r, r.e.stats.generation.ttft, TTFT_BUCKETS)));
  family("vllm:inter_token_latency_seconds", "histogram", "Histogram of inter-token latency in seconds", generators((r) => vllmHistogram(r, r.e.stats.generation.itl, ITL_BUCKETS)));
  family("vllm:e2e_request_latency_seconds", "histogram", "Histogram of end to end request latency in seconds", generators((r) => vllmHistogram(r, r.e.stats.generation.e2e, E2E_BUCKETS)));

  const cache = source.cache;
  if (cache) {
    type Figures = ReturnType<NonNullable<MetricsSource["cache"]>>;
    const server = (pick: (f: Figures) => number) => () => [{ value: pick(cache()) }];
    family("tensorfn_cache_entries", "gauge", "Answers held by the response cache", server((f) => f.entries), true);
    family("tensorfn_cache_bytes", "gauge", "Bytes held by the response cache (outputs and keys)", server((f) => f.bytes), true);
    family("tensorfn_cache_capacity_bytes", "gauge", "The response cache's size (--cache-size)", server((f) => f.capacity), true);
    family("tensorfn_cache_evictions_total", "counter", "Answers the response cache dropped to make room", server((f) => f.evictions), true);
  }

  const dropped = source.droppedConnections;
  if (dropped) family("tensorfn_connections_dropped_total", "counter", "Client connections the server dropped: answers untaken for --write-timeout; on the gRPC port also past --max-connections or silent past --request-body-timeout", () => [{ value: dropped() }], true);

  // Triton's GPU families (its names, units and help), one series per GPU and MIG device.
  const gpus = source.gpus;
  if (gpus) {
    const gpu = (pick: (g: GpuSample) => number | undefined) => () =>
      gpus().flatMap((g) => {
        const value = pick(g);
        return value === undefined ? [] : [{ labels: { gpu_uuid: g.uuid }, value }];
      });
    family("nv_gpu_utilization", "gauge", "GPU utilization rate [0.0 - 1.0)", gpu((g) => g.utilization), true);
    family("nv_gpu_memory_total_bytes", "gauge", "GPU total memory, in bytes", gpu((g) => g.memoryTotalBytes), true);
    family("nv_gpu_memory_used_bytes", "gauge", "GPU used memory, in bytes", gpu((g) => g.memoryUsedBytes), true);
    family("nv_gpu_power_usage", "gauge", "GPU power usage in watts", gpu((g) => g.powerWatts), true);
    family("nv_gpu_power_limit", "gauge", "GPU power management limit in watts", gpu((g) => g.powerLimitWatts), true);
    family("nv_energy_consumption", "counter", "GPU energy consumption in joules since the server started", gpu((g) => g.energyJoules), true);
    family("tensorfn_gpu_temperature_celsius", "gauge", "GPU temperature in degrees Celsius", gpu((g) => g.temperatureCelsius), true);
    family("tensorfn_gpu_info", "gauge", "1 for each GPU and MIG device NVML reports: its name and, for a MIG device, its GPU's UUID", () =>
      gpus().map((g) => ({ labels: { gpu_uuid: g.uuid, name: g.name, ...(g.parent ? { parent_uuid: g.parent } : {}) }, value: 1 })), true);
  }

  if (options.histogramLatencies) {
    family("tensorfn_request_duration_seconds", "histogram", "Successful request duration inside the server", (rows) =>
      rows.flatMap((row) => histogram(row, row.metrics.requestHistogram)),
    );
    family("tensorfn_queue_duration_seconds", "histogram", "Time requests waited in the scheduler queue", (rows) => rows.flatMap((row) => histogram(row, row.metrics.queueHistogram)));
  }

  // One series per version, for the state it is in (not one per state with zeros: at 10,000
  // functions those zeros were a fifth of a scrape). `sum by (state)` counts versions per state.
  family("tensorfn_deployment_state", "gauge", `1 for the state each function version is in (${STATES.join(", ")})`, (rows) => rows.map((row) => ({ row, labels: { state: row.e.state }, value: 1 })));
  family("tensorfn_instances", "gauge", "Model instances (sessions) serving each version now", per((r) => r.e.instances));
  family("tensorfn_instances_target", "gauge", "Instances the autoscaler wants for each version", per((r) => r.e.targetInstances));
  family("tensorfn_parked_bytes", "gauge", "Model bytes kept in host memory for parked versions", per((r) => (r.e.state === "PARKED" ? r.e.memory.host : 0)));
  family("tensorfn_memory_bytes", "gauge", "Bytes accounted to each version against the memory budgets", (rows) =>
    rows.flatMap((row) => [
      { row, labels: { memory: "host" }, value: row.e.memory.host },
      { row, labels: { memory: "device" }, value: row.e.memory.device },
    ]),
  );
  family(
    "tensorfn_memory_budget_bytes",
    "gauge",
    "Memory budgets (absent when unlimited)",
    () => (["host", "device"] as const).filter((m) => source.budgets[m] !== undefined).map((m) => ({ labels: { memory: m }, value: source.budgets[m]! })),
    true,
  );
  family("tensorfn_lifecycle_events_total", "counter", "Loads (from disk or parked), parks and unloads, with why", (rows) =>
    rows.flatMap((row) => row.metrics.events.map((x) => ({ row, labels: { event: x.event, reason: x.reason }, value: x.count }))),
  );
  family("tensorfn_cold_start_seconds", "histogram", "Time from the start of a load to READY (from disk or parked)", (rows) =>
    rows.flatMap((row) => histogram(row, row.metrics.coldStarts, COLD_START_BUCKETS)),
  );
  family(
    "tensorfn_rollout_canary_percent",
    "gauge",
    "A rollout's share of the requests that name no version, on its canary",
    () => (source.rollouts?.() ?? []).flatMap((r) => (r.canary === undefined ? [] : [{ labels: { model: r.name, canary: r.canary, stable: r.stable }, value: r.percent }])),
    true,
  );
  const shadows = () => (source.rollouts?.() ?? []).flatMap((r) => (r.shadow ? [{ model: r.name, shadow: r.shadow }] : []));
  family(
    "tensorfn_shadow_requests_total",
    "counter",
    "Copies of answered requests for a rollout's shadow version, by outcome: compared, failed (on the shadow), dropped (its queue full)",
    () => shadows().flatMap(({ model, shadow }) => (["compared", "failed", "dropped"] as const).map((outcome) => ({ labels: { model, shadow: shadow.version, outcome }, value: shadow[outcome] }))),
    true,
  );
  family(
    "tensorfn_shadow_max_abs_diff",
    "gauge",
    "The largest |shadow - answered| of any element of an output, over every compared answer",
    () => shadows().flatMap(({ model, shadow }) => shadow.outputs.map((o) => ({ labels: { model, shadow: shadow.version, output: o.output }, value: o.maxAbsDiff }))),
    true,
  );
  family(
    "tensorfn_shadow_argmax_rows_total",
    "counter",
    "Rows (along an output's last dimension) whose argmax the shadow was compared on, by whether it agreed: agreement = agree=\"true\" over all",
    () =>
      shadows().flatMap(({ model, shadow }) =>
        shadow.outputs.flatMap((o) => [
          { labels: { model, shadow: shadow.version, output: o.output, agree: "true" }, value: o.argmaxAgreed },
          { labels: { model, shadow: shadow.version, output: o.output, agree: "false" }, value: o.argmaxRows - o.argmaxAgreed },
        ]),
      ),
    true,
  );
  family(
    "tensorfn_rollout_events_total",
    "counter",
    "A rollout's events by reason (api, analysis, error_rate, p99_ratio): set, step, promote, abort change its share; hold judges a slow window again",
    () => (source.rollouts?.() ?? []).flatMap((r) => r.events.map((e) => ({ labels: { model: r.name, event: e.event, reason: e.reason }, value: e.count }))),
    true,
  );
  family("tensorfn_rate_limit_rejections_total", "counter", "Requests refused with 429 by the function's rate_limit (also counted as REJECTED failures)", per((r) => r.metrics.rateLimited));
  // Rows per execution: exact, by size (a histogram of the same was a quarter of a scrape of many
  // functions); the mean is nv_inference_count / nv_inference_exec_count, as with Triton.
  family("tensorfn_batch_executions_total", "counter", "Model executions by batch size", (rows) =>
    rows.flatMap((row) => row.stat.batch_stats.map((b) => ({ row, labels: { batch_size: b.batch_size }, value: b.compute_infer.count }))),
  );

  // A version's lines of every family, kept until anything they show changes: a scrape of 10,000
  // loaded functions that are mostly idle writes the few that moved and joins the rest
  // (npx tsx bench/studies/scrape-10k.ts: 10,000 versions, about 1.2 s written whole, 40–80 ms idle).
  const headers = families.map((f) => `# HELP ${f.name} ${escape(f.help)}\n# TYPE ${f.name} ${f.type}`);
  const written = new WeakMap<ModelStats, { key: string; lines: string[] }>();
  const linesOf = (e: MetricsEntry) => {
    const key = `${e.name}\u0000${e.version}\u0000${e.stats.revision}\u0000${e.state}\u0000${e.instances}\u0000${e.targetInstances}\u0000${e.pending}\u0000${e.memory.host}\u0000${e.memory.device}\u0000${e.cacheEnabled}${e.generation ? `\u0000${e.generation.running}\u0000${e.generation.waiting}\u0000${e.generation.kvUsage}\u0000${e.generation.prefix.queries}` : ""}`;
    let kept = written.get(e.stats);
    if (kept?.key !== key) {
      const row: Row = { e, labels: `model="${labelValue(e.name)}",version="${labelValue(e.version)}"`, stat: e.stats.toJSON(e.name, e.version), metrics: e.stats.metrics() };
      kept = { key, lines: families.map((f) => (f.server ? "" : sampleLines(f, f.samples([row])))) };
      written.set(e.stats, kept);
    }
    return kept.lines;
  };

  // Each family's body too, as UTF-8, until a version's lines for it change or the versions do:
  // writing 40 MB of text out cost more than building it (encoding a string 75 ms, copying bytes 10).
  let previous: string[][] = [];
  const encoder = new TextEncoder();
  const bodies: Uint8Array[] = families.map(() => new Uint8Array());
  const encodedHeaders = headers.map((h, i) => encoder.encode(`${i > 0 ? "\n\n" : ""}${h}`));
  const newline = encoder.encode("\n");
  const renderBytes = (): Uint8Array => write(source.entries().map(linesOf));
  const renderBytesAsync = async (): Promise<Uint8Array> => {
    const entries = source.entries();
    const current: string[][] = [];
    for (let at = 0; at < entries.length; at += SLICE) {
      if (at > 0) await new Promise((resolve) => setTimeout(resolve, 0));
      for (const e of entries.slice(at, at + SLICE)) current.push(linesOf(e));
    }
    const own = write(current);
    if (!source.extra) return own;
    const texts = (await Promise.all(source.extra.map((render) => render()))).filter((t) => t.length > 0);
    if (texts.length === 0) return own;
    const more = encoder.encode(texts.map((t) => (t.endsWith("\n") ? t : `${t}\n`)).join(""));
    const out = new Uint8Array(own.length + more.length);
    out.set(own);
    out.set(more, own.length);
    return out;
  };
  const write = (current: string[][]): Uint8Array => {
      const dirty = families.map(() => current.length !== previous.length);
      for (let r = 0; r < current.length; r++) {
        const before = previous[r];
        const now = current[r]!;
        if (before === now) continue;
        for (let i = 0; i < families.length; i++) if (before?.[i] !== now[i]) dirty[i] = true;
      }
      previous = current;
      for (let i = 0; i < families.length; i++) {
        if (!dirty[i] || families[i]!.server) continue;
        // join, not +=: one flat string, where 10,000 appends make a rope that costs more to write out than to build.
        const parts: string[] = [];
        for (const lines of current) if (lines[i]) parts.push(lines[i]!);
        bodies[i] = parts.length > 0 ? encoder.encode(`\n${parts.join("\n")}`) : new Uint8Array();
      }
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < families.length; i++) {
        const f = families[i]!;
        pieces.push(encodedHeaders[i]!);
        if (f.server) {
          const body = sampleLines(f, f.samples([]));
          if (body) pieces.push(encoder.encode(`\n${body}`));
        } else if (bodies[i]!.length > 0) {
          pieces.push(bodies[i]!);
        }
      }
      pieces.push(newline);
      const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of pieces) {
        out.set(p, at);
        at += p.length;
      }
      return out;
  };
  return {
    contentType: EXPOSITION_CONTENT_TYPE,
    renderBytes,
    renderBytesAsync,
    render: () => new TextDecoder().decode(renderBytes()),
  };
}

/** A family's samples as lines of the text format (a family without samples keeps only its HELP and TYPE). */
function sampleLines(f: Family, samples: Sample[]): string {
  let text = "";
  for (const s of samples) {
    let labels = s.row?.labels ?? "";
    for (const name in s.labels) labels += `${labels ? "," : ""}${name}="${labelValue(s.labels[name]!)}"`;
    text += `${text ? "\n" : ""}${f.name}${s.suffix ?? ""}${labels ? `{${labels}}` : ""} ${sampleValue(s.value)}`;
  }
  return text;
}

// The format's escapes: a backslash and a newline in HELP text; those and a double quote in a label value.
const escape = (text: string) => (/[\\\n]/.test(text) ? text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n") : text);
const labelValue = (value: string | number) => (typeof value === "number" ? String(value) : /[\\\n"]/.test(value) ? escape(value).replace(/"/g, '\\"') : value);
const sampleValue = (value: number) => (Number.isFinite(value) ? String(value) : Number.isNaN(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf");

/** The samples of one pre-aggregated histogram: cumulative buckets, +Inf, sum, count. */
function histogram(row: Row, h: Histogram, bounds: readonly number[] = LATENCY_BUCKETS): Sample[] {
  let cumulative = 0;
  const samples: Sample[] = bounds.map((le, i) => {
    cumulative += h.buckets[i]!;
    return { row, labels: { le }, value: cumulative, suffix: "_bucket" };
  });
  samples.push({ row, labels: { le: "+Inf" }, value: h.count, suffix: "_bucket" });
  samples.push({ row, value: h.sum, suffix: "_sum" });
  samples.push({ row, value: h.count, suffix: "_count" });
  return samples;
}

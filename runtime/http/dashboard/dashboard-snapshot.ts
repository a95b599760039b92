import { LATENCY_BUCKETS } from "../../metrics/mod.ts";
import type { Histogram, MetricsEntry, RateHistory, TraceEvent } from "../../metrics/mod.ts";

/** One function version on the dashboard; rates and latencies cover the time since the last snapshot. */
export interface FunctionRow {
  name: string;
  /** "" for a function with no version to show (its config does not parse, it has no version folder). */
  version: string;
  state: string;
  /** Why it is not serving (a failed load, a config's file:line), as the repository index says. */
  reason?: string;
  instances: number;
  pending: number;
  /** Sequences whose state the version holds (sequence_batching only). */
  sequences?: number;
  /** Its side of a rollout and that side's share now: "canary 10 %", "stable 90 %". */
  rollout?: string;
  inferPerS: number;
  reqPerS: number;
  /** Failed requests per second, and how many of those the rate limit refused. */
  failPerS: number;
  rateLimitedPerS: number;
  p50Ms?: number;
  p99Ms?: number;
  avgBatch?: number;
  /** Why the batches since the last snapshot left when they did: share of executions by reason (tensorfn_batch_dispatches_total). */
  dispatchShares?: Record<string, number>;
  /** Average time a request waited in the queue vs the model's compute per request. */
  queueMsPerRequest?: number;
  computeMsPerRequest?: number;
  /** A generator's batching now: sequences running and waiting, the KV cache's use, and its slots over the last iterations. */
  generation?: { mode: string; running: number; waiting: number; kvUsage: number; slots: number; recent: number[][] };
}

/** One function version's figures over the last minutes, a point per sample (for the page's plots). */
export interface FunctionSeries {
  /** Seconds before now, oldest first. */
  ago: number[];
  inferPerS: number[];
  p50Ms: (number | null)[];
  p99Ms: (number | null)[];
  queueMs: (number | null)[];
  computeMs: (number | null)[];
}

/** One execution on an instance's track, in milliseconds before the snapshot. */
export interface TimelineBar {
  fn: string;
  instance: number;
  agoMs: number;
  durMs: number;
  rows: number;
}

export interface Snapshot {
  functions: FunctionRow[];
  timeline: TimelineBar[];
  timelineSeconds: number;
}

/** A function or version as the repository index reports it (version absent: the function itself). */
export interface FunctionStatus {
  name: string;
  version?: string;
  state: string;
  reason: string;
}

export type Sample = { at: number; success: number; fail: number; rateLimited: number; inference: number; execution: number; queueNs: number; inferNs: number; histogram: Histogram; dispatches: Map<string, number> };

/**
 * Turns cumulative statistics into what a person watches: throughput, p50/p99 (from the request
 * histogram, interpolated within buckets as Prometheus's histogram_quantile does), average batch
 * size and the queue-vs-compute split since the previous snapshot, plus the last seconds of the
 * trace timeline. Rates are differences between this builder's own samples, so all watchers
 * share one builder and one tick (see SnapshotBroadcaster).
 */
export class SnapshotBuilder {
  readonly #entries: () => MetricsEntry[];
  readonly #trace: (seconds: number) => { traceEvents: TraceEvent[] };
  readonly #statuses: () => FunctionStatus[];
  #previous = new Map<string, Sample>();

  constructor(entries: () => MetricsEntry[], trace: (seconds: number) => { traceEvents: TraceEvent[] }, statuses: () => FunctionStatus[] = () => []) {
    this.#entries = entries;
    this.#trace = trace;
    this.#statuses = statuses;
  }

  /**
   * The rows with what the repository index knows besides: each version's reason, and a row for
   * every function that has no version to measure (a config that does not parse), so that no
   * function the repository holds is missing from the page.
   */
  #withStatuses(rows: FunctionRow[]): FunctionRow[] {
    const statuses = this.#statuses();
    const reasons = new Map(statuses.filter((s) => s.reason).map((s) => [`${s.name}/${s.version ?? ""}`, s.reason]));
    for (const row of rows) {
      const reason = reasons.get(`${row.name}/${row.version}`);
      if (reason) row.reason = reason;
    }
    const shown = new Set(rows.map((r) => r.name));
    for (const s of statuses) {
      if (shown.has(s.name) || s.version !== undefined) continue;
      rows.push({ name: s.name, version: "", state: s.state, ...(s.reason ? { reason: s.reason } : {}), instances: 0, pending: 0, inferPerS: 0, reqPerS: 0, failPerS: 0, rateLimitedPerS: 0 });
    }
    return rows;
  }

  next(nowMs: number, timelineSeconds = 10): Snapshot {
    const functions = this.#entries().map((e) => {
      const sample = sampleOf(e, nowMs);
      const key = `${e.name}/${e.version}`;
      const before = this.#previous.get(key);
      this.#previous.set(key, sample);
      return rowOf(e, sample, before);
    });
    return { functions: this.#withStatuses(functions), timeline: timeline(this.#trace(timelineSeconds).traceEvents, nowMs), timelineSeconds };
  }

  /**
   * A snapshot whose rates cover the last `windowMs` (or as much of it as `history` holds), for a
   * reader with no previous snapshot of its own (`GET /v2/dashboard/snapshot`). `windowMs` is also
   * reported, as the window actually covered.
   */
  over(nowMs: number, windowMs: number, history: RateHistory<Sample>, timelineSeconds = 10): Snapshot & { windowSeconds: number } {
    let covered = 0;
    const functions = this.#entries().map((e) => {
      const before = history.at(`${e.name}/${e.version}`, nowMs - windowMs);
      if (before) covered = Math.max(covered, nowMs - before.at);
      return rowOf(e, sampleOf(e, nowMs), before?.value);
    });
    return { functions: this.#withStatuses(functions), timeline: timeline(this.#trace(timelineSeconds).traceEvents, nowMs), timelineSeconds, windowSeconds: covered / 1000 };
  }

  /**
   * Every function's figures between consecutive samples of `history` (the last minutes): the
   * page's plots, drawn at once when it opens, then extended by the live snapshots.
   */
  series(nowMs: number, history: RateHistory<Sample>): Record<string, FunctionSeries> {
    const out: Record<string, FunctionSeries> = {};
    for (const e of this.#entries()) {
      const key = `${e.name}/${e.version}`;
      const samples = history.series(key);
      const s: FunctionSeries = { ago: [], inferPerS: [], p50Ms: [], p99Ms: [], queueMs: [], computeMs: [] };
      for (let i = 1; i < samples.length; i++) {
        const row = rowOf(e, samples[i]!.value, samples[i - 1]!.value);
        s.ago.push((nowMs - samples[i]!.at) / 1000);
        s.inferPerS.push(row.inferPerS);
        s.p50Ms.push(row.p50Ms ?? null);
        s.p99Ms.push(row.p99Ms ?? null);
        s.queueMs.push(row.queueMsPerRequest ?? null);
        s.computeMs.push(row.computeMsPerRequest ?? null);
      }
      out[key] = s;
    }
    return out;
  }

  /** Records every function's figures now, for `over` to take rates from later. */
  sampleInto(history: RateHistory<Sample>, nowMs: number): void {
    for (const e of this.#entries()) history.record(`${e.name}/${e.version}`, nowMs, sampleOf(e, nowMs));
    history.prune(nowMs);
  }
}

/** One function version's cumulative figures at `now`. */
function sampleOf(e: MetricsEntry, now: number): Sample {
  const s = e.stats.toJSON(e.name, e.version);
  const metrics = e.stats.metrics(); // copies its maps and histograms: once per row
  return {
    at: now,
    success: s.inference_stats.success.count,
    fail: s.inference_stats.fail.count,
    rateLimited: metrics.rateLimited,
    inference: s.inference_count,
    execution: s.execution_count,
    queueNs: s.inference_stats.queue.ns,
    inferNs: s.inference_stats.compute_infer.ns,
    histogram: metrics.requestHistogram,
    dispatches: metrics.dispatches,
  };
}

/** A row with its rates between `before` and `sample` (none without an earlier sample). */
function rowOf(e: MetricsEntry, sample: Sample, before: Sample | undefined): FunctionRow {
  const row: FunctionRow = { name: e.name, version: e.version, state: e.cold ? "COLD" : e.state, instances: e.instances, pending: e.pending, inferPerS: 0, reqPerS: 0, failPerS: 0, rateLimitedPerS: 0 };
  if (e.sequences !== undefined) row.sequences = e.sequences;
  if (e.rollout) row.rollout = `${e.rollout.role} ${e.rollout.percent} %`;
  const g = e.generation;
  if (g) row.generation = { mode: g.mode ?? "continuous", running: g.running, waiting: g.waiting, kvUsage: g.kvUsage, slots: g.slots ?? 0, recent: g.recentSlots?.() ?? [] };
  if (!before || sample.at <= before.at) return row;
  const seconds = (sample.at - before.at) / 1000;
  const requests = sample.success - before.success;
  const executions = sample.execution - before.execution;
  row.inferPerS = (sample.inference - before.inference) / seconds;
  row.reqPerS = requests / seconds;
  row.failPerS = (sample.fail - before.fail) / seconds;
  row.rateLimitedPerS = (sample.rateLimited - before.rateLimited) / seconds;
  if (executions > 0) {
    row.avgBatch = (sample.inference - before.inference) / executions;
    const shares: Record<string, number> = {};
    let counted = 0;
    for (const [reason, n] of sample.dispatches) counted += shares[reason] = n - (before.dispatches.get(reason) ?? 0);
    if (counted > 0) {
      for (const reason of Object.keys(shares)) shares[reason] = shares[reason]! / counted;
      row.dispatchShares = Object.fromEntries(Object.entries(shares).filter(([, share]) => share > 0));
    }
  }
  if (requests > 0) {
    const buckets = sample.histogram.buckets.map((n, i) => n - before.histogram.buckets[i]!);
    row.p50Ms = quantile(0.5, buckets) * 1000;
    row.p99Ms = quantile(0.99, buckets) * 1000;
    row.queueMsPerRequest = (sample.queueNs - before.queueNs) / 1e6 / requests;
    row.computeMsPerRequest = (sample.inferNs - before.inferNs) / 1e6 / requests;
  }
  return row;
}

/** histogram_quantile over per-bucket counts (seconds). */
function quantile(q: number, buckets: number[]): number {
  const total = buckets.reduce((a, b) => a + b, 0);
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i]!;
    if (seen + n >= q * total && n > 0) {
      const lower = i === 0 ? 0 : LATENCY_BUCKETS[i - 1]!;
      return lower + (LATENCY_BUCKETS[i]! - lower) * ((q * total - seen) / n);
    }
    seen += n;
  }
  return LATENCY_BUCKETS.at(-1)!;
}

function timeline(events: TraceEvent[], nowMs: number): TimelineBar[] {
  const labels = new Map(events.filter((e) => e.name === "process_name").map((e) => [e.pid, String(e.args?.name ?? e.pid)]));
  return events
    .filter((e) => e.cat === "execution")
    .map((e) => ({
      fn: labels.get(e.pid) ?? String(e.pid),
      instance: e.tid,
      agoMs: nowMs - e.ts / 1000,
      durMs: (e.dur ?? 0) / 1000,
      rows: Number(e.args?.rows ?? 0),
    }));
}

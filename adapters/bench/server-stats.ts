import { causeOf, modelPath } from "./model-metadata.ts";

/** A cumulative duration statistic, as Triton reports it. */
export interface DurationStat {
  count: number;
  ns: number;
}

/** One reading of a model's statistics (summed over the versions asked for). */
export interface StatsSnapshot {
  inferenceCount: number;
  executionCount: number;
  success: DurationStat;
  fail: DurationStat;
  queue: DurationStat;
  computeInput: DurationStat;
  computeInfer: DurationStat;
  computeOutput: DurationStat;
  /** From `batch_stats`: executions and their compute time (input + infer + output), if reported. */
  batches: { count: number; inputNs: number; inferNs: number; outputNs: number } | undefined;
}

/** Server-side numbers for one measurement window; `null` where the window gave nothing to divide by. */
export interface ServerStepStats {
  inferenceCount: number;
  executionCount: number;
  successCount: number;
  failCount: number;
  /** Δinference_count / Δexecution_count. */
  avgBatchSize: number | null;
  /** Time in the scheduler queue per request (Δqueue.ns / Δqueue.count), µs. */
  queueUsPerRequest: number | null;
  /** Server time per successful request, arrival to answer (Δsuccess.ns / Δsuccess.count), µs. */
  requestUsPerRequest: number | null;
  /** Compute input + infer + output per model execution, µs. */
  computeUsPerExecution: number | null;
  computeInputUsPerExecution: number | null;
  computeInferUsPerExecution: number | null;
  computeOutputUsPerExecution: number | null;
}

/** The outcome of one stats request: a snapshot, or why there is none. */
export type StatsReading = { ok: true; stats: StatsSnapshot } | { ok: false; reason: string };

/** Reads `GET <baseUrl>/v2/models/<m>[/versions/<v>]/stats`; never throws. */
export async function fetchModelStats(baseUrl: string, model: { name: string; version?: string }): Promise<StatsReading> {
  const path = `${modelPath(model.name, model.version)}/stats`;
  try {
    const response = await fetch(new URL(path.slice(1), baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`));
    const text = await response.text();
    if (response.status !== 200) return { ok: false, reason: `GET ${path}: HTTP ${response.status}` };
    return { ok: true, stats: parseModelStats(JSON.parse(text), model.version) };
  } catch (error) {
    return { ok: false, reason: `GET ${path}: ${causeOf(error)}` };
  }
}

/** Sums the `model_stats` entries (only `version`'s when given) of Triton's statistics JSON. */
export function parseModelStats(json: unknown, version?: string): StatsSnapshot {
  const entries = (json as { model_stats?: unknown })?.model_stats;
  if (!Array.isArray(entries)) throw new Error("statistics have no model_stats array");
  const picked = entries.filter((entry) => version === undefined || String(entry?.version) === version);
  const total: StatsSnapshot = {
    inferenceCount: 0, executionCount: 0, success: zero(), fail: zero(), queue: zero(),
    computeInput: zero(), computeInfer: zero(), computeOutput: zero(), batches: undefined,
  };
  for (const entry of picked) {
    const stats = entry?.inference_stats ?? {};
    total.inferenceCount += num(entry?.inference_count);
    total.executionCount += num(entry?.execution_count);
    add(total.success, stats.success);
    add(total.fail, stats.fail);
    add(total.queue, stats.queue);
    add(total.computeInput, stats.compute_input);
    add(total.computeInfer, stats.compute_infer);
    add(total.computeOutput, stats.compute_output);
    if (Array.isArray(entry?.batch_stats)) {
      total.batches ??= { count: 0, inputNs: 0, inferNs: 0, outputNs: 0 };
      for (const batch of entry.batch_stats) {
        total.batches.count += num(batch?.compute_infer?.count);
        total.batches.inputNs += num(batch?.compute_input?.ns);
        total.batches.inferNs += num(batch?.compute_infer?.ns);
        total.batches.outputNs += num(batch?.compute_output?.ns);
      }
    }
  }
  return total;
}

/**
 * The window's server numbers from two snapshots. Compute per execution comes from `batch_stats`
 * when the server reports it (Triton adds a whole batch's compute time to `inference_stats` once
 * per request in the batch, so only `batch_stats` counts executions); otherwise from
 * `inference_stats` over Δexecution_count. Returns a reason instead when counters went backwards.
 */
export function diffStats(before: StatsSnapshot, after: StatsSnapshot): ServerStepStats | string {
  const inferenceCount = after.inferenceCount - before.inferenceCount;
  const executionCount = after.executionCount - before.executionCount;
  if (inferenceCount < 0 || executionCount < 0) return "statistics counters went backwards (server restarted?)";
  const d = (key: "success" | "fail" | "queue" | "computeInput" | "computeInfer" | "computeOutput") => ({
    count: after[key].count - before[key].count,
    ns: after[key].ns - before[key].ns,
  });
  const [success, queue] = [d("success"), d("queue")];
  let executions = executionCount;
  let [inputNs, inferNs, outputNs] = [d("computeInput").ns, d("computeInfer").ns, d("computeOutput").ns];
  if (before.batches && after.batches && after.batches.count > before.batches.count) {
    executions = after.batches.count - before.batches.count;
    inputNs = after.batches.inputNs - before.batches.inputNs;
    inferNs = after.batches.inferNs - before.batches.inferNs;
    outputNs = after.batches.outputNs - before.batches.outputNs;
  }
  const perExecution = (ns: number) => ratio(ns / 1000, executions);
  return {
    inferenceCount,
    executionCount,
    successCount: success.count,
    failCount: d("fail").count,
    avgBatchSize: ratio(inferenceCount, executionCount),
    queueUsPerRequest: ratio(queue.ns / 1000, queue.count),
    requestUsPerRequest: ratio(success.ns / 1000, success.count),
    computeUsPerExecution: perExecution(inputNs + inferNs + outputNs),
    computeInputUsPerExecution: perExecution(inputNs),
    computeInferUsPerExecution: perExecution(inferNs),
    computeOutputUsPerExecution: perExecution(outputNs),
  };
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator > 0 ? numerator / denominator : null;
}

function zero(): DurationStat {
  return { count: 0, ns: 0 };
}

function add(total: DurationStat, stat: { count?: unknown; ns?: unknown } | undefined): void {
  total.count += num(stat?.count);
  total.ns += num(stat?.ns);
}

function num(value: unknown): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}


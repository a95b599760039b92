import type { FunctionConfig, WarmupSample } from "../config/mod.ts";
import type { DeclaredConfig } from "../config/mod.ts";
import type { ExecutionThread, Session } from "../backends/backend.ts";
import type { Tensor } from "../core/mod.ts";

/** `auto` runs a model on the event loop when one batch-1 execution costs less than this (µs). */
export const INLINE_THRESHOLD_US = 150;
/** …and its largest batch less than this (µs): one inline run is the longest HTTP ever waits. */
export const INLINE_MAX_BATCH_US = 1000;

/** `parameters.execution_thread` (validated by the config schema); `auto` when unset. */
export function executionThreadSetting(declared: DeclaredConfig): "auto" | ExecutionThread {
  return (declared.parameters.execution_thread?.string_value ?? "auto") as "auto" | ExecutionThread;
}

/**
 * Whether `auto` may put this deployment inline at all. Instances on the event loop cannot
 * overlap (one thread), while a user who asks for several instances asks for overlap; so `auto`
 * considers inline only for a deployment that has, and can scale to, one instance.
 */
export function inlineCandidate(instances: number, maxInstances: number | undefined): boolean {
  return instances === 1 && (maxInstances ?? 1) <= 1;
}

/** What `auto` measured on an in-process session: fastest µs per execution at batch 1 and at the largest batch. */
export interface InlineMeasurement {
  batch1Us: number;
  maxBatchUs?: number;
  maxBatch?: number;
}

/**
 * Times the in-process session on the probe feeds: one untimed run (first runs allocate), then
 * the fastest of five. The fastest, not the median: a run timed on the event loop includes the
 * turn ORT waits for, so a busy process only ever adds time, and the choice must not depend on
 * what else the server was doing at load. The largest batch is timed only when batch 1 is under the threshold (cheap),
 * so a large model blocks the loop for one or two runs at load, not ten.
 */
export async function measureInline(session: Session, config: FunctionConfig, feeds: (batch: number) => Record<string, Tensor>): Promise<InlineMeasurement> {
  const batch1Us = await fastestUs(session, () => feeds(1), 5);
  const result: InlineMeasurement = { batch1Us };
  if (batch1Us < INLINE_THRESHOLD_US && config.max_batch_size > 1) {
    result.maxBatch = config.max_batch_size;
    result.maxBatchUs = await fastestUs(session, () => feeds(config.max_batch_size), 3);
  }
  return result;
}

/** `auto`'s law: main when batch 1 is under INLINE_THRESHOLD_US and the largest batch under INLINE_MAX_BATCH_US. */
export function chooseThread(measured: InlineMeasurement): ExecutionThread {
  if (measured.batch1Us >= INLINE_THRESHOLD_US) return "worker";
  return (measured.maxBatchUs ?? 0) < INLINE_MAX_BATCH_US ? "main" : "worker";
}

/** The choice as effective-config parameters (GET /v2/models/{name}/config, metadata). */
export function threadParameters(setting: "auto" | ExecutionThread, thread: ExecutionThread, measured?: InlineMeasurement): FunctionConfig["parameters"] {
  const parameters: FunctionConfig["parameters"] = { execution_thread: { string_value: thread } };
  if (setting === "auto") parameters.execution_thread_requested = { string_value: "auto" };
  if (measured) {
    parameters.execution_thread_measured_us = { string_value: measured.batch1Us.toFixed(1) };
    if (measured.maxBatchUs !== undefined) {
      parameters.execution_thread_measured_max_batch_us = { string_value: measured.maxBatchUs.toFixed(1) };
    }
  }
  return parameters;
}

async function fastestUs(session: Session, feeds: () => Record<string, Tensor>, runs: number): Promise<number> {
  await session.run(feeds());
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const input = feeds();
    const start = performance.now();
    await session.run(input);
    times.push((performance.now() - start) * 1000);
  }
  return Math.min(...times);
}

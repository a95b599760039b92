import type { FunctionConfig } from "../config/mod.ts";
import type { DeclaredConfig } from "../config/mod.ts";
import type { ExecutionThread, Session } from "../backends/backend.ts";
import { fastestRun } from "../backends/fastest-run.ts";
import type { Tensor } from "../core/mod.ts";

/**
 * `auto` runs a model on the event loop when one batch-1 execution costs less than this (µs)…
 * On the 2-core reference machine `mlp` measures 0.2–0.5 ms at batch 1 and 2.1–3.7 ms at 64 when a
 * server starts (its copies timed across starts), and it serves far better inline: the bundled
 * `mlp` answered 1946 req/s at one binary client and 8210 at 32 with every copy inline, 1112 and
 * 4452 with every copy in a worker (bench/RESULTS.md as committed in 661c8c1 and 834a3aa). At
 * 500 µs / 4 ms that noise put it on either side from one start to the next;
 * 800 µs / 6 ms keep it inline with a margin of 1.6×, and `ocr_cls` (1.2 ms) and `resnet` (17 ms)
 * in workers, where HTTP runs while they compute.
 */
export const INLINE_THRESHOLD_US = 800;
/** …and its largest batch less than this (µs): one inline run is the longest HTTP ever waits. */
export const INLINE_MAX_BATCH_US = 6000;

/**
 * At a server's start, `auto` creates a model file up to this size on the event loop first (see
 * load-deployment.ts): the bundled models inline there measure 244 B (simple) to 12.6 MB (mlp), while
 * a 46 MB resnet computes 17 ms a run, and one created there first would only be created twice.
 */
export const MAIN_FIRST_MAX_BYTES = 16 * 2 ** 20;

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

/** Times `feeds` on a session: the fastest of `runs` executions in µs, after one untimed run. */
export type Timer = (feeds: Record<string, Tensor>, runs: number) => Promise<number>;

/**
 * What `auto` decides on: the fastest of two runs at batch 1 — of five when that is within four
 * times the threshold, of twenty when within twice, where the choice is close (a session's first
 * runs are slow while onnxruntime sizes its buffers: mlp's fastest of five read 170–700 µs, of
 * twenty 150–300) — and of five at the largest batch when batch 1 is under the threshold (five
 * more when that is within a factor of two of its own threshold). So a large model runs three
 * times at load (resnet's 17 ms runs are its first answer's wait when it loads on demand), a
 * cheap one some twenty to thirty. The fastest, not the median: noise only adds time.
 */
export async function measureInline(time: Timer, config: FunctionConfig, feeds: (batch: number) => Record<string, Tensor>): Promise<InlineMeasurement> {
  let batch1Us = await time(feeds(1), 2);
  if (batch1Us < 4 * INLINE_THRESHOLD_US) batch1Us = Math.min(batch1Us, await time(feeds(1), 3));
  if (batch1Us < 2 * INLINE_THRESHOLD_US) batch1Us = Math.min(batch1Us, await time(feeds(1), 15));
  const result: InlineMeasurement = { batch1Us };
  if (batch1Us < INLINE_THRESHOLD_US && config.max_batch_size > 1) {
    result.maxBatch = config.max_batch_size;
    result.maxBatchUs = await time(feeds(config.max_batch_size), 5);
    // Close to its threshold too (mlp's batch 64 reads 2–5 ms while a server starts): once more.
    if (Math.abs(Math.log2(result.maxBatchUs / INLINE_MAX_BATCH_US)) < 1) result.maxBatchUs = Math.min(result.maxBatchUs, await time(feeds(config.max_batch_size), 5));
  }
  return result;
}

/**
 * `auto`'s measurements, one memory per server, by the model's content and what its cost depends
 * on (`key`: shapes, batch size, session options — not the function's name or its batching). A
 * version woken from PARKED, a reload of the same file and a copy of a model under another name
 * all load onto the thread chosen the first time, reporting that measurement: timing again cost
 * the first response (six runs of resnet, about 100 ms, on every wake), and timing each copy of a
 * model placed some on one thread and some on the other by noise alone. Other bytes or another
 * key measure again.
 */
export class PlacementMemory {
  readonly #byBytes = new WeakMap<Uint8Array, Map<string, InlineMeasurement>>();
  readonly #byContent = new Map<string, InlineMeasurement>();
  /** Measurements under way, by content and key: copies loading together wait for the first. */
  readonly #measuring = new Map<string, Promise<InlineMeasurement | undefined>>();

  recall(bytes: Uint8Array, key: string): InlineMeasurement | undefined {
    return this.#byBytes.get(bytes)?.get(key) ?? this.#byContent.get(`${contentKey(bytes)} ${key}`);
  }

  remember(bytes: Uint8Array, key: string, measured: InlineMeasurement): void {
    const forBytes = this.#byBytes.get(bytes) ?? new Map<string, InlineMeasurement>();
    forBytes.set(key, measured);
    this.#byBytes.set(bytes, forBytes);
    this.#byContent.set(`${contentKey(bytes)} ${key}`, measured);
  }

  /**
   * What these bytes measure under `key`: remembered, or being measured by another load (a server
   * starting loads every copy of a model at once, and each would otherwise miss the memory and time
   * its own copy), or measured now by `measure` and remembered. A measurement that failed or found
   * nothing elsewhere does not stand for this one: it measures for itself.
   */
  async measureOnce(bytes: Uint8Array, key: string, measure: () => Promise<InlineMeasurement | undefined>): Promise<InlineMeasurement | undefined> {
    const known = this.recall(bytes, key);
    if (known) return known;
    const id = `${contentKey(bytes)} ${key}`;
    const pending = this.#measuring.get(id);
    const elsewhere = pending && (await pending.catch(() => undefined));
    if (elsewhere) return elsewhere;
    if (this.#measuring.has(id)) return this.measureOnce(bytes, key, measure); // a third copy started while this one waited
    const run = measure();
    this.#measuring.set(id, run);
    try {
      const measured = await run;
      if (measured) this.remember(bytes, key, measured);
      return measured;
    } finally {
      if (this.#measuring.get(id) === run) this.#measuring.delete(id);
    }
  }
}

/**
 * Length and an FNV-1a hash over every 61st byte: the same file gives the same key, in well under
 * a millisecond for a 100 MB model. Two different models agreeing on it would only share a
 * placement, never an answer.
 */
function contentKey(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i += 61) hash = Math.imul(hash ^ bytes[i]!, 0x01000193) >>> 0;
  return `${bytes.byteLength}:${hash.toString(16)}`;
}

/**
 * Times a session from the event loop, for sessions that cannot time themselves (no worker): a
 * busy loop inflates it, which `auto` then reads as a slow model — the safe side.
 */
export function timeFromHere(session: Session): Timer {
  return (feeds, runs) => fastestRun(() => session.run(feeds), runs);
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


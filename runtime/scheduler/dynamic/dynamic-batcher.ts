import { RuntimeError } from "../../core/mod.ts";
import type { Clock } from "../../core/mod.ts";
import { concatBatch, splitBatch } from "../../tensor/mod.ts";
import type { ModelInstance, ScheduledRequest, ScheduledResult, Scheduler } from "../scheduler.ts";

export interface DynamicBatcherOptions {
  instances: readonly ModelInstance[];
  /** Most rows in one execution; 1 = no batching (each request runs alone, whatever its own batch). */
  maxBatchSize: number;
  /** Sizes that dispatch at once when formed. */
  preferredBatchSizes?: readonly number[];
  /** How long the oldest request may wait for a fuller batch. 0 = dispatch what is there. */
  maxQueueDelayMs?: number;
  clock: Clock;
}

interface Pending {
  request: ScheduledRequest;
  enqueuedAt: number;
  resolve(result: ScheduledResult): void;
  reject(error: unknown): void;
  detach(): void;
}

/**
 * Triton's dynamic batcher. Policy: whenever an instance is free, take the oldest request and
 * every following request with the same shape key while the rows fit in `maxBatchSize` (a batch
 * always holds at least the oldest request, even when its own batch is larger — it was validated
 * against the model's limit already). Dispatch when the batch is full or a preferred size, when
 * the oldest request has waited `maxQueueDelayMs`, or at once when the delay is 0. The first
 * request with a different shape ends the batch, so arrival order is never overtaken.
 */
export class DynamicBatcher implements Scheduler {
  #queue: Pending[] = [];
  #free: ModelInstance[];
  #running = 0;
  #timer: unknown;
  #stopping = false;
  #drained: (() => void)[] = [];
  readonly #options: DynamicBatcherOptions;

  constructor(options: DynamicBatcherOptions) {
    if (options.instances.length === 0) throw new Error("a batcher needs at least one instance");
    this.#options = options;
    this.#free = [...options.instances];
  }

  enqueue(request: ScheduledRequest, options: { signal?: AbortSignal } = {}): Promise<ScheduledResult> {
    if (this.#stopping) return Promise.reject(new RuntimeError("UNAVAILABLE", "the model is being unloaded"));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(cancelled());
    return new Promise<ScheduledResult>((resolve, reject) => {
      const onAbort = () => {
        const i = this.#queue.indexOf(pending);
        if (i < 0) return; // already dispatched: the execution finishes, its result is dropped
        this.#queue.splice(i, 1);
        reject(cancelled());
        this.#settle();
      };
      const pending: Pending = {
        request,
        enqueuedAt: this.#options.clock.now(),
        resolve,
        reject,
        detach: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(pending);
      this.#pump();
    });
  }

  inflight(): number {
    return this.#queue.length + this.#running;
  }

  stop(): Promise<void> {
    this.#stopping = true;
    if (this.inflight() === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  #pump(): void {
    const { clock, maxQueueDelayMs = 0 } = this.#options;
    if (this.#timer !== undefined) {
      clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    while (this.#free.length > 0 && this.#queue.length > 0) {
      const count = this.#formBatch();
      if (count === 0) {
        const waited = clock.now() - this.#queue[0]!.enqueuedAt;
        this.#timer = clock.setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, Math.max(0, maxQueueDelayMs - waited));
        return;
      }
      this.#dispatch(count);
    }
  }

  /** How many queued requests (from the head) form the next batch now; 0 = wait for more. */
  #formBatch(): number {
    const { maxBatchSize, preferredBatchSizes = [], maxQueueDelayMs = 0, clock } = this.#options;
    const count = this.#formable();
    const rows = this.#rows(count);
    if (rows >= maxBatchSize || preferredBatchSizes.includes(rows) || maxQueueDelayMs <= 0) return count;
    if (count < this.#queue.length) return count; // the next request cannot join: waiting gains nothing
    const waited = clock.now() - this.#queue[0]!.enqueuedAt;
    return waited >= maxQueueDelayMs ? count : 0;
  }

  /** Length of the longest head run that shares the oldest request's shape and fits the limit. */
  #formable(): number {
    const head = this.#queue[0]!;
    let rows = head.request.batchSize;
    let count = 1;
    while (count < this.#queue.length) {
      const next = this.#queue[count]!.request;
      if (next.shapeKey !== head.request.shapeKey || rows + next.batchSize > this.#options.maxBatchSize) break;
      rows += next.batchSize;
      count++;
    }
    return count;
  }

  #rows(count: number): number {
    let rows = 0;
    for (let i = 0; i < count; i++) rows += this.#queue[i]!.request.batchSize;
    return rows;
  }

  #dispatch(count: number): void {
    const instance = this.#free.pop()!;
    const batch = this.#queue.splice(0, count);
    for (const p of batch) p.detach();
    this.#running++;
    void this.#execute(instance, batch);
  }

  async #execute(instance: ModelInstance, batch: Pending[]): Promise<void> {
    try {
      await runBatch(instance, batch);
    } catch (error) {
      // One request's content can fail a whole execution (a string a Cast cannot parse): rerun
      // each alone so only the culprit fails and the others still get their answers.
      if (batch.length === 1) batch[0]!.reject(asRuntimeError(error));
      else for (const p of batch) await runBatch(instance, [p]).catch((e) => p.reject(asRuntimeError(e)));
    } finally {
      this.#running--;
      this.#free.push(instance);
      this.#pump();
      this.#settle();
    }
  }

  #settle(): void {
    if (this.#stopping && this.inflight() === 0) for (const resolve of this.#drained.splice(0)) resolve();
  }
}

/** Runs the requests as one execution and resolves each with its slice of the outputs. */
async function runBatch(instance: ModelInstance, batch: Pending[]): Promise<void> {
  const feeds: ScheduledRequest["feeds"] = {};
  for (const name of Object.keys(batch[0]!.request.feeds)) {
    feeds[name] = concatBatch(batch.map((p) => p.request.feeds[name]!));
  }
  const outputs = await instance.run(feeds);
  const sizes = batch.map((p) => p.request.batchSize);
  const perRequest = batch.map((): ScheduledResult => ({}));
  for (const [name, tensor] of Object.entries(outputs)) {
    splitBatch(tensor, sizes).forEach((part, i) => (perRequest[i]![name] = part));
  }
  batch.forEach((p, i) => p.resolve(perRequest[i]!));
}

function asRuntimeError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError("INTERNAL", `inference failed: ${(error as Error)?.message ?? error}`, { cause: error });
}

function cancelled(): RuntimeError {
  return new RuntimeError("CANCELLED", "the request was cancelled before it ran");
}

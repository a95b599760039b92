import { RuntimeError } from "../../core/mod.ts";
import type { Clock } from "../../core/mod.ts";
import { batchOf, splitBatch } from "../../tensor/mod.ts";
import type { DispatchReason, SchedulerObserver } from "../scheduler-observer.ts";
import type { ModelInstance, ScheduledRequest, ScheduledResult } from "../scheduler.ts";
import type { CostModel } from "./cost-model.ts";

/** One request's outcome in an execution. */
export type Outcome = { ok: true; value: ScheduledResult } | { ok: false; error: RuntimeError };

/** A request as the executor runs it: what it computes, and where its client signal is read from (handlers only). */
export interface ExecutedRequest {
  request: ScheduledRequest;
  source?: { readonly signal?: AbortSignal };
}

/**
 * Runs a formed batch on an instance: assembles the requests' inputs into one batch, runs it,
 * splits the outputs back per request, and re-runs each request alone when a shared execution
 * fails, so only a request whose content broke the batch fails. Reports every execution to the
 * observer and, with a latency target, teaches the cost model what it cost.
 */
export class BatchExecutor {
  readonly #clock: Clock;
  readonly #observer?: SchedulerObserver;
  readonly #cost?: CostModel;
  readonly #requestSignals: boolean;
  /** Smoothed wait of an execution for its turn before it computes (ms), where the instance tells it apart. */
  #turnMs?: number;
  readonly #ids = new WeakMap<ModelInstance, number>();
  #nextId = 1;

  constructor(options: { clock: Clock; observer?: SchedulerObserver; cost?: CostModel; requestSignals?: boolean }) {
    this.#clock = options.clock;
    this.#observer = options.observer;
    this.#cost = options.cost;
    this.#requestSignals = options.requestSignals ?? false;
  }

  get turnMs(): number | undefined {
    return this.#turnMs;
  }

  /**
   * Runs the requests as one execution. If it fails and held several requests, each is re-run
   * alone, so only a request whose content broke the batch fails.
   */
  async run(instance: ModelInstance, items: readonly ExecutedRequest[], reason: DispatchReason): Promise<Outcome[]> {
    const requests = items.map((i) => i.request);
    try {
      const signals = this.#requestSignals ? items.map((i) => i.source?.signal) : undefined;
      return (await this.#runOnce(instance, requests, reason, signals)).map((value) => ({ ok: true, value }));
    } catch (error) {
      const failed = asRuntimeError(error);
      // A call cut off by its deadline says nothing about one request's content: re-running each
      // alone would only wait the deadline out again, once per request.
      if (requests.length === 1 || failed.code === "DEADLINE_EXCEEDED") return requests.map(() => ({ ok: false, error: failed }));
      const outcomes: Outcome[] = [];
      for (const item of items) outcomes.push(...(await this.run(instance, [item], "retry")));
      return outcomes;
    }
  }

  async #runOnce(instance: ModelInstance, requests: ScheduledRequest[], reason: DispatchReason, signals?: (AbortSignal | undefined)[]): Promise<ScheduledResult[]> {
    const clock = this.#clock;
    const t0 = clock.now();
    const feeds: ScheduledRequest["feeds"] = {};
    for (const name of Object.keys(requests[0]!.feeds)) feeds[name] = batchOf(requests.map((r) => r.feeds[name]!));
    const t1 = clock.now();
    const wanted = neededOutputs(requests);
    // An event-loop session's run first waits for its turn of the loop: the statistics and the
    // cost model weigh what the execution costs, not that wait.
    let ownMs: number | undefined;
    const computed = (ms: number) => void (ownMs = ms);
    const outputs = await instance.run(feeds, { requestSignals: signals, outputs: wanted, computed });
    const t2 = clock.now();
    const sizes = requests.map((r) => r.batchSize);
    const results = requests.map((): ScheduledResult => ({}));
    for (const [name, tensor] of Object.entries(outputs)) {
      splitBatch(tensor, sizes).forEach((part, i) => (results[i]![name] = part));
    }
    const t3 = clock.now();
    const rows = sizes.reduce((a, b) => a + b, 0);
    const waitMs = ownMs === undefined ? 0 : Math.max(0, t2 - t1 - ownMs);
    if (this.#cost) {
      this.#cost.observe(rows, t3 - t0 - waitMs);
      if (ownMs !== undefined) this.#turnMs = this.#turnMs === undefined ? waitMs : this.#turnMs + (waitMs - this.#turnMs) / 8;
    }
    this.#observer?.executed({ reason, rows, requests: requests.length, inputMs: t1 - t0, inferMs: t2 - t1 - waitMs, waitMs, outputMs: t3 - t2, startMs: t0, instance: this.#instanceId(instance) });
    return results;
  }

  #instanceId(instance: ModelInstance): number {
    let id = this.#ids.get(instance);
    if (id === undefined) this.#ids.set(instance, (id = this.#nextId++));
    return id;
  }
}

/** The outputs an execution must fetch: every one if any request needs all, else the union of theirs. */
function neededOutputs(requests: readonly ScheduledRequest[]): readonly string[] | undefined {
  const first = requests[0]!.outputs;
  if (!first) return undefined;
  if (requests.length === 1) return first;
  const union = new Set(first);
  for (let i = 1; i < requests.length; i++) {
    const outputs = requests[i]!.outputs;
    if (!outputs) return undefined;
    for (const name of outputs) union.add(name);
  }
  return [...union];
}

function asRuntimeError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError("INTERNAL", `inference failed: ${(error as Error)?.message ?? error}`, { cause: error });
}

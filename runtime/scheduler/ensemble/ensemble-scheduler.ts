import { RuntimeError } from "../../core/mod.ts";
import type { Tensor } from "../../core/mod.ts";
import { conditionTensors, evaluateCondition, parseCondition } from "../../config/mod.ts";
import type { Condition, EnsembleStep } from "../../config/mod.ts";
import type { SchedulerObserver } from "../scheduler-observer.ts";
import type { ScheduledRequest, ScheduledResult, Scheduler } from "../scheduler.ts";

/**
 * Runs one step's function by tensors (through that function's own queue and batcher); with
 * `outputs`, only those are asked for (its answer may hold more).
 */
export type StepDispatch = (name: string, version: string | undefined, inputs: Record<string, Tensor>, signal: AbortSignal, outputs?: readonly string[]) => Promise<Record<string, Tensor>>;

export interface EnsembleSchedulerOptions {
  /** The ensemble's name, for errors. */
  name: string;
  steps: readonly EnsembleStep[];
  /** The ensemble's outputs, by tensor name. */
  outputs: readonly string[];
  dispatch: StepDispatch;
  observer?: SchedulerObserver;
}

/**
 * Triton's ensemble scheduler, as dataflow: a step is dispatched as soon as every tensor it reads
 * exists, so independent steps run concurrently, and the request is answered once every ensemble
 * output is produced. Each step is an ordinary request to its function, so that function's
 * batcher batches it with every other pipeline's; tensors pass between steps as they are (no
 * copy, no encoding). It holds nothing itself: no queue, no instances. The first step that fails
 * fails the request (the others are told through their signal) with an error naming the step.
 */
export class EnsembleScheduler implements Scheduler {
  readonly #options: EnsembleSchedulerOptions;
  #inflight = 0;
  #stopping = false;
  #drained: (() => void)[] = [];

  /** Each step's parsed condition (undefined: always runs). */
  readonly #conditions: (Condition | undefined)[];
  /** Each step's reads: its mapped inputs and what its condition looks at. */
  readonly #reads: string[][];

  constructor(options: EnsembleSchedulerOptions) {
    this.#options = options;
    this.#conditions = options.steps.map((s) => (s.condition === undefined ? undefined : parseCondition(s.condition)));
    this.#reads = options.steps.map((s, i) => [...Object.values(s.input_map), ...(this.#conditions[i] ? conditionTensors(this.#conditions[i]!) : [])]);
  }

  get queued(): number {
    return 0; // ensembles hold nothing: their steps queue in their own functions
  }

  hasRoom(): boolean {
    return !this.#stopping;
  }

  inflight(): number {
    return this.#inflight;
  }

  async enqueue(request: ScheduledRequest, options: { signal?: AbortSignal } = {}): Promise<ScheduledResult> {
    if (this.#stopping) throw new RuntimeError("UNAVAILABLE", "the model is being unloaded");
    this.#inflight++;
    this.#options.observer?.dequeued(0, 0);
    try {
      return await this.#run(request.feeds, request.parameters ?? {}, options.signal);
    } finally {
      this.#inflight--;
      if (this.#stopping && this.#inflight === 0) for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  stop(): Promise<void> {
    this.#stopping = true;
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  async #run(feeds: Record<string, Tensor>, parameters: Readonly<Record<string, string | number | boolean>>, signal: AbortSignal | undefined): Promise<ScheduledResult> {
    const { steps, outputs, name } = this.#options;
    const tensors = new Map<string, Tensor>(Object.entries(feeds));
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const started = new Set<number>();
    const running = new Set<Promise<void>>();
    let failure: unknown;
    try {
      for (;;) {
        steps.forEach((step, i) => {
          if (started.has(i) || failure !== undefined || !this.#reads[i]!.every((t) => tensors.has(t))) return;
          started.add(i);
          const condition = this.#conditions[i];
          // A step whose condition does not hold is skipped: its outputs never exist, so the steps that need them never run.
          if (condition && !evaluateCondition(condition, { tensor: (name) => elements(tensors.get(name)!), param: (name) => parameters[name] })) return;
          const run: Promise<void> = this.#step(i, step, tensors, controller.signal)
            .catch((error) => {
              if (failure === undefined) failure = error;
              controller.abort(error);
            })
            .finally(() => running.delete(run));
          running.add(run);
        });
        if (running.size === 0) break;
        await Promise.race(running);
        // Answer the failure now; the steps still running learn it from their signal, and their results go nowhere.
        if (failure !== undefined) break;
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    if (failure !== undefined) throw failure;
    // Outputs whose producers a condition skipped are left out (an early exit); without conditions every one is produced.
    const result: ScheduledResult = {};
    for (const output of outputs) {
      const tensor = tensors.get(output);
      if (tensor) result[output] = tensor;
      else if (this.#conditions.every((c) => c === undefined)) throw new RuntimeError("INTERNAL", `ensemble '${name}': no step produced output '${output}'`);
    }
    return result;
  }

  async #step(i: number, step: EnsembleStep, tensors: Map<string, Tensor>, signal: AbortSignal): Promise<void> {
    const inputs: Record<string, Tensor> = {};
    for (const [input, tensor] of Object.entries(step.input_map)) inputs[input] = tensors.get(tensor)!;
    const version = step.model_version >= 0 ? String(step.model_version) : undefined;
    const where = `ensemble '${this.#options.name}' step ${i} ('${step.model_name}')`;
    let out: Record<string, Tensor>;
    try {
      // Only the outputs the ensemble maps: as Triton's ensembles request them, so the step's model copies out no others.
      out = await this.#options.dispatch(step.model_name, version, inputs, signal, Object.keys(step.output_map));
    } catch (error) {
      if (error instanceof RuntimeError) throw new RuntimeError(error.code, `${where}: ${error.message}`, { cause: error, status: error.status, retryAfterMs: error.retryAfterMs });
      throw new RuntimeError("INTERNAL", `${where}: ${(error as Error)?.message ?? error}`, { cause: error });
    }
    for (const [output, tensor] of Object.entries(step.output_map)) {
      const value = out[output];
      if (!value) throw new RuntimeError("INTERNAL", `${where} gave no output '${output}'`);
      tensors.set(tensor, value);
    }
  }
}

const text = new TextDecoder();

/** A tensor's elements as a condition reads them: numbers (64-bit ones rounded), BYTES as text. */
function elements(tensor: Tensor): (number | string)[] {
  const data = tensor.data as ArrayLike<number | bigint> | Uint8Array[];
  if (Array.isArray(data)) return (data as Uint8Array[]).map((e) => text.decode(e));
  return Array.from(data as ArrayLike<number | bigint>, (x) => Number(x));
}

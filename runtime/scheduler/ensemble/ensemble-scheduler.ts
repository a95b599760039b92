import { Drain } from "../queue/drain.ts";
import { RuntimeError } from "../../core/mod.ts";
import type { Tensor } from "../../core/mod.ts";
import { conditionTensors, ENSEMBLE_OUTPUT_FLOOR, evaluateCondition, LIMIT_FLAGS, parseCondition, reduceTensor } from "../../config/mod.ts";
import type { Condition, EnsembleStep, TensorFn } from "../../config/mod.ts";
import { tensorByteLength } from "../../tensor/mod.ts";
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
  /**
   * How many times its request's input bytes an answer's outputs may hold, never less than
   * ENSEMBLE_OUTPUT_FLOOR (a step may fan one input out to many outputs); past it the request
   * fails at once with 413 naming `--max-ensemble-output-ratio`. Absent: no limit.
   */
  outputRatio?: number;
}

/**
 * Triton's ensemble scheduler, as dataflow: a step is dispatched as soon as every tensor it reads
 * exists, so independent steps run concurrently, and the request is answered once every ensemble
 * output is produced. Each step is an ordinary request to its function, so that function's
 * batcher batches it with every other pipeline's; tensors pass between steps as they are (no
 * copy, no encoding). It holds nothing itself: no queue, no instances. The first step that fails
 * fails the request (the others are told through their signal) with an error naming the step.
 * A request costs time linear in its steps and the tensors they read: each step counts the tensors
 * it still waits for, and a tensor's arrival wakes only its readers (no rescans); each reduction a
 * condition reads (`max(T)`…) is computed once per request, however many conditions read it.
 */
export class EnsembleScheduler implements Scheduler {
  readonly #options: EnsembleSchedulerOptions;
  #inflight = 0;
  readonly #drain = new Drain();

  /** Each step's parsed condition (undefined: always runs). */
  readonly #conditions: (Condition | undefined)[];
  /** How many distinct tensors each step reads: its mapped inputs and what its condition looks at. */
  readonly #waitsFor: number[];
  /** The steps that read each tensor (each step once per tensor). */
  readonly #readers = new Map<string, number[]>();
  readonly #outputs: Set<string>;
  readonly #anyCondition: boolean;

  constructor(options: EnsembleSchedulerOptions) {
    this.#options = options;
    this.#conditions = options.steps.map((s) => (s.condition === undefined ? undefined : parseCondition(s.condition)));
    this.#waitsFor = options.steps.map((s, i) => {
      const reads = new Set([...Object.values(s.input_map), ...(this.#conditions[i] ? conditionTensors(this.#conditions[i]!) : [])]);
      for (const tensor of reads) {
        const readers = this.#readers.get(tensor);
        if (readers) readers.push(i);
        else this.#readers.set(tensor, [i]);
      }
      return reads.size;
    });
    this.#outputs = new Set(options.outputs);
    this.#anyCondition = this.#conditions.some((c) => c !== undefined);
  }

  get queued(): number {
    return 0; // ensembles hold nothing: their steps queue in their own functions
  }

  hasRoom(): boolean {
    return !this.#drain.stopping;
  }

  inflight(): number {
    return this.#inflight;
  }

  async enqueue(request: ScheduledRequest, options: { signal?: AbortSignal } = {}): Promise<ScheduledResult> {
    if (this.#drain.stopping) throw new RuntimeError("UNAVAILABLE", "the model is being unloaded");
    this.#inflight++;
    this.#options.observer?.dequeued(0, 0);
    try {
      return await this.#run(request.feeds, request.parameters ?? {}, options.signal);
    } finally {
      this.#inflight--;
      this.#drain.settled(this.#inflight);
    }
  }

  stop(): Promise<void> {
    return this.#drain.stop(this.#inflight);
  }

  #run(feeds: Record<string, Tensor>, parameters: Readonly<Record<string, string | number | boolean>>, signal: AbortSignal | undefined): Promise<ScheduledResult> {
    const { steps, outputs, name } = this.#options;
    const tensors = new Map<string, Tensor>();
    const waiting = this.#waitsFor.slice();
    const ready: number[] = [];
    let head = 0;
    // A tensor exists: each step that reads it waits for one fewer; those that wait for none are ready.
    const arrive = (tensor: string, value: Tensor) => {
      tensors.set(tensor, value);
      for (const i of this.#readers.get(tensor) ?? []) if (--waiting[i]! === 0) ready.push(i);
    };
    let inputBytes = 0;
    for (const [tensor, value] of Object.entries(feeds)) {
      inputBytes += tensorByteLength(value);
      arrive(tensor, value);
    }
    const ratio = this.#options.outputRatio;
    const cap = ratio === undefined ? Infinity : Math.max(ENSEMBLE_OUTPUT_FLOOR, ratio * inputBytes);
    let outputBytes = 0;
    // Each (reduction, tensor) a condition reads, once per request.
    const reduced = new Map<string, ReturnType<typeof reduceTensor>>();
    const inputs = {
      tensor: (tensor: string, fn: TensorFn) => {
        const key = `${fn}\u0000${tensor}`;
        if (!reduced.has(key)) reduced.set(key, reduceTensor(tensors.get(tensor)!, fn));
        return reduced.get(key);
      },
      param: (param: string) => parameters[param],
    };
    const controller = new AbortController();
    return new Promise<ScheduledResult>((resolve, reject) => {
      let running = 0;
      let failure: unknown;
      let settled = false;
      const onAbort = () => controller.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const settle = () => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        if (failure !== undefined) return reject(failure);
        try {
          resolve(this.#answer(tensors, name, outputs));
        } catch (error) {
          reject(error);
        }
      };
      const fail = (error: unknown) => {
        if (failure === undefined) failure = error;
        // Answer the failure now; the steps still running learn it from their signal, and their results go nowhere.
        controller.abort(error);
        settle();
      };
      const pump = () => {
        while (failure === undefined && head < ready.length) {
          const i = ready[head++]!;
          const condition = this.#conditions[i];
          // A step whose condition does not hold is skipped: its outputs never exist, so the steps that need them never run.
          if (condition && !evaluateCondition(condition, inputs)) continue;
          running++;
          this.#step(i, steps[i]!, tensors, controller.signal).then(
            (produced) => {
              running--;
              if (settled) return;
              for (const [tensor, value] of produced) {
                if (this.#outputs.has(tensor) && (outputBytes += tensorByteLength(value)) > cap) {
                  const why = cap === ENSEMBLE_OUTPUT_FLOOR ? `the least any answer may hold; ${ratio}× its ${inputBytes} input bytes is less (${LIMIT_FLAGS.ensembleOutputRatio})` : `${ratio}× its ${inputBytes} input bytes, ${LIMIT_FLAGS.ensembleOutputRatio}`;
                  return fail(new RuntimeError("RESOURCE_EXHAUSTED", `ensemble '${name}': its outputs come to more than ${cap} bytes (${why}); step ${i} ('${steps[i]!.model_name}') passed it`));
                }
                arrive(tensor, value);
              }
              pump();
            },
            (error) => {
              running--;
              fail(error);
            },
          );
        }
        if (running === 0) settle();
      };
      pump();
    });
  }

  /** The answer: every ensemble output produced; those whose producers a condition skipped are left out (an early exit). */
  #answer(tensors: Map<string, Tensor>, name: string, outputs: readonly string[]): ScheduledResult {
    const result: ScheduledResult = {};
    for (const output of outputs) {
      const tensor = tensors.get(output);
      if (tensor) result[output] = tensor;
      else if (!this.#anyCondition) throw new RuntimeError("INTERNAL", `ensemble '${name}': no step produced output '${output}'`);
    }
    return result;
  }

  /** Runs step `i`; resolves with the ensemble tensors it produced. */
  async #step(i: number, step: EnsembleStep, tensors: Map<string, Tensor>, signal: AbortSignal): Promise<[string, Tensor][]> {
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
    const produced: [string, Tensor][] = [];
    for (const [output, tensor] of Object.entries(step.output_map)) {
      const value = out[output];
      if (!value) throw new RuntimeError("INTERNAL", `${where} gave no output '${output}'`);
      produced.push([tensor, value]);
    }
    return produced;
  }
}

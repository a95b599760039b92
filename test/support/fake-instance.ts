import type { ModelInstance, RunOptions } from "../../runtime/scheduler/mod.ts";
import type { Tensor } from "../../runtime/mod.ts";

/**
 * A model instance for scheduler tests: doubles input `x`, records each execution's values, and
 * (with `manual`) finishes only when the test calls `finish()`. No model, no onnxruntime.
 */
export class FakeInstance implements ModelInstance {
  readonly executions: number[][] = [];
  /** Each execution's `outputs` option (undefined: all). */
  readonly fetched: (readonly string[] | undefined)[] = [];
  readonly #manual: boolean;
  readonly #failOn?: number;
  #pending: (() => void)[] = [];

  constructor(options: { manual?: boolean; failOn?: number } = {}) {
    this.#manual = options.manual ?? false;
    this.#failOn = options.failOn;
  }

  get busy(): number {
    return this.#pending.length;
  }

  run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<Record<string, Tensor>> {
    const x = feeds.x!.data as Float32Array;
    this.executions.push([...x]);
    this.fetched.push(options?.outputs);
    if (this.#failOn !== undefined && x.includes(this.#failOn)) return Promise.reject(new Error(`cannot process ${this.#failOn}`));
    const result = { y: { datatype: "FP32" as const, shape: [...feeds.x!.shape], data: x.map((v) => v * 2) } };
    if (!this.#manual) return Promise.resolve(result);
    return new Promise((resolve) => this.#pending.push(() => resolve(result)));
  }

  /** Completes the oldest running execution (or all of them). */
  finish(all = false): void {
    const n = all ? this.#pending.length : Math.min(1, this.#pending.length);
    for (const done of this.#pending.splice(0, n)) done();
  }
}

/** A request of `rows` rows whose every value is `value`. */
export function fakeRequest(value: number, options: { rows?: number; shapeKey?: string; priority?: number; timeoutMs?: number; outputs?: readonly string[] } = {}) {
  const rows = options.rows ?? 1;
  return {
    outputs: options.outputs,
    feeds: { x: { datatype: "FP32" as const, shape: [rows, 1], data: new Float32Array(rows).fill(value) } },
    batchSize: rows,
    shapeKey: options.shapeKey ?? "x:1",
    priority: options.priority,
    timeoutMs: options.timeoutMs,
  };
}

/** Lets promise callbacks and the scheduler's reactions run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

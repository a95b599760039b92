import type { InferOutput, InferRequest, Tensor } from "../core/mod.ts";
import type { RolloutShadow } from "../config/mod.ts";
import { copyTensor, tensorByteLength } from "../tensor/mod.ts";

/**
 * Bytes the copies waiting or running may hold at once, whatever `max_pending` allows: 64 copies of
 * a 64 MiB request would otherwise keep 4 GiB for a version that answers no one.
 */
export const SHADOW_MAX_BYTES = 256 * 2 ** 20;

/** One output's agreement between what the client was answered and the shadow's answer. */
export interface OutputComparison {
  output: string;
  /** Compared answers (those whose output had the same shape on both sides). */
  compared: number;
  /** Answers whose output had another shape or datatype on the shadow. */
  mismatched: number;
  /** The largest |shadow − answered| over every element so far (numeric outputs). */
  maxAbsDiff: number;
  /** Rows whose argmax agreed, and rows compared (numeric outputs with more than one class). */
  argmaxAgreed: number;
  argmaxRows: number;
}

/** A request's copy for the shadow, the answer it is compared with, and what cancels it. */
export interface ShadowCopy {
  request: InferRequest;
  answered: Map<string, Tensor>;
  signal: AbortSignal;
  /** What it holds, inputs and answer: counted against SHADOW_MAX_BYTES until it settles. */
  bytes: number;
}

export interface ShadowFigures {
  version: number;
  /** Copies sent, by what became of them. */
  compared: number;
  failed: number;
  dropped: number;
  outputs: OutputComparison[];
}

/**
 * A rollout's shadow: `percent` of the requests answered (spread exactly, as a canary's share)
 * get a copy sent to `version` afterwards, never more than `max_pending` at once (a copy beyond
 * is dropped and counted), and its answer compared with what the client was answered. The copy
 * owns its inputs and the answer it is compared with: the request's own may be views of buffers
 * the server reuses once the client is answered.
 */
export class Shadow {
  readonly version: number;
  readonly percent: number;
  readonly #maxPending: number;
  #credit = 0;
  #pending = 0;
  #pendingBytes = 0;
  #compared = 0;
  #failed = 0;
  #dropped = 0;
  readonly #outputs = new Map<string, OutputComparison>();
  /** Aborts every copy queued or running: a shadow never holds up a shutdown, an unload or a reload. */
  #stop = new AbortController();

  constructor(config: RolloutShadow) {
    this.version = config.version;
    this.percent = config.percent;
    this.#maxPending = config.max_pending;
  }

  /**
   * A copy of the request and its answer to run on the shadow, where this request is one the share
   * takes and there is room; undefined otherwise. The caller runs it, then calls `settle`.
   */
  take(request: InferRequest, outputs: readonly InferOutput[]): ShadowCopy | undefined {
    // A sequence's request alone means nothing to a version that did not see its start.
    const sequence = request.parameters?.sequence_id;
    if (sequence !== undefined && sequence !== 0 && sequence !== "") return undefined;
    this.#credit += this.percent;
    if (this.#credit < 100) return undefined;
    this.#credit -= 100;
    let bytes = 0;
    for (const t of [...request.inputs, ...outputs]) bytes += tensorByteLength(t.tensor);
    if (this.#pending >= this.#maxPending || this.#pendingBytes + bytes > SHADOW_MAX_BYTES) return void this.#dropped++;
    this.#pending++;
    this.#pendingBytes += bytes;
    const copy: InferRequest = { ...request, inputs: request.inputs.map((i) => ({ name: i.name, tensor: copyTensor(i.tensor) })) };
    return { request: copy, answered: new Map(outputs.map((o) => [o.name, copyTensor(o.tensor)])), signal: this.#stop.signal, bytes };
  }

  /** Cancels the copies queued or running (their outcome is not counted); later ones run as before. */
  stop(): void {
    this.#stop.abort();
    this.#stop = new AbortController();
  }

  /** The shadow's answer (or its failure) to a copy `take` gave. */
  settle(copy: ShadowCopy, shadow: readonly InferOutput[] | Error): void {
    this.#pending--;
    this.#pendingBytes -= copy.bytes;
    if (copy.signal.aborted) return;
    if (shadow instanceof Error) return void this.#failed++;
    this.#compared++;
    for (const o of shadow) {
      const mine = copy.answered.get(o.name);
      if (mine) this.#compare(o.name, mine, o.tensor);
    }
  }

  get figures(): ShadowFigures {
    return { version: this.version, compared: this.#compared, failed: this.#failed, dropped: this.#dropped, outputs: [...this.#outputs.values()].map((o) => ({ ...o })) };
  }

  #compare(name: string, answered: Tensor, shadow: Tensor): void {
    let c = this.#outputs.get(name);
    if (!c) this.#outputs.set(name, (c = { output: name, compared: 0, mismatched: 0, maxAbsDiff: 0, argmaxAgreed: 0, argmaxRows: 0 }));
    const same = answered.datatype === shadow.datatype && answered.shape.length === shadow.shape.length && answered.shape.every((d, i) => d === shadow.shape[i]);
    if (!same) return void c.mismatched++;
    c.compared++;
    const a = answered.data;
    const b = shadow.data;
    if (Array.isArray(a) || Array.isArray(b) || answered.datatype === "FP16" || answered.datatype === "BF16") return;
    let max = c.maxAbsDiff;
    for (let i = 0; i < a.length; i++) {
      const d = Math.abs(Number(a[i]!) - Number(b[i]!));
      if (d > max || Number.isNaN(d)) max = Number.isNaN(d) ? Infinity : d;
    }
    c.maxAbsDiff = max;
    // Rows along the last dimension: a classifier's scores per batch entry.
    const classes = answered.shape.at(-1) ?? 1;
    if (classes < 2) return;
    for (let row = 0; row + classes <= a.length; row += classes) {
      c.argmaxRows++;
      if (argmax(a, row, classes) === argmax(b, row, classes)) c.argmaxAgreed++;
    }
  }
}

function argmax(data: ArrayLike<number | bigint>, from: number, n: number): number {
  let best = 0;
  for (let i = 1; i < n; i++) if (data[from + i]! > data[from + best]!) best = i;
  return best;
}

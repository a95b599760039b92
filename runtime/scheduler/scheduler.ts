import type { Tensor } from "../core/mod.ts";

/**
 * One request as a scheduler sees it: inputs already validated and shaped for the model.
 * Requests share a batch only when their `shapeKey`s are equal.
 */
export interface ScheduledRequest {
  feeds: Record<string, Tensor>;
  /** Rows along dimension 0 (1 for a model without a batch dimension). */
  batchSize: number;
  shapeKey: string;
  /** Request `parameters.priority`: 0 or absent = the default level; 1 = most important. */
  priority?: number;
  /** Request `parameters.timeout` in milliseconds; applies only where the level allows overrides. */
  timeoutMs?: number;
  /** The request's parameters, for schedulers that read them (an ensemble step's condition). */
  parameters?: Readonly<Record<string, string | number | boolean>>;
  /**
   * The outputs the request needs, when fewer than the model's: an execution computes only those
   * its requests need (ORT copies out only the outputs fetched). Undefined: every output.
   */
  outputs?: readonly string[];
}

/** Model outputs for one request, sliced from its batch. */
export type ScheduledResult = Record<string, Tensor>;

/**
 * Turns queued requests into executions: the dynamic batcher (on instances) and the ensemble
 * scheduler (on other functions) so far; sequence and continuous schedulers will implement the same
 * methods. test/contract/scheduler-contract.ts holds the contracts: the basic one every scheduler
 * passes, and the batching and instance ones for schedulers with instances.
 */
export interface Scheduler {
  /** Queues a request; rejects with CANCELLED if `signal` aborts before it is dispatched. */
  enqueue(request: ScheduledRequest, options?: { signal?: AbortSignal }): Promise<ScheduledResult>;
  /**
   * Present on a scheduler whose requests may yield several responses (a decoupled model, token
   * generation): queues the request and yields its responses in order, then ends; throws as
   * `enqueue` rejects. `signal` aborting (client gone, deadline, unload) must stop the producer,
   * and so must the consumer's `return()`. Absent: one response, from `enqueue` — read a request's
   * responses through `responses()` (responses.ts), which handles both.
   */
  stream?(request: ScheduledRequest, options: { signal: AbortSignal }): AsyncIterable<ScheduledResult>;
  /**
   * Whether `enqueue` would find room now, so the HTTP layer can refuse a request with 503 before
   * reading its body. Without `priority` (the body is unread, so it is unknown): whether any level
   * has room. A cheap hint only: `enqueue` still decides. Called once per inference request.
   */
  hasRoom(priority?: number): boolean;
  /** Requests queued or executing now. */
  inflight(): number;
  /** Requests waiting to execute, not yet executing (Triton's pending request count). */
  readonly queued: number;
  /**
   * Sequences live now, each holding its state here (a sequence batcher); absent elsewhere. A
   * version that holds any is not parked: that would end them.
   */
  readonly sequences?: number;
  /** Refuses new requests and resolves once everything queued has finished. */
  stop(): Promise<void>;
}

/**
 * A scheduler that executes on instances of its own (dynamic, sequence and continuous batching;
 * an ensemble has none: its steps are other functions), which the deployment scales.
 */
export interface InstanceScheduler extends Scheduler {
  readonly pool: ScaledInstances<ModelInstance>;
}

/** How a deployment scales a scheduler's instances (autoscaling), whichever scheduler runs them. */
export interface ScaledInstances<I> {
  /** Instances serving now (free or busy), after pending removals. */
  readonly count: number;
  /** Adds an instance; it takes queued work at once. */
  add(instance: I): void;
  /**
   * Takes one instance out of service: a free one at once, else the next to finish its batch;
   * resolves with it so the caller can release it. Refuses the last instance.
   */
  remove(): Promise<I>;
}

/**
 * What the server knows of the requests still to come, for a batcher deciding whether to wait
 * (the HTTP server's client connections implement it: call/client-connections.ts).
 */
export interface Arrivals {
  /** Whether another request can still arrive before one is answered. */
  mayArrive(): boolean;
  /**
   * Clock time (ms) the next request is expected, where clients are known to send again once
   * answered (a closed loop of keep-alive connections); Infinity when none is expected soon;
   * undefined where nothing predicts it (the batcher then goes by the mean gap between arrivals).
   */
  expectedAt?(): number | undefined;
}

/** What a scheduler runs batches on: one session, one batch at a time. */
export interface ModelInstance {
  /**
   * `requestSignals`: each request's own signal, in batch order, where the scheduler hands them
   * over (handlers); `outputs`: the ones the batch needs, where fewer than all.
   */
  run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<Record<string, Tensor>>;
  /**
   * Present where the instance computes on the event loop, on a later turn than the one that asks
   * it to run (onnxruntime-node starts a run on `setImmediate`): calls `fn` on such a turn. A
   * batcher forms a batch for it there rather than when it decides to dispatch, so the requests
   * the rest of this turn's I/O brings join the batch instead of waiting for the next one.
   */
  computeTurn?(fn: () => void): void;
}

export interface RunOptions {
  signal?: AbortSignal;
  requestSignals?: readonly (AbortSignal | undefined)[];
  /** Outputs to fetch (the union of what the batch's requests need); undefined: all. An instance may return more. */
  outputs?: readonly string[];
  /**
   * Told the execution's own compute time (ms) by an instance that knows it better than its
   * caller's clock: an event-loop session first waits for its turn of the loop, which is the
   * HTTP work of that turn, not a cost a bigger batch saves. The batcher asks for it on every
   * execution: the statistics report that time as compute, the wait as queueing, and the
   * adaptive cost model fits it.
   */
  computed?: (ms: number) => void;
}

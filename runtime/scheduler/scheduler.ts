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
}

/** Model outputs for one request, sliced from its batch. */
export type ScheduledResult = Record<string, Tensor>;

/**
 * Turns queued requests into executions on free instances. The dynamic batcher is the only
 * implementation so far; sequence, continuous and ensemble schedulers will implement the same
 * methods, and one contract suite runs against each.
 */
export interface Scheduler {
  /** Queues a request; rejects with CANCELLED if `signal` aborts before it is dispatched. */
  enqueue(request: ScheduledRequest, options?: { signal?: AbortSignal }): Promise<ScheduledResult>;
  /**
   * Whether `enqueue` would find room now, so the HTTP layer can refuse a request with 503 before
   * reading its body. Without `priority` (the body is unread, so it is unknown): whether any level
   * has room. A cheap hint only: `enqueue` still decides. Called once per inference request.
   */
  hasRoom(priority?: number): boolean;
  /** Requests queued or executing now. */
  inflight(): number;
  /** Refuses new requests and resolves once everything queued has finished. */
  stop(): Promise<void>;
}

/** What a scheduler runs batches on: one session, one batch at a time. */
export interface ModelInstance {
  run(feeds: Record<string, Tensor>, options?: { signal?: AbortSignal }): Promise<Record<string, Tensor>>;
}

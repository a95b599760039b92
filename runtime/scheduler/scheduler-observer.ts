/**
 * Why a dynamic batcher sent a batch when it did: `full` (max_batch_size reached), `preferred`
 * (the largest preferred size formed), `blocked` (the next queued request cannot join: another
 * shape, or too many rows), `at_once` (no delay configured), `delay` (the queue delay ran out),
 * `law` (the adaptive law: waiting no longer pays, or the target's budget is spent), `not_paying`
 * (recent waits gained no request: the arrival outlook), `no_arrivals` (no request can arrive:
 * every inference connection carries one), `retry` (re-run alone after a shared batch failed).
 */
export const DISPATCH_REASONS = ["full", "preferred", "blocked", "at_once", "delay", "law", "not_paying", "no_arrivals", "retry"] as const;
export type DispatchReason = (typeof DISPATCH_REASONS)[number];

/** Phase durations of one execution, in milliseconds. */
export interface ExecutionTiming {
  /** Why the batch left when it did (dynamic batcher only). */
  reason?: DispatchReason;
  /** Rows in the batch (sum of the requests' own batch sizes). */
  rows: number;
  requests: number;
  /** Gathering the requests' inputs into the batch. */
  inputMs: number;
  /** The backend's run, less `waitMs`: the model's own time (Triton's compute_infer). */
  inferMs: number;
  /**
   * The backend's run waiting to start computing: an event-loop session's wait for its turn of
   * the loop, which first serves the HTTP work read before it. 0 where the instance cannot tell
   * (a worker's hop to its thread stays in `inferMs`).
   */
  waitMs: number;
  /** Slicing the outputs back per request. */
  outputMs: number;
  /** Clock time the execution started (inputs gathering), for timelines. */
  startMs: number;
  /** Which instance ran it: 1, 2, … in the order the instances first ran. */
  instance: number;
}

/**
 * Receives what a scheduler measures, for the statistics endpoint and metrics. Called on the hot
 * path: once per request leaving the queue and once per execution; implementations only add.
 */
export interface SchedulerObserver {
  /** A request left the queue at `atMs` (clock time) after waiting `queueMs`. */
  dequeued(queueMs: number, atMs: number): void;
  executed(timing: ExecutionTiming): void;
  /** A sequence started, ended, was released for idleness, or was started over (a sequence batcher). */
  sequence?(event: SequenceEvent): void;
  /** What a generator's continuous batching reports (vLLM's metrics). */
  generation?: GenerationObserver;
}

import type { FinishReason } from "../core/mod.ts";

/** A generator's tokens, preemptions and requests, as vLLM's metrics count them (its gauges are read from the scheduler at scrape time). */
export interface GenerationObserver {
  preempted?(): void;
  /** A token was generated: the first (`first`: ms since the request arrived) or a later one (`gap`: ms since the one before). */
  token?(timing: { first?: number; gap?: number }): void;
  /** A request left: its prompt and generated tokens, its time from arrival, why it ended (stop, length; absent when cancelled or failed). */
  finished?(report: { promptTokens: number; generatedTokens: number; e2eMs: number; outcome: "done" | "cancelled"; reason?: FinishReason }): void;
}

/** What happened to a sequence (`tensorfn_sequences_total`'s `event`). */
export const SEQUENCE_EVENTS = ["start", "end", "idle", "restart"] as const;
export type SequenceEvent = (typeof SEQUENCE_EVENTS)[number];

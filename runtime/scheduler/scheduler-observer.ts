/** Phase durations of one execution, in milliseconds. */
export interface ExecutionTiming {
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
}

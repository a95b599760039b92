import type { ScheduledRequest, ScheduledResult, Scheduler } from "./scheduler.ts";

/**
 * The responses of one request, in order, whichever kind of scheduler it goes to: a streaming one's
 * (`Scheduler.stream`: a decoupled model, token generation) as it yields them, a one-shot one's
 * single answer from `enqueue` otherwise — so a one-shot request pays one generator, only where a
 * caller asked for a stream. Cancellation reaches the producer both ways: `signal` aborting, and the
 * consumer stopping early (`break`, `return()`: a client that went away), which aborts the signal
 * the producer was given.
 */
export async function* responses(scheduler: Scheduler, request: ScheduledRequest, options: { signal?: AbortSignal } = {}): AsyncGenerator<ScheduledResult, void, undefined> {
  if (!scheduler.stream) {
    yield await scheduler.enqueue(request, options);
    return;
  }
  yield* consumed((signal) => scheduler.stream!(request, { signal }), options.signal);
}

/**
 * What a producer `open` starts yields, read until it ends or its consumer stops: the signal the
 * producer was given aborts then, and when `signal` does.
 */
export async function* consumed<T>(open: (signal: AbortSignal) => AsyncIterable<T>, signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
  const producer = new AbortController();
  const forward = () => producer.abort(signal!.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener("abort", forward, { once: true });
  try {
    yield* open(producer.signal);
  } finally {
    signal?.removeEventListener("abort", forward);
    // Done, failed or abandoned: a producer still running stops (an abort after the end is a no-op to it).
    producer.abort(new DOMException("the stream's consumer stopped", "AbortError"));
  }
}

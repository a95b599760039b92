/**
 * Time as the runtime sees it. Batch windows, timeouts and idle TTLs read it, so tests pass a
 * fake clock and advance it instead of sleeping.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale (performance.now() in production). */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /**
   * Runs `fn` on a later event-loop turn, after pending I/O: one cheap step of a polling loop.
   * Timers fire up to a millisecond or two late (they round to whole milliseconds), so a
   * sub-millisecond batch window polls its last stretch with this. Optional: without it windows
   * fall back to `setTimeout`.
   */
  soon?(fn: () => void): void;
}

/** How long a polling channel stays open after its last step (ms): the next batch window reuses it. */
const SOON_KEEP_OPEN_MS = 100;

/**
 * One step of a polling loop from web-standard globals: a MessageChannel ping, which every
 * runtime delivers as a macrotask (I/O is serviced between steps). The channel stays open while
 * steps follow each other and is closed once none came for SOON_KEEP_OPEN_MS (closed, not just
 * silenced: an open port keeps Deno's event loop alive), so an idle process is not kept alive and
 * burns nothing. Opening a channel per wait, as this did until stop 31, made short batch windows
 * under Node close up to 573 µs late at p99, 37–98 µs since (`bench/studies/batch-window.ts`,
 * bench/results/body-json.md "Batch windows"). Steps queued while a batch of them runs go to the other of
 * two lists: no array is allocated per step.
 */
export function messageChannelSoon(): (fn: () => void) => void {
  let channel: MessageChannel | undefined;
  let waiting: (() => void)[] = [];
  let running: (() => void)[] = [];
  let lastStepAt = 0;
  let closer: ReturnType<typeof setTimeout> | undefined;
  const closeWhenIdle = () => {
    closer = undefined;
    if (!channel || waiting.length > 0) return;
    const idleMs = performance.now() - lastStepAt;
    if (idleMs < SOON_KEEP_OPEN_MS) {
      closer = setTimeout(closeWhenIdle, SOON_KEEP_OPEN_MS - idleMs);
      return;
    }
    channel.port1.close();
    channel = undefined;
  };
  const onMessage = () => {
    const batch = waiting;
    waiting = running;
    running = batch;
    lastStepAt = performance.now();
    try {
      for (const fn of running) fn();
    } finally {
      running.length = 0;
      closer ??= setTimeout(closeWhenIdle, SOON_KEEP_OPEN_MS);
    }
  };
  return (fn) => {
    if (waiting.push(fn) > 1) return; // a ping is already on its way
    if (!channel) {
      channel = new MessageChannel();
      channel.port1.onmessage = onMessage;
    }
    channel.port2.postMessage(0);
  };
}

/** Runs `fn` on a later turn of the event loop, after pending I/O: `clock.soon`, else a zero timer. */
export function nextTurn(clock: Pick<Clock, "setTimeout" | "soon">, fn: () => void): void {
  if (clock.soon) clock.soon(fn);
  else clock.setTimeout(fn, 0);
}

/** The real clock, from web-standard globals. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  soon: messageChannelSoon(),
};

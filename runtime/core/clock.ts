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

/**
 * One step of a polling loop from web-standard globals: a MessageChannel ping, which every
 * runtime delivers as a macrotask (I/O is serviced between steps). The channel exists only while a
 * step is pending, so an idle process is not kept alive and burns nothing.
 */
function messageChannelSoon(): (fn: () => void) => void {
  let channel: MessageChannel | undefined;
  const waiting: (() => void)[] = [];
  const onMessage = () => {
    const batch = waiting.splice(0);
    for (const fn of batch) fn();
    if (waiting.length > 0) return;
    // Closed, not just silenced: an open port keeps Deno's event loop alive.
    channel!.port1.close();
    channel = undefined;
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

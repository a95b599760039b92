/**
 * Time as the runtime sees it. Batch windows, timeouts and idle TTLs read it, so tests pass a
 * fake clock and advance it instead of sleeping.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale (performance.now() in production). */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock, from web-standard globals. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

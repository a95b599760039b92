import { mulberry32 } from "../../runtime/core/mod.ts";

/**
 * Sends one request; resolves with `undefined` on success or an error message on failure. The
 * load generator calls it once per request, back to back, so it must not encode anything. A
 * rejection counts as a failure with the rejection's message.
 */
export type Send = () => Promise<string | undefined>;

/** Time source and timers for the drivers; a test passes a fake one. Milliseconds. */
export interface BenchClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** One finished request. `start` is the send time (closed loop) or the scheduled time (open loop). */
export interface Sample {
  start: number;
  end: number;
  error?: string;
}

/**
 * What a driver hands back for one step: every request that finished after the measurement window
 * opened (including those that finish while the driver drains after it closed).
 */
export interface StepSamples {
  windowStart: number;
  windowEnd: number;
  samples: Sample[];
  /** Most requests outstanding at once. */
  maxOutstanding: number;
  /** Open loop: times a scheduled send found the outstanding cap full and had to wait. */
  capHits: number;
  /** Open loop: sends scheduled inside the window that were still waiting for a slot when it closed. */
  unsent: number;
}

/** Options both drivers share. */
export interface DriverOptions {
  warmupMs: number;
  durationMs: number;
  clock?: BenchClock;
  /** Awaited when the warmup ends, before the window opens (the load keeps running meanwhile). */
  onMeasureStart?: () => Promise<void>;
  /** Started when the window closes, alongside the drain; awaited before the driver returns. */
  onMeasureEnd?: () => Promise<void>;
  /** Called once per finished request, for progress display. */
  onComplete?: (error: string | undefined) => void;
}

/** Open-loop options: the target rate, its distribution and the cap on outstanding requests. */
export interface OpenLoopOptions extends DriverOptions {
  ratePerS: number;
  distribution?: "constant" | "poisson";
  maxOutstanding?: number;
  seed?: number;
}

/** `performance.now()` and the host's timers. */
export const realClock: BenchClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Closed loop: `concurrency` workers each send, wait for the answer and send again, so exactly
 * that many requests are outstanding. After `warmupMs` the window opens for `durationMs`; then the
 * workers stop issuing and the driver waits for the last answers.
 */
export async function runClosedLoop(send: Send, concurrency: number, options: DriverOptions): Promise<StepSamples> {
  const clock = options.clock ?? realClock;
  const samples: Sample[] = [];
  let windowStart: number | undefined;
  let stopping = false;

  async function worker(): Promise<void> {
    while (!stopping) {
      const start = clock.now();
      const error = await attempt(send);
      const end = clock.now();
      if (windowStart !== undefined) samples.push(error === undefined ? { start, end } : { start, end, error });
      options.onComplete?.(error);
      // A send that fails without I/O would otherwise spin in microtasks and starve the timers.
      if (error !== undefined) await sleep(clock, 0);
    }
  }

  const workers = Array.from({ length: concurrency }, () => worker());
  const { start: measuredFrom, end: windowEnd } = await measure(clock, options, (start) => (windowStart = start));
  stopping = true;
  const after = options.onMeasureEnd?.();
  await Promise.all(workers);
  await after;
  return { windowStart: measuredFrom, windowEnd, samples, maxOutstanding: concurrency, capHits: 0, unsent: 0 };
}

/**
 * Open loop: sends on a fixed schedule (constant spacing, or exponential gaps for `poisson`)
 * whether or not earlier requests have answered, so a slow server cannot slow the client down and
 * hide its own latency. Latency runs from the scheduled time. When `maxOutstanding` requests are
 * pending, the next send waits for a slot (counted in `capHits`); its latency still counts from
 * its scheduled time.
 */
export async function runOpenLoop(send: Send, options: OpenLoopOptions): Promise<StepSamples> {
  const clock = options.clock ?? realClock;
  const cap = options.maxOutstanding ?? 1024;
  const gap = intervals(options.ratePerS, options.distribution ?? "constant", options.seed ?? 1);
  const samples: Sample[] = [];
  let windowStart: number | undefined;
  let outstanding = 0;
  let maxOutstanding = 0;
  let capHits = 0;
  let blocked = false;
  let stopped = false;
  let timer: unknown;
  let drained: (() => void) | undefined;
  let next = clock.now();

  function fire(scheduled: number): void {
    outstanding++;
    maxOutstanding = Math.max(maxOutstanding, outstanding);
    void attempt(send).then((error) => {
      const end = clock.now();
      outstanding--;
      if (windowStart !== undefined) samples.push(error === undefined ? { start: scheduled, end } : { start: scheduled, end, error });
      options.onComplete?.(error);
      if (blocked) {
        blocked = false;
        dispatch();
      }
      if (outstanding === 0) drained?.();
    });
  }

  function dispatch(): void {
    timer = undefined;
    if (stopped) return;
    const now = clock.now();
    while (next <= now) {
      if (outstanding >= cap) {
        capHits++;
        blocked = true;
        return;
      }
      fire(next);
      next += gap();
    }
    timer = clock.setTimeout(dispatch, next - now);
  }

  dispatch();
  const { start: measuredFrom, end: windowEnd } = await measure(clock, options, (start) => (windowStart = start));
  stopped = true;
  if (timer !== undefined) clock.clearTimeout(timer);
  let unsent = 0;
  if (blocked) for (; next < windowEnd; next += gap()) if (next >= measuredFrom) unsent++;
  const after = options.onMeasureEnd?.();
  if (outstanding > 0) await new Promise<void>((resolve) => (drained = resolve));
  await after;
  return { windowStart: measuredFrom, windowEnd, samples, maxOutstanding, capHits, unsent };
}

/** Gaps in ms between scheduled sends: `1000 / rate` each, or exponential with that mean. */
export function intervals(ratePerS: number, distribution: "constant" | "poisson", seed: number): () => number {
  const mean = 1000 / ratePerS;
  if (distribution === "constant") return () => mean;
  const random = mulberry32(seed);
  return () => -Math.log(1 - random()) * mean;
}

export { mulberry32 };

async function attempt(send: Send): Promise<string | undefined> {
  try {
    return await send();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The warmup, then the measured window, its start told to the senders as it begins. */
async function measure(clock: BenchClock, options: DriverOptions, started: (at: number) => void): Promise<{ start: number; end: number }> {
  await sleep(clock, options.warmupMs);
  await options.onMeasureStart?.();
  const start = clock.now();
  started(start);
  await sleep(clock, options.durationMs);
  return { start, end: clock.now() };
}

function sleep(clock: BenchClock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

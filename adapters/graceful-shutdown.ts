import { streamed } from "../runtime/mod.ts";
import type { Clock, Logger, Router } from "../runtime/mod.ts";
import type { Listener } from "./host.ts";

export type ShutdownSignal = "SIGINT" | "SIGTERM";

/** Exit code when `--shutdown-timeout` passed before every accepted request was answered. */
export const EXIT_SHUTDOWN_TIMEOUT = 1;

const SIGNAL_NUMBERS: Record<ShutdownSignal, number> = { SIGINT: 2, SIGTERM: 15 };

/**
 * A repeat of a signal within this window is the same signal: when a process group gets SIGTERM
 * (or a terminal's Ctrl-C), wrappers such as npm forward it to us again within milliseconds.
 */
export const REPEAT_WINDOW_MS = 1000;

/**
 * Wraps the server's router: counts the requests the server read (what a shutdown must
 * answer) and, once draining, marks every response `Connection: close` so no client reuses
 * its socket for a request the server would then have to refuse. A GET's event stream (the dev
 * dashboard's) is a subscription that never ends by itself, so draining ends it; a POST's (a
 * generation's tokens) is an answer, which ends, so it is left to finish like any other.
 */
export class RequestTracker {
  #draining = false;
  #received = 0;
  #inFlight = 0;
  #streams = new Set<AbortController>();

  get received(): number {
    return this.#received;
  }

  /** Requests whose handler has not returned a response yet. */
  get inFlight(): number {
    return this.#inFlight;
  }

  startDraining(): void {
    this.#draining = true;
    for (const stream of this.#streams) stream.abort();
  }

  wrap(router: Router): Router {
    return (request) => {
      const reply = router(request);
      this.#received++;
      this.#inFlight++;
      // One reaction for both outcomes (a then and a finally cost a promise and a turn more per request).
      return reply.then(
        (r) => {
          this.#inFlight--;
          if (this.#draining) return { ...r, headers: { ...r.headers, connection: "close" } };
          return streamed(r.body) && subscription(request.method, r.headers["content-type"]) ? { ...r, body: this.#endable(r.body) } : r;
        },
        (error: unknown) => {
          this.#inFlight--;
          throw error;
        },
      );
    };
  }

  /** The same event stream, through a pipe that startDraining() ends cleanly (the source is cancelled). */
  #endable(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const stop = new AbortController();
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    this.#streams.add(stop);
    void body
      .pipeTo(writable, { signal: stop.signal, preventAbort: true })
      .catch(() => {})
      .finally(() => {
        this.#streams.delete(stop);
        if (stop.signal.aborted) void writable.close().catch(() => {});
      });
    return readable;
  }
}

/** A GET's event stream: a subscription (the dev dashboard's) that never ends by itself. A POST's (a generation's tokens) is an answer, which ends. */
function subscription(method: string, contentType: string | null | undefined): boolean {
  return method === "GET" && contentType?.startsWith("text/event-stream") === true;
}

export interface ShutdownOptions {
  /** `--shutdown-timeout` in milliseconds: the whole shutdown, drain and runtime stop together. */
  timeoutMs: number;
  clock: Clock;
  log: Logger;
  tracker: RequestTracker;
  /** Turns readiness false (the runtime's `drain()`). */
  drain(): void;
  /** The listeners to close; each stops accepting, closes idle sockets and waits for its requests. */
  listeners(): Listener[];
  /** Runs after the listeners closed: writes the trace file, stops the runtime. */
  finish(): Promise<void>;
  exit(code: number): void;
}

/**
 * The SIGINT/SIGTERM handler. The policy: on the first signal readiness turns false, every
 * listener stops accepting and closes its idle keep-alive sockets, requests already read are
 * answered (with `Connection: close`), then the runtime stops and the process exits 0. If
 * `timeoutMs` passes first it exits EXIT_SHUTDOWN_TIMEOUT at once (the process exit closes what
 * is left), with one log line. A second signal after REPEAT_WINDOW_MS exits at once with
 * 128 + the signal's number, as a shell reports a process killed by it.
 */
export function createShutdown(options: ShutdownOptions): (signal: ShutdownSignal) => void {
  const { clock, log, tracker, timeoutMs } = options;
  let startedAt: number | undefined;
  let exited = false;
  const exit = (code: number) => {
    if (exited) return;
    exited = true;
    options.exit(code);
  };
  return (signal) => {
    if (startedAt !== undefined) {
      if (clock.now() - startedAt < REPEAT_WINDOW_MS) return;
      log.warn(`${signal} again during the shutdown: exiting now with ${tracker.inFlight} request(s) in flight`);
      return exit(128 + SIGNAL_NUMBERS[signal]);
    }
    startedAt = clock.now();
    tracker.startDraining();
    options.drain();
    log.info(`${signal}: shutting down (readiness 503, no new connections); draining ${tracker.inFlight} request(s) in flight, at most ${timeoutMs / 1000} s`);
    const timer = clock.setTimeout(() => {
      log.error(`shutdown timeout: ${tracker.inFlight} request(s) still in flight after ${timeoutMs / 1000} s (--shutdown-timeout); closing their connections and exiting ${EXIT_SHUTDOWN_TIMEOUT}`);
      exit(EXIT_SHUTDOWN_TIMEOUT);
    }, timeoutMs);
    void (async () => {
      try {
        await Promise.all(options.listeners().map((listener) => listener.close()));
        await options.finish();
      } catch (error) {
        clock.clearTimeout(timer);
        log.error(`shutdown failed: ${(error as Error).message}`);
        return exit(EXIT_SHUTDOWN_TIMEOUT);
      }
      clock.clearTimeout(timer);
      if (exited) return;
      const ms = Math.round(clock.now() - startedAt!);
      log.info(`shut down in ${ms} ms: ${tracker.received} requests received, ${tracker.received - tracker.inFlight} answered`);
      exit(0);
    })();
  };
}

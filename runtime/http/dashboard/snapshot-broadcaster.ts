import type { Clock } from "../../core/mod.ts";

/** Streams written per macrotask. */
const WRITE_SLICE = 32;

/**
 * The dashboard's event streams, fed from one timer: each tick builds and serialises one
 * snapshot and writes the same bytes to every open stream, so a thousand idle watchers cost a
 * thousand socket writes, not a thousand snapshots. The timer runs only while a stream is open,
 * a stream that has not taken the previous tick yet skips this one (a slow reader never buffers
 * more than one snapshot), and at most `maxStreams` are open at once.
 */
export class SnapshotBroadcaster {
  readonly #build: () => unknown;
  readonly #clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  readonly #intervalMs: number;
  readonly #maxStreams: number;
  readonly #streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  #timer: unknown;
  #last: Uint8Array | undefined;

  constructor(build: () => unknown, options: { clock: Pick<Clock, "setTimeout" | "clearTimeout">; intervalMs: number; maxStreams: number }) {
    this.#build = build;
    this.#clock = options.clock;
    this.#intervalMs = options.intervalMs;
    this.#maxStreams = options.maxStreams;
  }

  /** Streams open now. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * A new event stream that starts with the latest snapshot; `undefined` when `maxStreams` are
   * already open. It is released when the client goes away (`signal`) or cancels the body.
   */
  open(signal?: AbortSignal): ReadableStream<Uint8Array> | undefined {
    if (this.#streams.size >= this.#maxStreams) return undefined;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: () => this.#release(controller),
    });
    this.#streams.add(controller);
    signal?.addEventListener("abort", () => this.#release(controller), { once: true });
    if (this.#timer === undefined) this.#tick();
    else controller.enqueue(this.#last!);
    return stream;
  }

  /** Ends every stream and stops the timer (server shutdown: open streams would hold it up). */
  close(): void {
    for (const c of this.#streams) {
      try {
        c.close();
      } catch {
        // already errored by its consumer
      }
    }
    this.#streams.clear();
    this.#stop();
  }

  #tick = (): void => {
    this.#timer = undefined;
    if (this.#streams.size === 0) return;
    this.#last = new TextEncoder().encode(`data: ${JSON.stringify(this.#build())}\n\n`);
    this.#timer = this.#clock.setTimeout(this.#tick, this.#intervalMs);
    this.#write(this.#last, [...this.#streams], 0);
  };

  /**
   * Writes `bytes` to `streams[from…]`, a slice per macrotask: a thousand socket writes in one go
   * would stall every other request for tens of milliseconds once per tick.
   */
  #write(bytes: Uint8Array, streams: ReadableStreamDefaultController<Uint8Array>[], from: number): void {
    const end = Math.min(streams.length, from + WRITE_SLICE);
    for (let i = from; i < end; i++) {
      const c = streams[i]!;
      if (!this.#streams.has(c) || (c.desiredSize ?? 1) <= 0) continue;
      try {
        c.enqueue(bytes);
      } catch {
        this.#release(c);
      }
    }
    if (end < streams.length) this.#clock.setTimeout(() => this.#write(bytes, streams, end), 0);
  }

  #release(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.#streams.delete(controller);
    if (this.#streams.size === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

import type { ExecutionTiming, SchedulerObserver } from "../scheduler/mod.ts";

/** One Chrome Trace Event ("X" = complete event, "M" = metadata). Times in microseconds. */
export interface TraceEvent {
  name: string;
  cat?: string;
  ph: "X" | "M";
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: Record<string, unknown>;
}

/**
 * Records a timeline of executions (every one, while tracing is on) and of queue waits (a sampled
 * share of requests), one track per instance, in the Chrome Trace Event format that Perfetto and
 * chrome://tracing open. Bounded: the oldest events go first. Times are the runtime clock's.
 */
export class TraceRecorder {
  /** Share of requests whose queue wait is recorded; 0 turns tracing off. */
  rate: number;
  /** Track names ("M" events), kept for good. */
  readonly #meta: TraceEvent[] = [];
  /** Timed events in a ring buffer: `#next` is where the next one goes. */
  readonly #ring: (TraceEvent | undefined)[];
  #next = 0;
  readonly #processes = new Map<string, number>();
  readonly #threads = new Set<string>();
  readonly #random: () => number;

  constructor(options: { rate: number; capacity?: number; random?: () => number }) {
    this.rate = options.rate;
    this.#ring = new Array(options.capacity ?? 100_000);
    this.#random = options.random ?? Math.random;
  }

  /** The observer one deployment's scheduler reports to; `label` names its process track ("mlp v1"). */
  observer(label: string): SchedulerObserver {
    return {
      dequeued: (queueMs, atMs) => {
        if (this.rate <= 0 || this.#random() >= this.rate) return;
        const pid = this.#pid(label);
        this.#thread(pid, 0, "queue");
        this.#push({ name: "queued", cat: "queue", ph: "X", ts: us(atMs - queueMs), dur: us(queueMs), pid, tid: 0 });
      },
      executed: (t: ExecutionTiming) => {
        if (this.rate <= 0) return;
        const pid = this.#pid(label);
        this.#thread(pid, t.instance, `instance ${t.instance}`);
        const dur = t.inputMs + t.waitMs + t.inferMs + t.outputMs;
        this.#push({
          name: `batch ${t.rows}`,
          cat: "execution",
          ph: "X",
          ts: us(t.startMs),
          dur: us(dur),
          pid,
          tid: t.instance,
          args: { rows: t.rows, requests: t.requests, input_us: us(t.inputMs), wait_us: us(t.waitMs), infer_us: us(t.inferMs), output_us: us(t.outputMs) },
        });
      },
    };
  }

  /** The events of the last `seconds` (by the clock's `nowMs`), with the track names, as Chrome trace JSON. */
  export(nowMs: number, seconds: number): { traceEvents: TraceEvent[]; displayTimeUnit: "ms" } {
    const since = us(nowMs - seconds * 1000);
    const timed: TraceEvent[] = [];
    for (let i = 0; i < this.#ring.length; i++) {
      const e = this.#ring[(this.#next + i) % this.#ring.length];
      if (e && e.ts + (e.dur ?? 0) >= since) timed.push(e);
    }
    return { traceEvents: [...this.#meta, ...timed], displayTimeUnit: "ms" };
  }

  #pid(label: string): number {
    let pid = this.#processes.get(label);
    if (pid === undefined) {
      pid = this.#processes.size + 1;
      this.#processes.set(label, pid);
      this.#meta.push({ name: "process_name", ph: "M", ts: 0, pid, tid: 0, args: { name: label } });
    }
    return pid;
  }

  #thread(pid: number, tid: number, name: string): void {
    const key = `${pid}/${tid}`;
    if (this.#threads.has(key)) return;
    this.#threads.add(key);
    this.#meta.push({ name: "thread_name", ph: "M", ts: 0, pid, tid, args: { name } });
  }

  /** Stores an event, overwriting the oldest once the ring is full. */
  #push(event: TraceEvent): void {
    this.#ring[this.#next] = event;
    this.#next = (this.#next + 1) % this.#ring.length;
  }
}

/** Fans one scheduler's reports out to several observers (statistics and the trace). */
export function observeAll(...observers: SchedulerObserver[]): SchedulerObserver {
  return {
    dequeued: (queueMs, atMs) => {
      for (const o of observers) o.dequeued(queueMs, atMs);
    },
    executed: (timing) => {
      for (const o of observers) o.executed(timing);
    },
    sequence: (event) => {
      for (const o of observers) o.sequence?.(event);
    },
    // One generator's counters (the statistics'): the trace timeline records executions only.
    generation: observers.find((o) => o.generation)?.generation,
  };
}

function us(ms: number): number {
  return Math.round(ms * 1000);
}

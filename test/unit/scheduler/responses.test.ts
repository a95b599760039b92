import { describe, expect, it } from "vitest";
import { responses } from "../../../runtime/scheduler/mod.ts";
import type { ScheduledRequest, ScheduledResult, Scheduler } from "../../../runtime/scheduler/mod.ts";
import { fakeRequest } from "../../support/fake-instance.ts";

const result = (v: number): ScheduledResult => ({ y: { datatype: "FP32", shape: [1], data: new Float32Array([v]) } });

/**
 * A scheduler whose requests yield `count` responses, one per `step()`: the shape a decoupled
 * model or a token generator has, scripted so each test decides when a response is made.
 */
class ScriptedStream implements Scheduler {
  readonly queued = 0;
  aborted: unknown;
  finished = false;
  #wake: (() => void) | undefined;

  readonly count: number;

  constructor(count: number) {
    this.count = count;
  }

  step(): void {
    this.#wake?.();
  }

  async *stream(_request: ScheduledRequest, options: { signal: AbortSignal }): AsyncIterable<ScheduledResult> {
    options.signal.addEventListener("abort", () => {
      this.aborted = options.signal.reason;
      this.#wake?.();
    });
    try {
      for (let i = 0; i < this.count; i++) {
        await new Promise<void>((resolve) => (this.#wake = resolve));
        if (options.signal.aborted) throw options.signal.reason;
        yield result(i);
      }
    } finally {
      this.finished = true;
    }
  }

  enqueue(): Promise<ScheduledResult> {
    throw new Error("a streaming scheduler is read through responses()");
  }
  hasRoom(): boolean {
    return true;
  }
  inflight(): number {
    return 0;
  }
  async stop(): Promise<void> {}
}

const flush = () => new Promise((r) => setTimeout(r, 0));
const value = (r: ScheduledResult) => (r.y!.data as Float32Array)[0];

describe("responses(): a request's responses from any scheduler", () => {
  it("yields a one-shot scheduler's single answer from enqueue()", async () => {
    const oneShot: Scheduler = { queued: 0, enqueue: async () => result(7), hasRoom: () => true, inflight: () => 0, stop: async () => {} };
    const got = [];
    for await (const r of responses(oneShot, fakeRequest(1))) got.push(value(r));
    expect(got).toEqual([7]);
  });

  it("yields a streaming scheduler's responses in order, then ends", async () => {
    const s = new ScriptedStream(3);
    const it = responses(s, fakeRequest(1));
    const got: number[] = [];
    const reading = (async () => {
      for await (const r of it) got.push(value(r)!);
    })();
    for (let i = 0; i < 3; i++) {
      await flush();
      s.step();
    }
    await reading;
    expect(got).toEqual([0, 1, 2]);
    expect(s.finished).toBe(true);
  });

  it("a consumer that stops early (a client gone) aborts the producer's signal", async () => {
    const s = new ScriptedStream(5);
    const it = responses(s, fakeRequest(1));
    const first = it.next();
    await flush();
    s.step();
    expect(value((await first).value as ScheduledResult)).toBe(0);
    await it.return();
    expect(s.aborted).toBeDefined();
    expect(s.finished).toBe(true);
  });

  it("the caller's signal aborting reaches the producer and ends the stream with its reason", async () => {
    const s = new ScriptedStream(5);
    const controller = new AbortController();
    const it = responses(s, fakeRequest(1), { signal: controller.signal });
    const next = it.next();
    await flush();
    controller.abort(new Error("deadline"));
    await expect(next).rejects.toThrow("deadline");
    expect(s.aborted).toBeInstanceOf(Error);
    expect(s.finished).toBe(true);
  });

  it("an already aborted signal stops the producer before its first response", async () => {
    const s = new ScriptedStream(2);
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    const it = responses(s, fakeRequest(1), { signal: controller.signal });
    const next = it.next();
    await flush();
    s.step();
    await expect(next).rejects.toThrow("gone");
  });
});

import { describe, expect, it } from "vitest";
import { controlTensor, gatherAlong, planSequences, scatterAlong, SequenceBatcher } from "../../runtime/scheduler/mod.ts";
import type { ControlSpec, ModelInstance, RunOptions, ScheduledResult, StateSpec } from "../../runtime/scheduler/mod.ts";
import type { Tensor } from "../../runtime/mod.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { settle } from "../support/fake-instance.ts";

/**
 * A stateful model for the tests: `y = x + acc` per row, `acc_out = y` (a running sum), with its
 * state's batch on axis 1 of [2, batch] (both halves the same), as Silero keeps its own. Records
 * each execution's x values and control inputs; `manual` holds executions until `finish()`.
 */
class Accumulator implements ModelInstance {
  readonly executions: { x: number[]; start?: number[]; end?: number[]; ready?: number[]; corrid?: (number | bigint)[]; rate?: number }[] = [];
  #pending: (() => void)[] = [];
  readonly manual: boolean;
  constructor(manual = false) {
    this.manual = manual;
  }
  run(feeds: Record<string, Tensor>, _options?: RunOptions): Promise<Record<string, Tensor>> {
    const x = [...(feeds.x!.data as Float32Array)];
    const acc = feeds.acc!;
    const rows = acc.shape[1]!;
    const control = (name: string) => (feeds[name] ? [...(feeds[name]!.data as Int32Array)] : undefined);
    this.executions.push({ x, start: control("START"), end: control("END"), ready: control("READY"), corrid: feeds.CORRID && [...(feeds.CORRID.data as BigUint64Array)], rate: feeds.rate && Number((feeds.rate.data as BigInt64Array)[0]) });
    const y = new Float32Array(rows);
    const next = new Float32Array(2 * rows);
    for (let r = 0; r < rows; r++) {
      y[r] = x[r]! + (acc.data as Float32Array)[r]!;
      next[r] = y[r]!;
      next[rows + r] = y[r]!;
    }
    const result = { y: { datatype: "FP32" as const, shape: [rows, 1], data: y }, acc_out: { datatype: "FP32" as const, shape: [2, rows], data: next } };
    if (!this.manual) return Promise.resolve(result);
    return new Promise((resolve) => this.#pending.push(() => resolve(result)));
  }
  finish(): void {
    for (const done of this.#pending.splice(0)) done();
  }
}

const STATE: StateSpec = { input: "acc", output: "acc_out", datatype: "FP32", dims: [2], batchAxis: 1 };
const CONTROLS: ControlSpec[] = [
  { name: "START", kind: "START", datatype: "INT32", values: [0, 1] },
  { name: "END", kind: "END", datatype: "INT32", values: [0, 1] },
  { name: "READY", kind: "READY", datatype: "INT32", values: [0, 1] },
  { name: "CORRID", kind: "CORRID", datatype: "UINT64" },
];

function build(options: { manual?: boolean; strategy?: "direct" | "oldest"; maxBatchSize?: number; delayMs?: number; idleMs?: number; maxSequences?: number; instances?: number; preserveOrdering?: boolean } = {}) {
  const clock = new FakeClock();
  const instances = Array.from({ length: options.instances ?? 1 }, () => new Accumulator(options.manual));
  const events: string[] = [];
  const batcher = new SequenceBatcher({
    name: "acc",
    instances,
    strategy: options.strategy ?? "direct",
    policy: { maxBatchSize: options.maxBatchSize ?? 4, maxQueueDelayMs: options.delayMs ?? 0, minimumUtilization: 0, preferredBatchSizes: [] },
    maxSequences: options.maxSequences ?? 64,
    preserveOrdering: options.preserveOrdering,
    idleMs: options.idleMs ?? 1000,
    states: [STATE],
    controls: CONTROLS,
    shared: { rate: { datatype: "INT64", shape: [], data: BigInt64Array.from([16000n]) } },
    clock,
    onSequence: (event, id) => events.push(`${event} ${id}`),
  });
  return { clock, instances, batcher, events, instance: instances[0]! };
}

const frame = (id: number | string, x: number, flags: { start?: boolean; end?: boolean } = {}) => ({
  feeds: { x: { datatype: "FP32" as const, shape: [1, 1], data: Float32Array.of(x) } },
  batchSize: 1,
  shapeKey: "x:1",
  parameters: { sequence_id: id, ...(flags.start && { sequence_start: true }), ...(flags.end && { sequence_end: true }) },
});
const value = (r: ScheduledResult) => (r.y!.data as Float32Array)[0];

describe("SequenceBatcher", () => {
  it("runs each sequence's requests in order on the state the last one left, and never returns the state", async () => {
    const { batcher } = build();
    const results = [];
    results.push(await batcher.enqueue(frame(7, 1, { start: true })));
    results.push(await batcher.enqueue(frame(7, 2)));
    results.push(await batcher.enqueue(frame(7, 3, { end: true })));
    expect(results.map(value)).toEqual([1, 3, 6]);
    expect(Object.keys(results[0]!)).toEqual(["y"]);
  });

  it("batches different sequences' requests into one execution, never two of one sequence, and keeps their states apart", async () => {
    const { batcher, instance } = build({ manual: true });
    const a1 = batcher.enqueue(frame(1, 1, { start: true }));
    await settle();
    // While a1 runs: a2 waits for a1's state; b1 and c1 queue beside it.
    const a2 = batcher.enqueue(frame(1, 10));
    const b1 = batcher.enqueue(frame(2, 100, { start: true }));
    const c1 = batcher.enqueue(frame("c", 1000, { start: true }));
    instance.finish();
    await settle();
    instance.finish();
    await settle();
    instance.finish();
    expect(await Promise.all([a1, a2, b1, c1]).then((r) => r.map(value))).toEqual([1, 11, 100, 1000]);
    expect(instance.executions.map((e) => e.x)).toEqual([[1], [10, 100, 1000]]);
  });

  it("gives the same per-sequence answers whatever the interleaving, equal to each sequence run alone", async () => {
    const frames = (id: number) => [1, 2, 3, 4].map((x, i) => frame(id, x * id, { start: i === 0, end: i === 3 }));
    const alone = async (id: number) => {
      const { batcher } = build();
      const out = [];
      for (const f of frames(id)) out.push(value(await batcher.enqueue(f)));
      return out;
    };
    const expected = [await alone(1), await alone(2), await alone(3)];
    for (const order of [
      [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3],
      [3, 3, 1, 2, 3, 1, 1, 2, 2, 3, 1, 2],
    ]) {
      const { batcher } = build({ maxBatchSize: 2 });
      const queues = new Map([1, 2, 3].map((id) => [id, frames(id)]));
      const got = new Map<number, Promise<ScheduledResult>[]>([1, 2, 3].map((id) => [id, []]));
      for (const id of order) got.get(id)!.push(batcher.enqueue(queues.get(id)!.shift()!));
      const answers = await Promise.all([1, 2, 3].map(async (id) => (await Promise.all(got.get(id)!)).map(value)));
      expect(answers).toEqual(expected);
    }
  });

  it("feeds the control inputs in Triton's forms: START and END on their requests, READY on every row, CORRID the id; shared inputs as given", async () => {
    const { batcher, instance } = build();
    await batcher.enqueue(frame(42, 1, { start: true }));
    await batcher.enqueue(frame(42, 1, { end: true }));
    expect(instance.executions).toEqual([
      { x: [1], start: [1], end: [0], ready: [1], corrid: [42n], rate: 16000 },
      { x: [1], start: [0], end: [1], ready: [1], corrid: [42n], rate: 16000 },
    ]);
  });

  it("refuses a request without a live sequence, naming it and saying how to start one; a new START on a live id starts it over", async () => {
    const { batcher, events } = build();
    await expect(batcher.enqueue(frame(5, 1))).rejects.toThrow("inference request for sequence 5 to model 'acc' must start it with sequence_start: true (no such sequence is live: never started, ended by its sequence_end, or ended by an unload or reload of the function)");
    await expect(batcher.enqueue({ ...frame(5, 1), parameters: {} })).rejects.toThrow(/must specify a non-zero or non-empty sequence_id/);
    await expect(batcher.enqueue({ ...frame(5, 1), parameters: { sequence_id: -3 } })).rejects.toThrow(/sequence_id must be an unsigned integer or a string/);
    await expect(batcher.enqueue(frame("x".repeat(1025), 1, { start: true }))).rejects.toThrow("sequence_id is a string of 1025 characters; at most 1024");
    expect(batcher.sequences).toBe(0);
    await expect(batcher.enqueue({ ...frame(5, 1, { start: true }), parameters: { sequence_id: 5, sequence_start: "yes" } })).rejects.toThrow(/sequence_start must be true or false/);
    expect(value(await batcher.enqueue(frame(5, 1, { start: true })))).toBe(1);
    expect(value(await batcher.enqueue(frame(5, 1)))).toBe(2);
    expect(value(await batcher.enqueue(frame(5, 1, { start: true })))).toBe(1);
    expect(events).toEqual(["start 5", "restart 5", "start 5"]);
    await batcher.enqueue(frame(5, 1, { end: true }));
    await expect(batcher.enqueue(frame(5, 1))).rejects.toThrow(/no such sequence is live/);
  });

  it("releases a sequence idle for max_sequence_idle, and says so to its next request", async () => {
    const { batcher, clock, events } = build({ idleMs: 1000 });
    await batcher.enqueue(frame(9, 1, { start: true }));
    clock.advance(600);
    await batcher.enqueue(frame(9, 1));
    clock.advance(900);
    expect(batcher.sequences).toBe(1); // 900 ms since its last request
    clock.advance(400);
    expect(batcher.sequences).toBe(0);
    expect(events).toEqual(["start 9", "idle 9"]);
    await expect(batcher.enqueue(frame(9, 1))).rejects.toThrow("must start it with sequence_start: true (it was released after 1 s without a request)");
  });

  it("direct: holds max_batch_size × instances slots; a sequence beyond waits in the backlog until one ends", async () => {
    const { batcher, instance } = build({ maxBatchSize: 2 });
    await batcher.enqueue(frame(1, 1, { start: true }));
    await batcher.enqueue(frame(2, 1, { start: true }));
    let third = false;
    const waiting = batcher.enqueue(frame(3, 5, { start: true })).then((r) => ((third = true), r));
    await settle();
    expect(third).toBe(false);
    await batcher.enqueue(frame(1, 1, { end: true }));
    expect(value(await waiting)).toBe(5);
    expect(instance.executions.at(-1)!.x).toEqual([5]);
  });

  it("oldest: any live sequence runs; max_sequences bounds them, refused with 503", async () => {
    const { batcher } = build({ strategy: "oldest", maxBatchSize: 1, maxSequences: 2 });
    await batcher.enqueue(frame(1, 1, { start: true }));
    await batcher.enqueue(frame(2, 1, { start: true }));
    await expect(batcher.enqueue(frame(3, 1, { start: true }))).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(value(await batcher.enqueue(frame(2, 1)))).toBe(2);
  });

  it("waits up to max_queue_delay for more sequences before a partial execution", async () => {
    const { batcher, instance, clock } = build({ delayMs: 5, maxBatchSize: 3 });
    const a = batcher.enqueue(frame(1, 1, { start: true }));
    await settle();
    expect(instance.executions).toHaveLength(0);
    const b = batcher.enqueue(frame(2, 2, { start: true }));
    clock.advance(5);
    await Promise.all([a, b]);
    expect(instance.executions.map((e) => e.x)).toEqual([[1, 2]]);
  });

  it("drops a waiting request whose client went away, and runs the sequence's next one", async () => {
    const { batcher, instance } = build({ manual: true });
    const first = batcher.enqueue(frame(1, 1, { start: true }));
    await settle();
    const gone = new AbortController();
    const dropped = batcher.enqueue(frame(1, 100), { signal: gone.signal });
    const kept = batcher.enqueue(frame(1, 10), { signal: new AbortController().signal });
    gone.abort();
    await expect(dropped).rejects.toMatchObject({ code: "CANCELLED" });
    instance.finish();
    await settle();
    instance.finish();
    expect([value(await first), value(await kept)]).toEqual([1, 11]);
    expect(batcher.inflight()).toBe(0);
  });

  it("preserve_ordering: answers leave in dispatch order when a later execution finishes first; without it, as they finish", async () => {
    for (const preserveOrdering of [true, false]) {
      const { batcher, instances } = build({ manual: true, strategy: "oldest", maxBatchSize: 1, instances: 2, preserveOrdering });
      const order: number[] = [];
      const a = batcher.enqueue(frame(1, 1, { start: true })).then(() => order.push(1));
      const b = batcher.enqueue(frame(2, 2, { start: true })).then(() => order.push(2));
      await settle();
      const ranB = instances.find((i) => i.executions.some((e) => e.x[0] === 2))!;
      ranB.finish(); // the later execution finishes first
      await settle();
      instances.find((i) => i !== ranB)!.finish();
      await Promise.all([a, b]);
      expect(order, `preserve_ordering ${preserveOrdering}`).toEqual(preserveOrdering ? [1, 2] : [2, 1]);
    }
  });

  it("on stop, runs what placed sequences queued and refuses the backlog's", async () => {
    const { batcher, instance } = build({ manual: true, maxBatchSize: 1 });
    const a = batcher.enqueue(frame(1, 1, { start: true }));
    const b = batcher.enqueue(frame(2, 1, { start: true }));
    await settle();
    const stopped = batcher.stop();
    await expect(b).rejects.toMatchObject({ code: "UNAVAILABLE" });
    instance.finish();
    expect(value(await a)).toBe(1);
    await stopped;
    await expect(batcher.enqueue(frame(3, 1, { start: true }))).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});

describe("sequence tensors and plan", () => {
  it("writes each control form: int32, fp32 and bool false/true values, and the id as UINT64, INT32 or a string", () => {
    const rows = [
      { start: true, end: false, id: 7 },
      { start: false, end: true, id: 9 },
    ];
    expect([...(controlTensor({ name: "S", kind: "START", datatype: "INT32", values: [0, 1] }, rows).data as Int32Array)]).toEqual([1, 0]);
    expect([...(controlTensor({ name: "E", kind: "END", datatype: "FP32", values: [-1, 1] }, rows).data as Float32Array)]).toEqual([-1, 1]);
    const ready = controlTensor({ name: "R", kind: "READY", datatype: "BOOL", values: [0, 1] }, rows);
    expect([ready.shape, [...(ready.data as Uint8Array)]]).toEqual([[2, 1], [1, 1]]);
    expect([...(controlTensor({ name: "C", kind: "CORRID", datatype: "UINT64" }, rows).data as BigUint64Array)]).toEqual([7n, 9n]);
    expect([...(controlTensor({ name: "C", kind: "CORRID", datatype: "INT32" }, rows).data as Int32Array)]).toEqual([7, 9]);
    const named = controlTensor({ name: "C", kind: "CORRID", datatype: "BYTES" }, [{ start: true, end: false, id: "mic-1" }]);
    expect((named.data as Uint8Array[]).map((b) => new TextDecoder().decode(b))).toEqual(["mic-1"]);
  });

  it("gathers states along their batch axis and scatters them back", () => {
    const parts: Tensor[] = [0, 1, 2].map((r) => ({ datatype: "FP32", shape: [2, 1, 3], data: Float32Array.from({ length: 6 }, (_, i) => r * 100 + i) }));
    const all = gatherAlong(parts, 1);
    expect(all.shape).toEqual([2, 3, 3]);
    expect([...(all.data as Float32Array)].slice(0, 9)).toEqual([0, 1, 2, 100, 101, 102, 200, 201, 202]);
    expect(scatterAlong(all, 1).map((t) => [...(t.data as Float32Array)])).toEqual(parts.map((p) => [...(p.data as Float32Array)]));
  });

  it("plans the oldest ready heads of one shape, at most one per sequence", () => {
    const policy = { maxBatchSize: 2, maxQueueDelayMs: 0, minimumUtilization: 0, preferredBatchSizes: [] };
    const seqs = [
      { key: "a", placed: true, busy: false, headSince: 3, headShape: "s" },
      { key: "b", placed: true, busy: true, headSince: 1, headShape: "s" },
      { key: "c", placed: false, busy: false, headSince: 0, headShape: "s" },
      { key: "d", placed: true, busy: false, headSince: 2, headShape: "t" },
      { key: "e", placed: true, busy: false, headSince: 4, headShape: "t" },
    ];
    expect(planSequences(seqs, policy, 10)).toEqual({ run: ["d", "e"] });
    expect(planSequences(seqs.slice(0, 3), policy, 10)).toEqual({ run: ["a"] });
    expect(planSequences(seqs.slice(0, 3), { ...policy, maxQueueDelayMs: 5 }, 4)).toEqual({ waitUntil: 8, partial: ["a"] });
    expect(planSequences([], policy, 0)).toEqual({ idle: true });
  });
});

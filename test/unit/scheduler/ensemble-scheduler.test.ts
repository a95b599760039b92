import { describe, expect, it } from "vitest";
import { EnsembleScheduler } from "../../../runtime/scheduler/mod.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";
import { RuntimeError } from "../../../runtime/core/mod.ts";
import { settle } from "../../support/fake-instance.ts";
import type { EnsembleStep } from "../../../runtime/config/mod.ts";

const t = (v: number): Tensor => ({ datatype: "FP32", shape: [1], data: Float32Array.of(v) });
const value = (x: Tensor | undefined) => (x!.data as Float32Array)[0];

/** A dispatch that records each call and finishes only when the test says, per call. */
function manualDispatch() {
  const calls: { name: string; inputs: Record<string, Tensor>; finish(out: Record<string, Tensor>): void; fail(e: unknown): void; signal: AbortSignal }[] = [];
  const dispatch = (name: string, _version: string | undefined, inputs: Record<string, Tensor>, signal: AbortSignal) =>
    new Promise<Record<string, Tensor>>((resolve, reject) => calls.push({ name, inputs, finish: resolve, fail: reject, signal }));
  return { calls, dispatch };
}

const diamond: EnsembleStep[] = [
  { model_name: "left", model_version: -1, input_map: { x: "A" }, output_map: { y: "l" } },
  { model_name: "right", model_version: -1, input_map: { x: "A" }, output_map: { y: "r" } },
  { model_name: "join", model_version: -1, input_map: { a: "l", b: "r" }, output_map: { y: "OUT" } },
];

describe("EnsembleScheduler", () => {
  it("dispatches independent steps together and a step only once every tensor it reads exists", async () => {
    const { calls, dispatch } = manualDispatch();
    const scheduler = new EnsembleScheduler({ name: "e", steps: diamond, outputs: ["OUT"], dispatch });
    const result = scheduler.enqueue({ feeds: { A: t(1) }, batchSize: 1, shapeKey: "" });
    await settle();
    expect(calls.map((c) => c.name)).toEqual(["left", "right"]);
    expect(scheduler.inflight()).toBe(1);
    calls[0]!.finish({ y: t(10) });
    await settle();
    expect(calls.map((c) => c.name)).toEqual(["left", "right"]); // join still waits for right
    calls[1]!.finish({ y: t(20) });
    await settle();
    expect(calls[2]!.name).toBe("join");
    expect([value(calls[2]!.inputs.a), value(calls[2]!.inputs.b)]).toEqual([10, 20]);
    calls[2]!.finish({ y: t(30) });
    expect(value((await result).OUT)).toBe(30);
    expect(scheduler.inflight()).toBe(0);
  });

  it("passes tensors by reference: a step receives the very tensor an earlier one produced", async () => {
    const { calls, dispatch } = manualDispatch();
    const scheduler = new EnsembleScheduler({ name: "e", steps: diamond, outputs: ["OUT"], dispatch });
    const input = t(1);
    const result = scheduler.enqueue({ feeds: { A: input }, batchSize: 1, shapeKey: "" });
    await settle();
    expect(calls[0]!.inputs.x).toBe(input);
    const left = t(2);
    calls[0]!.finish({ y: left });
    calls[1]!.finish({ y: t(3) });
    await settle();
    expect(calls[2]!.inputs.a).toBe(left);
    calls[2]!.finish({ y: t(4) });
    await result;
  });

  it("fails the request with the first failing step's error, naming the step, keeps its code, and aborts the steps still running", async () => {
    const { calls, dispatch } = manualDispatch();
    const scheduler = new EnsembleScheduler({ name: "e", steps: diamond, outputs: ["OUT"], dispatch });
    const result = scheduler.enqueue({ feeds: { A: t(1) }, batchSize: 1, shapeKey: "" });
    await settle();
    calls[1]!.fail(new RuntimeError("INVALID_ARG", "bad values"));
    await expect(result).rejects.toMatchObject({ code: "INVALID_ARG", message: "ensemble 'e' step 1 ('right'): bad values" });
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(calls).toHaveLength(2); // join never ran
  });

  it("skips a step whose condition does not hold, and every step that needs its outputs; the answer leaves out what nobody produced", async () => {
    const { calls, dispatch } = manualDispatch();
    const steps: EnsembleStep[] = [
      { ...diamond[0]!, output_map: { y: "l" } },
      { ...diamond[1]!, condition: "max(l) > 5 || param('force')" },
      { ...diamond[2]! },
    ];
    const scheduler = new EnsembleScheduler({ name: "e", steps, outputs: ["l", "OUT"], dispatch });
    const skipped = scheduler.enqueue({ feeds: { A: t(1) }, batchSize: 1, shapeKey: "" });
    await settle();
    expect(calls.map((c) => c.name)).toEqual(["left"]); // right waits for l, which its condition reads
    calls[0]!.finish({ y: t(2) });
    const result = await skipped;
    expect(calls.map((c) => c.name)).toEqual(["left"]); // right skipped (2 ≤ 5), so join never could run
    expect(Object.keys(result)).toEqual(["l"]);

    const forced = scheduler.enqueue({ feeds: { A: t(1) }, batchSize: 1, shapeKey: "", parameters: { force: true } });
    await settle();
    calls[1]!.finish({ y: t(2) });
    await settle();
    expect(calls.map((c) => c.name)).toEqual(["left", "left", "right"]);
    calls[2]!.finish({ y: t(3) });
    await settle();
    calls[3]!.finish({ y: t(9) });
    expect(Object.keys(await forced)).toEqual(["l", "OUT"]);
  });

  it("`stop()` refuses new requests and resolves once the running ones finish", async () => {
    const { calls, dispatch } = manualDispatch();
    const scheduler = new EnsembleScheduler({ name: "e", steps: [diamond[0]!], outputs: ["l"], dispatch });
    const running = scheduler.enqueue({ feeds: { A: t(1) }, batchSize: 1, shapeKey: "" });
    await settle();
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await expect(scheduler.enqueue({ feeds: { A: t(1) }, batchSize: 1, shapeKey: "" })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(scheduler.hasRoom()).toBe(false);
    await settle();
    expect(stopped).toBe(false);
    calls[0]!.finish({ y: t(5) });
    expect(value((await running).l)).toBe(5);
    await stopping;
    expect(scheduler.queued).toBe(0);
  });
});

const one = (x: number): Tensor => ({ datatype: "FP32", shape: [1], data: new Float32Array([x]) });

/** A chain T0 → T1 → … → Tn whose steps are listed backwards (each one found last), and what its dispatch saw. */
function chain(n: number) {
  const steps = Array.from({ length: n }, (_, i) => ({ model_name: "inc", model_version: -1, input_map: { x: `T${i}` }, output_map: { y: `T${i + 1}` } })).reverse();
  let calls = 0;
  const scheduler = new EnsembleScheduler({
    name: "chain",
    steps,
    outputs: [`T${n}`],
    dispatch: (_name, _version, inputs) => {
      calls++;
      return Promise.resolve({ y: one((inputs.x!.data as Float32Array)[0]! + 1) });
    },
  });
  return { scheduler, calls: () => calls };
}

describe("EnsembleScheduler at scale", () => {
  it("runs a chain of 20 000 steps listed backwards in time linear in its steps (rescanning every step after each one took 26 s)", async () => {
    const { scheduler, calls } = chain(20_000);
    const started = performance.now();
    const result = await scheduler.enqueue({ feeds: { T0: one(0) }, batchSize: 1, shapeKey: "" });
    expect(performance.now() - started).toBeLessThan(3000);
    expect([...(result.T20000!.data as Float32Array)]).toEqual([20_000]);
    expect(calls()).toBe(20_000);
  });

  it("reduces a tensor once per request however many conditions read it, and skips what a condition refuses", async () => {
    let reads = 0;
    // Count element reads through a proxy on the data: each pass over the tensor reads 4.
    const data = new Proxy(new Float32Array([1, 2, 3, 4]), {
      get(target, key) {
        if (typeof key === "string" && /^[0-9]+$/.test(key)) reads++;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const big: Tensor = { datatype: "FP32", shape: [4], data };
    const steps = Array.from({ length: 50 }, (_, i) => ({ model_name: "id", model_version: -1, input_map: { x: "A" }, output_map: { y: `O${i}` }, condition: i === 49 ? "sum(A) > 100" : "sum(A) == 10 && max(A) == 4" }));
    const scheduler = new EnsembleScheduler({ name: "e", steps, outputs: steps.map((_, i) => `O${i}`), dispatch: (_n, _v, inputs) => Promise.resolve({ y: inputs.x! }) });
    const result = await scheduler.enqueue({ feeds: { A: big }, batchSize: 1, shapeKey: "" });
    expect(Object.keys(result)).toHaveLength(49);
    expect(result.O49).toBeUndefined();
    expect(reads).toBe(8); // one pass for sum, one for max
  });
});

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createOnnxRuntimeNodeBackend } from "../../runtime/backends/onnxruntime-node-backend.ts";
import { createOnnxRuntimeWebBackend } from "../../runtime/backends/onnxruntime-web-backend.ts";
import type { Backend } from "../../runtime/backends/mod.ts";
import type { Tensor } from "../../runtime/mod.ts";
import { mlpReference } from "../../models/mlp.ts";
import { mulberry32 } from "../../models/prng.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";
import { FUNCTIONS } from "../../harness/start-server.ts";

const platform = createNodePlatform();
const simple = new Uint8Array(readFileSync(`${FUNCTIONS}/simple/1/model.onnx`));
const simpleString = new Uint8Array(readFileSync(`${FUNCTIONS}/simple_string/1/model.onnx`));
const int32 = (values: number[]) => ({ datatype: "INT32" as const, shape: [1, 16], data: Int32Array.from(values) });
const strings = (values: string[]) => ({ datatype: "BYTES" as const, shape: [1, 16], data: values.map((v) => new TextEncoder().encode(v)) });

const mlp = new Uint8Array(readFileSync(`${FUNCTIONS}/mlp/1/model.onnx`));

// One backend contract for every onnxruntime backend: onnxruntime-node and onnxruntime-web's
// WebAssembly build, each with sessions in this thread and in worker threads. `provider` is what each
// serves on; asking for `unavailable` (an accelerator this machine lacks) must fall back to it.
const backends: [string, Backend, { provider: string; unavailable: "cuda" | "webgpu" }][] = [
  ["node, in-process", createOnnxRuntimeNodeBackend(), { provider: "cpu", unavailable: "cuda" }],
  ["node, worker threads", createOnnxRuntimeNodeBackend({ startWorker: platform.startWorker }), { provider: "cpu", unavailable: "cuda" }],
  ["web, wasm, in-process", createOnnxRuntimeWebBackend(), { provider: "wasm", unavailable: "webgpu" }],
  ["web, wasm, worker threads", createOnnxRuntimeWebBackend({ startWorker: platform.startWorker }), { provider: "wasm", unavailable: "webgpu" }],
];

describe.each(backends)("onnxruntime backend contract (%s)", (_mode, backend, expected) => {
  const accelerator = expected.provider === "wasm" ? "wasm" : "cpu";

  it("`load()` reports the model's signature and the provider in use", async () => {
    const session = await backend.load(simple, { accelerator });
    expect(session.provider).toBe(expected.provider);
    expect(session.signature.inputs).toEqual([
      { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
      { name: "INPUT1", datatype: "INT32", shape: [-1, 16] },
    ]);
    await session.release();
  });

  it("`run()` computes the outputs", async () => {
    const session = await backend.load(simple, { accelerator });
    const range = Array.from({ length: 16 }, (_, i) => i);
    const out = await session.run({ INPUT0: int32(range), INPUT1: int32(range.map(() => 2)) });
    expect([...(out.OUTPUT0!.data as Int32Array)]).toEqual(range.map((i) => i + 2));
    expect(out.OUTPUT1!.shape).toEqual([1, 16]);
    await session.release();
  });

  it("`run()` with `outputs` fetches only those, and every output again without", async () => {
    const session = await backend.load(simple, { accelerator });
    const range = Array.from({ length: 16 }, (_, i) => i);
    const feeds = () => ({ INPUT0: int32(range), INPUT1: int32(range.map(() => 2)) });
    const one = await session.run(feeds(), { outputs: ["OUTPUT1"] });
    expect(Object.keys(one)).toEqual(["OUTPUT1"]);
    expect([...(one.OUTPUT1!.data as Int32Array)]).toEqual(range.map((i) => i - 2));
    expect(Object.keys(await session.run(feeds())).sort()).toEqual(["OUTPUT0", "OUTPUT1"]);
    await session.release();
  });

  it("`run()` answers INVALID_ARG when the model refuses the content, and keeps working", async () => {
    const session = await backend.load(simpleString, { accelerator });
    const bad = strings(Array.from({ length: 16 }, () => "abc"));
    await expect(session.run({ INPUT0: bad, INPUT1: bad })).rejects.toMatchObject({ code: "INVALID_ARG" });
    const ok = strings(Array.from({ length: 16 }, () => "4"));
    const out = await session.run({ INPUT0: ok, INPUT1: ok });
    expect(new TextDecoder().decode((out.OUTPUT0!.data as Uint8Array[])[0])).toBe("8");
    await session.release();
  });

  it("`load()` falls back when the asked accelerator is missing, and says why", async () => {
    const session = await backend.load(simple, { accelerator: expected.unavailable });
    expect(session.provider).toBe(expected.provider);
    expect(session.fallbackReason).toMatch(new RegExp(expected.unavailable));
    await session.release();
  });

  it("`run()` agrees with the TypeScript reference on mlp within 1e-5", async () => {
    const session = await backend.load(mlp, { accelerator });
    const random = mulberry32(11);
    const x = Float32Array.from({ length: 4 * 512 }, () => random() * 2 - 1);
    const expectedOut = mlpReference(x, 4); // before run(): a worker backend takes the buffer
    const out = await session.run({ input: { datatype: "FP32", shape: [4, 512], data: x } });
    expect(out.probabilities!.data).toHaveLength(4 * 10);
    [...(out.probabilities!.data as Float32Array)].forEach((v, i) => expect(Math.abs(v - expectedOut[i]!)).toBeLessThan(1e-5));
    await session.release();
  });

  it("`load()` refuses bytes that are not a model with INVALID_ARG", async () => {
    await expect(backend.load(new Uint8Array([1, 2, 3]), { accelerator })).rejects.toMatchObject({ code: "INVALID_ARG" });
  });
});

describe("onnxruntime-node placement (execution_thread)", () => {
  const backend = createOnnxRuntimeNodeBackend({ startWorker: platform.startWorker });
  const range = Array.from({ length: 16 }, (_, i) => i);

  it("`load()` places a session in this thread for main and in a worker otherwise, and says which", async () => {
    const inline = await backend.load(simple, { accelerator: "cpu", executionThread: "main" });
    const worker = await backend.load(simple, { accelerator: "cpu", executionThread: "worker" });
    expect(inline.executionThread).toBe("main");
    expect(worker.executionThread).toBe("worker");
    // Only the inline one computes on a later turn of this loop, where a batcher may form its batch.
    expect(typeof inline.computeTurn).toBe("function");
    expect(worker.computeTurn).toBeUndefined();
    const [a, b] = await Promise.all([inline, worker].map((s) => s.run({ INPUT0: int32(range), INPUT1: int32(range) })));
    expect([...(a!.OUTPUT0!.data as Int32Array)]).toEqual(range.map((i) => 2 * i));
    expect([...(b!.OUTPUT0!.data as Int32Array)]).toEqual(range.map((i) => 2 * i));
    await Promise.all([inline.release(), worker.release()]);
  });

  it("`computeTurn()` of an inline session calls back on a later macrotask, and a run issued there computes", async () => {
    const session = await backend.load(simple, { accelerator: "cpu", executionThread: "main" });
    const order: string[] = [];
    const out = await new Promise<Record<string, Tensor>>((resolve, reject) => {
      session.computeTurn!(() => {
        order.push("turn");
        session.run({ INPUT0: int32(range), INPUT1: int32(range) }).then(resolve, reject);
      });
      order.push("asked");
    });
    expect(order).toEqual(["asked", "turn"]);
    expect([...(out.OUTPUT0!.data as Int32Array)]).toEqual(range.map((i) => 2 * i));
    await session.release();
  });

  it("an inline run tells `computed` its own time, without the wait for its turn of the event loop", async () => {
    const session = await backend.load(simple, { accelerator: "cpu", executionThread: "main" });
    // Work queued for the same turn before the run (what HTTP work is to a served run): 30 ms.
    setImmediate(() => {
      const until = performance.now() + 30;
      while (performance.now() < until);
    });
    let computedMs: number | undefined;
    const started = performance.now();
    const out = await session.run({ INPUT0: int32(range), INPUT1: int32(range) }, { computed: (ms) => (computedMs = ms) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(30);
    expect(computedMs).toBeGreaterThanOrEqual(0);
    expect(computedMs).toBeLessThan(30);
    expect([...(out.OUTPUT0!.data as Int32Array)]).toEqual(range.map((i) => 2 * i));
    await session.release();
  });

  it("`release()` of an inline session waits for the run in flight instead of pulling the session from under it", async () => {
    const session = await backend.load(simple, { accelerator: "cpu", executionThread: "main" });
    const runs = Array.from({ length: 20 }, () => session.run({ INPUT0: int32(range), INPUT1: int32(range) }));
    const released = session.release();
    const settled = await Promise.allSettled(runs);
    await released;
    // Each run either finished or was refused; none was left pending or took the process down.
    expect(settled.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(1);
  });
});

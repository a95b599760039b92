import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createOnnxRuntimeNodeBackend } from "../../runtime/backends/onnxruntime-node-backend.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";
import { FUNCTIONS } from "../support/start-server.ts";

const platform = createNodePlatform();
const simple = new Uint8Array(readFileSync(`${FUNCTIONS}/simple/1/model.onnx`));
const simpleString = new Uint8Array(readFileSync(`${FUNCTIONS}/simple_string/1/model.onnx`));
const int32 = (values: number[]) => ({ datatype: "INT32" as const, shape: [1, 16], data: Int32Array.from(values) });
const strings = (values: string[]) => ({ datatype: "BYTES" as const, shape: [1, 16], data: values.map((v) => new TextEncoder().encode(v)) });

// The same backend contract, with sessions in this thread and in worker threads.
describe.each([
  ["in-process", createOnnxRuntimeNodeBackend()],
  ["worker", createOnnxRuntimeNodeBackend({ startWorker: platform.startWorker })],
])("onnxruntime-node backend (%s)", (_mode, backend) => {
  it("`load()` reports the model's signature and the provider in use", async () => {
    const session = await backend.load(simple, { accelerator: "cpu" });
    expect(session.provider).toBe("cpu");
    expect(session.signature.inputs).toEqual([
      { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
      { name: "INPUT1", datatype: "INT32", shape: [-1, 16] },
    ]);
    await session.release();
  });

  it("`run()` computes the outputs", async () => {
    const session = await backend.load(simple, { accelerator: "cpu" });
    const range = Array.from({ length: 16 }, (_, i) => i);
    const out = await session.run({ INPUT0: int32(range), INPUT1: int32(range.map(() => 2)) });
    expect([...(out.OUTPUT0!.data as Int32Array)]).toEqual(range.map((i) => i + 2));
    expect(out.OUTPUT1!.shape).toEqual([1, 16]);
    await session.release();
  });

  it("`run()` answers INVALID_ARG when the model refuses the content, and keeps working", async () => {
    const session = await backend.load(simpleString, { accelerator: "cpu" });
    const bad = strings(Array.from({ length: 16 }, () => "abc"));
    await expect(session.run({ INPUT0: bad, INPUT1: bad })).rejects.toMatchObject({ code: "INVALID_ARG" });
    const ok = strings(Array.from({ length: 16 }, () => "4"));
    const out = await session.run({ INPUT0: ok, INPUT1: ok });
    expect(new TextDecoder().decode((out.OUTPUT0!.data as Uint8Array[])[0])).toBe("8");
    await session.release();
  });

  it("`load()` falls back from CUDA to the CPU and says why", async () => {
    const session = await backend.load(simple, { accelerator: "cuda" });
    expect(session.provider).toBe("cpu");
    expect(session.fallbackReason).toMatch(/cuda/);
    await session.release();
  });

  it("`load()` refuses bytes that are not a model with INVALID_ARG", async () => {
    await expect(backend.load(new Uint8Array([1, 2, 3]), { accelerator: "cpu" })).rejects.toMatchObject({ code: "INVALID_ARG" });
  });
});

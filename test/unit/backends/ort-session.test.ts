import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { OrtSession } from "../../../runtime/backends/_ort-session.ts";
import { ortNode } from "../../../runtime/backends/_ort-node.ts";
import { FUNCTIONS } from "../../support/start-server.ts";

const simple = new Uint8Array(readFileSync(`${FUNCTIONS}/simple/1/model.onnx`));

describe("OrtSession", () => {
  it("`create()` takes model bytes in shared memory (a parked model's), which onnxruntime-node's own create refuses", async () => {
    const parked = new Uint8Array(new SharedArrayBuffer(simple.byteLength));
    parked.set(simple);
    await expect(ortNode.InferenceSession.create(parked, {})).rejects.toThrow(/Invalid argument/);
    const session = await OrtSession.create(ortNode, parked, { provider: "cpu", intraOpThreads: 1 });
    const input = { datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(2) };
    const out = await session.run({ INPUT0: input, INPUT1: { ...input, data: new Int32Array(16).fill(1) } });
    expect([...new Set(out.OUTPUT0!.data as Int32Array)]).toEqual([3]);
    await session.release();
    expect(parked).toEqual(simple);
  });

  it("`run()` computes on a later macrotask, never within the call or its microtasks (what InlineGate's `deferred` relies on)", async () => {
    const session = await OrtSession.create(ortNode, simple, { provider: "cpu", intraOpThreads: 1 });
    const input = { datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(2) };
    let settled = false;
    const run = session.run({ INPUT0: input, INPUT1: input }).then(() => (settled = true));
    for (let i = 0; i < 200; i++) await Promise.resolve();
    expect(settled).toBe(false);
    await run;
    expect(settled).toBe(true);
    await session.release();
  });
});

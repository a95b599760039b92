import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { OrtSession } from "../../../runtime/backends/_ort-session.ts";
import { ortNode } from "../../../runtime/backends/_ort-node.ts";
import { FUNCTIONS } from "../../support/start-server.ts";
import { loadNative } from "../../../native/index.ts";

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

  it("`create()` reads shared bytes through the adapter's plain view, without a copy, and copies when it gives none or throws", async () => {
    const native = loadNative();
    expect(native, "native/build/Release/tensorfn_native.node is missing: `npm ci` builds it").toBeDefined();
    const parked = new Uint8Array(new SharedArrayBuffer(simple.byteLength + 8), 8, simple.byteLength);
    parked.set(simple);
    const input = { datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(2) };
    const viewed: ArrayBuffer[] = [];
    const views = [
      (bytes: Uint8Array) => {
        const view = native!.plainView(bytes);
        if (view) viewed.push(view);
        return view;
      },
      () => undefined,
      () => {
        throw new Error("no external buffers here");
      },
    ];
    for (const plainView of views) {
      const session = await OrtSession.create(ortNode, parked, { provider: "cpu", intraOpThreads: 1 }, plainView);
      const out = await session.run({ INPUT0: input, INPUT1: { ...input, data: new Int32Array(16).fill(1) } });
      expect([...new Set(out.OUTPUT0!.data as Int32Array)]).toEqual([3]);
      await session.release();
    }
    // The view was the parked memory itself (a write through the SharedArrayBuffer shows in it), and ORT left it as it was.
    expect(viewed).toHaveLength(1);
    expect(new Uint8Array(viewed[0]!)).toEqual(simple);
    parked[0] ^= 0xff;
    expect(new Uint8Array(viewed[0]!)[0]).toBe(parked[0]);
    parked[0] ^= 0xff;
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

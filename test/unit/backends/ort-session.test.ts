import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { intraOpSpinning, isOrtFormat, OrtSession, SPIN_DURATION_US } from "../../../runtime/backends/_ort-session.ts";
import { ortNode } from "../../../runtime/backends/_ort-node.ts";
import { FUNCTIONS } from "../../../harness/start-server.ts";
import { loadNative } from "../../../native/index.ts";
import { mlpWeights } from "../../../models/mlp.ts";

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

  it("`create()` with `saveOptimizedTo` writes the model's ORT form, which loads from shared memory and computes the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ort-form-"));
    try {
      const path = join(dir, "model.ort");
      const mlp = new Uint8Array(readFileSync(`${FUNCTIONS}/mlp/1/model.onnx`));
      const original = await OrtSession.create(ortNode, mlp, { provider: "cpu", intraOpThreads: 1, saveOptimizedTo: path });
      const form = new Uint8Array(readFileSync(path));
      expect([isOrtFormat(form), isOrtFormat(mlp)]).toEqual([true, false]);
      const kept = new Uint8Array(new SharedArrayBuffer(form.byteLength));
      kept.set(form);
      const woken = await OrtSession.create(ortNode, kept, { provider: "cpu", intraOpThreads: 1 });
      const feeds = () => ({ input: { datatype: "FP32" as const, shape: [2, 512], data: Float32Array.from({ length: 1024 }, (_, i) => Math.sin(i)) } });
      const [a, b] = [await original.run(feeds()), await woken.run(feeds())];
      expect(woken.signature).toEqual(original.signature);
      const output = original.signature.outputs[0]!.name;
      expect(b[output]!.data).toEqual(a[output]!.data);
      await Promise.all([original.release(), woken.release()]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("`weightsInPlace` makes a session of the ORT form use the weights where they lie in the kept bytes; without it they are copied", async () => {
    const native = loadNative();
    expect(native, "native/build/Release/tensorfn_native.node is missing: `npm ci` builds it").toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "ort-form-"));
    try {
      const path = join(dir, "model.ort");
      const mlp = new Uint8Array(readFileSync(`${FUNCTIONS}/mlp/1/model.onnx`));
      await (await OrtSession.create(ortNode, mlp, { provider: "cpu", intraOpThreads: 1, saveOptimizedTo: path })).release();
      const form = new Uint8Array(readFileSync(path));
      const kept = new Uint8Array(new SharedArrayBuffer(form.byteLength));
      kept.set(form);
      const settings = { provider: "cpu", intraOpThreads: 1 };
      const plainView = (bytes: Uint8Array) => native!.plainView(bytes);
      const copied = await OrtSession.create(ortNode, kept, settings, plainView);
      const inPlace = await OrtSession.create(ortNode, kept, { ...settings, weightsInPlace: true }, plainView);
      const feeds = () => ({ input: { datatype: "FP32" as const, shape: [1, 512], data: Float32Array.from({ length: 512 }, (_, i) => Math.sin(i)) } });
      const probabilities = async (session: OrtSession) => [...((await session.run(feeds())).probabilities!.data as Float32Array)];
      const before = await probabilities(copied);
      expect(await probabilities(inPlace)).toEqual(before);
      // The first layer's bias (not prepacked, unlike the matrices) lies in the kept bytes: zeroed
      // there, the session that reads it in place answers differently, the one that copied it does
      // not. (Not the last layer's 40-byte bias: a change to it showed in neither, so onnxruntime
      // keeps that one elsewhere.)
      const bias = mlpWeights()[0]!.bias;
      const at = Buffer.from(kept.buffer).indexOf(Buffer.from(bias.buffer, bias.byteOffset, bias.byteLength));
      expect(at).toBeGreaterThan(0);
      kept.fill(0, at, at + bias.byteLength);
      expect(await probabilities(copied)).toEqual(before);
      expect(await probabilities(inPlace)).not.toEqual(before);
      await Promise.all([copied.release(), inPlace.release()]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("intra-op threads on the CPU spin a little unless the function says never or without bound; elsewhere they spin only when told", () => {
    expect(SPIN_DURATION_US).toBe(100);
    expect(intraOpSpinning({ provider: "cpu" })).toEqual({ allow_spinning: "1", spin_duration_us: "100" });
    expect(intraOpSpinning({ provider: "cpu", allowSpinning: false })).toEqual({ allow_spinning: "0" });
    expect(intraOpSpinning({ provider: "cpu", allowSpinning: true })).toEqual({ allow_spinning: "1" });
    expect(intraOpSpinning({ provider: "cuda" })).toEqual({ allow_spinning: "0" });
    expect(intraOpSpinning({ provider: "cuda", allowSpinning: true })).toEqual({ allow_spinning: "1" });
  });

  it("`create()` fails when the ORT form cannot be written, and writes nothing", async () => {
    const path = join(tmpdir(), "no-such-dir-tensorfn", "nested", "model.ort");
    await expect(OrtSession.create(ortNode, simple, { provider: "cpu", intraOpThreads: 1, saveOptimizedTo: path })).rejects.toThrow();
    expect(existsSync(path)).toBe(false);
  });
});

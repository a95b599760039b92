import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createNodePlatform } from "../../../adapters/node/platform.ts";
import { WorkerConnection } from "../../../runtime/backends/_worker-connection.ts";
import { MAX_ARENA_BYTES } from "../../../runtime/backends/_shared-channel.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";
import { FUNCTIONS } from "../../../harness/start-server.ts";

// Real worker threads and onnxruntime-node: `simple` adds (OUTPUT0 = INPUT0 + INPUT1) and
// subtracts (OUTPUT1 = INPUT0 − INPUT1) two INT32 [N, 16] tensors, so every answer is checkable.
const platform = createNodePlatform();
const simple = new Uint8Array(readFileSync(`${FUNCTIONS}/simple/1/model.onnx`));
const settings = { provider: "cpu", intraOpThreads: 1 };
const worker = new URL("../../../runtime/backends/onnxruntime-worker.ts", import.meta.url);
const exitingWorker = new URL("./_exiting-worker.ts", import.meta.url);

const int32 = (rows: number, value: (i: number) => number): Tensor => ({
  datatype: "INT32",
  shape: [rows, 16],
  data: Int32Array.from({ length: rows * 16 }, (_, i) => value(i)),
});
const feeds = (rows: number, a: number, b: number) => ({ INPUT0: int32(rows, () => a), INPUT1: int32(rows, () => b) });
const values = (t: Tensor | undefined) => [...new Set(t!.data as Int32Array)];

const open: WorkerConnection[] = [];
async function connect(options: { sharedChannel: boolean }, module = worker): Promise<WorkerConnection> {
  const connection = new WorkerConnection(platform.startWorker!(module), options);
  open.push(connection);
  await connection.load(simple, settings);
  return connection;
}
afterEach(async () => void (await Promise.all(open.splice(0).map((c) => c.close()))));

describe.each([
  ["shared channel", { sharedChannel: true }],
  ["postMessage only", { sharedChannel: false }],
])("WorkerConnection (%s)", (_mode, options) => {
  it("`run()` answers runs in order, each with its own inputs' results", async () => {
    const c = await connect(options);
    for (let i = 0; i < 50; i++) {
      const out = await c.run(feeds(1 + (i % 4), i, 1));
      expect(out.OUTPUT0!.shape).toEqual([1 + (i % 4), 16]);
      expect(values(out.OUTPUT0)).toEqual([i + 1]);
      expect(values(out.OUTPUT1)).toEqual([i - 1]);
    }
  });

  it("`run()` with outputs fetches only those, run after run, and all of them again without", async () => {
    const c = await connect(options);
    for (let i = 0; i < 6; i++) {
      const wanted = i % 3 === 0 ? undefined : i % 3 === 1 ? ["OUTPUT1"] : ["OUTPUT0"];
      const out = await c.run(feeds(2, i, 1), wanted);
      expect(Object.keys(out).sort()).toEqual(wanted ?? ["OUTPUT0", "OUTPUT1"]);
      if (out.OUTPUT0) expect(values(out.OUTPUT0)).toEqual([i + 1]);
      if (out.OUTPUT1) expect(values(out.OUTPUT1)).toEqual([i - 1]);
    }
  });

  it("`run()` called 40 times at once answers every call with its own results", async () => {
    const c = await connect(options);
    const outs = await Promise.all(Array.from({ length: 40 }, (_, i) => c.run(feeds(2, i, i))));
    outs.forEach((out, i) => expect(values(out.OUTPUT0)).toEqual([2 * i]));
  });

  it("a `release()` sent while runs are in flight waits for them: every run answers, then the session goes", async () => {
    const c = await connect(options);
    const runs = Array.from({ length: 8 }, (_, i) => c.run(feeds(8, i, 1)));
    const released = c.release();
    const outs = await Promise.all(runs);
    outs.forEach((out, i) => expect(values(out.OUTPUT0)).toEqual([i + 1]));
    await released;
    await expect(c.run(feeds(1, 1, 1))).rejects.toThrow(/run before load/);
  });

  it("outputs stay intact after later runs reuse the arenas, and are not shared memory", async () => {
    const c = await connect(options);
    const first = await c.run(feeds(3, 5, 5));
    await c.run(feeds(3, 100, 100));
    expect(values(first.OUTPUT0)).toEqual([10]);
    expect((first.OUTPUT0!.data as Int32Array).buffer).toBeInstanceOf(ArrayBuffer);
  });

  it("`run()` grows past the initial arenas and back, and carries tensors over the arena ceiling by message", async () => {
    const c = await connect(options);
    const big = 4096; // 256 KiB per tensor: past the 64 KiB arenas, both ways
    const huge = Math.ceil(MAX_ARENA_BYTES / 64) + 1; // over the ceiling
    for (const rows of [1, big, big, 1, huge, 2]) {
      const out = await c.run(feeds(rows, rows % 1000, 1));
      expect(out.OUTPUT0!.shape).toEqual([rows, 16]);
      expect(values(out.OUTPUT0)).toEqual([(rows % 1000) + 1]);
    }
  });

  it("a worker that dies mid-run fails the run with INTERNAL, and later calls at once", async () => {
    const c = await connect(options, exitingWorker);
    expect(values((await c.run(feeds(1, 1, 1))).OUTPUT0)).toEqual([2]);
    await expect(c.run(feeds(1, -999, 0))).rejects.toMatchObject({ code: "INTERNAL", message: expect.stringMatching(/worker stopped/) });
    expect(c.alive).toBe(false);
    await expect(c.run(feeds(1, 1, 1))).rejects.toMatchObject({ code: "INTERNAL" });
  });

  it("`release()` then `load()` serves the new session on the same thread", async () => {
    const c = await connect(options);
    await c.run(feeds(1, 1, 1));
    await c.release();
    await c.load(simple, settings);
    expect(values((await c.run(feeds(1, 3, 4))).OUTPUT0)).toEqual([7]);
  });
});

describe("WorkerConnection's shared channel", () => {
  it("copies feeds into shared memory instead of taking them; postMessage moves them", async () => {
    const shared = await connect({ sharedChannel: true });
    const kept = feeds(2, 1, 1);
    await shared.run(kept);
    expect((kept.INPUT0.data as Int32Array).byteLength).toBe(2 * 16 * 4);
    const messaged = await connect({ sharedChannel: false });
    const moved = feeds(2, 1, 1);
    await messaged.run(moved);
    expect((moved.INPUT0.data as Int32Array).byteLength).toBe(0);
  });

  it("a batch too large for the arena ceiling moves by transfer, and the next small one uses the channel again", async () => {
    const c = await connect({ sharedChannel: true });
    const huge = feeds(Math.ceil(MAX_ARENA_BYTES / 64) + 1, 1, 1);
    await c.run(huge);
    expect((huge.INPUT0.data as Int32Array).byteLength).toBe(0);
    const small = feeds(1, 1, 1);
    await c.run(small);
    expect((small.INPUT0.data as Int32Array).byteLength).toBe(64);
  });
});

describe("WorkerConnection's `load()` from shared memory", () => {
  it("loads a parked model's bytes in shared memory (which onnxruntime-node refuses) and leaves them intact to load again", async () => {
    const parked = new Uint8Array(new SharedArrayBuffer(simple.byteLength));
    parked.set(simple);
    const c = new WorkerConnection(platform.startWorker!(worker));
    open.push(c);
    for (let wake = 0; wake < 2; wake++) {
      await c.load(parked, settings);
      expect(values((await c.run(feeds(1, 2, 3))).OUTPUT0)).toEqual([5]);
      await c.release();
    }
    expect(parked).toEqual(simple);
  });
});

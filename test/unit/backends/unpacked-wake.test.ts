import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOnnxRuntimeNodeBackend } from "../../../runtime/backends/onnxruntime-node-backend.ts";
import { OrtSession } from "../../../runtime/backends/_ort-session.ts";
import type { OrtSessionSettings } from "../../../runtime/backends/_ort-session.ts";
import { ortNode } from "../../../runtime/backends/_ort-node.ts";
import { loadNative } from "../../../native/index.ts";
import { FUNCTIONS } from "../../../harness/start-server.ts";

// `wake_unpacked`: a wake of an event-loop session whose weights stay in place answers first from a
// session made without prepacking, then hands over to the prepacked one (onnxruntime-node-backend.ts).
const native = loadNative();
const plainView = (bytes: Uint8Array) => native!.plainView(bytes);
let dir: string;
let kept: Uint8Array; // mlp's ORT-format form in shared memory, as a park keeps it

beforeAll(async () => {
  expect(native, "native/build/Release/tensorfn_native.node is missing: `npm ci` builds it").toBeDefined();
  dir = mkdtempSync(join(tmpdir(), "unpacked-wake-"));
  const path = join(dir, "model.ort");
  const mlp = new Uint8Array(readFileSync(`${FUNCTIONS}/mlp/1/model.onnx`));
  await (await OrtSession.create(ortNode, mlp, { provider: "cpu", intraOpThreads: 1, saveOptimizedTo: path })).release();
  const form = readFileSync(path);
  kept = new Uint8Array(new SharedArrayBuffer(form.byteLength));
  kept.set(form);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** Every session the backend makes, with the settings it was made with and whether it was released. */
function watchSessions(fail?: (settings: OrtSessionSettings) => boolean) {
  const made: { settings: OrtSessionSettings; released: boolean }[] = [];
  const create = OrtSession.create.bind(OrtSession);
  vi.spyOn(OrtSession, "create").mockImplementation(async (module, model, settings, view) => {
    if (fail?.(settings)) throw new Error("no memory left (test)");
    const session = await create(module, model, settings, view);
    const entry = { settings, released: false };
    made.push(entry);
    const release = session.release.bind(session);
    session.release = async () => ((entry.released = true), await release());
    return session;
  });
  return made;
}

const feeds = (batch: number) => ({ input: { datatype: "FP32" as const, shape: [batch, 512], data: Float32Array.from({ length: batch * 512 }, (_, i) => Math.sin(i)) } });
/** The two sessions compute with different kernels: the same answer up to float rounding. */
const sameAnswer = (a: { data: unknown }, b: { data: unknown }) => [...(a.data as Float32Array)].forEach((v, i) => expect(v).toBeCloseTo((b.data as Float32Array)[i]!, 6));
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
const load = (backend = createOnnxRuntimeNodeBackend({ plainView }), options = {}) =>
  backend.load(kept, { accelerator: "cpu", executionThread: "main", weightsInPlace: true, wakeUnpacked: true, intraOpThreads: 1, ...options });

describe("a wake on the event loop with weights in place and wakeUnpacked", () => {
  it("answers first from an unpacked session, then from the prepacked one, which it hands over to after that first run", async () => {
    const made = watchSessions();
    const session = await load();
    expect(made.map((m) => m.settings.prepack)).toEqual([false]);
    const first = await session.run(feeds(8));
    await vi.waitFor(() => expect(made.map((m) => [m.settings.prepack, m.released])).toEqual([[false, true], [undefined, false]]));
    const after = await session.run(feeds(8));
    sameAnswer(after.probabilities!, first.probabilities!);
    await session.release();
    expect(made.every((m) => m.released)).toBe(true);
  });

  it("a run started on the unpacked session finishes on it before that session is released", async () => {
    const made = watchSessions();
    const session = await load();
    await session.run(feeds(1));
    // Issued while the hand-over has not happened yet (it waits for the next macrotask).
    const racing = session.run(feeds(64));
    await vi.waitFor(() => expect(made[0]!.released).toBe(true));
    expect((await racing).probabilities!.shape).toEqual([64, 10]);
    await session.release();
  });

  it("released before the hand-over, it releases both sessions and leaves nothing running", async () => {
    const made = watchSessions();
    const session = await load();
    await session.run(feeds(1));
    await session.release();
    await turn();
    expect(made.every((m) => m.released)).toBe(true);
  });

  it("keeps answering from the unpacked session when the prepacked one cannot be built, and says so", async () => {
    const made = watchSessions((settings) => settings.prepack === undefined);
    const warn = vi.fn();
    const session = await load(undefined, { log: { info() {}, warn } });
    const first = await session.run(feeds(2));
    await vi.waitFor(() => expect(warn).toHaveBeenCalledWith(expect.stringMatching(/prepacked session could not be built.*no memory left/)));
    expect((await session.run(feeds(2))).probabilities!.data).toEqual(first.probabilities!.data);
    await session.release();
    expect(made.map((m) => [m.settings.prepack, m.released])).toEqual([[false, true]]);
  });

  it("only there: without wakeUnpacked, for an ONNX model, or with weights copied, the session is prepacked at once", async () => {
    const made = watchSessions();
    const onnx = new Uint8Array(readFileSync(`${FUNCTIONS}/mlp/1/model.onnx`));
    const backend = createOnnxRuntimeNodeBackend({ plainView });
    for (const session of [
      await load(backend, { wakeUnpacked: undefined }),
      await backend.load(onnx, { accelerator: "cpu", executionThread: "main", weightsInPlace: true, wakeUnpacked: true, intraOpThreads: 1 }),
      await load(backend, { weightsInPlace: false }),
    ]) {
      await session.run(feeds(1));
      await turn();
      await session.release();
    }
    expect(made.map((m) => m.settings.prepack)).toEqual([undefined, undefined, undefined]);
  });
});

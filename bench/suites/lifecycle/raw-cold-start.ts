import { readFile } from "node:fs/promises";
import os from "node:os";
import * as ort from "onnxruntime-node";

/** Median of a list of milliseconds. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Zero feeds for a session's inputs, batch 1 where the first dimension is free. */
export function zeroFeeds(session: ort.InferenceSession): Record<string, ort.Tensor> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) continue;
    const dims = meta.shape.map((d) => (typeof d === "number" && d > 0 ? d : 1));
    const count = dims.reduce((a, b) => a * b, 1);
    feeds[meta.name] = meta.type === "int32" ? new ort.Tensor("int32", new Int32Array(count), dims) : new ort.Tensor("float32", new Float32Array(count), dims);
  }
  return feeds;
}

/**
 * The raw cost tensorfn's cold starts are compared with: create the onnxruntime session (with the
 * options the server uses for one instance) and run it once, from bytes already in memory and from
 * the file, in a process where onnxruntime is already loaded. Median of `reps`.
 */
export async function rawColdStart(path: string, reps: number): Promise<{ fromMemoryMs: number; fromDiskMs: number; fileBytes: number }> {
  const options: ort.InferenceSession.SessionOptions = {
    executionProviders: ["cpu"],
    intraOpNumThreads: os.availableParallelism(),
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  };
  const once = async (bytes?: Uint8Array) => {
    const started = performance.now();
    const model = bytes ?? new Uint8Array(await readFile(path));
    const session = await ort.InferenceSession.create(model, options);
    await session.run(zeroFeeds(session));
    const ms = performance.now() - started;
    await session.release();
    return ms;
  };
  const bytes = new Uint8Array(await readFile(path));
  await once(bytes); // warm the addon and the page cache
  const memory: number[] = [];
  const disk: number[] = [];
  for (let i = 0; i < reps; i++) {
    memory.push(await once(bytes));
    disk.push(await once());
  }
  return { fromMemoryMs: median(memory), fromDiskMs: median(disk), fileBytes: bytes.byteLength };
}

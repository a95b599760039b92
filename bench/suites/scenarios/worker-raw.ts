import os from "node:os";
import { Worker } from "node:worker_threads";
import { summarizeLatencies } from "../../../adapters/bench/percentiles.ts";
import { startCpuMeter } from "./cpu-meter.ts";
import type { RawPoint, RawTiming } from "./raw.ts";

/**
 * Throughput of `modelPath` at `batch` when every run goes the way tensorfn runs it, minus HTTP:
 * a fresh copy of the input (as a new request body would be) moved to an ORT session in a worker
 * thread, the output moved back, back to back. Next to the in-process numbers it separates the
 * cost of the worker hop and fresh buffers from the cost of serving HTTP alongside.
 */
export async function workerThroughput(modelPath: string, spec: { input: string; dims: number[]; batch: number; timing: RawTiming }): Promise<RawPoint> {
  const shape = [spec.batch, ...spec.dims];
  const source = new Float32Array(shape.reduce((a, b) => a * b, 1)).map((_, i) => ((i * 2654435761) % 1000) / 1000);
  const worker = new Worker(new URL("./ort-worker-thread.mjs", import.meta.url), {
    workerData: { modelPath, input: spec.input, threads: os.availableParallelism() },
  });
  let reply: (() => void) | undefined;
  const ready = new Promise<void>((resolve) => (reply = resolve));
  worker.on("message", () => reply?.());
  try {
    await ready;
    const run = () =>
      new Promise<void>((resolve) => {
        reply = resolve;
        const data = source.slice();
        worker.postMessage({ data, shape }, [data.buffer]);
      });
    const warmupEnd = performance.now() + spec.timing.warmupMs;
    do await run();
    while (performance.now() < warmupEnd);
    const durations: number[] = [];
    const meter = startCpuMeter();
    const start = performance.now();
    let now = start;
    while (now - start < spec.timing.measureMs || durations.length < spec.timing.minRuns) {
      const before = now;
      await run();
      now = performance.now();
      durations.push(now - before);
    }
    const seconds = (now - start) / 1000;
    const cores = meter.stop();
    return {
      batch: spec.batch,
      runs: durations.length,
      seconds,
      inferPerS: (spec.batch * durations.length) / seconds,
      runP50Ms: summarizeLatencies(durations)!.p50,
      selfCores: cores.self,
      otherCores: cores.other,
    };
  } finally {
    await worker.terminate();
  }
}

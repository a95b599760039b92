import os from "node:os";
import { Worker } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { summarizeLatencies } from "../../../adapters/bench/percentiles.ts";
import type { Percentiles } from "../../../adapters/bench/percentiles.ts";
import { leastDisturbed, startCpuMeter } from "./cpu-meter.ts";

/** One batch size of an in-process throughput sweep. */
export interface RawPoint {
  batch: number;
  runs: number;
  seconds: number;
  /** batch × runs / seconds. */
  inferPerS: number;
  /** Median time of one `session.run`, ms. */
  runP50Ms: number;
  /** Cores this process kept busy while measuring, and cores busy elsewhere on the machine. */
  selfCores: number;
  otherCores: number | null;
  /** Measurements taken (more than 1 when other work disturbed the first; the least disturbed is kept). */
  attempts?: number;
}

/** The throughput sweep of one model. */
export interface RawSweep {
  model: string;
  points: RawPoint[];
  best: RawPoint;
}

/** How long each sweep point runs: a time budget, but never fewer than `minRuns` runs. */
export interface RawTiming {
  warmupMs: number;
  measureMs: number;
  minRuns: number;
}

/**
 * tensorfn's threads and graph passes for a function with one instance on this machine (see
 * runtime/backends/_ort-session.ts): every core for intra-op work, all graph passes; but no
 * spinning, where tensorfn spins 100 µs, so the cores a run keeps busy are compute only.
 */
export function serverSessionOptions(): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: ["cpu"],
    graphOptimizationLevel: "all",
    intraOpNumThreads: os.availableParallelism(),
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  };
}

/**
 * In-process throughput of `modelPath` at each batch size: the limit a server on this machine can
 * approach. The input is FP32 [batch, ...dims] of seeded values; runs are back to back.
 */
export async function sweepBatches(
  modelPath: string,
  spec: { model: string; input: string; dims: number[]; batches: number[]; timing: (batch: number) => RawTiming; log: (line: string) => void },
): Promise<RawSweep> {
  const session = await ort.InferenceSession.create(modelPath, serverSessionOptions());
  const points: RawPoint[] = [];
  try {
    for (const batch of spec.batches) {
      const shape = [batch, ...spec.dims];
      const data = seeded(shape.reduce((a, b) => a * b, 1));
      const feeds = { [spec.input]: new ort.Tensor("float32", data, shape) };
      const point = await leastDisturbed(() => timeRuns(session, feeds, spec.timing(batch), batch), (p) => p.otherCores, 2);
      points.push(point);
      spec.log(`raw ${spec.model} batch ${batch}: ${point.inferPerS.toFixed(1)} infer/s (${point.runs} runs, ${point.runP50Ms.toFixed(2)} ms/run, ${point.selfCores.toFixed(2)} cores; others ${point.otherCores?.toFixed(2) ?? "?"}${point.attempts > 1 ? `; best of ${point.attempts} attempts` : ""})`);
    }
  } finally {
    await session.release();
  }
  const best = points.reduce((a, b) => (b.inferPerS > a.inferPerS ? b : a));
  return { model: spec.model, points, best };
}

/** Latency percentiles (ms) of `runs` back-to-back batch-1 runs of the `simple` model. */
export async function simpleLatency(modelPath: string, runs: number): Promise<Percentiles> {
  const session = await ort.InferenceSession.create(modelPath, serverSessionOptions());
  try {
    const a = Int32Array.from({ length: 16 }, (_, i) => i);
    const b = Int32Array.from({ length: 16 }, () => 1);
    const feeds = { INPUT0: new ort.Tensor("int32", a, [1, 16]), INPUT1: new ort.Tensor("int32", b, [1, 16]) };
    for (let i = 0; i < 200; i++) await session.run(feeds);
    const latencies = new Float64Array(runs);
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await session.run(feeds);
      latencies[i] = performance.now() - start;
    }
    return summarizeLatencies(latencies)!;
  } finally {
    await session.release();
  }
}

/**
 * Latency percentiles (ms) of a postMessage round trip to a worker thread that echoes a 128-byte
 * buffer back: the hop every tensorfn execution makes to reach its ORT worker.
 */
export async function workerRoundTrip(runs: number): Promise<Percentiles> {
  const echo = `const { parentPort } = require("node:worker_threads");
parentPort.on("message", (m) => parentPort.postMessage(m, [m.buffer]));`;
  const worker = new Worker(echo, { eval: true });
  try {
    let reply: (() => void) | undefined;
    worker.on("message", () => reply?.());
    const once = () => new Promise<void>((resolve) => {
      reply = resolve;
      const data = new Int32Array(32);
      worker.postMessage(data, [data.buffer]);
    });
    for (let i = 0; i < 200; i++) await once();
    const latencies = new Float64Array(runs);
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await once();
      latencies[i] = performance.now() - start;
    }
    return summarizeLatencies(latencies)!;
  } finally {
    await worker.terminate();
  }
}

async function timeRuns(session: ort.InferenceSession, feeds: Record<string, ort.Tensor>, timing: RawTiming, batch: number): Promise<RawPoint> {
  const warmupEnd = performance.now() + timing.warmupMs;
  do await session.run(feeds);
  while (performance.now() < warmupEnd);
  const durations: number[] = [];
  const meter = startCpuMeter();
  const start = performance.now();
  let now = start;
  while (now - start < timing.measureMs || durations.length < timing.minRuns) {
    const before = now;
    await session.run(feeds);
    now = performance.now();
    durations.push(now - before);
  }
  const seconds = (now - start) / 1000;
  const cores = meter.stop();
  return {
    batch,
    runs: durations.length,
    seconds,
    inferPerS: (batch * durations.length) / seconds,
    runP50Ms: summarizeLatencies(durations)!.p50,
    selfCores: cores.self,
    otherCores: cores.other,
  };
}

function seeded(count: number): Float32Array {
  const data = new Float32Array(count);
  let state = 1;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    data[i] = state / 4294967296;
  }
  return data;
}

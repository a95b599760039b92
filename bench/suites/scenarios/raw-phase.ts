import { join } from "node:path";
import type { Percentiles } from "../../../adapters/bench/percentiles.ts";
import { simpleLatency, sweepBatches, workerRoundTrip } from "./raw.ts";
import type { RawPoint, RawSweep, RawTiming } from "./raw.ts";
import { leastDisturbed } from "./cpu-meter.ts";
import { workerThroughput } from "./worker-raw.ts";

/** Everything measured without HTTP. */
export interface RawResults {
  mlp: RawSweep;
  resnet: RawSweep;
  /** One batch-1 `simple` run, in-process. */
  simple: Percentiles;
  /** A bare postMessage round trip to a worker thread. */
  workerHop: Percentiles;
  /** The same models run tensorfn's way minus HTTP: fresh input moved to a worker thread per run. */
  worker: { mlp: RawPoint[]; resnet: RawPoint[] };
  /** The best batch of each sweep measured again after the served steps, to show drift. */
  recheck?: { mlp: RawPoint; resnet: RawPoint };
}

const BATCHES = [1, 2, 4, 8, 16, 32, 64];
const MODELS = {
  mlp: { input: "input", dims: [512], workerBatches: [1, 16] },
  resnet: { input: "input", dims: [3, 224, 224], workerBatches: [1, 8] },
} as const;

/** The raw phase: both batch sweeps, the worker-thread points, `simple` latency and the hop. */
export async function measureRaw(functionsDir: string, options: { scale: number; log: (line: string) => void }): Promise<RawResults> {
  const { scale, log } = options;
  const timing = (): RawTiming => ({ warmupMs: 300 * scale, measureMs: 2000 * scale, minRuns: 3 });
  const path = (name: string) => join(functionsDir, name, "1", "model.onnx");
  const simple = await simpleLatency(path("simple"), 2000);
  const workerHop = await workerRoundTrip(2000);
  log(`raw simple: p50 ${(simple.p50 * 1000).toFixed(0)} µs; worker round trip p50 ${(workerHop.p50 * 1000).toFixed(0)} µs`);
  const sweep = (name: keyof typeof MODELS) => sweepBatches(path(name), { model: name, input: MODELS[name].input, dims: [...MODELS[name].dims], batches: BATCHES, timing, log });
  const mlp = await sweep("mlp");
  const resnet = await sweep("resnet");
  const worker = { mlp: [] as RawPoint[], resnet: [] as RawPoint[] };
  for (const name of ["mlp", "resnet"] as const) {
    for (const batch of MODELS[name].workerBatches) {
      const spec = { input: MODELS[name].input, dims: [...MODELS[name].dims], batch, timing: timing() };
      const point = await leastDisturbed(() => workerThroughput(path(name), spec), (p) => p.otherCores, 2);
      worker[name].push(point);
      log(`worker-thread ${name} batch ${batch}: ${point.inferPerS.toFixed(1)} infer/s (${point.runP50Ms.toFixed(2)} ms/run)`);
    }
  }
  return { mlp, resnet, simple, workerHop, worker };
}

/** Measures each sweep's best batch again (after the served steps) to show how far the machine drifted. */
export async function recheckRaw(functionsDir: string, raw: RawResults, options: { scale: number; log: (line: string) => void }): Promise<{ mlp: RawPoint; resnet: RawPoint }> {
  const again = async (name: keyof typeof MODELS, sweep: RawSweep) => {
    const timing = (): RawTiming => ({ warmupMs: 300 * options.scale, measureMs: 2000 * options.scale, minRuns: 3 });
    const spec = { model: `${name} (recheck)`, input: MODELS[name].input, dims: [...MODELS[name].dims], batches: [sweep.best.batch], timing, log: options.log };
    return (await sweepBatches(join(functionsDir, name, "1", "model.onnx"), spec)).best;
  };
  return { mlp: await again("mlp", raw.mlp), resnet: await again("resnet", raw.resnet) };
}

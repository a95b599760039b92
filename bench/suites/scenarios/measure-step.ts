import { createHttpSender } from "../../../adapters/bench/http-sender.ts";
import { runClosedLoop } from "../../../adapters/bench/load-generator.ts";
import { fetchModelInfo, modelPath } from "../../../adapters/bench/model-metadata.ts";
import type { Percentiles } from "../../../adapters/bench/percentiles.ts";
import { buildRequest } from "../../../adapters/bench/request-body.ts";
import type { EncodedRequest } from "../../../adapters/bench/request-body.ts";
import { diffStats, fetchModelStats } from "../../../adapters/bench/server-stats.ts";
import type { ServerStepStats, StatsReading } from "../../../adapters/bench/server-stats.ts";
import { summarizeStep } from "../../../adapters/bench/step-summary.ts";
import { startCpuMeter } from "./cpu-meter.ts";
import type { CoresUsed, CpuMeter } from "./cpu-meter.ts";
import { startProbes } from "./probes.ts";
import type { Prober, ProbeResults } from "./probes.ts";

/** How the tensors travel: JSON `data` arrays, or the binary tensor extension. */
export type Encoding = "json" | "binary";

/** One closed-loop step against one model, as `tensorfn bench` measures it, plus CPU use. */
export interface Measured {
  target: string;
  model: string;
  concurrency: number;
  windowS: number;
  requests: number;
  inferPerS: number;
  latencyMs: Percentiles | null;
  errors: number;
  firstError: string | null;
  /** Server statistics over the window; `null` for a server without the statistics extension. */
  server: ServerStepStats | null;
  /** Cores busy over the window: `self` is the load generator, `other` the rest of the machine. */
  cores: CoresUsed;
  /** Windows measured (more than 1 when other work disturbed the first; the least disturbed is kept). */
  attempts?: number;
  /** How the requests carried their tensors; absent in older runs, which were all binary. */
  encoding?: Encoding;
  /** Readiness and scrape latencies probed during the window, when the plan asked for them. */
  probes?: ProbeResults;
  /** The adaptive sweep's round (1..SWEEP_ROUNDS); absent outside the sweep and in older runs. */
  round?: number;
  /** Target 1's round (1..COMPARE_ROUNDS); absent elsewhere and in older runs. */
  repeat?: number;
}

/** Where to send and how long to load it. */
export interface StepPlan {
  /** A label for the report ("tensorfn", "naive"). */
  target: string;
  url: string;
  model: string;
  /** The server's process id, for its CPU time. */
  pid: number;
  /** Whether the server has the statistics extension (the naive one has not: no point asking it). */
  stats: boolean;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  encoding: Encoding;
  /** Probe readiness and `/metrics` during the window (target 7). */
  probe?: boolean;
  /** Where to POST instead of the model's `/infer` (a function-style call: `/v1/functions/<name>`). */
  path?: string;
}

/**
 * The request `tensorfn bench --binary` would send to `model` (batch 1, seeded random data),
 * built from `url`'s metadata. `shapes` gives variable dims, as `--shape` does.
 */
export async function benchRequest(url: string, model: string, options: { shapes?: Record<string, number[]>; encoding?: Encoding } = {}): Promise<EncodedRequest> {
  const info = await fetchModelInfo(url, { name: model });
  return buildRequest(info.metadata, { batching: info.batching, batchSize: 1, shapes: options.shapes, binary: options.encoding !== "json", inputData: "random" });
}

/**
 * Runs one step with the bench's own modules (undici pool, closed loop, window summary, stats
 * diff) and samples both processes' CPU time at the window's edges.
 */
export async function measureStep(plan: StepPlan, request: EncodedRequest): Promise<Measured> {
  const model = { name: plan.model };
  const sender = createHttpSender(plan.url, request, { path: plan.path ?? `${modelPath(plan.model)}/infer`, connections: plan.concurrency });
  let before: StatsReading | undefined;
  let after: StatsReading | undefined;
  let meter: CpuMeter | undefined;
  let prober: Prober | undefined;
  let probes: ProbeResults | undefined;
  let cores: CoresUsed = { self: 0, server: null, serverMain: null, other: null };
  let raw;
  try {
    raw = await runClosedLoop(sender.send, plan.concurrency, {
      warmupMs: plan.warmupMs,
      durationMs: plan.durationMs,
      onMeasureStart: async () => {
        if (plan.stats) before = await fetchModelStats(plan.url, model);
        meter = startCpuMeter(plan.pid);
        if (plan.probe) prober = startProbes(plan.url);
      },
      onMeasureEnd: async () => {
        cores = meter!.stop();
        probes = await prober?.stop();
        if (before?.ok) after = await fetchModelStats(plan.url, model);
      },
    });
  } finally {
    await sender.close();
  }
  const client = summarizeStep(raw, 1);
  const diff = before?.ok && after?.ok ? diffStats(before.stats, after.stats) : null;
  return {
    target: plan.target,
    model: plan.model,
    concurrency: plan.concurrency,
    windowS: client.windowS,
    requests: client.requests,
    inferPerS: client.inferPerS,
    latencyMs: client.latencyMs ?? null,
    errors: client.errors,
    firstError: client.firstError ?? null,
    server: typeof diff === "string" ? null : diff,
    cores,
    encoding: plan.encoding,
    ...(probes ? { probes } : {}),
  };
}

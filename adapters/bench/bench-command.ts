import process from "node:process";
import { BenchError } from "./bench-error.ts";
import { BENCH_USAGE, parseBenchArgs } from "./bench-options.ts";
import type { BenchOptions } from "./bench-options.ts";
import { createGrpcSender } from "./grpc-sender.ts";
import { createHttpSender } from "./http-sender.ts";
import type { HttpSender } from "./http-sender.ts";
import { runClosedLoop, runOpenLoop } from "./load-generator.ts";
import type { DriverOptions } from "./load-generator.ts";
import { causeOf, fetchModelInfo, modelPath } from "./model-metadata.ts";
import { Progress } from "./progress.ts";
import { formatJson, formatTable } from "./report.ts";
import type { StepResult } from "./report.ts";
import { buildRequest } from "./request-body.ts";
import type { EncodedRequest } from "./request-body.ts";
import { diffStats, fetchModelStats } from "./server-stats.ts";
import type { StatsReading } from "./server-stats.ts";
import { summarizeStep } from "./step-summary.ts";

/** Where the command writes; tests pass their own. Defaults: process.stdout and process.stderr. */
export interface BenchIo {
  stdout?: (text: string) => void | Promise<void>;
  stderr?: (text: string) => void;
  stderrIsTTY?: boolean;
}

/**
 * `tensorfn bench <url> --model <m> …`: reads the model's metadata, encodes one request, checks
 * that the server accepts it, then runs one measured step per level and prints the report.
 * Resolves with the exit code: 0 done, 1 the server could not be benchmarked (or a step got no
 * successful answer), 2 bad arguments.
 */
export async function runBench(args: string[], io: BenchIo = {}): Promise<number> {
  // Waits for the write, so a caller that exits right after loses nothing on a slow pipe.
  const stdout = io.stdout ?? ((text: string) => new Promise<void>((resolve) => process.stdout.write(text, () => resolve())));
  const stderr = io.stderr ?? ((text: string) => void process.stderr.write(text));
  const progress = new Progress({ write: stderr, isTTY: io.stderrIsTTY ?? Boolean(process.stderr.isTTY) });
  if (args.includes("--help") || args.includes("-h")) {
    await stdout(`${BENCH_USAGE}\n`);
    return 0;
  }
  try {
    const options = parseBenchArgs(args);
    const request = await prepare(options);
    await probe(options, request);
    const steps: StepResult[] = [];
    for (const [index, level] of options.levels.entries()) {
      steps.push(await runStep(options, request, { level, index, progress }));
    }
    progress.stop();
    await stdout(options.json ? formatJson(options, steps) : formatTable(options, steps));
    return steps.some((step) => step.requests === 0) ? 1 : 0;
  } catch (error) {
    progress.stop();
    if (!(error instanceof BenchError)) throw error;
    stderr(`tensorfn bench: ${error.message}\n${error.exitCode === 2 ? "(tensorfn bench --help lists the options)\n" : ""}`);
    return error.exitCode;
  }
}

/** Metadata → the one request body every step sends. */
async function prepare(options: BenchOptions): Promise<EncodedRequest> {
  const info = await fetchModelInfo(options.url, { name: options.model, version: options.version });
  if (!info.batching && options.batchSize > 1) {
    throw new BenchError(`--batch-size ${options.batchSize}: model '${options.model}' does not batch (max_batch_size 0); use 1`);
  }
  if (info.maxBatchSize !== undefined && info.maxBatchSize > 0 && options.batchSize > info.maxBatchSize) {
    throw new BenchError(`--batch-size ${options.batchSize} is over model '${options.model}''s max_batch_size of ${info.maxBatchSize}`);
  }
  return buildRequest(info.metadata, { batching: info.batching, batchSize: options.batchSize, shapes: options.shapes, binary: options.binary, inputData: options.inputData });
}

/** Sends the request once, so a request the server refuses fails now with its reason. */
async function probe(options: BenchOptions, request: EncodedRequest): Promise<void> {
  const sender = senderFor(options, request, 1);
  const what = options.protocol === "grpc" ? `ModelInfer at ${options.grpcAddress}` : `POST ${inferPath(options)}`;
  try {
    const error = await sender.send().catch(causeOf);
    if (error !== undefined) throw new BenchError(`${what} with the benchmark request failed: ${error}`, 1);
  } finally {
    await sender.close();
  }
}

/** One level: warmup, stats, measurement window, stats, drain; then the numbers. */
async function runStep(options: BenchOptions, request: EncodedRequest, context: { level: number; index: number; progress: Progress }): Promise<StepResult> {
  const { level } = context;
  const closed = options.mode === "concurrency";
  const label = `[${context.index + 1}/${options.levels.length}] ${closed ? `concurrency ${level}` : `rate ${level}/s`}`;
  const sender = senderFor(options, request, closed ? level : options.maxOutstanding);
  const state = { phase: "warmup", since: performance.now(), done: 0, errors: 0 };
  const model = { name: options.model, version: options.version };
  let before: StatsReading | undefined;
  let after: StatsReading | undefined;
  context.progress.follow(() => {
    const seconds = ((performance.now() - state.since) / 1000).toFixed(1);
    return `${label}: ${state.phase} ${seconds}s, ${state.done} answered, ${state.errors} failed`;
  });
  const driver: DriverOptions = {
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    onMeasureStart: async () => {
      before = await fetchModelStats(options.url, model);
      Object.assign(state, { phase: "measuring", since: performance.now() });
    },
    onMeasureEnd: async () => {
      Object.assign(state, { phase: "draining", since: performance.now() });
      if (before?.ok) after = await fetchModelStats(options.url, model);
    },
    onComplete: (error) => {
      state.done++;
      if (error !== undefined) state.errors++;
    },
  };
  let raw;
  try {
    raw = closed
      ? await runClosedLoop(sender.send, level, driver)
      : await runOpenLoop(sender.send, { ...driver, ratePerS: level, distribution: options.distribution, maxOutstanding: options.maxOutstanding, seed: context.index + 1 });
  } finally {
    await sender.close();
  }
  const client = summarizeStep(raw, options.batchSize);
  const { server, serverError } = serverNumbers(before, after);
  const p99 = client.latencyMs ? `${client.latencyMs.p99.toFixed(2)} ms` : "n/a";
  context.progress.stepDone(`${label}: ${client.inferPerS.toFixed(1)} infer/s, p99 ${p99}, ${client.errors} errors`);
  return {
    ...(closed ? { concurrency: level } : { requestRate: level }),
    windowS: client.windowS,
    requests: client.requests,
    reqPerS: client.reqPerS,
    inferPerS: client.inferPerS,
    latencyMs: client.latencyMs ?? null,
    errors: client.errors,
    firstError: client.firstError ?? null,
    maxOutstanding: raw.maxOutstanding,
    capHits: raw.capHits,
    unsent: raw.unsent,
    server,
    serverError,
  };
}

function inferPath(options: BenchOptions): string {
  return `${modelPath(options.model, options.version)}/infer`;
}

/** The window's server numbers from the two readings, or why there are none. */
function serverNumbers(before: StatsReading | undefined, after: StatsReading | undefined): Pick<StepResult, "server" | "serverError"> {
  if (!before?.ok) return { server: null, serverError: before?.reason ?? "no statistics" };
  if (!after?.ok) return { server: null, serverError: after?.reason ?? "no statistics" };
  const diff = diffStats(before.stats, after.stats);
  return typeof diff === "string" ? { server: null, serverError: diff } : { server: diff, serverError: null };
}

/**
 * Who sends the benchmark request: HTTP over `connections` keep-alive connections, or gRPC
 * ModelInfer calls multiplexed on one channel (as perf_analyzer's gRPC client).
 */
function senderFor(options: BenchOptions, request: EncodedRequest, connections: number): HttpSender {
  if (options.protocol === "grpc") return createGrpcSender(options.grpcAddress, options.model, request, options.version);
  return createHttpSender(options.url, request, { path: inferPath(options), connections });
}

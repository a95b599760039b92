import type { BenchOptions } from "./bench-options.ts";
import type { Percentiles } from "./percentiles.ts";
import type { ServerStepStats } from "./server-stats.ts";

/** Everything measured in one step (one concurrency level or one request rate). */
export interface StepResult {
  /** Closed loop: requests kept in flight. */
  concurrency?: number;
  /** Open loop: target requests per second. */
  requestRate?: number;
  windowS: number;
  /** Successful requests answered inside the window. */
  requests: number;
  reqPerS: number;
  inferPerS: number;
  latencyMs: Percentiles | null;
  errors: number;
  firstError: string | null;
  maxOutstanding: number;
  capHits: number;
  unsent: number;
  /** `null` when the server has no statistics (then `serverError` says why). */
  server: ServerStepStats | null;
  serverError: string | null;
}

interface Column {
  title: string;
  cell: (step: StepResult) => string;
}

/** The human-readable report: a settings line, one row per step, then notes on errors. */
export function formatTable(options: BenchOptions, steps: StepResult[]): string {
  const open = options.mode === "request-rate";
  const columns: Column[] = [
    open ? { title: "rate/s", cell: (s) => String(s.requestRate) } : { title: "concurrency", cell: (s) => String(s.concurrency) },
    { title: "infer/s", cell: (s) => fixed(s.inferPerS, 1) },
    { title: "req/s", cell: (s) => fixed(s.reqPerS, 1) },
    { title: "p50 ms", cell: (s) => fixed(s.latencyMs?.p50, 2) },
    { title: "p90 ms", cell: (s) => fixed(s.latencyMs?.p90, 2) },
    { title: "p95 ms", cell: (s) => fixed(s.latencyMs?.p95, 2) },
    { title: "p99 ms", cell: (s) => fixed(s.latencyMs?.p99, 2) },
    { title: "errors", cell: (s) => String(s.errors) },
    ...(open ? [{ title: "cap hits", cell: (s: StepResult) => String(s.capHits) }] : []),
    { title: "srv batch", cell: (s) => fixed(s.server?.avgBatchSize, 2) },
    { title: "srv queue µs/req", cell: (s) => micros(s.server?.queueUsPerRequest) },
    { title: "srv compute µs/exec", cell: (s) => micros(s.server?.computeUsPerExecution) },
  ];
  const rows = [columns.map((c) => c.title), ...steps.map((step) => columns.map((c) => c.cell(step)))];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = [describe(options), "", ...rows.map((row) => row.map((cell, i) => cell.padStart(widths[i]!)).join("  "))];
  const notes = steps.flatMap((step) => {
    const level = open ? `rate ${step.requestRate}/s` : `concurrency ${step.concurrency}`;
    const out: string[] = [];
    if (step.errors > 0) out.push(`${level}: ${step.errors} failed requests; first: ${step.firstError}`);
    if (step.capHits > 0) out.push(`${level}: ${options.maxOutstanding} requests outstanding (the cap) ${step.capHits} times; ${step.unsent} scheduled sends never went out`);
    return out;
  });
  const serverReasons = [...new Set(steps.flatMap((step) => (step.serverError ? [step.serverError] : [])))];
  if (serverReasons.length > 0) notes.push(`server columns n/a: ${serverReasons.join("; ")}`);
  return [...lines, ...(notes.length > 0 ? ["", ...notes] : [])].join("\n") + "\n";
}

/** The machine-readable report: the settings and one object per step. */
export function formatJson(options: BenchOptions, steps: StepResult[]): string {
  const { json: _json, ...config } = options;
  // Microsecond precision is plenty for milliseconds and rates; an absent version shows as null.
  const round = (_key: string, value: unknown) => (typeof value === "number" && !Number.isInteger(value) ? Math.round(value * 1000) / 1000 : value);
  return JSON.stringify({ config: { ...config, version: options.version ?? null }, steps }, round, 2) + "\n";
}

/** One line naming what was measured and how. */
export function describe(options: BenchOptions): string {
  const model = options.version ? `${options.model} v${options.version}` : options.model;
  const load = options.mode === "request-rate" ? `open loop (${options.distribution} schedule)` : "closed loop";
  const seconds = (ms: number) => `${ms / 1000}s`;
  return `tensorfn bench: ${model} at ${options.url}, ${load}, batch ${options.batchSize}, ${options.protocol === "grpc" ? `gRPC (${options.grpcAddress}), raw` : options.binary ? "binary" : "JSON"} tensors, ${options.inputData} data, ${seconds(options.durationMs)} windows after ${seconds(options.warmupMs)} warmup`;
}

function fixed(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined ? "n/a" : value.toFixed(digits);
}

function micros(value: number | null | undefined): string {
  return value === null || value === undefined ? "n/a" : value.toFixed(value < 100 ? 1 : 0);
}

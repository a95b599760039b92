import { parseArgs } from "node:util";
import { BenchError } from "./bench-error.ts";

/** Everything `tensorfn bench` was asked to do. */
export interface BenchOptions {
  url: string;
  model: string;
  version: string | undefined;
  /** Closed loop (`--concurrency`) or open loop (`--request-rate`). */
  mode: "concurrency" | "request-rate";
  /** Concurrency levels or request rates (per second), one step each. */
  levels: number[];
  distribution: "constant" | "poisson";
  maxOutstanding: number;
  batchSize: number;
  /** `--shape` values by input name, without the batch dimension. */
  shapes: Record<string, number[]>;
  binary: boolean;
  /** `-i grpc`: inference as KServe v2 ModelInfer calls to `grpcAddress` (metadata and statistics stay HTTP). */
  protocol: "http" | "grpc";
  grpcAddress: string;
  inputData: "random" | "zero";
  durationMs: number;
  warmupMs: number;
  json: boolean;
}

/** The usage text of `tensorfn bench`. */
export const BENCH_USAGE = `usage: tensorfn bench <url> --model <m> [options]
  --version <v>              model version (default: the server's choice)
  --concurrency <levels>     closed loop: N requests always in flight (default 1)
  --request-rate <levels>    open loop: requests per second on a fixed schedule
  --poisson                  open loop: exponential gaps instead of constant ones
  --max-outstanding <n>      open loop: cap on requests in flight (default 1024)
  --batch-size <n>           batch dimension of every input (default 1)
  --shape <name:d1,d2>       dims of a variable input, without the batch dimension (repeatable)
  --binary                   binary tensor extension instead of JSON tensors
  -i, --protocol http|grpc   how inference is sent (default http); grpc: ModelInfer with raw contents
  --grpc-url <host:port>     the gRPC port for -i grpc (default: the URL's host, port 8001)
  --input-data random|zero   tensor contents (default random, seeded)
  --duration <t>             measurement window per step (default 5s)
  --warmup <t>               load before each window (default 1s)
  --json                     print a JSON document instead of the table
levels: 8 | 1,8,32 | 1:64:x2 (doubling) | 100:400:100 (adding); times: 300ms, 5s, 1m`;

/** Parses the arguments after `bench`; throws `BenchError` (exit code 2) naming the bad flag. */
export function parseBenchArgs(args: string[]): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        model: { type: "string", short: "m" },
        version: { type: "string" },
        concurrency: { type: "string" },
        "request-rate": { type: "string" },
        poisson: { type: "boolean", default: false },
        "max-outstanding": { type: "string", default: "1024" },
        "batch-size": { type: "string", short: "b", default: "1" },
        shape: { type: "string", multiple: true, default: [] },
        binary: { type: "boolean", default: false },
        protocol: { type: "string", short: "i", default: "http" },
        "grpc-url": { type: "string" },
        "input-data": { type: "string", default: "random" },
        duration: { type: "string", default: "5s" },
        warmup: { type: "string", default: "1s" },
        json: { type: "boolean", default: false },
      },
    });
  } catch (error) {
    throw new BenchError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new BenchError(positionals.length === 0 ? "bench needs the server URL" : `bench takes one URL, got '${positionals.join("' '")}'`);
  const url = positionals[0]!;
  if (!/^https?:\/\/[^/]/.test(url)) throw new BenchError(`'${url}' is not an http:// or https:// URL`);
  if (!values.model) throw new BenchError("bench needs --model <name>");
  if (values.concurrency !== undefined && values["request-rate"] !== undefined) throw new BenchError("give --concurrency or --request-rate, not both");
  if (values.poisson && values["request-rate"] === undefined) throw new BenchError("--poisson needs --request-rate");
  const protocol = values.protocol!;
  if (protocol !== "http" && protocol !== "grpc") throw new BenchError(`--protocol '${protocol}' is not one of http, grpc`);
  if (values["grpc-url"] !== undefined && protocol !== "grpc") throw new BenchError("--grpc-url needs -i grpc");
  const grpcAddress = values["grpc-url"] ?? `${new URL(url).hostname}:8001`;
  if (!/^[^/:\s]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(grpcAddress)) throw new BenchError(`--grpc-url '${grpcAddress}' is not <host>:<port>`);
  const inputData = values["input-data"]!;
  if (inputData !== "random" && inputData !== "zero") throw new BenchError(`--input-data '${inputData}' is not one of random, zero`);
  const rate = values["request-rate"];
  const shapes: Record<string, number[]> = {};
  for (const text of values.shape!) {
    const [name, dims] = parseShape(text);
    shapes[name] = dims;
  }
  const durationMs = parseDuration("--duration", values.duration!);
  if (durationMs <= 0) throw new BenchError(`--duration '${values.duration}' must be more than zero`);
  return {
    url: url.replace(/\/+$/, ""),
    model: values.model,
    version: values.version,
    mode: rate === undefined ? "concurrency" : "request-rate",
    levels: rate === undefined ? parseRange("--concurrency", values.concurrency ?? "1", { integer: true }) : parseRange("--request-rate", rate, { integer: false }),
    distribution: values.poisson ? "poisson" : "constant",
    maxOutstanding: positiveInteger("--max-outstanding", values["max-outstanding"]!),
    batchSize: positiveInteger("--batch-size", values["batch-size"]!),
    shapes,
    // gRPC carries tensors raw: the binary encoding is what its sender wraps.
    binary: values.binary! || protocol === "grpc",
    protocol,
    grpcAddress,
    inputData,
    durationMs,
    warmupMs: parseDuration("--warmup", values.warmup!),
    json: values.json!,
  };
}

/**
 * The levels of a sweep: `8`; a list `1,8,32`; `a:b:xk` (a, a·k, a·k², … up to b); `a:b:k`
 * (a, a+k, … up to b, perf_analyzer's step); `a:b` (step 1). Integer sweeps are rounded.
 */
export function parseRange(flag: string, text: string, options: { integer: boolean }): number[] {
  const bad = (why: string) => new BenchError(`${flag} '${text}' ${why}`);
  const number = (part: string, integer = options.integer) => {
    const value = Number(part);
    if (part.trim() === "" || !Number.isFinite(value) || value <= 0) throw bad(`has '${part}', which is not a positive number`);
    if (integer && !Number.isInteger(value)) throw bad(`has '${part}', which is not a whole number`);
    return value;
  };
  let levels: number[];
  if (text.includes(",")) {
    levels = text.split(",").map((part) => number(part));
  } else {
    const parts = text.split(":");
    if (parts.length > 3) throw bad("is not N, a list N,M,… or a range a:b:xk / a:b:k");
    const start = number(parts[0]!);
    const end = parts.length > 1 ? number(parts[1]!) : start;
    if (end < start) throw bad(`ends (${end}) below its start (${start})`);
    const step = parts[2] ?? "1";
    const factor = step.startsWith("x") ? number(step.slice(1), false) : undefined;
    if (factor !== undefined && factor <= 1) throw bad(`multiplies by ${factor}; the factor must be more than 1`);
    const increment = factor === undefined ? number(step) : 0;
    levels = [];
    for (let i = 0, level = start; level <= end * (1 + 1e-12); i++) {
      levels.push(level);
      if (levels.length > 1000) throw bad("has more than 1000 steps");
      level = factor !== undefined ? start * factor ** (i + 1) : start + increment * (i + 1);
    }
  }
  if (options.integer) levels = [...new Set(levels.map((level) => Math.round(level)))];
  return levels;
}

/** `300ms`, `5s`, `1.5s`, `1m`; a bare number is seconds. Milliseconds. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!match) throw new BenchError(`${flag} '${text}' is not a duration (like 300ms, 5s or 1m)`);
  return Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[(match[2] ?? "s") as "ms" | "s" | "m"];
}

/** `name:d1,d2,…` → [name, dims]; every dim a positive integer. */
export function parseShape(text: string): [string, number[]] {
  const at = text.lastIndexOf(":");
  const name = text.slice(0, at);
  const dims = text.slice(at + 1).split(",").map(Number);
  if (at <= 0 || dims.some((d) => !Number.isInteger(d) || d <= 0)) {
    throw new BenchError(`--shape '${text}' is not name:d1,d2,… with positive whole dims`);
  }
  return [name, dims];
}

function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) throw new BenchError(`${flag} '${text}' is not a positive whole number`);
  return value;
}

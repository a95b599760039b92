// The command line of `serve` and `dev`, read and checked before anything starts: every flag
// refused with one line that names it (exit 2), the runtime's options built from the rest.
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { DEFAULT_MAX_INPUT_BYTES } from "../runtime/mod.ts";
import type { RuntimeOptions } from "../runtime/mod.ts";
import { parseByteSize } from "../runtime/lifecycle/mod.ts";
import type { ControlMode } from "../runtime/lifecycle/mod.ts";
import { hostPolicySchema, LIMIT_FLAGS } from "../runtime/config/mod.ts";
import { parseKeyFile } from "../runtime/http/mod.ts";
import type { Accelerator, HostPolicy, LoadLimits } from "../runtime/config/mod.ts";
import { LOAD_LIMIT_TABLE } from "../runtime/config/load-limit-table.mjs";
import type { Host } from "./host.ts";
import { LOG_FORMATS, LOG_LEVELS } from "./console-logger.ts";
import { seeHelp } from "./cli-usage.mjs";

const MODES = ["lazy", "none", "poll", "explicit"] as const;
const ACCELERATORS = ["auto", "cpu", "cuda", "tensorrt", "webgpu", "wasm"];

/** The server-wide ceilings (runtime/config/load-limit-table.mjs); `serve`, `dev` and `check` read the same flags. */
export const LIMIT_OPTIONS = Object.fromEntries(LOAD_LIMIT_TABLE.map((row) => [row.flag.slice(2), { type: "string" }])) as Record<string, { type: "string" }>;

/** `serve`'s and `dev`'s flags (cli-usage.mjs describes each; a test holds the two together). */
export const SERVE_OPTIONS = {
  repo: { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8000" },
  "max-input-size": { type: "string" },
  "max-elements": { type: "string" },
  accelerator: { type: "string" },
  "model-control-mode": { type: "string", default: "lazy" },
  "load-model": { type: "string", multiple: true },
  "repository-poll-secs": { type: "string", default: "15" },
  "host-memory-budget": { type: "string" },
  "cache-size": { type: "string" },
  "device-memory-budget": { type: "string" },
  "idle-timeout-secs": { type: "string" },
  "load-timeout-secs": { type: "string", default: "120" },
  "metrics-port": { type: "string" },
  "grpc-port": { type: "string" },
  "modelmesh-root": { type: "string" },
  "trace-rate": { type: "string" },
  "trace-file": { type: "string" },
  "metrics-config": { type: "string", multiple: true },
  "allow-gpu-metrics": { type: "string", default: "true" },
  "metrics-interval-ms": { type: "string", default: "2000" },
  "rate-limit": { type: "string", default: "off" },
  "rate-limit-resource": { type: "string", multiple: true },
  "host-policy": { type: "string", multiple: true },
  ...LIMIT_OPTIONS,
  "api-key-file": { type: "string" },
  "admin-key-file": { type: "string" },
  "cors-origin": { type: "string", multiple: true },
  "dashboard-max-streams": { type: "string" },
  "strict-readiness": { type: "string", default: "true" },
  "shutdown-timeout": { type: "string", default: "30" },
  "request-body-timeout": { type: "string", default: "30" },
  "write-timeout": { type: "string", default: "30" },
  "max-connections": { type: "string", default: "8192" },
  "max-answer-buffer": { type: "string", default: "256M" },
  "http-server": { type: "string" },
  // Read by the entry point before the platform exists (logOptionsFrom); checked here.
  "log-level": { type: "string", default: "info" },
  "log-format": { type: "string", default: "text" },
} as const satisfies ParseArgsConfig["options"];

/** What `serve` and `dev` start from: the runtime's options and the listeners' settings. */
export interface ServeSettings {
  runtime: RuntimeOptions;
  repository: string;
  hostname: string;
  port: number;
  grpcPort?: number;
  metricsPort?: number;
  httpServer: string;
  maxBufferedBytes: number;
  shutdownTimeoutMs: number;
  /** --max-connections as asked (the start lowers it to what the open-file limit allows). */
  maxConnections: number;
  requestTimeoutMs: number;
  writeTimeoutMs: number;
  traceFile?: string;
  /** Whether control routes need an admin key (--admin-key-file). */
  adminKeys: boolean;
}

/** `serve`'s or `dev`'s flags, checked. */
export async function readServeFlags(host: Host, args: string[], dev: boolean): Promise<ServeSettings> {
  const { values, positionals } = parseFlags(host, dev ? "dev" : "serve", {
    args,
    allowPositionals: dev,
    options: SERVE_OPTIONS,
  });
  const httpServer = values["http-server"] ?? host.httpServers[0];
  if (!host.httpServers.includes(httpServer)) fail(host, `--http-server '${httpServer}' is not one this runtime has (${host.httpServers.join(", ")})`);
  if (!["true", "false"].includes(values["allow-gpu-metrics"]!)) fail(host, `--allow-gpu-metrics '${values["allow-gpu-metrics"]}' is not true or false`);
  const metricsIntervalMs = Number(values["metrics-interval-ms"]);
  if (!Number.isInteger(metricsIntervalMs) || metricsIntervalMs < 100 || metricsIntervalMs > 3_600_000) fail(host, `--metrics-interval-ms '${values["metrics-interval-ms"]}' is not a whole number of milliseconds from 100 to 3600000`);
  if (!["true", "false"].includes(values["strict-readiness"]!)) fail(host, `--strict-readiness '${values["strict-readiness"]}' is not true or false`);
  if (!(LOG_LEVELS as readonly string[]).includes(values["log-level"]!)) fail(host, `--log-level '${values["log-level"]}' is not one of ${LOG_LEVELS.join(", ")}`);
  if (!(LOG_FORMATS as readonly string[]).includes(values["log-format"]!)) fail(host, `--log-format '${values["log-format"]}' is not one of ${LOG_FORMATS.join(", ")}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(host, `--port '${values.port}' is not a port number`);
  const grpcPort = values["grpc-port"] === undefined ? undefined : Number(values["grpc-port"]);
  if (grpcPort !== undefined && (!Number.isInteger(grpcPort) || grpcPort < 0 || grpcPort > 65535)) fail(host, `--grpc-port '${values["grpc-port"]}' is not a port number`);
  const flags = values as unknown as Record<string, string | undefined>;
  const size = (flag: string) => {
    const text = flags[flag];
    if (text === undefined) return undefined;
    return parseByteSize(text) ?? fail(host, `--${flag} '${text}' is not a size (bytes, or with a k/M/G suffix)`);
  };
  const elements = (flag: string) => {
    const text = flags[flag];
    if (text === undefined) return undefined;
    const n = parseByteSize(text); // a count, with the same k/M/G suffixes (1024-based)
    return n !== undefined && Number.isSafeInteger(n) && n >= 1 ? n : fail(host, `--${flag} '${text}' is not a positive integer (k/M/G suffixes allowed)`);
  };
  const seconds = (flag: string) => {
    const text = flags[flag];
    if (text === undefined) return undefined;
    const n = Number(text);
    return Number.isFinite(n) && n >= 0 ? n * 1000 : fail(host, `--${flag} '${text}' is not a number of seconds`);
  };
  const maxBufferedBytes = size("max-answer-buffer")!;
  if (maxBufferedBytes < 1) fail(host, `--max-answer-buffer '${flags["max-answer-buffer"]}' is not a size over 0`);
  if (values.accelerator && !ACCELERATORS.includes(values.accelerator)) {
    fail(host, `--accelerator '${values.accelerator}' is not one of ${ACCELERATORS.join(", ")}`);
  }
  const mode = values["model-control-mode"] as ControlMode;
  if (!MODES.includes(mode)) fail(host, `--model-control-mode '${mode}' is not one of ${MODES.join(", ")}`);
  if (dev && mode !== "lazy") fail(host, "the dev server always runs in lazy mode");
  const modelmeshRoot = values["modelmesh-root"];
  if (modelmeshRoot !== undefined) {
    // ModelMesh decides what loads, talks gRPC, and places models by the capacity the runtime reports.
    if (grpcPort === undefined) fail(host, "--modelmesh-root serves ModelMesh's model-runtime API on the gRPC port: give --grpc-port too");
    if (mode !== "explicit") fail(host, "--modelmesh-root needs --model-control-mode explicit: ModelMesh decides what loads");
    if (values["host-memory-budget"] === undefined) fail(host, "--modelmesh-root needs --host-memory-budget: ModelMesh places models by the capacity it reports");
    if (!(await host.platform.stat(modelmeshRoot))?.isDirectory) fail(host, `--modelmesh-root '${modelmeshRoot}' is not a directory`);
  }
  if (values.repo !== undefined && positionals.length > 0) fail(host, `dev takes the repository once: --repo '${values.repo}' or '${positionals[0]}'`);
  if (positionals.length > 1) fail(host, `dev takes one repository folder, not '${positionals.join("' '")}'`);
  const given = values.repo ?? positionals[0];
  const repository = (given ?? "functions").replace(/\/+$/, "") || ".";
  // The error names what the user typed: a flag, a positional folder, or the default they left out.
  const named = values.repo !== undefined ? `--repo '${given}'` : given !== undefined ? `'${given}'` : `'functions' (the default; name the repository: tensorfn ${dev ? "dev <dir>" : "serve --repo <dir>"})`;
  const found = await host.platform.stat(repository);
  if (!found?.isDirectory) fail(host, `${named} ${found ? "is not a directory" : "does not exist"}`);

  const runtime: RuntimeOptions = {
    platform: host.platform,
    repository,
    maxInputBytes: size("max-input-size") ?? DEFAULT_MAX_INPUT_BYTES,
    maxElements: elements("max-elements"),
    accelerator: values.accelerator as Accelerator | undefined,
    controlMode: mode,
    loadModels: values["load-model"],
    pollIntervalMs: seconds("repository-poll-secs"),
    loadTimeoutMs: seconds("load-timeout-secs"),
    idleTimeoutMs: seconds("idle-timeout-secs"),
    budgets: { host: size("host-memory-budget"), device: size("device-memory-budget") },
    cacheSize: size("cache-size"),
    histogramLatencies: metricsConfig(host, values["metrics-config"] ?? []).histogram_latencies === "true",
    gpuMetrics: values["allow-gpu-metrics"] === "true",
    metricsIntervalMs,
    traceRate: traceRate(host, values["trace-rate"], dev),
    dashboard: dev,
    ...(await accessFlags(host, flags, values["cors-origin"] ?? [])),
    dashboardMaxStreams: count(host, "dashboard-max-streams", flags["dashboard-max-streams"]),
    strictReadiness: values["strict-readiness"] === "true",
    ...rateLimiting(host, values["rate-limit"]!, values["rate-limit-resource"] ?? []),
    ...hostPolicies(host, values["host-policy"] ?? []),
    limits: loadLimits(host, flags),
    ...(modelmeshRoot !== undefined && { modelmesh: { root: modelmeshRoot } }),
  };
  const metricsPort = values["metrics-port"] === undefined ? undefined : Number(values["metrics-port"]);
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)) fail(host, `--metrics-port '${values["metrics-port"]}' is not a port number`);
  return {
    runtime,
    repository,
    hostname: values.host!,
    port,
    grpcPort,
    metricsPort,
    httpServer,
    maxBufferedBytes,
    shutdownTimeoutMs: seconds("shutdown-timeout")!,
    maxConnections: count(host, "max-connections", flags["max-connections"])!,
    requestTimeoutMs: positiveSeconds(host, "request-body-timeout", flags["request-body-timeout"]!),
    writeTimeoutMs: positiveSeconds(host, "write-timeout", flags["write-timeout"]!),
    traceFile: values["trace-file"],
    adminKeys: values["admin-key-file"] !== undefined,
  };
}

/** `--trace-rate`: the share of requests traced, 0..1 (default: 0 in serve, 1 in dev). */
function traceRate(host: Host, text: string | undefined, dev: boolean): number {
  if (text === undefined) return dev ? 1 : 0;
  const rate = Number(text);
  return rate >= 0 && rate <= 1 ? rate : fail(host, `--trace-rate '${text}' must be a number between 0 and 1`);
}

/**
 * Triton's `--host-policy <name>,<setting>=<value>[,…]` (repeatable; a name's settings add up):
 * `cpu-cores=0-3` and `numa-node=0`, checked as function.yaml's inline policy is.
 */
export function hostPolicies(host: Host, texts: string[]): { hostPolicies?: Record<string, HostPolicy> } {
  const policies: Record<string, Record<string, unknown>> = {};
  for (const text of texts) {
    const [name, ...settings] = text.split(",");
    if (!name || !/^[A-Za-z0-9_.-]{1,128}$/.test(name) || settings.length === 0) fail(host, `--host-policy '${text}' is not <name>,cpu-cores=<list>[,numa-node=<n>]`);
    const policy = (policies[name] ??= {});
    for (const setting of settings) {
      const [key, value] = setting.split("=", 2) as [string, string | undefined];
      if (key === "cpu-cores" && value !== undefined) policy.cpu_cores = value;
      else if (key === "numa-node" && value !== undefined && /^\d+$/.test(value)) policy.numa_node = Number(value);
      else fail(host, `--host-policy '${text}': '${setting}' is not cpu-cores=<list> or numa-node=<n>`);
    }
  }
  const out: Record<string, HostPolicy> = {};
  for (const [name, policy] of Object.entries(policies)) {
    const parsed = hostPolicySchema().safeParse(policy);
    if (!parsed.success) fail(host, `--host-policy ${name}: ${parsed.error.issues.map((i) => `${i.path.join(".").replace("_", "-")} ${i.message}`.trim()).join("; ")}`);
    out[name] = parsed.data!;
  }
  return Object.keys(out).length ? { hostPolicies: out } : {};
}

/** Triton's `--rate-limit off|execution_count` and `--rate-limit-resource name:count[:device]` (device: a GPU index, or cpu). */
function rateLimiting(host: Host, mode: string, resources: string[]) {
  if (mode !== "off" && mode !== "execution_count") fail(host, `--rate-limit '${mode}' is not one of off, execution_count`);
  const rateLimitResources = resources.map((text) => {
    const [name, count, device, extra] = text.split(":");
    const n = Number(count);
    if (!name || !Number.isInteger(n) || n < 0 || extra !== undefined || (device !== undefined && !/^([0-9]+|cpu)$/.test(device))) {
      fail(host, `--rate-limit-resource '${text}' is not <name>:<count>[:<device>] (device: a GPU index, or cpu)`);
    }
    return device === undefined ? { name, count: n } : { name, count: n, device: device === "cpu" ? "cpu" : `gpu${device}` };
  });
  if (mode === "off" && rateLimitResources.length > 0) fail(host, "--rate-limit-resource needs --rate-limit execution_count");
  return { rateLimit: mode as "off" | "execution_count", rateLimitResources };
}

/** A key file's ceiling: a million keys of 16 bytes; a FIFO or a device named by mistake is refused, not read forever. */
const KEY_FILE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * `--api-key-file`/`--admin-key-file` (one key per line, read through the platform) and
 * `--cors-origin` (repeatable). Errors name the file and line, never a key.
 */
async function accessFlags(host: Host, flags: Record<string, string | undefined>, corsOrigins: string[]) {
  const keys = async (flag: string) => {
    const file = flags[flag];
    if (file === undefined) return undefined;
    const text = await host.platform.readTextFile(file, { maxBytes: KEY_FILE_MAX_BYTES }).catch((e: Error) => fail(host, `--${flag} '${file}' cannot be read: ${e.message}`));
    try {
      return parseKeyFile(text, file);
    } catch (e) {
      return fail(host, `--${flag}: ${(e as Error).message}`);
    }
  };
  for (const origin of corsOrigins) {
    if (origin !== "*" && !/^https?:\/\/[^/\s]+$/.test(origin)) fail(host, `--cors-origin '${origin}' must be '*' or scheme://host[:port], e.g. https://app.example.com`);
  }
  return { apiKeys: await keys("api-key-file"), adminKeys: await keys("admin-key-file"), corsOrigins };
}

/** A number of seconds over zero, in milliseconds. */
function positiveSeconds(host: Host, flag: string, text: string): number {
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? n * 1000 : fail(host, `--${flag} '${text}' is not a number of seconds over 0`);
}

/** A positive integer flag, or undefined when absent. */
function count(host: Host, flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? n : fail(host, `--${flag} '${text}' is not a positive whole number`);
}

/** Triton's `--metrics-config key=value` (repeatable): histogram_latencies=true is what we read. */
function metricsConfig(host: Host, entries: string[]): Record<string, string> {
  const known = ["histogram_latencies", "counter_latencies", "summary_latencies"];
  const config: Record<string, string> = {};
  for (const entry of entries) {
    const [key, value] = entry.split("=", 2);
    if (!key || value === undefined || !known.includes(key)) fail(host, `--metrics-config '${entry}': expected one of ${known.map((k) => `${k}=true|false`).join(", ")}`);
    config[key] = value;
  }
  return config;
}

/** The ceilings given on the command line (unset ones keep the runtime's defaults). */
export function loadLimits(host: Host, flags: Record<string, string | undefined>): Partial<LoadLimits> {
  const limits: Partial<LoadLimits> = {};
  for (const [key, flag] of Object.entries(LIMIT_FLAGS) as [keyof LoadLimits, string][]) {
    const text = flags[flag.slice(2)];
    if (text === undefined) continue;
    // Sizes take k/M/G (1024-based, as --max-input-size); counts must be positive integers.
    const n = parseByteSize(text);
    if (n === undefined || !Number.isSafeInteger(n) || n < 1) fail(host, `${flag} '${text}' is not a positive integer (k/M/G suffixes allowed)`);
    limits[key] = n;
  }
  return limits;
}

/**
 * `parseArgs`, answering a flag it does not know (or a value missing) with one line and where the
 * command's flags are listed, exit 2, instead of a stack trace. (`--help` was answered before.)
 */
export function parseFlags<T extends ParseArgsConfig>(host: Host, command: string, config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    if (!code.startsWith("ERR_PARSE_ARGS")) throw error;
    return fail(host, `${(error as Error).message.split(/\n|\. To specify/)[0]}\n${seeHelp(command)}`);
  }
}

export function fail(host: Host, message: string): never {
  console.error(`tensorfn: ${message}`);
  return host.exit(2);
}

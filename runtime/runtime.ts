import { repeatedLine, systemClock } from "./core/mod.ts";
import type { Clock, ModelSignature, Platform } from "./core/mod.ts";
import { createIdentityBackend, createOnnxRuntimeBackend, createOnnxRuntimeWebBackend } from "./backends/mod.ts";
import type { Backend } from "./backends/mod.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, ModelManager } from "./lifecycle/mod.ts";
import type { Budgets, ModelManagerOptions } from "./lifecycle/mod.ts";
import { ClientConnections, MAX_REGIONS_PER_KEY, regionOwner, SharedMemoryRegions } from "./call/mod.ts";
import { createRouter, metricsHandlers, routeHandlers, webFetch } from "./http/mod.ts";
import type { AppContext, Router } from "./http/mod.ts";
import { createPrometheus, CustomMetrics, deviceBudgetFrom, GpuTelemetry, TraceRecorder, visibleDevice } from "./metrics/mod.ts";
import type { GrpcService } from "./grpc/mod.ts";
import { createGrpcService } from "./grpc/mod.ts";
import { ResponseCache } from "./cache/mod.ts";
import { ResourceLimiter } from "./scheduler/mod.ts";
import { HandlerEscapes } from "./pipeline/mod.ts";
import { folderReader, readExternalData, readModelFile } from "./repository/mod.ts";
import type { EscapeKind } from "./pipeline/mod.ts";
import type { ResourceOverride } from "./scheduler/mod.ts";

export const VERSION = "0.1.0";

/**
 * Everything a server is built from; no globals, so a test can run several in one process. The
 * lifecycle knobs (control mode, budgets, timeouts…) are the model manager's own options.
 */
export interface RuntimeOptions
  extends Omit<ModelManagerOptions, "backends" | "clock" | "resourceLimiter" | "responseCache">,
    Partial<Pick<ModelManagerOptions, "backends" | "clock">> {
  /** Triton's `--rate-limit`: "execution_count" enforces instance groups' rate_limiter; off by default. */
  rateLimit?: "off" | "execution_count";
  /** Triton's `--rate-limit-resource`: pool sizes instead of the largest count any instance asks for. */
  rateLimitResources?: ResourceOverride[];
  /** Largest request body accepted, compressed or inflated (default 64 MiB, as Triton). */
  maxInputBytes?: number;
  /**
   * `--max-elements`: tensor elements one request may carry, all inputs together, checked before
   * any data is decoded; a BYTES element or a nested JSON array counts 8 (default 16 Mi).
   */
  maxElements?: number;
  /** Triton's `--metrics-config histogram_latencies=true`: expose latency histograms. */
  histogramLatencies?: boolean;
  /** Triton's `--allow-gpu-metrics` (default true): read GPUs through NVML where the platform can. */
  gpuMetrics?: boolean;
  /** Triton's `--metrics-interval-ms` (default 2000): how often the GPUs are read. */
  metricsIntervalMs?: number;
  /** Share of requests traced into the timeline (0 = tracing off, the default; the dev server uses 1). */
  traceRate?: number;
  /** Serve the dev dashboard at GET / (the dev server does). */
  dashboard?: boolean;
  /** `--api-key-file`: bearer keys for metadata, inference and statistics (absent: those are open). */
  apiKeys?: readonly string[];
  /** `--admin-key-file`: bearer keys for the control routes (absent: control routes are loopback-only). */
  adminKeys?: readonly string[];
  /** `--cors-origin`: origins (or "*") browsers may call the API from; absent: no CORS headers. */
  corsOrigins?: readonly string[];
  /** `--dashboard-max-streams`: dashboard event streams open at once (default 32). */
  dashboardMaxStreams?: number;
  /** `--cache-size`: bytes of the response cache functions with `response_cache: { enable: true }` share (absent or 0: no cache). */
  cacheSize?: number;
  /** Triton's `--strict-readiness` (default true): server readiness waits for the functions the control mode loads; false: ready once it answers. */
  strictReadiness?: boolean;
  /** `--modelmesh-root`: serve ModelMesh's model-runtime SPI on the gRPC port, loading the models its puller places under `root`. */
  modelmesh?: { root: string };
}

/** A built server: its model manager and its HTTP server as one function. */
export interface Runtime {
  readonly models: ModelManager;
  /** Every HTTP request, answered (http/router.ts): an adapter's server hands each one to it. */
  readonly router: Router;
  /** The router as a web fetch handler (`Request` in, `Response` out), for Bun's and Deno's servers and for embedding. */
  readonly fetch: (request: Request) => Promise<Response>;
  /**
   * The main HTTP server's client connections, for an adapter whose server reports them (Node):
   * batchers then do not wait for requests that cannot arrive (call/client-connections.ts).
   */
  readonly clients: ClientConnections;
  /** The timeline of the last `seconds`, as Chrome trace JSON (`--trace-file` writes it at shutdown). */
  trace(seconds: number): unknown;
  /**
   * KServe v2 over gRPC, for an adapter to serve on `--grpc-port` (adapters/grpc-server.ts), made
   * on the first call. Its module stays a static import: imported dynamically, Bun kept what a
   * destroyed connection's calls held (grpc-connections.test.ts; cause not found), so only grpc-js,
   * which the adapter imports, waits for a gRPC port.
   */
  grpc(): Promise<GrpcService>;
  /** Serves only /metrics, for a separate metrics port (Triton's 8002). */
  readonly metricsRouter: Router;
  /**
   * Turns readiness false (503 on /v2/health/ready) ahead of a shutdown and cancels the loads in
   * progress (their warm-ups too); requests are still served by what is loaded.
   */
  drain(): void;
  /** Drains in-flight requests and releases every session. */
  stop(): Promise<void>;
  /**
   * An error that escaped to the process (an adapter's uncaught-exception and unhandled-rejection
   * hooks call it): attributed to the handler whose files its stack names, counted, logged once.
   */
  escaped(error: unknown, kind: EscapeKind): void;
}

export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** Builds a runtime from its options and loads the repository. */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { platform } = options;
  const backends = options.backends ?? (await defaultBackends(platform));
  const { maxInputBytes, maxElements, histogramLatencies, traceRate, dashboard, rateLimit, rateLimitResources, apiKeys, adminKeys, corsOrigins, dashboardMaxStreams, cacheSize, strictReadiness, modelmesh, ...managerOptions } = options;
  const resourceLimiter = rateLimit === "execution_count" ? new ResourceLimiter(rateLimitResources) : undefined;
  const clock = options.clock ?? systemClock;
  const trace = new TraceRecorder({ rate: traceRate ?? 0 });
  const responseCache = cacheSize ? new ResponseCache(cacheSize, { sha256Hex: platform.sha256Hex }) : undefined;
  const clients = new ClientConnections({ clock });
  const escapes = new HandlerEscapes({ log: platform.log, clock });
  // Triton's system shared memory, where the platform has POSIX shared memory (Linux).
  // With keys, a region belongs to the key that registered it (and one key holds at most a share of the slots).
  const keyed = Boolean(apiKeys?.length || adminKeys?.length);
  const regions = platform.openSharedMemory
    ? new SharedMemoryRegions((key) => platform.openSharedMemory!(key), { maxTensorBytes: maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES, ownerOf: regionOwner(keyed), perOwner: keyed ? MAX_REGIONS_PER_KEY : undefined })
    : undefined;
  const customMetrics = new CustomMetrics({ log: platform.log });
  const gpus = options.gpuMetrics !== false && platform.readGpus ? gpuTelemetry(platform, clock, options.metricsIntervalMs, managerOptions.budgets) : undefined;
  const models = new ModelManager({
    ...managerOptions,
    ...(gpus && { budgets: gpus.budgets, observedDeviceBytes: gpus.observedDeviceBytes }),
    backends,
    clock,
    trace,
    resourceLimiter,
    responseCache,
    arrivals: clients,
    escapes,
    customMetrics,
  });
  await models.start();
  const prometheus = createPrometheus(
    {
      entries: () => models.metricsEntries({ exported: true }),
      budgets: models.budgets,
      cache: responseCache && (() => responseCache.figures),
      extra: [() => customMetrics.render(), ...(platform.processMetrics ? [platform.processMetrics] : [])],
      gpus: gpus?.telemetry && (() => gpus.telemetry!.samples),
      droppedConnections: () => clients.droppedCount,
      rollouts: () => models.rollouts(),
    },
    { histogramLatencies },
  );
  const traceJson = (seconds: number) => trace.export(clock.now(), seconds);
  let draining = false;
  let grpc: Promise<GrpcService> | undefined;
  const drained = new AbortController();
  const stopped = new AbortController();
  const appContext: AppContext = {
    draining: () => draining,
    strictReadiness,
    prometheus,
    trace: traceJson,
    dashboard: dashboard ? { entries: () => models.metricsEntries(), statuses: () => models.index(), trace: traceJson, now: () => clock.now(), clock, maxStreams: dashboardMaxStreams, stopped: stopped.signal } : undefined,
    access: { apiKeys, adminKeys },
    corsOrigins,
    models,
    maxInputBytes: maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
    maxElements,
    clients,
    sharedMemory: regions,
    server: {
      name: "tensorfn",
      version: VERSION,
      extensions: [
        "binary_tensor_data",
        "classification",
        "parameters",
        "model_configuration",
        "statistics",
        "schedule_policy",
        "model_repository",
        "model_repository(unload_dependents)",
        ...(regions ? ["system_shared_memory"] : []),
      ],
    },
    // A client that aborts uploads at will would write a line each: one per 10 s, with the count.
    log: { error: platform.log.error, clientAborted: repeatedLine(platform.log.warn, clock) },
  };
  const router = createRouter(appContext, routeHandlers(appContext));
  return {
    models,
    router,
    fetch: webFetch(router),
    grpc: () =>
      (grpc ??= Promise.resolve().then(() =>
        createGrpcService({
          ...appContext,
          drained: drained.signal,
          modelmesh: modelmesh && { root: modelmesh.root, loadTimeoutMs: options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS },
        }),
      )),
    clients,
    // Open, as /metrics is on the main port: no keys, no CORS.
    metricsRouter: createRouter({ ...appContext, access: undefined, corsOrigins: undefined }, metricsHandlers(prometheus)),
    trace: traceJson,
    drain: () => {
      draining = true;
      drained.abort();
      models.cancelLoads();
    },
    escaped: (error, kind) => escapes.report(error, kind),
    stop: async () => {
      draining = true;
      drained.abort();
      stopped.abort();
      gpus?.telemetry?.stop();
      await models.stop();
      regions?.close();
      await Promise.all(Object.values(backends).map((b) => b.close?.()));
    },
  };
}

/**
 * Reads a model file's inputs and outputs by opening it with the default backends on this thread
 * and releasing it at once (`tensorfn check` completes ensemble steps' configs with it, as a load
 * would; `tensorfn init --model` writes them out). The model is read as a load reads it: a regular
 * file, with the external data beside it. `close` releases the backends.
 */
export async function modelSignatureReader(platform: Platform): Promise<{ read(path: string): Promise<ModelSignature>; close(): Promise<void> }> {
  const backends = await defaultBackends({ ...platform, log: { ...platform.log, info() {}, warn() {} } });
  return {
    read: async (path) => {
      const slash = path.lastIndexOf("/");
      const read = folderReader(platform, slash > 0 ? path.slice(0, slash) : slash === 0 ? "/" : ".");
      const file = path.slice(slash + 1);
      const bytes = await readModelFile(read, file, path);
      const externalData = await readExternalData(read, bytes, file, path);
      const session = await backends.onnxruntime!.load(bytes, { accelerator: "cpu", executionThread: "main", intraOpThreads: 1, externalData });
      try {
        return session.signature;
      } finally {
        await session.release();
      }
    },
    close: async () => {
      await Promise.all(Object.values(backends).map((b) => b.close?.()));
    },
  };
}

async function defaultBackends(platform: Platform): Promise<Record<string, Backend>> {
  // Imported lazily so embedders that bring their own backends never load the native addon; a
  // runtime that cannot load it still serves, on onnxruntime-web's WebAssembly build.
  const web = createOnnxRuntimeWebBackend({ startWorker: platform.startWorker });
  let node: Backend | undefined;
  try {
    const { createOnnxRuntimeNodeBackend } = await import("./backends/onnxruntime-node-backend.ts");
    node = createOnnxRuntimeNodeBackend({ startWorker: platform.startWorker, plainView: platform.plainView });
  } catch (error) {
    platform.log.warn(`onnxruntime-node is not available (${(error as Error).message}); onnxruntime functions run on onnxruntime-web (wasm)`);
  }
  return { onnxruntime: createOnnxRuntimeBackend({ node, web }), identity: createIdentityBackend() };
}

/**
 * GPU telemetry through the platform's NVML, read once now: the device budget defaults to the
 * CUDA device's free memory at start less a margin (unless `--device-memory-budget` says), and the
 * pool manager holds what NVML sees in use on it since start against that budget.
 */
function gpuTelemetry(platform: Platform, clock: Clock, intervalMs: number | undefined, budgets: Budgets | undefined) {
  const telemetry = new GpuTelemetry({ read: () => platform.readGpus!(), clock, intervalMs, log: platform.log });
  const readings = telemetry.start();
  if (!readings.devices) {
    platform.log.info(`GPU telemetry off: ${readings.problem}`);
    return { budgets };
  }
  const mig = readings.devices.filter((d) => d.parent !== undefined).length;
  platform.log.info(`GPU telemetry: ${readings.devices.length - mig} GPU(s)${mig ? `, ${mig} MIG device(s)` : ""} through NVML`);
  const device = visibleDevice(readings.devices, platform.env("CUDA_VISIBLE_DEVICES"));
  if (!device) return { telemetry, budgets };
  const observedDeviceBytes = () => telemetry.usedSinceStart(device.uuid);
  const budget = budgets?.device === undefined ? deviceBudgetFrom(device) : undefined;
  if (budget === undefined) return { telemetry, budgets, observedDeviceBytes };
  platform.log.info(`device memory budget ${Math.round(budget / 2 ** 20)} MiB: ${device.name} (${device.uuid}) had ${Math.round(device.memoryFreeBytes! / 2 ** 20)} MiB free at start, less a margin (--device-memory-budget sets it)`);
  return { telemetry, budgets: { ...budgets, device: budget }, observedDeviceBytes };
}

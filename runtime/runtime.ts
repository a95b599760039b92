import type { Hono } from "hono";
import { systemClock } from "./core/mod.ts";
import type { Clock, Platform } from "./core/mod.ts";
import type { Accelerator } from "./config/mod.ts";
import { createIdentityBackend } from "./backends/mod.ts";
import type { Backend } from "./backends/mod.ts";
import { ModelManager } from "./lifecycle/mod.ts";
import type { Budgets, ControlMode } from "./lifecycle/mod.ts";
import { createApp } from "./http/mod.ts";

export const VERSION = "0.1.0";

/** Everything a server is built from; no globals, so a test can run several in one process. */
export interface RuntimeOptions {
  platform: Platform;
  /** Repository root: one sub-folder per function. */
  repository: string;
  clock?: Clock;
  /** Backends by config `backend` name; defaults to onnxruntime-node plus the identity backend. */
  backends?: Record<string, Backend>;
  /** Server-wide accelerator for functions that do not name one. */
  accelerator?: Accelerator;
  /** Largest request body accepted, compressed or inflated (default 64 MiB, as Triton). */
  maxInputBytes?: number;
  /** Model control mode (default lazy) and the lifecycle knobs that go with it. */
  controlMode?: ControlMode;
  loadModels?: readonly string[];
  pollIntervalMs?: number;
  loadTimeoutMs?: number;
  budgets?: Budgets;
  idleTimeoutMs?: number;
}

/** A built server: its model manager and its fetch handler. */
export interface Runtime {
  readonly models: ModelManager;
  readonly app: Hono;
  /** Drains in-flight requests and releases every session. */
  stop(): Promise<void>;
}

export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** Builds a runtime from its options and loads the repository. */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { platform } = options;
  const backends = options.backends ?? (await defaultBackends(platform));
  const models = new ModelManager({
    platform,
    repository: options.repository,
    backends,
    clock: options.clock ?? systemClock,
    accelerator: options.accelerator,
    controlMode: options.controlMode,
    loadModels: options.loadModels,
    pollIntervalMs: options.pollIntervalMs,
    loadTimeoutMs: options.loadTimeoutMs,
    budgets: options.budgets,
    idleTimeoutMs: options.idleTimeoutMs,
  });
  await models.start();
  const app = createApp({
    models,
    maxInputBytes: options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
    server: {
      name: "tensorfn",
      version: VERSION,
      extensions: ["binary_tensor_data", "parameters", "model_configuration", "statistics", "schedule_policy", "model_repository"],
    },
    log: platform.log,
  });
  return {
    models,
    app,
    stop: async () => {
      await models.stop();
      await Promise.all(Object.values(backends).map((b) => b.close?.()));
    },
  };
}

async function defaultBackends(platform: Platform): Promise<Record<string, Backend>> {
  // Imported lazily so embedders that bring their own backends never load the native addon.
  const { createOnnxRuntimeNodeBackend } = await import("./backends/onnxruntime-node-backend.ts");
  return { onnxruntime: createOnnxRuntimeNodeBackend({ startWorker: platform.startWorker }), identity: createIdentityBackend() };
}

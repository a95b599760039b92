import type { Clock, InferRequest, InferResponse } from "../core/mod.ts";
import { RuntimeError } from "../core/mod.ts";
import type { Backend, Session } from "../backends/backend.ts";
import { DynamicBatcher } from "../scheduler/mod.ts";
import type { LevelPolicy, Scheduler } from "../scheduler/mod.ts";
import type { DynamicBatching, FunctionConfig, QueuePolicy } from "../config/mod.ts";
import { ModelStats } from "../metrics/mod.ts";
import type { DeploymentState } from "./deployment-state.ts";
import { collectOutputs, prepareRequest } from "./prepare-request.ts";

/** One function version in memory: its effective config, its instances and its scheduler. */
export class Deployment {
  readonly name: string;
  readonly version: number;
  readonly config: FunctionConfig;
  /** Execution providers the instances use ("cpu", "cuda,cpu"…), and why one differs from the request if it does. */
  readonly provider: string;
  readonly fallbackReason?: string;
  readonly stats = new ModelStats();
  #state: DeploymentState = "READY";
  readonly #clock: Clock;
  readonly #sessions: Session[];
  readonly #scheduler: Scheduler;
  readonly #backend: Backend;

  constructor(options: { config: FunctionConfig; version: number; sessions: Session[]; backend: Backend; clock: Clock }) {
    const { config, sessions } = options;
    this.name = config.name;
    this.version = options.version;
    this.config = config;
    this.provider = [...new Set(sessions.map((s) => s.provider))].join(",");
    this.fallbackReason = sessions.find((s) => s.fallbackReason)?.fallbackReason;
    this.#sessions = sessions;
    this.#backend = options.backend;
    this.#clock = options.clock;
    const batching = config.dynamic_batching;
    this.#scheduler = new DynamicBatcher({
      instances: sessions,
      // Without dynamic_batching every request runs alone: the same batcher with a batch of 1.
      maxBatchSize: batching ? config.max_batch_size : 1,
      preferredBatchSizes: batching?.preferred_batch_size,
      maxQueueDelayMs: (batching?.max_queue_delay_microseconds ?? 0) / 1000,
      targetLatencyMs: batching?.target_latency_ms,
      preserveOrdering: batching?.preserve_ordering,
      ...(batching ? queueLevels(batching) : {}),
      observer: this.stats,
      clock: options.clock,
    });
  }

  /** Sessions serving this version. */
  get instanceCount(): number {
    return this.#sessions.length;
  }

  get state(): DeploymentState {
    return this.#state;
  }

  /** Validates, queues and runs one request; resolves with its own outputs. */
  async infer(request: InferRequest, options: { signal?: AbortSignal } = {}): Promise<InferResponse> {
    if (this.#state !== "READY") {
      throw new RuntimeError("UNAVAILABLE", `model '${this.name}' version ${this.version} is not ready (${this.#state})`);
    }
    const started = this.#clock.now();
    try {
      const scheduled = prepareRequest(request, this.config, { checkInput: this.#backend.checkInput });
      const result = await this.#scheduler.enqueue(scheduled, options);
      const response = {
        modelName: this.name,
        modelVersion: String(this.version),
        id: request.id,
        outputs: collectOutputs(request, result, this.config),
      };
      this.stats.succeeded(this.#clock.now() - started);
      return response;
    } catch (error) {
      this.stats.failed(this.#clock.now() - started);
      throw error;
    }
  }

  /** Stops taking requests, lets in-flight ones finish, then releases the sessions. */
  async unload(): Promise<void> {
    this.#state = "UNLOADING";
    await this.#scheduler.stop();
    await Promise.all(this.#sessions.map((s) => s.release()));
    this.#state = "UNAVAILABLE";
  }
}

/** Triton's queue policy per priority level, in the scheduler's terms (levels 1..N). */
function queueLevels(batching: DynamicBatching): { levels: LevelPolicy[]; defaultLevel: number } {
  const count = Math.max(1, batching.priority_levels);
  const levels = Array.from({ length: count }, (_, i) => {
    const policy: QueuePolicy = batching.priority_queue_policy[String(i + 1)] ?? batching.default_queue_policy;
    return {
      timeoutAction: policy.timeout_action,
      defaultTimeoutMs: policy.default_timeout_microseconds / 1000,
      allowTimeoutOverride: policy.allow_timeout_override,
      maxQueueSize: policy.max_queue_size,
    };
  });
  return { levels, defaultLevel: batching.default_priority_level || 1 };
}

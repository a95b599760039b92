import type { Clock, InferRequest, InferResponse } from "../core/mod.ts";
import { RuntimeError } from "../core/mod.ts";
import type { FunctionConfig } from "../config/function-config.ts";
import type { Backend, Session } from "../backends/backend.ts";
import { DynamicBatcher } from "../scheduler/mod.ts";
import type { Scheduler } from "../scheduler/mod.ts";
import type { DeploymentState } from "./deployment-state.ts";
import { collectOutputs, prepareRequest } from "./prepare-request.ts";

/** One function version in memory: its effective config, its instances and its scheduler. */
export class Deployment {
  readonly name: string;
  readonly version: number;
  readonly config: FunctionConfig;
  /** Execution provider the instances use, and why it differs from the request if it does. */
  readonly provider: string;
  readonly fallbackReason?: string;
  #state: DeploymentState = "READY";
  readonly #sessions: Session[];
  readonly #scheduler: Scheduler;
  readonly #backend: Backend;

  constructor(options: { config: FunctionConfig; version: number; sessions: Session[]; backend: Backend; clock: Clock }) {
    const { config, sessions } = options;
    this.name = config.name;
    this.version = options.version;
    this.config = config;
    this.provider = sessions[0]!.provider;
    this.fallbackReason = sessions[0]!.fallbackReason;
    this.#sessions = sessions;
    this.#backend = options.backend;
    const batching = config.dynamic_batching;
    this.#scheduler = new DynamicBatcher({
      instances: sessions,
      // Without dynamic_batching every request runs alone: the same batcher with a batch of 1.
      maxBatchSize: batching ? config.max_batch_size : 1,
      preferredBatchSizes: batching?.preferred_batch_size,
      maxQueueDelayMs: (batching?.max_queue_delay_microseconds ?? 0) / 1000,
      clock: options.clock,
    });
  }

  get state(): DeploymentState {
    return this.#state;
  }

  /** Validates, queues and runs one request; resolves with its own outputs. */
  async infer(request: InferRequest, options: { signal?: AbortSignal } = {}): Promise<InferResponse> {
    if (this.#state !== "READY") {
      throw new RuntimeError("UNAVAILABLE", `model '${this.name}' version ${this.version} is not ready (${this.#state})`);
    }
    const scheduled = prepareRequest(request, this.config, { checkInput: this.#backend.checkInput });
    const result = await this.#scheduler.enqueue(scheduled, options);
    return {
      modelName: this.name,
      modelVersion: String(this.version),
      id: request.id,
      outputs: collectOutputs(request, result, this.config),
    };
  }

  /** Stops taking requests, lets in-flight ones finish, then releases the sessions. */
  async unload(): Promise<void> {
    this.#state = "UNLOADING";
    await this.#scheduler.stop();
    await Promise.all(this.#sessions.map((s) => s.release()));
    this.#state = "UNAVAILABLE";
  }
}

import type { Clock } from "../core/mod.ts";
import type { DynamicBatching, FunctionConfig, QueuePolicy } from "../config/mod.ts";
import { DynamicBatcher } from "./dynamic/dynamic-batcher.ts";
import type { LevelPolicy } from "./queue/priority-queue.ts";
import type { SchedulerObserver } from "./scheduler-observer.ts";
import type { Arrivals, InstanceScheduler, ModelInstance, Scheduler } from "./scheduler.ts";
import { EnsembleScheduler } from "./ensemble/ensemble-scheduler.ts";
import type { StepDispatch } from "./ensemble/ensemble-scheduler.ts";

/** What a scheduler is built on, besides the function's config. */
export interface SchedulerSetup {
  instances: readonly ModelInstance[];
  clock: Clock;
  observer?: SchedulerObserver;
  /** Waits until `instance` may execute (Triton's rate limiter); see DynamicBatcherOptions.acquire. */
  acquire?: (instance: ModelInstance) => Promise<() => void>;
  /** Runs another function by tensors: an ensemble's steps (required for `platform: ensemble`). */
  dispatch?: StepDispatch;
  /** What is known of requests still to come; see DynamicBatcherOptions.arrivals. */
  arrivals?: Arrivals;
  /** An ensemble answer's ceiling as a multiple of its input bytes; see EnsembleSchedulerOptions.outputRatio. */
  outputRatio?: number;
}

/** Whether a scheduler executes on instances of its own (the deployment then scales them). */
export function hasInstances(scheduler: Scheduler): scheduler is InstanceScheduler {
  return typeof (scheduler as Partial<InstanceScheduler>).addInstance === "function";
}

/**
 * The scheduler a function's config asks for: an ensemble's (its steps as dataflow), else Triton's
 * dynamic batcher with its `dynamic_batching` settings, or, without `dynamic_batching`, the same
 * batcher with a batch of 1 (every request runs alone, as in Triton's default scheduler). The one
 * place a config picks its scheduler: sequence and continuous batching join here.
 */
export function createScheduler(config: FunctionConfig, setup: SchedulerSetup): Scheduler {
  if (config.ensemble_scheduling) {
    if (!setup.dispatch) throw new Error("an ensemble's scheduler needs a dispatch to its steps' functions");
    return new EnsembleScheduler({ name: config.name, steps: config.ensemble_scheduling.step, outputs: config.output.map((o) => o.name), dispatch: setup.dispatch, observer: setup.observer, outputRatio: setup.outputRatio });
  }
  const batching = config.dynamic_batching;
  return new DynamicBatcher({
    instances: setup.instances,
    maxBatchSize: batching ? config.max_batch_size : 1,
    preferredBatchSizes: batching?.preferred_batch_size,
    maxQueueDelayMs: (batching?.max_queue_delay_microseconds ?? 0) / 1000,
    targetLatencyMs: batching?.target_latency_ms,
    preserveOrdering: batching?.preserve_ordering,
    ...(batching ? queueLevels(batching) : {}),
    observer: setup.observer,
    clock: setup.clock,
    acquire: setup.acquire,
    // A handler is code that can stop early: it learns which of its requests' clients went away.
    requestSignals: config.backend === "handler",
    arrivals: setup.arrivals,
  });
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

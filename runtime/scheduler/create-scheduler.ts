import { GREEDY } from "../core/mod.ts";
import type { Clock, SamplingParams } from "../core/mod.ts";
import type { DynamicBatching, FunctionConfig, QueuePolicy, SequenceBatching } from "../config/mod.ts";
import type { Tensor } from "../core/mod.ts";
import { decodeBinaryTensor, decodeJsonData, fromConfigType } from "../tensor/mod.ts";
import { DynamicBatcher } from "./dynamic/dynamic-batcher.ts";
import { SequenceBatcher } from "./sequence/sequence-batcher.ts";
import { controlTensor, gatherAlong, initialState } from "./sequence/sequence-tensors.ts";
import type { ControlSpec, StateSpec } from "./sequence/sequence-tensors.ts";
import type { LevelPolicy } from "./queue/priority-queue.ts";
import type { SchedulerObserver, SequenceEvent } from "./scheduler-observer.ts";
import type { Arrivals, InstanceScheduler, ModelInstance, Scheduler } from "./scheduler.ts";
import { EnsembleScheduler } from "./ensemble/ensemble-scheduler.ts";
import { GeneratorInstances } from "./generation/generator-instances.ts";
import { KvStore } from "./generation/kv-cache.ts";
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
  /** Where a scheduler reports what a client should know of (a sequence started over). */
  log?: { warn(message: string): void };
  /** Told what happens to sequences (a sequence batcher): the function's handler hook. */
  onSequence?: (event: SequenceEvent, id: number | string) => void;
  /** A sequence's first state by state input name, as raw bytes; absent: zeros. */
  initialStates?: ReadonlyMap<string, Uint8Array>;
  /** A generator's end-of-sequence tokens and the model's length (from its tokenizer's files). */
  codec?: { eosTokenIds: readonly number[]; maxPositions?: number; samplingDefaults?: Partial<SamplingParams> };
}

/** Whether a scheduler executes on instances of its own (the deployment then scales them). */
export function hasInstances(scheduler: Scheduler): scheduler is InstanceScheduler {
  return (scheduler as Partial<InstanceScheduler>).pool !== undefined;
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
  if (config.sequence_batching) return sequenceBatcher(config, config.sequence_batching, setup);
  if (config.generation) return generationScheduler(config, setup);
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

/** Continuous batching from `generation`: a loop per instance, each over a KV cache of `kv_cache_bytes` at most. */
function generationScheduler(config: FunctionConfig, setup: SchedulerSetup): GeneratorInstances {
  const g = config.generation!;
  const model = g.model!;
  const eos = setup.codec?.eosTokenIds ?? [];
  const geometry = { layers: model.layers, kvHeads: model.kv_heads, headDim: model.head_dim, positionIds: model.position_ids, padToken: eos[0] ?? 0 };
  const byBytes = Math.floor(g.kv_cache_bytes / KvStore.blockBytes(geometry, g.block_size));
  const maxModelLen = g.max_model_len ?? setup.codec?.maxPositions ?? 2048;
  return new GeneratorInstances({
    name: config.name,
    geometry,
    clock: setup.clock,
    mode: g.mode,
    blockSize: g.block_size,
    blocks: Math.max(1, Math.min(g.kv_cache_blocks ?? Infinity, byBytes)),
    maxNumSeqs: g.max_num_seqs,
    maxBatchedTokens: g.max_num_batched_tokens,
    maxModelLen,
    maxWaiting: g.max_waiting_requests,
    maxWaitingTokens: g.max_waiting_tokens,
    prefixCaching: g.prefix_caching,
    vocab: model.vocab,
    eosTokenIds: eos,
    samplingDefaults: { ...GREEDY, ...setup.codec?.samplingDefaults },
    observer: setup.observer,
  }, setup.instances);
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

/** Triton's sequence batcher from `sequence_batching` (and ours: state batch axes, shared inputs, max_sequences). */
function sequenceBatcher(config: FunctionConfig, seq: SequenceBatching, setup: SchedulerSetup): SequenceBatcher {
  const strategy = seq.oldest ? "oldest" : "direct";
  const delayUs = seq.oldest?.max_queue_delay_microseconds ?? seq.direct?.max_queue_delay_microseconds ?? 0;
  const { states, controls, shared } = sequenceSpecs(seq, setup.initialStates);
  return new SequenceBatcher({
    name: config.name,
    instances: setup.instances,
    strategy,
    ...(seq.oldest?.max_candidate_sequences ? { candidates: seq.oldest.max_candidate_sequences } : {}),
    policy: {
      maxBatchSize: Math.max(1, config.max_batch_size),
      maxQueueDelayMs: delayUs / 1000,
      minimumUtilization: seq.direct?.minimum_slot_utilization ?? 0,
      preferredBatchSizes: seq.oldest?.preferred_batch_size ?? [],
    },
    maxSequences: seq.max_sequences,
    preserveOrdering: seq.oldest?.preserve_ordering ?? false,
    idleMs: seq.max_sequence_idle_microseconds / 1000,
    states,
    controls,
    shared,
    clock: setup.clock,
    observer: setup.observer,
    arrivals: setup.arrivals,
    onSequence: (event, id) => {
      setup.onSequence?.(event, id);
      if (event === "restart") setup.log?.warn(`sequence ${typeof id === "number" ? id : JSON.stringify(id)} was started again (sequence_start on a live sequence): its previous run ended`);
    },
  });
}

/**
 * The tensors a sequence model takes beyond a request's for `rows` rows of new sequences (initial
 * states, controls saying each starts, shared inputs): what a warm-up or a timing probe feeds it.
 */
export function sequenceFeeds(config: FunctionConfig, rows: number, initialStates?: ReadonlyMap<string, Uint8Array>): Record<string, Tensor> {
  const { states, controls, shared } = sequenceSpecs(config.sequence_batching!, initialStates);
  const feeds: Record<string, Tensor> = { ...shared };
  for (const spec of states) feeds[spec.input] = gatherAlong(Array.from({ length: rows }, () => initialState(spec)), spec.batchAxis);
  for (const spec of controls) feeds[spec.name] = controlTensor(spec, Array.from({ length: rows }, (_, i) => ({ start: true, end: false, id: i + 1 })));
  return feeds;
}

function sequenceSpecs(seq: SequenceBatching, initialStates?: ReadonlyMap<string, Uint8Array>): { states: StateSpec[]; controls: ControlSpec[]; shared: Record<string, Tensor> } {
  const states: StateSpec[] = seq.state.map((s) => {
    const datatype = fromConfigType(s.data_type);
    const bytes = initialStates?.get(s.input_name);
    const spec: StateSpec = { input: s.input_name, output: s.output_name, datatype, dims: s.dims, batchAxis: s.batch_axis };
    if (bytes) spec.initial = decodeBinaryTensor(bytes, { name: s.input_name, datatype, shape: s.dims });
    return spec;
  });
  const controls: ControlSpec[] = seq.control_input.map(({ name, control: [c] }) => {
    const kind = c!.kind.replace("CONTROL_SEQUENCE_", "") as ControlSpec["kind"];
    if (kind === "CORRID") return { name, kind, datatype: fromConfigType(c!.data_type!) };
    if (c!.int32_false_true) return { name, kind, datatype: "INT32", values: [c!.int32_false_true[0]!, c!.int32_false_true[1]!] };
    if (c!.fp32_false_true) return { name, kind, datatype: "FP32", values: [c!.fp32_false_true[0]!, c!.fp32_false_true[1]!] };
    return { name, kind, datatype: "BOOL", values: [Number(c!.bool_false_true![0]), Number(c!.bool_false_true![1])] };
  });
  const shared: Record<string, Tensor> = {};
  for (const s of seq.shared_input) {
    const datatype = fromConfigType(s.data_type);
    shared[s.name] = { datatype, shape: s.dims, data: decodeJsonData({ name: s.name, datatype, shape: s.dims }, s.data) };
  }
  return { states, controls, shared };
}

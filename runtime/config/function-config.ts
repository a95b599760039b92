/**
 * The validated, defaulted configuration of one function: Triton's model-configuration fields with
 * Triton's names and enum strings, plus our own keys (`accelerator`, `scale`, `handler`).
 * Produced by `parseFunctionConfig()` and completed from the model by `completeConfig()`.
 */
import type { ConfigDataType } from "../tensor/mod.ts";
import type { IsolationConfig } from "./_isolation-schema.ts";
import type { EmbeddingConfig, GenerationConfig } from "./_generation-schema.ts";

export interface FunctionConfig {
  name: string;
  /** "onnxruntime_onnx" for ONNX models; empty when `backend` names a built-in. */
  platform: string;
  /** "onnxruntime" or a built-in test backend such as "identity". */
  backend: string;
  /** 0 = the model has no batch dimension; ≥ 1 = first dimension is the batch, up to this size. */
  max_batch_size: number;
  input: TensorConfig[];
  output: TensorConfig[];
  version_policy: VersionPolicy;
  instance_group: InstanceGroup[];
  /** Present when dynamic batching is enabled (`dynamic_batching: {}` enables it with defaults). */
  dynamic_batching?: DynamicBatching;
  /** Triton's sequence batcher: requests belong to sequences, run in order on state kept here. */
  sequence_batching?: SequenceBatching;
  optimization: Optimization;
  /** Backend knobs, Triton-style: every value is `{ string_value }`. */
  parameters: Record<string, { string_value: string }>;
  default_model_filename: string;
  accelerator: Accelerator;
  /** Triton's warm-up samples, run on every instance before a version is READY. */
  model_warmup: WarmupSample[];
  /** Ours: serverless behaviour (idle parking, scale to zero, autoscaling). */
  scale: ScaleConfig;
  /** Ours: requests admitted per second before the queue (absent = unlimited). */
  rate_limit?: RateLimitConfig;
  /** Ours: a canary version served beside the stable one to a share of the requests that name no version. */
  rollout?: RolloutConfig;
  /**
   * Triton's response cache: answers to requests seen before come from the server's cache
   * (`--cache-size`), skipping the queue and the model. Absent = disabled.
   */
  response_cache?: { enable: boolean };
  /** Triton's: the steps of a `platform: ensemble` function (a DAG over other functions). */
  ensemble_scheduling?: EnsembleScheduling;
  /** Ours: the function's TypeScript handler, relative to its folder (`backend: handler`: it computes the answers). */
  handler?: string;
  /** Ours: how long one handler call may take before it is cut off with 504 (default 30 s; set when `handler` is). */
  handler_timeout_ms?: number;
  /**
   * Ours: the most (weighted) elements one request to this function may carry, below the server's
   * `--max-elements` — for a model whose free dims let a small request ask for a large execution.
   */
  max_input_elements?: number;
  /** Ours: a decoder (Optimum's layout) served by continuous batching; its request is a prompt's token ids. */
  generation?: GenerationConfig;
  /** Ours: a text encoder answering OpenAI's /v1/embeddings with one of its outputs (pooled where it has a sequence axis). */
  embedding?: EmbeddingConfig;
  /** Ours: `process` runs the function's instances and handler in a child process of their own (absent: shared, in the server's). */
  isolation?: IsolationConfig;
}

/**
 * A token bucket in front of a function: `burst` requests at once, `requests_per_second` on
 * average; beyond that a request is refused with 429 before it loads anything or joins the queue.
 * With `key_header`, each value of that request header (an API key, a tenant) has its own bucket.
 */
/**
 * A rollout (docs/guides/lifecycle.md, "Rollouts"): `canary.version` takes `percent` of the
 * requests that name no version, the stable version (the highest other one served) the rest;
 * `shadow.version` gets a copy of `percent` of them once they are answered, its answers compared
 * and dropped. One of the two at least.
 */
export interface RolloutConfig {
  canary?: { version: number; percent: number };
  shadow?: RolloutShadow;
  /** Present: the server compares the canary with the stable version and steps its share up, or aborts it. */
  analysis?: RolloutAnalysis;
}

/** A rollout's shadow version: copies of answered requests, compared, never answered from. */
export interface RolloutShadow {
  version: number;
  percent: number;
  /** Copies running or queued at once, beyond which a copy is dropped (and counted). */
  max_pending: number;
}

/** How a rollout's canary is judged, window by window (defaults in the schema). */
export interface RolloutAnalysis {
  /** Server-side failures (not a client's bad request) over requests, above which the canary is aborted. */
  max_error_rate: number;
  /** The canary's p99 latency over the stable one's, above which it is aborted. */
  max_p99_ratio: number;
  /**
   * Windows in a row, at one share, whose canary p99 is over max_p99_ratio before it is aborted:
   * a p99 of a hundred answers is their second slowest, which one stall of the canary's worker sets.
   */
  slow_windows: number;
  /** Canary requests a window needs before it is judged (fewer: the window goes on). */
  min_requests: number;
  window_s: number;
  /** The shares the canary is stepped through, ascending; 100 last promotes it. */
  steps: number[];
}

export interface RateLimitConfig {
  requests_per_second: number;
  /** Default: requests_per_second rounded up, at least 1. */
  burst: number;
  key_header?: string;
  /**
   * Ours, with key_header: one bucket shared by every key, so new key values cannot multiply the
   * rate. Default: 10 × requests_per_second (ten keys at full rate), so keyed configs written
   * before it keep working for a handful of tenants while random keys are capped.
   */
  total_requests_per_second?: number;
  /** Default: 10 × burst when total_requests_per_second is unset, else that rate rounded up (at least `burst`). */
  total_burst?: number;
}

/** Triton's ModelWarmup: `count` runs of a batch of `batch_size` built from each input's source. */
export interface WarmupSample {
  name: string;
  batch_size: number;
  count: number;
  /** One source per input: zeros, random values, a file of warmup/ (Triton's input_data_file) or inline values (ours). */
  inputs: Record<string, { data_type: TritonDataType; dims: number[]; zero_data?: boolean; random_data?: boolean; input_data_file?: string; data?: (number | string | boolean)[] }>;
}

/**
 * How a function scales. Unset fields take the server's defaults: instances between
 * `min_instances` and `max_instances` (default: instance_group's count), added when in-flight
 * requests per instance exceed `target_concurrency`; after `idle_timeout_ms` without requests a
 * function at `min_instances` 0 is parked (`park: host`, model bytes kept in RAM) or unloaded
 * (`park: none`).
 */
export interface ScaleConfig {
  min_instances?: number;
  max_instances?: number;
  target_concurrency?: number;
  idle_timeout_ms?: number;
  park: "host" | "none";
}

/** Triton's datatype enum as configs spell it; defined with the datatypes in tensor/datatypes.ts. */
export type TritonDataType = ConfigDataType;

export interface TensorConfig {
  name: string;
  data_type: TritonDataType;
  /** Excludes the batch dimension when max_batch_size > 0; -1 = variable. */
  dims: number[];
  /** Shape presented to the model instead of `dims` (same element count). */
  reshape?: { shape: number[] };
  /** Inputs only: may be omitted from a request. */
  optional: boolean;
  /** Outputs only: the file, in the function's folder, of the labels a classification answer names (one per line; Triton's). */
  label_filename?: string;
  /** Inputs only: Triton's image layout (FORMAT_NHWC or FORMAT_NCHW), for clients; absent: FORMAT_NONE. */
  format?: "FORMAT_NHWC" | "FORMAT_NCHW";
}

export type VersionPolicy =
  | { latest: { num_versions: number } }
  | { all: Record<string, never> }
  | { specific: { versions: number[] } };

export interface InstanceGroup {
  name: string;
  count: number;
  kind: "KIND_AUTO" | "KIND_CPU" | "KIND_GPU" | "KIND_MODEL";
  gpus: number[];
  /** Triton's: what each instance needs free before it executes (only with `--rate-limit execution_count`). */
  rate_limiter?: InstanceRateLimiter;
  /**
   * Where the instances' process runs (`isolation: process`): the name of a server `--host-policy`,
   * as in Triton, or (ours, function.yaml) the policy itself.
   */
  host_policy?: string | HostPolicy;
}

/** Triton's host policy settings: the cores a process may run on, the NUMA node it binds to. */
export interface HostPolicy {
  /** Cores as a list: "0-3", "0,2,4-5". */
  cpu_cores?: string;
  numa_node?: number;
}

/**
 * Resources an instance holds while it executes, per device unless `global`, and its weight among
 * all waiting instances: priority 2 gets half the turns of priority 1 (0 counts as 1).
 */
export interface InstanceRateLimiter {
  resources: { name: string; global: boolean; count: number }[];
  priority: number;
}

export interface DynamicBatching {
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  /** Responses leave in the order their requests were dispatched, whichever instance ran them. */
  preserve_ordering: boolean;
  /** 0 = one queue; N = levels 1..N, 1 served first. */
  priority_levels: number;
  /** Level of requests without `parameters.priority` (1..priority_levels; 0 when there are none). */
  default_priority_level: number;
  default_queue_policy: QueuePolicy;
  /** Per-level policies, keyed by level as a string (Triton's map keys). */
  priority_queue_policy: Record<string, QueuePolicy>;
  /**
   * Ours: adapt the queue delay online to keep p99 latency under this target while batching as
   * much as it allows. `max_queue_delay_microseconds` is then the starting point and the ceiling.
   */
  target_latency_ms?: number;
}

/** Triton's ModelQueuePolicy. */
export interface QueuePolicy {
  /** What happens to a request whose timeout expires while queued. */
  timeout_action: "REJECT" | "DELAY";
  /** 0 = no timeout. */
  default_timeout_microseconds: number;
  /** Lets a request's `parameters.timeout` shorten the default. */
  allow_timeout_override: boolean;
  /** 0 = unbounded; a full queue refuses at once with 503. */
  max_queue_size: number;
}

export interface Optimization {
  /** ONNX Runtime graph optimisation, Triton's mapping: 0 = all, -1 = basic, 1 = extended, 2 = none. */
  graph: { level: number };
  /** Triton's execution accelerators: TensorRT or CUDA, with their parameters (config/_accelerator-schema.ts). */
  execution_accelerators?: ExecutionAccelerators;
}

/** Triton's `optimization.execution_accelerators`; parameter values are strings, as in Triton. */
export interface ExecutionAccelerators {
  gpu_execution_accelerator: { name: string; parameters: Record<string, string> }[];
  cpu_execution_accelerator: { name: string; parameters: Record<string, string> }[];
}

export type Accelerator = "auto" | "cpu" | "cuda" | "tensorrt" | "webgpu" | "wasm";

/** Triton's ensemble_scheduling: steps that run other functions, wired by tensor names. */
export interface EnsembleScheduling {
  step: EnsembleStep[];
}

/** One step: `model_name` (version `model_version`, -1 = the served one) with its inputs taken from, and outputs given to, ensemble tensors. */
export interface EnsembleStep {
  model_name: string;
  model_version: number;
  /** Composing function's input → the ensemble tensor that feeds it. */
  input_map: Record<string, string>;
  /** Composing function's output → the ensemble tensor it produces (unmapped outputs are dropped). */
  output_map: Record<string, string>;
  /**
   * Ours: the step runs only when this holds (config/step-condition.ts); otherwise its outputs are
   * not produced, the steps that need them do not run either, and the answer leaves out the
   * ensemble outputs nobody produced (an early exit).
   */
  condition?: string;
}

/** Triton's `sequence_batching`, with ours marked. */
export interface SequenceBatching {
  /** A sequence without a request for this long is released (default 1 s). */
  max_sequence_idle_microseconds: number;
  /** Triton's strategies; exactly one is set (default: direct). */
  direct?: { max_queue_delay_microseconds: number; minimum_slot_utilization: number };
  oldest?: { max_candidate_sequences: number; preferred_batch_size: number[]; max_queue_delay_microseconds: number; preserve_ordering: boolean };
  control_input: SequenceControlInput[];
  state: SequenceState[];
  /** Ours: inputs every execution takes as given here, shared by its rows (Silero's sample rate). */
  shared_input: { name: string; data_type: TritonDataType; dims: number[]; data: (number | string | boolean)[] }[];
  /** Ours: sequences live at once, backlog included (default 4096); a START beyond is refused with 503. */
  max_sequences: number;
}

export interface SequenceControlInput {
  name: string;
  control: {
    kind: "CONTROL_SEQUENCE_START" | "CONTROL_SEQUENCE_READY" | "CONTROL_SEQUENCE_END" | "CONTROL_SEQUENCE_CORRID";
    int32_false_true?: number[];
    fp32_false_true?: number[];
    bool_false_true?: boolean[];
    data_type?: TritonDataType;
  }[];
}

export interface SequenceState {
  input_name: string;
  output_name: string;
  data_type: TritonDataType;
  /** One sequence's shape, without the batch dimension. */
  dims: number[];
  /** Ours: where the model's tensor has its batch dimension (Triton: 0). */
  batch_axis: number;
  /** Triton's first state: zeros (the default, or `zero_data`), or a file's raw bytes (`data_file`, in the function's initial_state/ folder). */
  initial_state: { name: string; data_type: TritonDataType; dims: number[]; zero_data?: boolean; data_file?: string }[];
}

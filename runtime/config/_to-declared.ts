import type { VersionPolicy } from "./function-config.ts";
import type { DeclaredConfig } from "./declared-config.ts";
import type { RawConfig, RawTensor } from "./function-schema.ts";
import { DEFAULT_HANDLER_TIMEOUT_MS, DEFAULT_MAX_SEQUENCES } from "./function-schema.ts";

/**
 * The declared config for function `name` from the schema's output: platform normalised
 * ("onnxruntime_onnx", or "" for a built-in backend), the default instance group added and
 * unnamed groups named `<function>_<index>` as Triton does, JSON-only fields dropped.
 */
export function toDeclared(raw: RawConfig, name: string): DeclaredConfig {
  // An ensemble runs no backend of its own: "ensemble" marks it inside (Triton's JSON prints "").
  const ensemble = raw.platform === "ensemble";
  const backend = ensemble ? "ensemble" : raw.backend || "onnxruntime";
  const groups = raw.instance_group.length > 0 || raw.platform === "ensemble" ? raw.instance_group : [{ name: "", count: 1, kind: "KIND_AUTO" as const, gpus: [] }];
  const declared: DeclaredConfig = {
    name,
    platform: ensemble ? "ensemble" : backend === "onnxruntime" ? "onnxruntime_onnx" : "",
    backend,
    input: raw.input.map((t) => ({ ...tensor(t), optional: t.optional ?? false, ...(t.format && t.format !== "FORMAT_NONE" ? { format: t.format } : {}) })),
    output: raw.output.map((t) => ({ ...tensor(t), optional: false, ...(t.label_filename ? { label_filename: t.label_filename } : {}) })),
    version_policy: versionPolicy(raw.version_policy),
    instance_group: groups.map((g, i) => ({
      name: g.name || `${name}_${i}`,
      count: g.count,
      kind: g.kind,
      gpus: [...g.gpus],
      ...("rate_limiter" in g && g.rate_limiter ? { rate_limiter: structuredClone(g.rate_limiter) } : {}),
      ...(g.host_policy ? { host_policy: structuredClone(g.host_policy) } : {}),
    })),
    optimization: { graph: { level: raw.optimization.graph.level }, ...(raw.optimization.execution_accelerators && { execution_accelerators: structuredClone(raw.optimization.execution_accelerators) }) },
    parameters: Object.fromEntries(Object.entries(raw.parameters).map(([k, v]) => [k, { string_value: v.string_value }])),
    default_model_filename: raw.default_model_filename,
    accelerator: raw.accelerator,
    model_warmup: structuredClone(raw.model_warmup),
    scale: { park: "host", ...structuredClone(raw.scale ?? {}) },
  };
  if (raw.max_batch_size !== undefined) declared.max_batch_size = raw.max_batch_size;
  if (raw.dynamic_batching) declared.dynamic_batching = structuredClone(raw.dynamic_batching);
  if (raw.sequence_batching) {
    const { shared_input, max_sequences, state, ...triton } = structuredClone(raw.sequence_batching);
    declared.sequence_batching = {
      ...triton,
      state: state.map((s) => ({ ...s, batch_axis: s.batch_axis ?? 0 })),
      shared_input: shared_input ?? [],
      max_sequences: max_sequences ?? DEFAULT_MAX_SEQUENCES,
    };
  }
  if (raw.response_cache?.enable) declared.response_cache = { enable: true };
  if (raw.generation) declared.generation = structuredClone(raw.generation);
  if (raw.embedding) declared.embedding = structuredClone(raw.embedding);
  if (raw.isolation?.mode === "process") declared.isolation = structuredClone(raw.isolation);
  if (raw.max_input_elements !== undefined) declared.max_input_elements = raw.max_input_elements;
  if (raw.ensemble_scheduling) declared.ensemble_scheduling = structuredClone(raw.ensemble_scheduling);
  if (raw.handler) {
    declared.handler = raw.handler;
    declared.handler_timeout_ms = raw.handler_timeout_ms ?? DEFAULT_HANDLER_TIMEOUT_MS;
  }
  if (raw.rollout) declared.rollout = structuredClone(raw.rollout);
  if (raw.rate_limit) {
    const { requests_per_second, burst, key_header } = raw.rate_limit;
    declared.rate_limit = { requests_per_second, burst: burst ?? Math.max(1, Math.ceil(requests_per_second)) };
    if (key_header) {
      const { total_requests_per_second: total, total_burst } = raw.rate_limit;
      const perKeyBurst = declared.rate_limit.burst;
      declared.rate_limit.key_header = key_header;
      declared.rate_limit.total_requests_per_second = total ?? TOTAL_RATE_FACTOR * requests_per_second;
      declared.rate_limit.total_burst = total_burst ?? (total === undefined ? TOTAL_RATE_FACTOR * perKeyBurst : Math.max(perKeyBurst, Math.ceil(total)));
    }
  }
  return declared;
}

/** A keyed rate_limit's default total rate and burst, in multiples of the per-key ones (see RateLimitConfig). */
const TOTAL_RATE_FACTOR = 10;

function tensor(t: RawTensor) {
  const out = { name: t.name, data_type: t.data_type, dims: [...t.dims] };
  return t.reshape ? { ...out, reshape: { shape: [...t.reshape.shape] } } : out;
}

function versionPolicy(policy: RawConfig["version_policy"]): VersionPolicy {
  if (policy?.all) return { all: {} };
  if (policy?.specific) return { specific: { versions: [...policy.specific.versions] } };
  return { latest: { num_versions: policy?.latest?.num_versions ?? 1 } };
}

/**
 * Function configuration: function.yaml (Triton's model-config fields in YAML) → a validated,
 * defaulted `DeclaredConfig` whose errors point at file, line and field; completion from the
 * model's signature into a `FunctionConfig`; Triton's JSON form; the `tensorfn check` logic.
 */
export type {
  Accelerator,
  DynamicBatching,
  FunctionConfig,
  InstanceGroup,
  InstanceRateLimiter,
  Optimization,
  QueuePolicy,
  ScaleConfig,
  WarmupSample,
  TensorConfig,
  TritonDataType,
  VersionPolicy,
} from "./function-config.ts";
export type { DeclaredConfig } from "./declared-config.ts";
export { type ConfigIssue, formatIssue } from "./config-issue.ts";
export { parseFunctionConfig, type ParseResult } from "./parse-function-config.ts";
export { completeConfig, type CompleteOptions, DEFAULT_MAX_BATCH_SIZE } from "./complete-config.ts";
export { completeIdentityConfig, identitySignature } from "./identity-config.ts";
export { parseTritonJsonConfig, toTritonJson } from "./triton-json.ts";
export { defaultDynamicBatching } from "./dynamic-batching-defaults.ts";
export { checkFunctionConfig, checkRepository, FUNCTION_FILE, type RepositoryReader } from "./check-repository.ts";

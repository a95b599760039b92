/**
 * Function configuration: function.yaml (Triton's model-config fields in YAML) or Triton's own
 * config.pbtxt → a validated,
 * defaulted `DeclaredConfig` whose errors point at file, line and field; completion from the
 * model's signature into a `FunctionConfig`; Triton's JSON form; the `tensorfn check` logic.
 */
export type {
  Accelerator,
  DynamicBatching,
  SequenceBatching,
  EnsembleScheduling,
  EnsembleStep,
  FunctionConfig,
  InstanceGroup,
  InstanceRateLimiter,
  Optimization,
  QueuePolicy,
  RateLimitConfig,
  HostPolicy,
  RolloutAnalysis,
  RolloutConfig,
  RolloutShadow,
  ScaleConfig,
  WarmupSample,
  TensorConfig,
  TritonDataType,
  VersionPolicy,
} from "./function-config.ts";
export type { DeclaredConfig } from "./declared-config.ts";
export { type ConfigIssue, fieldPath, formatIssue } from "./config-issue.ts";
export { CONFIG_FILE_LIMITS, parseFunctionConfig, type ParseResult } from "./parse-function-config.ts";
export { completeConfig, type CompleteOptions, DEFAULT_MAX_BATCH_SIZE } from "./complete-config.ts";
export { completeIdentityConfig, identitySignature } from "./identity-config.ts";
export { completeHandlerConfig, computesTensors, HANDLER_TENSORS, handlerSignature } from "./handler-config.ts";
export { DEFAULT_HANDLER_TIMEOUT_MS, hostPolicySchema, MAX_HANDLER_FILE_BYTES, parseCores } from "./function-schema.ts";
export { parseTritonJsonConfig, toTritonJson } from "./triton-json.ts";
export { defaultDynamicBatching } from "./dynamic-batching-defaults.ts";
export { checkFunctionConfig, checkRepository, type RepositoryReader } from "./check-repository.ts";
export { configFileOf, FUNCTION_FILE, lineInConfigFile, parseConfigFile, TRITON_CONFIG_FILE } from "./config-file.ts";
export { convertPbtxt, parsePbtxtConfig } from "./pbtxt-config.ts";
export { FUNCTION_NAME_RULE, functionNameProblem, MAX_FUNCTION_NAME_LENGTH, MAX_VERSION, parseVersion, quoteName } from "./function-name.ts";
export { modelPathProblem, type PathResolver, resolveInside } from "./model-path.ts";
export { defaultLoadLimits, ENSEMBLE_OUTPUT_FLOOR, LIMIT_FLAGS, limitProblems, type LoadLimits } from "./load-limits.ts";
export { ensembleWiringProblems } from "./_ensemble-rules.ts";
export { conditionTensors, evaluateCondition, parseCondition, reduceTensor } from "./step-condition.ts";
export type { Condition, ConditionInputs, TensorFn } from "./step-condition.ts";
export { completeGenerationConfig, GENERATOR_TENSORS } from "./generation-config.ts";
export { type EmbeddingConfig, type GenerationConfig, type GenerationModel } from "./_generation-schema.ts";
export { embeddingOutput } from "./generation-config.ts";
export { providerOptions, tritonAccelerator } from "./_accelerator-schema.ts";
export type { IsolationConfig, IsolationMode } from "./_isolation-schema.ts";

import { invalidArg, type ModelSignature, type TensorSignature } from "../core/mod.ts";
import { fromConfigType } from "../tensor/mod.ts";
import type { FunctionConfig, TensorConfig } from "./function-config.ts";
import type { DeclaredConfig } from "./declared-config.ts";
import { fieldPath } from "./config-issue.ts";
import { identityProblems } from "./_identity-rules.ts";

/**
 * Completes a `backend: identity` config. There is no model file, so nothing is taken from one:
 * inputs and outputs must be listed (output i like input i) and an omitted `max_batch_size` is 0.
 * `completeConfig()` delegates here for identity configs, so callers need not tell them apart.
 */
export function completeIdentityConfig(declared: DeclaredConfig): FunctionConfig {
  const problems = identityProblems(declared.input, declared.output);
  if (problems.length > 0) {
    const text = problems.map((p) => `${fieldPath(p.path)}: ${p.problem}`).join("; ");
    throw invalidArg(`function '${declared.name}': ${text}`);
  }
  return { ...structuredClone(declared), accelerator: declared.accelerator ?? "auto", max_batch_size: declared.max_batch_size ?? 0 };
}

/**
 * The signature an identity "model" has: the config's own tensors, with a variable batch
 * dimension in front when the function batches. The identity backend is loaded with it.
 */
export function identitySignature(config: DeclaredConfig): ModelSignature {
  const batching = (config.max_batch_size ?? 0) > 0;
  const signature = (t: TensorConfig): TensorSignature => {
    const shape = t.reshape?.shape ?? t.dims;
    return { name: t.name, datatype: fromConfigType(t.data_type), shape: batching ? [-1, ...shape] : [...shape] };
  };
  return { inputs: config.input.map(signature), outputs: config.output.map(signature) };
}

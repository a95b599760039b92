import { toTritonJson } from "../config/mod.ts";
import type { TensorConfig } from "../config/mod.ts";
import type { Deployment, ModelManager } from "../lifecycle/mod.ts";
import { fromConfigType } from "../tensor/mod.ts";
import type { CallContext } from "./admission.ts";

// What every protocol reports of the server and its models (KServe v2 HTTP now, gRPC next): one
// definition each, as plain data the protocol encodes.

/** What every protocol's server routes need beside the call pipeline: the server's identity and its health. */
export interface ServerContext extends CallContext {
  server: { name: string; version: string; extensions: string[] };
  /** True once a shutdown began: readiness answers 503 so load balancers stop sending. */
  draining?: () => boolean;
  /** Triton's --strict-readiness (default true): readiness waits for the functions the control mode loads; false: responsive is ready. */
  strictReadiness?: boolean;
}

/**
 * Server liveness or readiness (Kubernetes probes): undefined when it is, else why not. Liveness
 * never looks at models. Readiness, when strict (Triton's --strict-readiness, the default), waits
 * for the functions the control mode loads (ModelManager.unready).
 */
export function unhealthy(models: ModelManager, which: "live" | "ready", draining?: () => boolean, strict = true): string | undefined {
  if (which === "live") return undefined;
  if (draining?.()) return "Server not ready: shutting down";
  // A count, not names: the probes are open even where keys guard the function names.
  const waiting = strict ? models.unready().length : 0;
  if (waiting > 0) return `Server not ready: ${waiting} function${waiting === 1 ? "" : "s"} the control mode loads ${waiting === 1 ? "is" : "are"} not ready; see POST /v2/repository/index`;
  return undefined;
}

/** Triton's statistics, plus our state and instance count per version (extra keys clients ignore). */
export function statistics(models: ModelManager, name?: string, version?: string) {
  return {
    model_stats: models.statistics(name, version).map((e) => ({ ...e.stats.toJSON(e.name, e.version), state: e.state, instance_count: e.instances })),
  };
}

/** A model's metadata (KServe v2), loading it on demand (lazy mode, or a parked function). */
export async function modelMetadata(models: ModelManager, name: string, version: string | undefined, signal?: AbortSignal) {
  const d = await models.acquire(name, version, { signal });
  const { config } = d;
  const batch = config.max_batch_size > 0 ? [-1] : [];
  const tensor = (t: TensorConfig) => ({
    name: t.name,
    datatype: fromConfigType(t.data_type),
    shape: [...batch, ...t.dims],
  });
  return {
    name: d.name,
    versions: models.versions(d.name),
    platform: config.platform || config.backend,
    inputs: config.input.map(tensor),
    outputs: config.output.map(tensor),
    parameters: {
      state: "READY",
      instance_count: d.instanceCount,
      execution_provider: d.provider,
      // `auto`'s choice (main = on the event loop), when the backend places sessions.
      ...(config.parameters.execution_thread && { execution_thread: config.parameters.execution_thread.string_value }),
    },
  };
}

/** Triton's JSON form of a model's configuration, with the execution provider actually in use among the parameters. */
export async function modelConfig(models: ModelManager, name: string, version: string | undefined, signal?: AbortSignal) {
  return effectiveConfig(await models.acquire(name, version, { signal }));
}

function effectiveConfig(d: Deployment) {
  const json = toTritonJson(d.config) as { parameters: Record<string, { string_value: string }> };
  json.parameters = { ...json.parameters, execution_provider: { string_value: d.provider } };
  if (d.fallbackReason) json.parameters.execution_provider_fallback = { string_value: d.fallbackReason };
  if (d.optionsNotApplied) json.parameters.execution_provider_options_not_applied = { string_value: d.optionsNotApplied };
  return json;
}

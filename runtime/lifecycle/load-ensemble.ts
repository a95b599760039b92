import { RuntimeError } from "../core/mod.ts";
import { completeConfig, ensembleWiringProblems } from "../config/mod.ts";
import type { DeclaredConfig, FunctionConfig } from "../config/mod.ts";
import type { ModelStats } from "../metrics/mod.ts";
import type { StepDispatch } from "../scheduler/mod.ts";
import { Deployment } from "./deployment.ts";
import type { DeploymentOptions } from "./deployment.ts";
import { versionServices } from "./load-services.ts";
import type { LoadServices } from "./load-services.ts";

export interface LoadEnsembleOptions {
  declared: DeclaredConfig & { accelerator: NonNullable<DeclaredConfig["accelerator"]> };
  version: number;
  /** The server's clock, log and trace (built once, handed down whole). */
  services: LoadServices;
  stats: ModelStats;
  cache?: DeploymentOptions["cache"];
  labels?: DeploymentOptions["labels"];
  /** Runs a step's function by tensors. */
  dispatch: StepDispatch;
  /** How many times its input bytes an answer may hold (`--max-ensemble-output-ratio`; see EnsembleSchedulerOptions.outputRatio). */
  outputRatio?: number;
  /** A step's function's effective config, loading it if it is not (Triton loads composing models with the ensemble). */
  lookup(name: string, version: string | undefined): Promise<FunctionConfig>;
}

/**
 * Loads an ensemble: loads every step's function, checks the wiring against their effective
 * configs (names, required inputs, datatypes and dims of every tensor, batch sizes) and builds a
 * deployment whose scheduler runs the steps. A wiring problem fails the load, naming each one.
 */
export async function loadEnsembleDeployment(options: LoadEnsembleOptions): Promise<Deployment> {
  const { declared, version } = options;
  const config = completeConfig(declared, { inputs: [], outputs: [] });
  const steps = config.ensemble_scheduling!.step;
  const functions = await Promise.all(
    steps.map((step, i) =>
      options.lookup(step.model_name, step.model_version >= 0 ? String(step.model_version) : undefined).catch((error: Error) => {
        throw new RuntimeError("INVALID_ARG", `ensemble '${config.name}' step ${i} ('${step.model_name}'): ${error.message}`);
      }),
    ),
  );
  const problems = ensembleWiringProblems(config, functions);
  if (problems.length > 0) throw new RuntimeError("INVALID_ARG", `ensemble '${config.name}': ${problems.join("; ")}`);
  return new Deployment({
    config,
    version,
    ...versionServices(options.services, declared.name, version, options.stats),
    cache: options.cache,
    labels: options.labels,
    dispatch: options.dispatch,
    outputRatio: options.outputRatio,
  });
}

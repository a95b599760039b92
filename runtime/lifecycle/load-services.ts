/**
 * What every load of the server shares: built once by the function registry from the server's
 * options and handed down whole (version loaders → loadDeployment / loadEnsembleDeployment →
 * Deployment), instead of each field re-spread through every layer's options.
 */
import type { Clock, Logger } from "../core/mod.ts";
import type { ModelStats, TraceRecorder } from "../metrics/mod.ts";
import type { Arrivals, ResourceLimiter } from "../scheduler/mod.ts";
import type { DeploymentOptions } from "./deployment.ts";

export interface LoadServices {
  clock: Clock;
  log: Logger;
  /** The trace timeline, when tracing is on. */
  trace?: TraceRecorder;
  /** Triton's rate limiter (`--rate-limit execution_count`); instance groups' rate_limiter is ignored without it. */
  resourceLimiter?: ResourceLimiter;
  /** What is known of requests still to come (the batcher's; see SchedulerSetup). */
  arrivals?: Arrivals;
}

/** The part of a deployment's options every kind takes from the services: one version's view of them. */
export function versionServices(services: LoadServices, name: string, version: number, stats: ModelStats): Pick<DeploymentOptions, "clock" | "stats" | "log" | "observer" | "arrivals"> {
  const { log } = services;
  const prefix = `${name} v${version}`;
  return {
    clock: services.clock,
    stats,
    log: { warn: (m) => log.warn(`${prefix}: ${m}`), error: (m) => log.error(`${prefix}: ${m}`) },
    observer: services.trace?.observer(prefix),
    arrivals: services.arrivals,
  };
}

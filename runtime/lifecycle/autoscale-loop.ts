import type { Clock, Logger } from "../core/mod.ts";
import { Autoscaler, DEFAULT_AUTOSCALER } from "./autoscaler.ts";
import type { FunctionRecord } from "./function-registry.ts";
import type { ManagedVersion } from "./managed-version.ts";

/**
 * The autoscaling loop: on each tick, one Knative decision (Autoscaler) per READY version whose
 * `scale` allows more than one instance, applied to its deployment. It remembers each version's
 * last wish, which `tensorfn_instances_target` reports.
 */
export class AutoscaleLoop {
  readonly #clock: Pick<Clock, "now">;
  readonly #log: Pick<Logger, "info" | "error">;
  readonly #autoscalers = new Map<ManagedVersion, Autoscaler>();
  /** The autoscaler's last wish per version. */
  readonly #desired = new Map<ManagedVersion, number>();

  constructor(options: { clock: Pick<Clock, "now">; log: Pick<Logger, "info" | "error"> }) {
    this.#clock = options.clock;
    this.#log = options.log;
  }

  /** The instances the autoscaler last wanted for `version`, if it has decided for it. */
  desired(version: ManagedVersion): number | undefined {
    return this.#desired.get(version);
  }

  /** One tick over `functions`: decide and scale each autoscaled READY version. */
  async tick(functions: Iterable<FunctionRecord>): Promise<void> {
    const now = this.#clock.now();
    for (const fn of functions) {
      const scale = fn.declared?.scale;
      if (!scale || (scale.max_instances ?? 1) <= 1) continue;
      for (const v of fn.versions.values()) {
        const d = v.deployment;
        if (v.state !== "READY" || !d) continue;
        let autoscaler = this.#autoscalers.get(v);
        if (!autoscaler) {
          const target = scale.target_concurrency ?? Math.max(1, d.config.max_batch_size);
          autoscaler = new Autoscaler({ ...DEFAULT_AUTOSCALER, targetConcurrency: target, minInstances: scale.min_instances ?? 1, maxInstances: scale.max_instances! });
          this.#autoscalers.set(v, autoscaler);
        }
        const desired = autoscaler.tick(now, d.inflight, d.instanceCount);
        this.#desired.set(v, desired);
        if (desired === d.instanceCount) continue;
        this.#log.info(`${fn.name} v${v.version}: scaling ${d.instanceCount} → ${desired} instances (in flight: ${d.inflight}${autoscaler.panicking ? ", panic" : ""})`);
        await d.scaleTo(desired).catch((e: Error) => this.#log.error(`${fn.name} v${v.version}: scaling failed: ${e.message}`));
      }
    }
  }
}

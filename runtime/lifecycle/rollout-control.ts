import { invalidArg } from "../core/mod.ts";
import type { Clock, InferRequest, InferResponse, Logger } from "../core/mod.ts";
import type { RolloutFigures } from "../metrics/mod.ts";
import type { Deployment } from "./deployment.ts";
import type { FunctionRegistry } from "./function-registry.ts";
import type { LeaseRollout } from "./lease.ts";
import type { Rollout, RolloutChange, RolloutEvent, RolloutView } from "./rollout.ts";
import type { Shadow } from "./rollout-shadow.ts";

export interface RolloutControlOptions {
  clock: Clock;
  log: Logger;
  /** The deployment of a version, loading it on demand (ModelManager.acquire). */
  acquire(name: string, version: string, options: { signal?: AbortSignal }): Promise<Deployment>;
}

/**
 * The rollouts of one registry, as the rest of the server meets them: what a lease on a routed
 * request carries (the stable version to retry a canary's failure on, the shadow to copy its answer
 * to), the API's view and changes, the analyses' look once a second, the metrics' figures. Which
 * version a request goes to is the registry's `route`; the share and the judging, `Rollout`'s.
 */
export class RolloutControl {
  readonly #registry: FunctionRegistry;
  readonly #o: RolloutControlOptions;

  constructor(registry: FunctionRegistry, options: RolloutControlOptions) {
    this.#registry = registry;
    this.#o = options;
  }

  /**
   * What a lease on `d` for a request naming no version carries, where `name` has a rollout: a
   * request the canary got may retry on the stable version, an answered one may be copied to the
   * shadow; a sequence's request (`sequence`) does neither.
   */
  leaseRollout(name: string, d: Deployment, sequence: string | undefined): LeaseRollout | undefined {
    const rollout = this.#registry.has(name) ? this.#registry.function(name).rollout : undefined;
    if (!rollout) return undefined;
    const single = sequence === undefined;
    const fallback = d.version === rollout.canary && single ? String(rollout.stable) : undefined;
    const shadow = rollout.shadow && single && d.version !== rollout.shadow.version ? this.#copier(name, rollout.shadow) : undefined;
    return { routed: rollout.canary !== undefined, fallback, shadow };
  }

  /** A function's rollout as it stands, after `change` where one is given (logged). 400 without a rollout, or a change without a canary. */
  view(name: string, change?: RolloutChange): RolloutView {
    const fn = this.#registry.function(name);
    if (!fn.rollout) throw invalidArg(`model '${name}' has no rollout: add a rollout block to its function.yaml (docs/guides/lifecycle.md, Rollouts)`);
    if (change && fn.rollout.canary === undefined) throw invalidArg(`model '${name}' has no canary to change: its rollout has a shadow only`);
    const now = this.#o.clock.now();
    if (change) this.#log(name, fn.rollout, fn.rollout.percent, fn.rollout.change(change, now));
    return fn.rollout.view(now);
  }

  /** Every rollout: its share and what changed it, its shadow's comparisons. */
  figures(): RolloutFigures[] {
    return this.#registry.functions().flatMap((fn) => {
      const r = fn.rollout;
      return r ? [{ name: fn.name, canary: r.canary, stable: r.stable, percent: r.percent, events: r.events(), ...(r.shadow && { shadow: r.shadow.figures }) }] : [];
    });
  }

  /** The analyses' look at their windows (the manager runs it once a second). */
  async analyse(): Promise<void> {
    const now = this.#o.clock.now();
    for (const fn of this.#registry.functions()) {
      const before = fn.rollout?.percent;
      const event = fn.rollout?.analyse(now);
      if (event) this.#log(fn.name, fn.rollout!, before!, event);
    }
  }

  /** Cancels the shadow copies in flight, of `name` or of every function: they never hold up a drain. */
  stopShadows(name?: string): void {
    const fns = name === undefined ? this.#registry.functions() : this.#registry.has(name) ? [this.#registry.function(name)] : [];
    for (const fn of fns) fn.rollout?.shadow?.stop();
  }

  /** What copies an answered request to the shadow, after its answer: never awaited by the call, never failing it. */
  #copier(name: string, shadow: Shadow): (request: InferRequest, response: InferResponse) => void {
    return (request, response) => {
      const copy = shadow.take(request, response.outputs);
      if (!copy) return;
      const { signal } = copy;
      void this.#o
        .acquire(name, String(shadow.version), { signal })
        .then((d) => d.infer(copy.request, { signal }))
        .then(
          (answer) => shadow.settle(copy, answer.outputs),
          (error: unknown) => shadow.settle(copy, error instanceof Error ? error : new Error(String(error))),
        );
    };
  }

  #log(name: string, rollout: Rollout, before: number, e: RolloutEvent): void {
    const share = e.event === "hold" ? `stays at ${before} %` : `from ${before} % to ${e.percent} %`;
    const line = `${name}: rollout ${e.event} (${e.reason}): canary v${rollout.canary} ${share} of unpinned requests${e.detail ? `; ${e.detail}` : ""}`;
    if (e.event === "abort") this.#o.log.warn(line);
    else this.#o.log.info(line);
  }
}

/** Knative's autoscaling knobs, in our units. */
export interface AutoscalerSettings {
  /** In-flight requests per instance the autoscaler aims for. */
  targetConcurrency: number;
  minInstances: number;
  maxInstances: number;
  /** Averaging window for normal decisions (Knative: 60 s). */
  stableWindowMs: number;
  /** Short window that detects bursts (Knative: 10 % of the stable window). */
  panicWindowMs: number;
  /** Panic when the short window wants this many times the current instances (Knative: 2). */
  panicThreshold: number;
}

export const DEFAULT_AUTOSCALER: Omit<AutoscalerSettings, "targetConcurrency" | "minInstances" | "maxInstances"> = {
  stableWindowMs: 60_000,
  panicWindowMs: 6_000,
  panicThreshold: 2,
};

/**
 * Knative's KPA decision, per tick. Policy: desired instances = ceil(average in-flight requests
 * over the window ÷ target concurrency), using the stable window normally and the panic window
 * while panicking. Enter panic when the panic window alone wants ≥ panicThreshold × current;
 * while panicking never scale down; leave panic once a full stable window has passed without the
 * condition. The result is clamped to [max(1, minInstances), maxInstances]: going to zero is the
 * idle timeout's job (it parks the deployment), not the autoscaler's.
 */
export class Autoscaler {
  readonly #settings: AutoscalerSettings;
  /** (time, in-flight) samples, oldest first, covering at most the stable window. */
  #samples: { at: number; inflight: number }[] = [];
  #panicUntil = -Infinity;

  constructor(settings: AutoscalerSettings) {
    this.#settings = settings;
  }

  get panicking(): boolean {
    return this.#samples.length > 0 && this.#samples.at(-1)!.at < this.#panicUntil;
  }

  /** Records the in-flight count observed at `now` and returns the desired instance count. */
  tick(now: number, inflight: number, current: number): number {
    const s = this.#settings;
    this.#samples.push({ at: now, inflight });
    while (this.#samples[0]!.at <= now - s.stableWindowMs) this.#samples.shift();
    const average = (windowMs: number) => {
      const window = this.#samples.filter((x) => x.at > now - windowMs);
      return window.reduce((n, x) => n + x.inflight, 0) / window.length;
    };
    const want = (concurrency: number) => Math.ceil(concurrency / s.targetConcurrency);
    const stable = want(average(s.stableWindowMs));
    const panic = want(average(s.panicWindowMs));
    if (current > 0 ? panic >= s.panicThreshold * current : panic > 0) this.#panicUntil = now + s.stableWindowMs;
    const desired = now < this.#panicUntil ? Math.max(panic, stable, current) : stable;
    return Math.min(s.maxInstances, Math.max(1, s.minInstances, desired));
  }
}

import type { Measured } from "./measure-step.ts";
import type { RawResults } from "./raw-phase.ts";
import { ADAPTIVE_TARGET_MS, MLP_DELAYS_US, mlpBatched } from "./served.ts";

/** Everything one `npm run bench` measured; RESULTS.md and bench/out/scenarios.json are made from it. */
export interface ScenarioResults {
  startedAt: string;
  seconds: number;
  machine: { nproc: number; cpuModel: string; node: string; onnxruntimeNode: string; loadAverage: string };
  raw: RawResults;
  /** Every served step, against tensorfn and against the naive server. */
  served: Measured[];
}

/** One target of the issue, checked against this run's numbers. */
export interface TargetCheck {
  target: string;
  goal: string;
  measured: string;
  /** `null` when a step it needs did not produce numbers. */
  met: boolean | null;
}

/** The step of `model` at `concurrency` on `target`, if it ran and got answers. */
export function step(results: ScenarioResults, target: string, model: string, concurrency: number): Measured | undefined {
  return results.served.find((s) => s.target === target && s.model === model && s.concurrency === concurrency && s.requests > 0);
}

/** The resnet batched variant with the most infer/s at `concurrency`. */
export function bestResnetBatched(results: ScenarioResults, concurrency: number): Measured | undefined {
  return best(["resnet_batched", "resnet_batched_pref8"].map((m) => step(results, "tensorfn", m, concurrency)));
}

/** The static-delay mlp step with the most infer/s at `concurrency`, among those `accept` lets through. */
export function bestStaticMlp(results: ScenarioResults, concurrency: number, accept: (s: Measured) => boolean = () => true): Measured | undefined {
  return best(MLP_DELAYS_US.map((d) => step(results, "tensorfn", mlpBatched(d), concurrency)).filter((s) => s === undefined || accept(s)));
}

/** The delay (µs) of a static mlp function name. */
export function delayOf(model: string): number {
  return model === "mlp_batched" ? 0 : Number(/_(\d+)us$/.exec(model)?.[1]);
}

/** Served p50 on `simple` minus the raw p50 of one `session.run`, µs. */
export function overheadUs(results: ScenarioResults): number | undefined {
  const simple = step(results, "tensorfn", "simple", 1);
  return simple?.latencyMs ? (simple.latencyMs.p50 - results.raw.simple.p50) * 1000 : undefined;
}

/** The adaptive step at `concurrency`, and the static delays it is compared with. */
export function adaptiveComparison(results: ScenarioResults, concurrency: number) {
  const adaptive = step(results, "tensorfn", "mlp_adaptive", concurrency);
  const underTarget = (s: Measured) => (s.latencyMs?.p99 ?? Infinity) < ADAPTIVE_TARGET_MS;
  const bestUnder = bestStaticMlp(results, concurrency, underTarget);
  const bestOverall = bestStaticMlp(results, concurrency);
  return { adaptive, bestUnder, bestOverall, underTarget: adaptive ? underTarget(adaptive) : undefined };
}

/** The issue's four targets, each computed from this run's numbers. */
export function checkTargets(results: ScenarioResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const resnet = bestResnetBatched(results, 64);
  const raw = results.raw.resnet.best;
  const recheck = results.raw.recheck?.resnet;
  const resnetRatio = resnet && resnet.inferPerS / raw.inferPerS;
  checks.push({
    target: "resnet served / raw best batch, concurrency 64",
    goal: "≥ 0.90",
    measured: resnet && resnetRatio !== undefined
      ? `${ratio(resnetRatio)} (${resnet.model} ${fixed(resnet.inferPerS, 1)} infer/s ÷ raw batch ${raw.batch} ${fixed(raw.inferPerS, 1)} infer/s${recheck ? `; against the raw recheck after the served steps, ${fixed(recheck.inferPerS, 1)} infer/s: ${ratio(resnet.inferPerS / recheck.inferPerS)}` : ""})`
      : "no answers",
    met: resnetRatio === undefined ? null : resnetRatio >= 0.9,
  });
  const single = step(results, "tensorfn", "mlp_single", 32);
  const batched = bestStaticMlp(results, 32);
  const zero = step(results, "tensorfn", mlpBatched(0), 32);
  const gain = single && batched && batched.inferPerS / single.inferPerS;
  checks.push({
    target: "mlp batching gain (batched / single infer/s), concurrency 32",
    goal: "≥ 4×",
    measured: single && batched && gain !== undefined
      ? `${fixed(gain, 2)}× (best delay ${delayOf(batched.model)} µs: ${fixed(batched.inferPerS, 0)} ÷ ${fixed(single.inferPerS, 0)} infer/s${zero ? `; delay 0: ${fixed(zero.inferPerS / single.inferPerS, 2)}×` : ""})`
      : "no answers",
    met: gain === undefined ? null : gain >= 4,
  });
  const overhead = overheadUs(results);
  const simple = step(results, "tensorfn", "simple", 1);
  checks.push({
    target: "per-request overhead at concurrency 1 (`simple`, delay 0), p50",
    goal: "≤ 150 µs",
    measured: overhead === undefined || !simple?.latencyMs
      ? "no answers"
      : `${fixed(overhead, 0)} µs (served ${fixed(simple.latencyMs.p50 * 1000, 0)} µs − raw ${fixed(results.raw.simple.p50 * 1000, 0)} µs)`,
    met: overhead === undefined ? null : overhead <= 150,
  });
  for (const concurrency of [32, 64]) {
    const { adaptive, bestUnder, underTarget } = adaptiveComparison(results, concurrency);
    const fraction = adaptive && bestUnder && adaptive.inferPerS / bestUnder.inferPerS;
    const p99 = adaptive?.latencyMs?.p99;
    checks.push({
      target: `adaptive (target ${ADAPTIVE_TARGET_MS} ms) at concurrency ${concurrency}: p99 under target and ≥ 90 % of the best static delay under target`,
      goal: `p99 < ${ADAPTIVE_TARGET_MS} ms, ≥ 0.90`,
      measured: !adaptive
        ? "no answers"
        : `p99 ${fixed(p99, 2)} ms; ${bestUnder && fraction !== undefined ? `${ratio(fraction)} of delay ${delayOf(bestUnder.model)} µs (${fixed(bestUnder.inferPerS, 0)} infer/s)` : "no static delay met the target"}`,
      met: !adaptive ? null : Boolean(underTarget) && fraction !== undefined && fraction >= 0.9,
    });
  }
  return checks;
}

/** CPU µs one request cost, from `cores` busy at the step's rate. */
export function cpuPerRequest(s: Measured | undefined, cores: number | null | undefined): number | undefined {
  return s && cores !== null && cores !== undefined && s.inferPerS > 0 ? (cores / s.inferPerS) * 1e6 : undefined;
}

/** `value` with `digits` decimals, or "n/a". */
export function fixed(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(digits);
}

/** A ratio as two decimals. */
export function ratio(value: number): string {
  return value.toFixed(2);
}

function best(steps: (Measured | undefined)[]): Measured | undefined {
  return steps.filter((s): s is Measured => s !== undefined).reduce<Measured | undefined>((a, b) => (a === undefined || b.inferPerS > a.inferPerS ? b : a), undefined);
}

import { medianRound } from "../median-round.ts";
import type { ColdStart } from "./cold-start-phase.ts";
import type { HostPolicyRun } from "./host-policy-phase.ts";
import type { Encoding, Measured } from "./measure-step.ts";
import type { RawResults } from "./raw-phase.ts";
import { ADAPTIVE_TARGET_MS, MLP_DELAYS_US, mlpBatched } from "./served.ts";

/** Everything one `npm run bench` measured; bench/results/scenarios.md and bench/out/scenarios.json are made from it. */
export interface ScenarioResults {
  startedAt: string;
  seconds: number;
  machine: { nproc: number; cpuModel: string; node: string; onnxruntimeNode: string; loadAverage: string };
  raw: RawResults;
  /** What was measured: the tensorfn checkout, its commit, the runtime that served it. */
  subject?: RunSubject;
  /** Every served step, against tensorfn, the hand-written servers and the bare HTTP server. */
  served: Measured[];
  /** First responses from PARKED against raw session create + first run (target 6). */
  coldStarts?: ColdStart[];
  /** Each function's `execution_thread` as the server placed it (`main` / `worker`); absent in older runs. */
  placements?: Record<string, string>;
  /** A latency-critical function beside a saturating one, pinned to disjoint cores and not; absent in older runs. */
  hostPolicies?: HostPolicyRun;
}

/** Which tensorfn one run measured. */
export interface RunSubject {
  /** The checkout tensorfn was served from (`--server-root`). */
  serverRoot: string;
  /** `git rev-parse --short HEAD` there, or "unknown". */
  commit: string;
  /** Whether that checkout had uncommitted changes (`git status --porcelain` not empty); `null` when unknown. */
  dirty: boolean | null;
  /** The runtime that served it, e.g. "Node v20.20.2". */
  runtime: string;
}

/** Where a target's steps are looked up: a whole run, or any list of served steps (bench/suites/runtimes.ts, per runtime). */
export type ServedSteps = Pick<ScenarioResults, "served">;

/**
 * The step of `model` at `concurrency` on `target` with `encoding` (not the probed one, not a sweep
 * round), if it ran and got answers; of target 1's rounds, the median one.
 */
export function step(results: ServedSteps, target: string, model: string, concurrency: number, encoding: Encoding = "binary"): Measured | undefined {
  const steps = results.served.filter((s) => s.target === target && s.model === model && s.concurrency === concurrency && (s.encoding ?? "binary") === encoding && !s.probes && !s.round && s.requests > 0);
  const rounds = steps.filter((s) => s.repeat !== undefined);
  return rounds.length > 0 ? medianRound(rounds) : steps[0];
}

/** The adaptive sweep's rounds of tensorfn's `model` at `concurrency` that got answers, in order. */
export function sweepRounds(results: ServedSteps, model: string, concurrency: number): Measured[] {
  return results.served.filter((s) => s.target === "tensorfn" && s.model === model && s.concurrency === concurrency && s.round !== undefined && s.requests > 0);
}

/**
 * The sweep's round of `model` at `concurrency` with the median throughput (the lower middle of an
 * even count), standing for that function in target 5 and the sweep table; a run without rounds
 * (older results) falls back to its one step.
 */
export function sweepStep(results: ServedSteps, model: string, concurrency: number): Measured | undefined {
  const rounds = sweepRounds(results, model, concurrency);
  return rounds.length > 0 ? medianRound(rounds) : step(results, "tensorfn", model, concurrency);
}

/** The step during which readiness and `/metrics` were probed, if it ran. */
export function probeStep(results: ServedSteps): Measured | undefined {
  return results.served.find((s) => s.probes !== undefined);
}

/** The resnet batched variant with the most infer/s at `concurrency`. */
export function bestResnetBatched(results: ScenarioResults, concurrency: number): Measured | undefined {
  return best(["resnet_batched", "resnet_batched_pref8"].map((m) => step(results, "tensorfn", m, concurrency)));
}

/** The static-delay mlp function whose median round has the most infer/s at `concurrency`, among those `accept` lets through. */
export function bestStaticMlp(results: ScenarioResults, concurrency: number, accept: (s: Measured) => boolean = () => true): Measured | undefined {
  return best(staticMlpSteps(results, concurrency).filter(accept));
}

/** The static-delay mlp functions' steps (median rounds) at `concurrency` that ran. */
export function staticMlpSteps(results: ScenarioResults, concurrency: number): Measured[] {
  return MLP_DELAYS_US.map((d) => sweepStep(results, mlpBatched(d), concurrency)).filter((s): s is Measured => s !== undefined);
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
  const adaptive = sweepStep(results, "mlp_adaptive", concurrency);
  const underTarget = (s: Measured) => (s.latencyMs?.p99 ?? Infinity) < ADAPTIVE_TARGET_MS;
  const bestUnder = bestStaticMlp(results, concurrency, underTarget);
  const bestOverall = bestStaticMlp(results, concurrency);
  return { adaptive, bestUnder, bestOverall, underTarget: adaptive ? underTarget(adaptive) : undefined };
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

/**
 * Issue 11's targets 1, 2 and 7 judged for tensorfn under each runtime, with the verdict logic of
 * `npm run bench` (bench/suites/scenarios/targets.ts) applied to each runtime's steps and the baselines
 * measured beside them, and the reasons for a miss read from the same numbers.
 */
import { DISTURBED_CORES } from "../scenarios/cpu-meter.ts";
import type { Measured } from "../scenarios/measure-step.ts";
import { cpuPerRequest, fixed, probeStep, ratio, step } from "../scenarios/scenario-results.ts";
import type { ServedSteps } from "../scenarios/scenario-results.ts";
import { checkTarget1, checkTarget2, checkTarget7, comparePoints, GOALS } from "../scenarios/targets.ts";
import type { ComparePoint, TargetCheck } from "../scenarios/targets.ts";
import type { TargetTiming } from "./target-plan.ts";

/** One measured step: `runtime` is the runtime serving tensorfn, `null` for a baseline (under Node). */
export type RuntimeStep = Measured & { runtime: string | null };

/** What bench/suites/runtimes/target-phase.ts measured; bench/out/runtimes.json keeps it as it is. */
export interface RuntimeTargetsRun {
  /** The runtimes planned, in table order ("node", "bun", "deno"). */
  runtimes: string[];
  /** Cores of the machine, shared by the client and every server. */
  nproc: number;
  timing: TargetTiming;
  /** Each round's window at target 1's points; absent in runs before the rounds. */
  compareTiming?: TargetTiming;
  /** Every step in the order it ran. */
  steps: RuntimeStep[];
  /** Runtimes whose server did not start, with the first line of why. */
  unavailable: Record<string, string>;
}

/** One runtime's verdicts, target 1's points and the reasons for its misses. */
export interface RuntimeChecks {
  runtime: string;
  /** Target 1, target 2 (p50, CPU), target 7 (readiness, scrape). */
  checks: TargetCheck[];
  points: ComparePoint[];
  /** One sentence per missed target, from this run's numbers. */
  reasons: string[];
}

/** The steps one runtime's targets rest on: its tensorfn steps and the baselines'. */
export function stepsUnder(run: RuntimeTargetsRun, runtime: string): ServedSteps {
  return { served: run.steps.filter((s) => s.runtime === runtime || s.runtime === null) };
}

/** Every planned runtime's checks, in `run.runtimes` order. */
export function runtimeChecks(run: RuntimeTargetsRun): RuntimeChecks[] {
  return run.runtimes.map((runtime) => {
    const steps = stepsUnder(run, runtime);
    const checks = [checkTarget1(steps), ...checkTarget2(steps), ...checkTarget7(steps)];
    return { runtime, checks, points: comparePoints(steps), reasons: missReasons(steps, checks) };
  });
}

const us = (ms: number) => fixed(ms * 1000, 0);

/**
 * Why each missed target missed, in the run's own numbers: server CPU per request against the
 * hand-written server's at target 1's worst point; where the time and CPU of `simple` went for
 * target 2; how busy the main thread (which answers the probes) was for target 7; and any window
 * that other work on the machine disturbed, since this phase does not retake them.
 */
export function missReasons(steps: ServedSteps, checks: TargetCheck[]): string[] {
  const [t1, t2p50, t2cpu, t7ready, t7scrape] = checks;
  const reasons: string[] = [];
  if (t1?.met === false) {
    const worst = comparePoints(steps)
      .filter((p) => p.ratio !== undefined)
      .reduce<ComparePoint | undefined>((a, b) => (a === undefined || b.ratio! < a.ratio! ? b : a), undefined)!;
    const own = cpuPerRequest(worst.tensorfn, worst.tensorfn!.cores.server);
    const main = cpuPerRequest(worst.tensorfn, worst.tensorfn!.cores.serverMain);
    const theirs = cpuPerRequest(worst.handwritten, worst.handwritten!.cores.server);
    reasons.push(
      `Target 1, worst at ${worst.model} c=${worst.concurrency} ${worst.encoding} (${ratio(worst.ratio!)}×): tensorfn answered in p50 ${fixed(worst.tensorfn!.latencyMs?.p50, 2)} ms against node:http's ${fixed(worst.handwritten!.latencyMs?.p50, 2)} ms${inside(worst.tensorfn!)}, and its server spent ${fixed(own, 0)} µs of CPU per request (${fixed(main, 0)} µs on its main thread) against node:http's ${fixed(theirs, 0)} µs.${disturbed(worst.handwritten, worst.tensorfn)}`,
    );
  }
  if (t2p50?.met === false || t2cpu?.met === false) {
    const served = step(steps, "tensorfn", "simple", 1)!;
    const bare = step(steps, "bare", "simple", 1);
    const cpu = cpuPerRequest(served, served.cores.server);
    const main = cpuPerRequest(served, served.cores.serverMain);
    const added = served.latencyMs && bare?.latencyMs ? `a round trip took ${us(served.latencyMs.p50 - bare.latencyMs.p50)} µs longer than bare node:http's ${us(bare.latencyMs.p50)} µs (the goal allows ${us(bare.latencyMs.p50 * (GOALS.bareRatio - 1))} µs more); ` : "";
    const threads = cpu !== undefined && main !== undefined ? `the server spent ${fixed(cpu, 0)} µs of CPU per request, ${fixed(main, 0)} µs on its main thread (HTTP, codecs, scheduling) and ${fixed(cpu - main, 0)} µs on its other threads (onnxruntime, workers, GC)` : `the server's CPU per request was ${fixed(cpu, 0)} µs`;
    reasons.push(`Target 2, \`simple\` at c=1${inside(served)}: ${added}${threads}.${disturbed(served, bare)}`);
  }
  if (t7ready?.met === false || t7scrape?.met === false) {
    const s = probeStep(steps)!;
    const probes = s.probes!;
    const failed = probes.errors > 0 ? ` ${probes.errors} probes failed (first: ${probes.firstError}).` : "";
    reasons.push(
      `Target 7: while mlp answered ${fixed(s.inferPerS, 0)} req/s to ${s.concurrency} JSON clients, the server's main thread, which answers the probes too, was busy ${fixed(s.cores.serverMain, 2)} of one core (${fixed(s.cores.server, 2)} cores in all); readiness took p50 ${fixed(probes.ready?.p50, 2)} / p99 ${fixed(probes.ready?.p99, 2)} ms, scrapes p50 ${fixed(probes.metrics?.p50, 1)} / max ${fixed(probes.metrics?.max, 1)} ms.${failed}${disturbed(s)}`,
    );
  }
  return reasons;
}

/** " (inside the server: 21 µs queued, 516 µs of compute per execution, batch 1.0)" from its statistics, or "". */
function inside(s: Measured): string {
  const stats = s.server;
  if (!stats || stats.queueUsPerRequest === null || stats.computeUsPerExecution === null) return "";
  return ` (inside the server: ${fixed(stats.queueUsPerRequest, 0)} µs queued and ${fixed(stats.computeUsPerExecution, 0)} µs of compute per execution, batch ${fixed(stats.avgBatchSize, 1)})`;
}

/** " Other work on the machine used 0.45 cores during …" for the steps over DISTURBED_CORES, or "". */
function disturbed(...steps: (Measured | undefined)[]): string {
  const hit = steps.filter((s): s is Measured => s !== undefined && (s.cores.other ?? 0) > DISTURBED_CORES);
  if (hit.length === 0) return "";
  return ` Other work on the machine used ${hit.map((s) => `${fixed(s.cores.other, 2)} cores during ${s.target} ${s.model} c=${s.concurrency}`).join(" and ")}: windows this phase does not retake, so these numbers carry that noise.`;
}

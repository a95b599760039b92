/**
 * The steps of issue 11's targets 1, 2 and 7 for tensorfn under each runtime, planned as data:
 * bench/runtimes/target-phase.ts runs them, bench/runtimes/runtime-targets.ts judges them.
 */
import type { Encoding } from "../scenarios/measure-step.ts";
import { BUNDLED, COMPARE_LEVELS, ENCODINGS, PROBE_CONCURRENCY } from "../scenarios/served.ts";

/** A server under test: a baseline (always under Node) or tensorfn under one runtime. */
export interface TargetServer {
  /** `handwritten`, `bare` or `tensorfn`: the label bench/scenarios/targets.ts looks steps up by. */
  role: "handwritten" | "bare" | "tensorfn";
  /** The runtime serving tensorfn ("node", "bun", "deno"); `null` for a baseline. */
  runtime: string | null;
  url: string;
  pid: number;
}

/** One planned closed-loop step. */
export interface TargetStep {
  server: TargetServer;
  model: string;
  concurrency: number;
  encoding: Encoding;
  /** Probe readiness and `/metrics` during the window (target 7). */
  probe: boolean;
  warmupMs: number;
  durationMs: number;
}

/** Warm-up and measured window of every step, ms. */
export interface TargetTiming {
  warmupMs: number;
  durationMs: number;
}

/**
 * Target 1's points in `npm run bench`'s order ({simple, mlp} × c {1, 8, 32} × {JSON, binary}):
 * at each, the hand-written server, then tensorfn under every runtime back to back, the runtimes'
 * order turned by one at every point so that none always runs first or right after the baseline;
 * the bare round trip right after `simple` at c=1 binary (target 2, whose tensorfn side is that
 * point); then, per runtime, mlp saturated by JSON clients while readiness and `/metrics` are probed (target 7).
 */
export function planTargetSteps(servers: { handwritten: TargetServer; bare: TargetServer; tensorfn: TargetServer[] }, timing: TargetTiming): TargetStep[] {
  const steps: TargetStep[] = [];
  const add = (server: TargetServer, model: string, concurrency: number, encoding: Encoding, probe = false) => steps.push({ server, model, concurrency, encoding, probe, ...timing });
  let point = 0;
  for (const model of BUNDLED) {
    for (const concurrency of COMPARE_LEVELS) {
      for (const encoding of ENCODINGS) {
        add(servers.handwritten, model, concurrency, encoding);
        for (const server of rotate(servers.tensorfn, point++)) add(server, model, concurrency, encoding);
        if (model === "simple" && concurrency === 1 && encoding === "binary") add(servers.bare, model, concurrency, encoding);
      }
    }
  }
  for (const server of servers.tensorfn) add(server, "mlp", PROBE_CONCURRENCY, "json", true);
  return steps;
}

/** Total planned seconds of `steps`, for the progress line. */
export function targetSeconds(steps: readonly TargetStep[]): number {
  return steps.reduce((s, step) => s + (step.warmupMs + step.durationMs) / 1000, 0);
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * The steps of issue 11's targets 1, 2 and 7 for tensorfn under each runtime, planned as data:
 * bench/suites/runtimes/target-phase.ts runs them, bench/suites/runtimes/runtime-targets.ts judges them.
 */
import type { Encoding } from "../scenarios/measure-step.ts";
import { BUNDLED, COMPARE_LEVELS, COMPARE_ROUNDS, ENCODINGS, PROBE_CONCURRENCY } from "../scenarios/served.ts";

/** A server under test: a baseline (always under Node) or tensorfn under one runtime. */
export interface TargetServer {
  /** `handwritten`, `bare` or `tensorfn`: the label bench/suites/scenarios/targets.ts looks steps up by. */
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
  /** Which of target 1's rounds (1..COMPARE_ROUNDS); absent on the probed steps. */
  repeat?: number;
}

/** Warm-up and measured window of every step, ms. */
export interface TargetTiming {
  warmupMs: number;
  durationMs: number;
}

/**
 * Target 1's points in `npm run bench`'s order ({simple, mlp} × c {1, 8, 32} × {JSON, binary}),
 * each in COMPARE_ROUNDS rounds of `compare` windows as there (every server by its median round): in a round, the
 * hand-written server, then tensorfn under every runtime back to back, the runtimes' order turned
 * by one at every round so that none always runs first or right after the baseline; the bare round
 * trip after `simple` at c=1 binary (target 2, whose tensorfn side is that point); then, per
 * runtime, mlp saturated by JSON clients while readiness and `/metrics` are probed (target 7), in `timing`'s window.
 */
export function planTargetSteps(servers: { handwritten: TargetServer; bare: TargetServer; tensorfn: TargetServer[] }, timing: TargetTiming, compare: TargetTiming = timing): TargetStep[] {
  const steps: TargetStep[] = [];
  const add = (server: TargetServer, model: string, concurrency: number, encoding: Encoding, repeat: number) => steps.push({ server, model, concurrency, encoding, probe: false, ...compare, repeat });
  let turn = 0;
  for (const model of BUNDLED) {
    for (const concurrency of COMPARE_LEVELS) {
      for (const encoding of ENCODINGS) {
        for (let repeat = 1; repeat <= COMPARE_ROUNDS; repeat++) {
          add(servers.handwritten, model, concurrency, encoding, repeat);
          for (const server of rotate(servers.tensorfn, turn++)) add(server, model, concurrency, encoding, repeat);
          if (model === "simple" && concurrency === 1 && encoding === "binary") add(servers.bare, model, concurrency, encoding, repeat);
        }
      }
    }
  }
  for (const server of servers.tensorfn) steps.push({ server, model: "mlp", concurrency: PROBE_CONCURRENCY, encoding: "json", probe: true, ...timing });
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

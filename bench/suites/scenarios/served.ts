import type { EncodedRequest } from "../../../adapters/bench/request-body.ts";
import { batchingYaml, RESNET_TENSORS } from "./bench-repository.ts";
import type { BenchFunction } from "./bench-repository.ts";
import { leastDisturbed } from "./cpu-meter.ts";
import { benchRequest, measureStep } from "./measure-step.ts";
import type { Encoding, Measured } from "./measure-step.ts";

/** The closed-loop levels of the served comparison. */
export const LEVELS = [1, 8, 32, 64];
/** Static queue delays of the mlp sweep (µs); 0 and 500 also run at every level. */
export const MLP_DELAYS_US = [0, 250, 500, 1000, 2000, 5000];
/** The adaptive mode's latency target; see the "Adaptive" section of bench/results/scenarios.md for the choice. */
export const ADAPTIVE_TARGET_MS = 20;
/** A second, loose target (concurrency 32 only), to show how the controller spends a bigger budget. */
export const ADAPTIVE_LOOSE_TARGET_MS = 100;
/** The resnet batcher's delay: about a fifth of one batch-1 run, so a batch forms without idling. */
export const RESNET_DELAY_US = 2000;

/** The function name of mlp batched with a static `delayUs`. */
export function mlpBatched(delayUs: number): string {
  return delayUs === 0 ? "mlp_batched" : `mlp_batched_${delayUs}us`;
}

/** The functions of the benchmark repository, all served by one tensorfn process. */
export function benchFunctions(): BenchFunction[] {
  return [
    { name: "simple", from: "simple" },
    { name: "simple_identity", from: "simple_identity" },
    // Copied with its bundled function.yaml, read at run time: what a user who copies the example gets.
    { name: "mlp", from: "mlp" },
    { name: "mlp_single", from: "mlp", yaml: batchingYaml(undefined) },
    ...MLP_DELAYS_US.map((delayUs) => ({ name: mlpBatched(delayUs), from: "mlp", yaml: batchingYaml({ delayUs }) })),
    { name: "mlp_adaptive", from: "mlp", yaml: batchingYaml({ delayUs: 0, targetLatencyMs: ADAPTIVE_TARGET_MS }) },
    { name: "mlp_adaptive_loose", from: "mlp", yaml: batchingYaml({ delayUs: 0, targetLatencyMs: ADAPTIVE_LOOSE_TARGET_MS }) },
    { name: "resnet_single", from: "resnet", yaml: batchingYaml(undefined, RESNET_TENSORS) },
    { name: "resnet_batched", from: "resnet", yaml: batchingYaml({ delayUs: RESNET_DELAY_US }, RESNET_TENSORS) },
    { name: "resnet_batched_pref8", from: "resnet", yaml: batchingYaml({ delayUs: RESNET_DELAY_US, preferred: [8] }, RESNET_TENSORS) },
  ];
}

/** A server under test: where it listens and its process id. */
export interface Target {
  name: "tensorfn" | "naive" | "handwritten" | "bare";
  url: string;
  pid: number;
  /** Where to read model metadata when the server has none of its own (the bare HTTP server). */
  metadataUrl?: string;
}

/** One planned step: which server, which function, how much load for how long. */
export interface Step {
  target: Target;
  model: string;
  /** The model whose metadata shapes the request, when `model` has none (the naive server's probes). */
  requestModel?: string;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Binary unless given. */
  encoding?: Encoding;
  /** Probe readiness and `/metrics` during the window. */
  probe?: boolean;
  /** Which round of the adaptive sweep (1..SWEEP_ROUNDS); absent outside it. */
  round?: number;
  /** Which of target 1's rounds (1..COMPARE_ROUNDS); absent elsewhere. */
  repeat?: number;
}

/** The functions target 1 compares with the hand-written servers, served with their bundled functions/<name>/function.yaml. */
export const BUNDLED = ["simple", "mlp"] as const;
/** The concurrency levels of target 1. */
export const COMPARE_LEVELS = [1, 8, 32];
/** Both tensor encodings of target 1. */
export const ENCODINGS: readonly Encoding[] = ["json", "binary"];
/** The levels where the adaptive delay is compared with the static sweep (target 5; c=1 is compared with delay 0 only). */
export const ADAPTIVE_LEVELS = [8, 32, 64];
/**
 * Rounds of the adaptive sweep at each level of ADAPTIVE_LEVELS: every static delay and the adaptive
 * function in turn, then again, each compared by its median round. One 2–3 s window of mlp at
 * c ≥ 8 moves ±15 % between back-to-back windows of one function on this machine, and "the best of
 * six static delays" taken from single windows is the luckiest window of six. Three rounds were
 * not enough either: in stop 30's run one delay's rounds spanned 2250–4394 infer/s, and the best of
 * six medians of three leans high (bench/results/scenarios.md, T5's observations). Five rounds of SWEEP_WINDOW
 * cost ~50 s more than three of 2 s windows did.
 */
export const SWEEP_ROUNDS = 5;
/** Each round's window in the adaptive sweep (ms): target 1's length, five of them rather than three longer ones. */
export const SWEEP_WINDOW = { warmupMs: 500, durationMs: 1500 };
/**
 * Rounds of each target 1 point: the hand-written, Hono and tensorfn servers in turn, three times,
 * each server standing by its median round (`step` in scenario-results.ts). Single windows, the
 * first after start-up especially, read one server at 2200 req/s and the next at 6000 on this
 * machine, and a point's ratio was whichever two windows met.
 */
export const COMPARE_ROUNDS = 3;
/** Each round's window at target 1's points (ms), shorter than other steps': three of them take 1.5× one `short` window. */
export const COMPARE_WINDOW = { warmupMs: 500, durationMs: 1500 };
/** The concurrency of the saturating JSON load during which readiness and `/metrics` are probed (target 7). */
export const PROBE_CONCURRENCY = 32;

/**
 * Every served step, interleaved so that the variants compared with each other run back to back
 * at each level (a change in background load then hits them alike): first target 1's
 * hand-written / Hono / tensorfn triples, COMPARE_ROUNDS times per point, each round rotated one place (with the bare round trip
 * after `simple` at c=1, binary, in each round, for target 2), the readiness probe under load, the overhead ladder, the mlp levels, the
 * adaptive sweep, resnet. A step planned twice runs once. `scale` multiplies every warm-up and window.
 */
export function planSteps(targets: { tensorfn: Target; naive: Target; handwritten: Target; bare: Target }, scale = 1): Step[] {
  const { tensorfn, naive, handwritten, bare } = targets;
  const times = (warmupMs: number, durationMs: number) => ({ warmupMs: warmupMs * scale, durationMs: durationMs * scale });
  const short = times(1000, 3000);
  // The adaptive delay settles over its first answers: give it a longer warm-up.
  const settle = times(3000, 4000);
  // resnet answers a few dozen requests a second: longer windows keep the counts meaningful.
  const resnetTiming = (concurrency: number) => (concurrency >= 32 ? times(2000, 5000) : short);
  const compare = times(COMPARE_WINDOW.warmupMs, COMPARE_WINDOW.durationMs);
  const steps: Step[] = [];
  const seen = new Set<string>();
  // A step target 1 measured in rounds is not measured again in one window (step() takes its median round).
  const repeated = new Set<string>();
  const add = (step: Step) => {
    const base = `${step.target.name} ${step.model} ${step.concurrency} ${step.encoding ?? "binary"}${step.probe ? " probe" : ""}${step.round ? ` round ${step.round}` : ""}`;
    const key = step.repeat ? `${base} repeat ${step.repeat}` : base;
    if (seen.has(key) || (!step.repeat && repeated.has(base))) return;
    seen.add(key);
    if (step.repeat) repeated.add(base);
    steps.push(step);
  };
  for (const model of BUNDLED) {
    for (const concurrency of COMPARE_LEVELS) {
      for (const encoding of ENCODINGS) {
        for (let repeat = 1; repeat <= COMPARE_ROUNDS; repeat++) {
          // Each round starts one server further along, so none always runs first or right after the same one.
          const servers = [handwritten, naive, tensorfn];
          for (let i = 0; i < servers.length; i++) add({ target: servers[(i + repeat - 1) % servers.length]!, model, concurrency, encoding, repeat, ...compare });
          if (model === "simple" && concurrency === 1 && encoding === "binary") add({ target: bare, model, concurrency, repeat, ...compare });
        }
      }
    }
  }
  add({ target: tensorfn, model: "mlp", concurrency: PROBE_CONCURRENCY, encoding: "json", probe: true, ...short });
  add({ target: tensorfn, model: "simple_identity", concurrency: 1, ...short });
  add({ target: naive, model: "_noop", requestModel: "simple", concurrency: 1, ...short });
  add({ target: naive, model: "_echo", requestModel: "simple", concurrency: 1, ...short });
  for (const concurrency of LEVELS) {
    for (const [target, model] of [[naive, "mlp"], [tensorfn, "mlp_single"], [tensorfn, mlpBatched(0)], [tensorfn, mlpBatched(500)]] as const) {
      add({ target, model, concurrency, ...short });
      // Target 5 at c=1: the adaptive delay's p50 right after delay 0's.
      if (concurrency === 1 && model === mlpBatched(0)) add({ target: tensorfn, model: "mlp_adaptive", concurrency, ...settle });
    }
    // The HTTP ceiling for mlp-sized requests, with the client on the same cores.
    if (concurrency === 32) add({ target: bare, model: "mlp_single", concurrency, ...short });
  }
  const sweepWindow = times(SWEEP_WINDOW.warmupMs, SWEEP_WINDOW.durationMs);
  for (const concurrency of ADAPTIVE_LEVELS) {
    const sweep = [...MLP_DELAYS_US.map(mlpBatched), "mlp_adaptive"];
    for (let round = 1; round <= SWEEP_ROUNDS; round++) {
      // Each round starts one place further along the list, so no function always runs first or
      // right after the same neighbour (a drift within a round falls on each place in turn).
      for (let i = 0; i < sweep.length; i++) {
        const model = sweep[(i + round - 1) % sweep.length]!;
        // The adaptive delay settles over its first answers: a longer warm-up in the first round.
        add({ target: tensorfn, model, concurrency, round, ...(round === 1 && model === "mlp_adaptive" ? times(3000, 2000) : sweepWindow) });
      }
    }
    if (concurrency === 32) add({ target: tensorfn, model: "mlp_adaptive_loose", concurrency, ...settle });
  }
  for (const concurrency of LEVELS) {
    for (const [target, model] of [[naive, "resnet"], [tensorfn, "resnet_single"], [tensorfn, "resnet_batched"], [tensorfn, "resnet_batched_pref8"]] as const) {
      add({ target, model, concurrency, ...resnetTiming(concurrency) });
    }
  }
  return steps;
}

/** Total planned seconds of `steps`, for the progress line. */
export function plannedSeconds(steps: readonly Step[]): number {
  return steps.reduce((s, step) => s + (step.warmupMs + step.durationMs) / 1000, 0);
}

/**
 * Runs `steps` in order. Each server's request for a model is built once from that server's
 * metadata, as `tensorfn bench --binary` builds it (seeded data), so both servers get the same bytes.
 */
export async function runServedSteps(steps: readonly Step[], log: (line: string) => void): Promise<Measured[]> {
  const requests = new Map<string, EncodedRequest>();
  const results: Measured[] = [];
  const started = performance.now();
  for (const [index, step] of steps.entries()) {
    const { target } = step;
    const metadataUrl = target.metadataUrl ?? target.url;
    const source = step.requestModel ?? step.model;
    const encoding = step.encoding ?? "binary";
    const key = `${metadataUrl} ${baseModel(source)} ${encoding}`;
    if (!requests.has(key)) requests.set(key, await benchRequest(metadataUrl, source, { shapes: source === "simple_identity" ? { INPUT0: [16] } : undefined, encoding }));
    const plan = { target: target.name, url: target.url, pid: target.pid, stats: target.name === "tensorfn", model: step.model, concurrency: step.concurrency, warmupMs: step.warmupMs, durationMs: step.durationMs, encoding, probe: step.probe };
    const measured = { ...(await leastDisturbed(() => measureStep(plan, requests.get(key)!), (m) => m.cores.other, 1)), ...(step.round ? { round: step.round } : {}), ...(step.repeat ? { repeat: step.repeat } : {}) };
    results.push(measured);
    const p99 = measured.latencyMs ? `${measured.latencyMs.p99.toFixed(2)} ms` : "n/a";
    const batch = measured.server?.avgBatchSize ? `, srv batch ${measured.server.avgBatchSize.toFixed(1)}` : "";
    const errors = measured.errors > 0 ? `, ${measured.errors} errors (${measured.firstError})` : "";
    const retried = measured.attempts > 1 ? `, ${measured.attempts} windows (other work: ${measured.cores.other?.toFixed(2)} cores in the kept one)` : "";
    const elapsed = ((performance.now() - started) / 1000).toFixed(0);
    const probes = measured.probes ? `, ready p99 ${measured.probes.ready?.p99.toFixed(2) ?? "n/a"} ms, /metrics max ${measured.probes.metrics?.max.toFixed(1) ?? "n/a"} ms` : "";
    const round = step.round ? ` round ${step.round}` : step.repeat ? ` repeat ${step.repeat}` : "";
    log(`[${index + 1}/${steps.length}, ${elapsed}s] ${target.name} ${step.model} c=${step.concurrency} ${encoding}${round}: ${measured.inferPerS.toFixed(1)} infer/s, p99 ${p99}${batch}${errors}${retried}${probes}`);
  }
  return results;
}

/** Seconds of load each server gets per {model} × {encoding} before anything is measured (`warmServers`). */
export const JIT_WARMUP_MS = 1500;

/**
 * Gives every server the same JIT warm-up before the first measured step, and reports nothing of
 * it: JIT_WARMUP_MS of each bundled model × encoding at 8 clients (the bare server: `simple`). A
 * server's first seconds measure V8 compiling it, not serving: from a fresh start, `simple` at one
 * binary client went 1475 → 3699 → 7001 req/s over its first three seconds on the hand-written
 * server and 992 → 2198 → 5376 on tensorfn, the server with more code to compile, and target 1's
 * first points ran in exactly those seconds (`tsx bench/studies/jit-warmup.ts hand|tensorfn`, 2026-12-02).
 */
export async function warmServers(targets: readonly Target[], scale = 1): Promise<void> {
  const requests = new Map<string, EncodedRequest>();
  for (const target of targets) {
    const metadataUrl = target.metadataUrl ?? target.url;
    for (const model of target.name === "bare" ? (["simple"] as const) : BUNDLED) {
      for (const encoding of target.name === "bare" ? (["binary"] as const) : ENCODINGS) {
        const key = `${metadataUrl} ${model} ${encoding}`;
        if (!requests.has(key)) requests.set(key, await benchRequest(metadataUrl, model, { encoding }));
        const plan = { target: target.name, url: target.url, pid: target.pid, stats: false, model, concurrency: 8, warmupMs: 0, durationMs: JIT_WARMUP_MS * scale, encoding };
        await measureStep(plan, requests.get(key)!);
      }
    }
  }
}

/** The example model behind a benchmark function name. */
function baseModel(name: string): string {
  return name.startsWith("mlp") ? "mlp" : name.startsWith("resnet") ? "resnet" : name;
}

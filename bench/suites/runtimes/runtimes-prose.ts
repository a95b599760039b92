/**
 * The "why they differ" paragraph of the runtimes section, computed from one run's numbers: each
 * figure is read from the data, and each claim is printed only when the data of this run says it
 * (as bench/suites/scenarios/observations.ts does), so a rerun that measures something else says so.
 */

/** One served step under one runtime: the best round, every round, and the server's own view. */
export interface ServedStep {
  inferPerS: number;
  p50Ms: number;
  /** infer/s of every round, in order. */
  rounds: number[];
  /** Model time per execution inside the server (its statistics), in µs. */
  computeUsPerExecution?: number | null;
}

/** bench/suites/runtimes/hops.ts's output for one runtime. */
export interface Hops {
  runtime: string;
  roundTripUs: number;
  mlpMainUs: number;
  mlpWorkerUs: number;
  timeout500usUs: number;
  timeout2msUs: number;
}

export interface RuntimesRun {
  /** By runtime ("node", "bun", "deno"), then by step ("mlp@1"). */
  served: Record<string, Record<string, ServedStep>>;
  hops: Hops[];
  /** The mlp function's `max_queue_delay_microseconds`. */
  mlpQueueDelayUs: number;
}

const f = (v: number, d = 1) => v.toFixed(d);
const RUNTIME_NAMES: Record<string, string> = { node: "Node", bun: "Bun", deno: "Deno" };

/** A runtime's name as the section prints it ("node" → "Node"); an unknown one as given. */
export function runtimeName(runtime: string): string {
  return RUNTIME_NAMES[runtime] ?? runtime;
}
const named = runtimeName;

/** Largest (max − min) ÷ min between rounds of one step, over every runtime and step, with where. */
export function roundSpread(run: RuntimesRun): { percent: number; where: string } | undefined {
  let worst: { percent: number; where: string } | undefined;
  for (const [runtime, steps] of Object.entries(run.served)) {
    for (const [key, step] of Object.entries(steps)) {
      if (step.rounds.length < 2) continue;
      const percent = (100 * (Math.max(...step.rounds) - Math.min(...step.rounds))) / Math.min(...step.rounds);
      if (!worst || percent > worst.percent) worst = { percent, where: `${named(runtime)} ${key}` };
    }
  }
  return worst;
}

/** Ratio of `runtime`'s best infer/s to Node's at `key`, when both were measured. */
function ratio(run: RuntimesRun, runtime: string, key: string): number | undefined {
  const node = run.served.node?.[key]?.inferPerS;
  const other = run.served[runtime]?.[key]?.inferPerS;
  return node && other !== undefined ? other / node : undefined;
}

/** The sentences, in order; each one only where this run's numbers back it. */
export function runtimesProse(run: RuntimesRun): string[] {
  const sentences: string[] = [];
  const spread = roundSpread(run);
  const noise = spread ? spread.percent / 100 : 0.1;
  const others = ["bun", "deno"].filter((r) => run.served[r]);

  const http = others.map((r) => [r, ratio(run, r, "mlp@32")] as const).filter((x): x is readonly [string, number] => x[1] !== undefined);
  const modelMs = (run.served.node?.["mlp@32"]?.computeUsPerExecution ?? NaN) / 1000;
  if (http.length > 0 && http.every(([, q]) => q > 1 + noise)) {
    const ms = Number.isFinite(modelMs) ? `, ${f(modelMs, 2)} ms of model time per batch in Node's server` : "";
    sentences.push(
      `Bun.serve parses HTTP in native code, while Node and Deno serve through node:http (Deno's own port of it) with the runtime's router on it; where the HTTP layer dominates (mlp at concurrency 32${ms}) ${http.map(([r, q]) => `${named(r)} served ${f(q, 2)}×`).join(" and ")} Node's rate, beyond this run's round-to-round spread.`,
    );
  } else if (http.length > 0) {
    sentences.push(`At mlp@32, where the HTTP layer weighs most, ${http.map(([r, q]) => `${named(r)} served ${f(q, 2)}× Node`).join(" and ")}: within this run's round-to-round spread or below Node, so no runtime's HTTP layer shows an advantage here.`);
  }

  const resnet = others.flatMap((r) => ["resnet@1", "resnet@32"].map((k) => [r, k, ratio(run, r, k)] as const)).filter((x): x is readonly [string, string, number] => x[2] !== undefined);
  if (resnet.length > 0 && resnet.every(([, , q]) => Math.abs(q - 1) <= noise)) {
    sentences.push(`Where the model dominates (resnet) the three are within this run's noise of each other (ratios ${resnet.map(([, , q]) => f(q, 2)).join(", ")}): the same onnxruntime-node sessions run in worker threads under all three.`);
  } else if (resnet.length > 0) {
    const apart = resnet.filter(([, , q]) => Math.abs(q - 1) > noise);
    sentences.push(`Even where the model dominates (resnet), ${apart.map(([r, k, q]) => `${named(r)} ${k} at ${f(q, 2)}×`).join(", ")} differ from Node by more than this run's round-to-round spread.`);
  }

  if (spread) sentences.push(`Between rounds, the same step moved by up to ${f(spread.percent, 0)} % (${spread.where}); a ratio within that is noise.`);

  const misses = others.flatMap((r) => Object.keys(run.served.node ?? {}).map((k) => [r, k, ratio(run, r, k)] as const)).filter(([, , q]) => q !== undefined && q < 0.9);
  const hop = (r: string) => run.hops.find((h) => h.runtime === r);
  const deno = hop("deno");
  const node = hop("node");
  const denoMlp1 = misses.find(([r, k]) => r === "deno" && k === "mlp@1");
  if (denoMlp1 && deno && node) {
    const lateUs = (h: Hops) => h.timeout2msUs - 2000;
    const timerGapUs = lateUs(deno) - Math.max(...run.hops.filter((h) => h.runtime !== "deno").map(lateUs));
    const roundTrips = run.hops.map((h) => h.roundTripUs);
    const runs = run.hops.map((h) => h.mlpWorkerUs);
    const hopSpreadUs = Math.max(...roundTrips) - Math.min(...roundTrips);
    const runSpreadUs = Math.max(...runs) - Math.min(...runs);
    // Deno's timers explain mlp@1 only if they are late by a good part of a millisecond more than
    // the others, while its worker hop and model run are not (mlp waits its queue delay on a timer).
    if (timerGapUs >= 300 && hopSpreadUs < timerGapUs / 2 && runSpreadUs < timerGapUs / 2) {
      const waits = run.hops.map((h) => `${f(h.timeout500usUs / 1000, 1)} ms under ${named(h.runtime)}`).join(", ");
      sentences.push(
        `Deno at mlp@1 (${f(denoMlp1[2]!, 2)}× Node) is located by the table above: not the model run (${runs.map((u) => f(u, 0)).join(" / ")} µs in a worker) nor the worker hop (at most ${f(hopSpreadUs, 0)} µs apart), but Deno's timers, which fire about ${f(timerGapUs / 1000, 1)} ms later than the others'. The \`mlp\` function batches with \`max_queue_delay_microseconds: ${run.mlpQueueDelayUs}\`, so at concurrency 1 every request waits out that delay on a timer before it runs alone: a ${run.mlpQueueDelayUs / 1000} ms timer took ${waits}. Functions without a queue delay do not pay it, nor does load that fills batches before the delay ends.`,
      );
    } else {
      sentences.push(`Deno at mlp@1 ran ${f(denoMlp1[2]!, 2)}× Node; the hops table does not single out a cause in this run (timer lateness ${f(timerGapUs, 0)} µs beyond the others, worker hops ${f(hopSpreadUs, 0)} µs apart, model runs ${f(runSpreadUs, 0)} µs apart).`);
    }
  }
  const otherMisses = misses.filter((m) => m !== denoMlp1);
  if (otherMisses.length > 0) sentences.push(`Also more than 10 % below Node in this run, with no explanation measured here: ${otherMisses.map(([r, k, q]) => `${named(r)} ${k} (${f(q!, 2)}×)`).join(", ")}.`);
  return sentences;
}

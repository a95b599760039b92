import type { Encoding, Measured } from "./measure-step.ts";
import type { RawPoint } from "./raw.ts";
import { adaptiveComparison, bestResnetBatched, cpuPerRequest, delayOf, fixed, probeStep, ratio, step, sweepStep } from "./scenario-results.ts";
import type { ScenarioResults, ServedSteps } from "./scenario-results.ts";
import { ADAPTIVE_LEVELS, ADAPTIVE_TARGET_MS, BUNDLED, COMPARE_LEVELS, ENCODINGS, MLP_DELAYS_US, mlpBatched } from "./served.ts";

/** Issue 11's thresholds, in one place. */
export const GOALS = {
  /** 1: tensorfn ÷ hand-written node:http req/s, at every point. */
  handwrittenRatio: 1.0,
  /** 2: `simple` c=1 served p50 ÷ bare node:http p50. */
  bareRatio: 2,
  /** 2: server CPU per `simple` request at c=1, µs. */
  serverCpuUs: 150,
  /** 3: resnet c=64 served ÷ raw best batch. */
  resnetRatio: 0.9,
  /** 4: mlp c=32 binary, batched ÷ unbatched. */
  batchingGain: 6,
  /** 5: adaptive ÷ best static delay's throughput. */
  adaptiveShare: 0.95,
  /** 5: adaptive p50 minus delay 0's at c=1, ms. */
  adaptiveC1AddedMs: 0.2,
  /** 6: first response from PARKED ÷ raw session create + first run. */
  parkedRatio: 1.2,
  /** 7: readiness p99 while mlp is saturated, ms. */
  readyP99Ms: 10,
  /** 7: slowest `/metrics` scrape while mlp is saturated, ms. */
  scrapeMs: 50,
} as const;

/** One target of issue 11, checked against this run's numbers. */
export interface TargetCheck {
  /** The issue's number for it ("1", "5 (c=32)"). */
  id: string;
  target: string;
  goal: string;
  measured: string;
  /** Cores the client and the server used during the steps it rests on. */
  cpu: string;
  /** `null` when a step it needs did not produce numbers. */
  met: boolean | null;
}

/** One point of target 1: tensorfn against both hand-written servers. */
export interface ComparePoint {
  model: string;
  concurrency: number;
  encoding: Encoding;
  tensorfn?: Measured;
  /** Plain node:http: the baseline the target is judged against. */
  handwritten?: Measured;
  /** bench/suites/naive-server.ts (Hono on @hono/node-server), shown beside it. */
  hono?: Measured;
  /** tensorfn ÷ handwritten req/s. */
  ratio?: number;
  /** tensorfn ÷ Hono req/s. */
  ratioHono?: number;
  met: boolean | null;
}

/** Target 1's points, in plan order. */
export function comparePoints(results: ServedSteps): ComparePoint[] {
  return BUNDLED.flatMap((model) =>
    COMPARE_LEVELS.flatMap((concurrency) =>
      ENCODINGS.map((encoding): ComparePoint => {
        const tensorfn = step(results, "tensorfn", model, concurrency, encoding);
        const handwritten = step(results, "handwritten", model, concurrency, encoding);
        const hono = step(results, "naive", model, concurrency, encoding);
        const ratio = tensorfn && handwritten ? tensorfn.inferPerS / handwritten.inferPerS : undefined;
        const ratioHono = tensorfn && hono ? tensorfn.inferPerS / hono.inferPerS : undefined;
        return { model, concurrency, encoding, tensorfn, handwritten, hono, ratio, ratioHono, met: ratio === undefined ? null : ratio >= GOALS.handwrittenRatio };
      }),
    ),
  );
}

/** Issue 11's targets 1–7, each computed from this run's numbers only. */
export function checkTargets(results: ScenarioResults): TargetCheck[] {
  return [checkTarget1(results), ...checkTarget2(results), target3(results), target4(results), ...target5(results), ...target6(results), ...checkTarget7(results)];
}

/** "client 0.21 / server 1.78 (main 0.77) cores" for each step, joined. */
export function cpuText(...steps: (Measured | undefined)[]): string {
  const known = steps.filter((s): s is Measured => s !== undefined);
  if (known.length === 0) return "n/a";
  return known.map((s) => `${label(s)}: client ${fixed(s.cores.self, 2)} / server ${fixed(s.cores.server, 2)}${s.cores.serverMain === null ? "" : ` (main ${fixed(s.cores.serverMain, 2)})`}`).join("; ");
}

function label(s: Measured): string {
  return `${s.target === "naive" ? "hono" : s.target} ${s.model} c=${s.concurrency}`;
}

function verdict(values: (boolean | null)[]): boolean | null {
  return values.some((v) => v === null) ? null : values.every(Boolean);
}

/** Target 1 over every point of `results`: tensorfn ÷ the hand-written node:http server; shared with bench/suites/runtimes.ts. */
export function checkTarget1(results: ServedSteps): TargetCheck {
  const points = comparePoints(results);
  const measured = points.filter((p) => p.ratio !== undefined);
  const worst = measured.reduce<ComparePoint | undefined>((a, b) => (a === undefined || b.ratio! < a.ratio! ? b : a), undefined);
  const worstHono = points.filter((p) => p.ratioHono !== undefined).reduce<ComparePoint | undefined>((a, b) => (a === undefined || b.ratioHono! < a.ratioHono! ? b : a), undefined);
  const where = (p: ComparePoint) => `${p.model} c=${p.concurrency} ${p.encoding}`;
  return {
    id: "1",
    target: `tensorfn ÷ hand-written node:http req/s at {${BUNDLED.join(", ")}} × c {${COMPARE_LEVELS.join(", ")}} × {JSON, binary}, bundled function.yaml`,
    goal: `≥ ${fixed(GOALS.handwrittenRatio, 1)}× at every point`,
    measured: worst
      ? `${measured.filter((p) => p.met).length} of ${points.length} points met; worst ${ratio(worst.ratio!)}× at ${where(worst)} (${fixed(worst.tensorfn!.inferPerS, 0)} ÷ ${fixed(worst.handwritten!.inferPerS, 0)} req/s)${worstHono ? `; against Hono the worst is ${ratio(worstHono.ratioHono!)}× at ${where(worstHono)}` : ""} — every point in the table below`
      : "no answers",
    cpu: "per point in the table below",
    met: points.length === 0 ? null : verdict(points.map((p) => p.met)),
  };
}

/** Target 2: `simple` at c=1 binary, p50 ÷ the bare round trip and server CPU per request; shared with bench/suites/runtimes.ts. */
export function checkTarget2(results: ServedSteps): TargetCheck[] {
  const served = step(results, "tensorfn", "simple", 1);
  const bare = step(results, "bare", "simple", 1);
  const p50Ratio = served?.latencyMs && bare?.latencyMs ? served.latencyMs.p50 / bare.latencyMs.p50 : undefined;
  const cpuUs = served && served.cores.server !== null && served.inferPerS > 0 ? (served.cores.server / served.inferPerS) * 1e6 : undefined;
  // What the same request costs a server that does nothing but answer it: above the goal, no server could meet it in this run.
  const bareUs = cpuPerRequest(bare, bare?.cores.server);
  const unreachable = bareUs !== undefined && bareUs > GOALS.serverCpuUs && cpuUs !== undefined && cpuUs > GOALS.serverCpuUs;
  const floor = bareUs === undefined ? "" : `; a bare node:http server spent ${fixed(bareUs, 0)} µs per request in the same run${unreachable ? ", itself over the goal: out of reach on this machine in this run" : ""}`;
  return [
    {
      id: "2",
      target: "`simple` at c=1 (binary): served p50 ÷ bare node:http p50, same run",
      goal: `≤ ${GOALS.bareRatio}×`,
      measured: p50Ratio === undefined ? "no answers" : `${ratio(p50Ratio)}× (${fixed(served!.latencyMs!.p50 * 1000, 0)} µs ÷ ${fixed(bare!.latencyMs!.p50 * 1000, 0)} µs)`,
      cpu: cpuText(served, bare),
      met: p50Ratio === undefined ? null : p50Ratio <= GOALS.bareRatio,
    },
    {
      id: "2",
      target: "`simple` at c=1 (binary): server CPU per request (all threads, /proc)",
      goal: `≤ ${GOALS.serverCpuUs} µs`,
      measured: cpuUs === undefined ? "no answers" : `${fixed(cpuUs, 0)} µs (${fixed(served!.cores.server, 2)} cores at ${fixed(served!.inferPerS, 0)} req/s; client ${fixed((served!.cores.self / served!.inferPerS) * 1e6, 0)} µs)${floor}`,
      cpu: cpuText(served),
      met: cpuUs === undefined ? null : cpuUs <= GOALS.serverCpuUs,
    },
  ];
}

function target3(results: ScenarioResults): TargetCheck {
  const served = bestResnetBatched(results, 64);
  const raw = results.raw.resnet.best;
  const recheck = results.raw.recheck?.resnet;
  const value = served ? served.inferPerS / raw.inferPerS : undefined;
  return {
    id: "3",
    target: "resnet at c=64: served (best batched function) ÷ raw best batch",
    goal: `≥ ${fixed(GOALS.resnetRatio, 2)}`,
    measured: value === undefined
      ? "no answers"
      : `${ratio(value)} (\`${served!.model}\` ${fixed(served!.inferPerS, 1)} ÷ raw batch ${raw.batch} ${fixed(raw.inferPerS, 1)} infer/s${recheck ? `; against the raw recheck after the served steps, ${fixed(recheck.inferPerS, 1)} infer/s: ${ratio(served!.inferPerS / recheck.inferPerS)}` : ""})`,
    cpu: cpuText(served),
    met: value === undefined ? null : value >= GOALS.resnetRatio,
  };
}

/**
 * Target 4's numbers: the unbatched copy at c=32, the best batched function there (the static delays
 * by their median sweep round, scenario-results.ts sweepStep; the bundled function by its one
 * window), and when both answered their ratio and the machine's ceiling for it (batchingCeiling).
 */
export function batchingGain(results: ScenarioResults) {
  const single = step(results, "tensorfn", "mlp_single", 32);
  const bundled = step(results, "tensorfn", "mlp", 32);
  const batchedSteps = [...MLP_DELAYS_US.map((d) => sweepStep(results, mlpBatched(d), 32)), bundled].filter((s): s is Measured => s !== undefined);
  const best = batchedSteps.reduce<Measured | undefined>((a, b) => (a === undefined || b.inferPerS > a.inferPerS ? b : a), undefined);
  const measured = single && best ? { single, best, gain: best.inferPerS / single.inferPerS, ceiling: batchingCeiling(results, best) } : undefined;
  return { single, best, bundled, measured };
}

function target4(results: ScenarioResults): TargetCheck {
  const { single, best, bundled, measured: g } = batchingGain(results);
  const name = (s: Measured) => (s.model === "mlp" ? "bundled `mlp`" : `delay ${delayOf(s.model)} µs`);
  const floor = g?.ceiling;
  const reach = g && floor
    ? `; on ${results.machine.nproc} cores shared with the client, a server costing no more than bare node:http would top out at ${fixed(floor.reqPerS, 0)} req/s = ${fixed(floor.reqPerS / g.single.inferPerS, 2)}× (CPU per request: client ${fixed(floor.clientUs, 0)} + onnxruntime ${fixed(floor.ortUs, 0)} at raw batch ${floor.batch} + bare HTTP ${fixed(floor.httpUs, 0)} µs)${g.gain < GOALS.batchingGain && floor.reqPerS < GOALS.batchingGain * g.single.inferPerS ? ": out of reach on this machine" : ""}`
    : "";
  return {
    id: "4",
    target: "mlp at c=32, binary: best batched function ÷ the unbatched copy (`mlp_single`)",
    goal: `≥ ${GOALS.batchingGain}×`,
    measured: !g
      ? "no answers"
      : `${fixed(g.gain, 2)}× (${name(g.best)}: ${fixed(g.best.inferPerS, 0)} ÷ ${fixed(g.single.inferPerS, 0)} infer/s${bundled && bundled !== best ? `; bundled \`mlp\`: ${fixed(bundled.inferPerS / g.single.inferPerS, 2)}×` : ""})${reach}`,
    cpu: cpuText(best, single),
    met: g ? g.gain >= GOALS.batchingGain : null,
  };
}

/**
 * Target 4's ceiling on this machine, from this run: the requests/s at which the CPU the load
 * generator spends per request (the batched step's), onnxruntime's per row at the raw batch nearest
 * the step's batches (the raw sweep does not spin: compute only) and a bare node:http server's per
 * request at the same concurrency fill the machine's cores, which all three share. A server can only
 * add to that bill; undefined when a step it needs is missing.
 */
export function batchingCeiling(results: ScenarioResults, batched: Measured): { clientUs: number; ortUs: number; httpUs: number; batch: number; reqPerS: number } | undefined {
  const rows = batched.server?.avgBatchSize;
  const bare = step(results, "bare", "mlp_single", batched.concurrency);
  const clientUs = cpuPerRequest(batched, batched.cores.self);
  const httpUs = cpuPerRequest(bare, bare?.cores.server);
  const nearest = rows ? results.raw.mlp.points.reduce<RawPoint | undefined>((a, p) => (a === undefined || Math.abs(Math.log(p.batch / rows)) < Math.abs(Math.log(a.batch / rows)) ? p : a), undefined) : undefined;
  if (clientUs === undefined || httpUs === undefined || !nearest || nearest.inferPerS <= 0) return undefined;
  const ortUs = (nearest.selfCores / nearest.inferPerS) * 1e6;
  return { clientUs, ortUs, httpUs, batch: nearest.batch, reqPerS: (results.machine.nproc * 1e6) / (clientUs + ortUs + httpUs) };
}

function target5(results: ScenarioResults): TargetCheck[] {
  const checks = ADAPTIVE_LEVELS.map((concurrency): TargetCheck => {
    const { adaptive, bestUnder, bestOverall, underTarget } = adaptiveComparison(results, concurrency);
    const reference = bestUnder ?? bestOverall;
    const share = adaptive && reference ? adaptive.inferPerS / reference.inferPerS : undefined;
    const p99 = adaptive?.latencyMs?.p99;
    const against = reference ? `${bestUnder ? "the best static delay under the target" : "no static delay met the target; the best overall"}, ${delayOf(reference.model)} µs: ${fixed(reference.inferPerS, 0)} infer/s, p99 ${fixed(reference.latencyMs?.p99, 2)} ms` : "no static delay answered";
    return {
      id: `5 (c=${concurrency})`,
      target: `adaptive (\`target_latency_ms: ${ADAPTIVE_TARGET_MS}\`) on mlp at c=${concurrency}: p99 under the target and throughput ÷ the best static delay (median rounds)`,
      goal: `p99 < ${ADAPTIVE_TARGET_MS} ms, ≥ ${fixed(GOALS.adaptiveShare, 2)}`,
      measured: !adaptive ? "no answers" : `p99 ${fixed(p99, 2)} ms, ${fixed(adaptive.inferPerS, 0)} infer/s = ${share === undefined ? "n/a" : ratio(share)} of ${against}`,
      cpu: cpuText(adaptive, reference),
      met: !adaptive || share === undefined ? null : Boolean(underTarget) && share >= GOALS.adaptiveShare,
    };
  });
  const adaptive1 = step(results, "tensorfn", "mlp_adaptive", 1);
  const zero1 = step(results, "tensorfn", mlpBatched(0), 1);
  const added = adaptive1?.latencyMs && zero1?.latencyMs ? adaptive1.latencyMs.p50 - zero1.latencyMs.p50 : undefined;
  checks.push({
    id: "5 (c=1)",
    target: "adaptive on mlp at c=1: p50 added over static delay 0",
    goal: `≤ ${GOALS.adaptiveC1AddedMs} ms`,
    measured: added === undefined ? "no answers" : `${added >= 0 ? "+" : ""}${fixed(added, 3)} ms (${fixed(adaptive1!.latencyMs!.p50, 3)} vs ${fixed(zero1!.latencyMs!.p50, 3)} ms)`,
    cpu: cpuText(adaptive1, zero1),
    met: added === undefined ? null : added <= GOALS.adaptiveC1AddedMs,
  });
  return checks;
}

function target6(results: ScenarioResults): TargetCheck[] {
  const colds = results.coldStarts ?? [];
  if (colds.length === 0) return [{ id: "6", target: "first response from PARKED ÷ raw session create + first run", goal: `≤ ${GOALS.parkedRatio}×`, measured: "not measured", cpu: "n/a", met: null }];
  return colds.map((c) => ({
    id: "6",
    target: `${c.model}: first response from PARKED ÷ raw session create + first run (median of ${c.reps})`,
    goal: `≤ ${GOALS.parkedRatio}×`,
    measured:
      `${ratio(c.fromParkedMs / c.rawMs)}× (${fixed(c.fromParkedMs, 1)} ÷ ${fixed(c.rawMs, 1)} ms)` +
      (c.rawFreshMs === undefined ? "" : `; against the same create + first run in a fresh process, ${fixed(c.rawFreshMs, 1)} ms: ${ratio(c.fromParkedMs / c.rawFreshMs)}×`) +
      (c.weightsInPlace === undefined ? "" : `; weights ${c.weightsInPlace ? "in place" : "copied"} at a wake`),
    cpu: "n/a (one request at a time)",
    met: c.fromParkedMs / c.rawMs <= GOALS.parkedRatio,
  }));
}

/** Target 7: readiness p99 and the slowest scrape during the probed step; shared with bench/suites/runtimes.ts. */
export function checkTarget7(results: ServedSteps): TargetCheck[] {
  const s = probeStep(results);
  const probes = s?.probes;
  const load = s ? `, while mlp answered ${fixed(s.inferPerS, 0)} req/s to ${s.concurrency} JSON clients` : "";
  const errors = probes && probes.errors > 0 ? `; ${probes.errors} probes failed (${probes.firstError})` : "";
  return [
    {
      id: "7",
      target: `\`GET /v2/health/ready\` p99 while mlp is saturated by ${s?.concurrency ?? 32} JSON clients`,
      goal: `≤ ${GOALS.readyP99Ms} ms`,
      measured: probes?.ready ? `p99 ${fixed(probes.ready.p99, 2)} ms, p50 ${fixed(probes.ready.p50, 2)} ms (${probes.readyCount} probes${load})${errors}` : "no answers",
      cpu: cpuText(s),
      met: probes?.ready ? probes.ready.p99 <= GOALS.readyP99Ms && probes.errors === 0 : null,
    },
    {
      id: "7",
      target: "a Prometheus scrape (`GET /metrics`) in the same window: the slowest one",
      goal: `≤ ${GOALS.scrapeMs} ms`,
      measured: probes?.metrics ? `max ${fixed(probes.metrics.max, 1)} ms, p50 ${fixed(probes.metrics.p50, 1)} ms (${probes.metricsCount} scrapes)${errors}` : "no answers",
      cpu: cpuText(s),
      met: probes?.metrics ? probes.metrics.max <= GOALS.scrapeMs && probes.errors === 0 : null,
    },
  ];
}

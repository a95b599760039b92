import { describe, expect, it } from "vitest";
import type { Encoding, Measured } from "../../../bench/suites/scenarios/measure-step.ts";
import type { RawPoint } from "../../../bench/suites/scenarios/raw.ts";
import type { ScenarioResults } from "../../../bench/suites/scenarios/scenario-results.ts";
import { checkTargets, comparePoints, cpuText } from "../../../bench/suites/scenarios/targets.ts";
import { targetsSection } from "../../../bench/suites/scenarios/targets-md.ts";
import { latency, measured, RUN } from "./_measured.ts";


const point = (batch: number, inferPerS: number): RawPoint => ({ batch, runs: 10, seconds: 1, inferPerS, runP50Ms: 1, selfCores: 1, otherCores: 0 });

/** A run where every target is met, unless a test overrides a step. */
function results(overrides: Measured[] = [], extra: Partial<ScenarioResults> = {}): ScenarioResults {
  const served: Measured[] = [
    // simple c=1 binary tensorfn: p50 0.2 ms, 0.1 cores at 1100 req/s = 91 µs per request.
    measured("tensorfn", "simple", 1, 1100, { latencyMs: latency(0.2, 0.5), cores: { self: 0.2, server: 0.1, serverMain: 0.08, other: 0 } }),
  ];
  for (const model of ["simple", "mlp"]) {
    for (const c of [1, 8, 32]) {
      for (const encoding of ["json", "binary"] as Encoding[]) {
        served.push(measured("handwritten", model, c, 1000, { encoding }), measured("naive", model, c, 900, { encoding }), measured("tensorfn", model, c, 1100, { encoding }));
      }
    }
  }
  served.push(
    measured("bare", "simple", 1, 7000, { latencyMs: latency(0.12, 0.3) }),
    measured("tensorfn", "mlp", 32, 4000, { encoding: "json", probes: { ready: latency(1, 4), readyCount: 200, metrics: latency(5, 20), metricsCount: 15, errors: 0, firstError: null } }),
    measured("tensorfn", "resnet_batched", 64, 92),
    measured("tensorfn", "mlp_single", 32, 1000),
    measured("tensorfn", "mlp_batched", 1, 700, { latencyMs: latency(1.3, 3) }),
    measured("tensorfn", "mlp_adaptive", 1, 690, { latencyMs: latency(1.4, 3) }),
  );
  for (const c of [8, 32, 64]) {
    served.push(
      measured("tensorfn", "mlp_batched", c, 4000, { latencyMs: latency(5, 25) }),
      measured("tensorfn", "mlp_batched_500us", c, 6500, { latencyMs: latency(5, 12) }),
      measured("tensorfn", "mlp_adaptive", c, 6300, { latencyMs: latency(5, 15) }),
    );
  }
  return {
    ...RUN,
    raw: {
      mlp: { model: "mlp", points: [point(64, 40000)], best: point(64, 40000) },
      resnet: { model: "resnet", points: [point(16, 100)], best: point(16, 100) },
      simple: latency(0.013, 0.07),
      workerHop: latency(0.09, 0.2),
      worker: { mlp: [], resnet: [] },
    },
    // Overrides replace the default step of the same identity: they come first, and step() takes the first match.
    served: [...overrides, ...served],
    coldStarts: [
      { model: "mlp", rawMs: 10, fromParkedMs: 11, reps: 5 },
      { model: "resnet", rawMs: 100, fromParkedMs: 110, reps: 5 },
    ],
    ...extra,
  };
}

const byTarget = (r: ScenarioResults, id: string) => checkTargets(r).filter((c) => c.id === id);

describe("checkTargets()", () => {
  it("meets all thirteen checks of targets 1–7 on a run that beats every threshold", () => {
    const checks = checkTargets(results());
    expect(checks.map((c) => c.id)).toEqual(["1", "2", "2", "3", "4", "5 (c=8)", "5 (c=32)", "5 (c=64)", "5 (c=1)", "6", "6", "7", "7"]);
    expect(checks.filter((c) => c.met !== true)).toEqual([]);
  });

  it("misses target 1 when one point is below the node:http server, naming the worst point", () => {
    const [check] = byTarget(results([measured("tensorfn", "mlp", 1, 800, { encoding: "json" })]), "1");
    expect(check!.met).toBe(false);
    expect(check!.measured).toContain("11 of 12 points met; worst 0.80× at mlp c=1 json (800 ÷ 1000 req/s)");
  });

  it("takes each server's median round of a target 1 point (with its own latencies and cores), and target 2 from the same rounds", () => {
    const rounds = (target: string, model: string, perS: number[], extra: Partial<Measured> = {}) =>
      perS.map((inferPerS, i) => measured(target, model, 1, inferPerS, { ...extra, repeat: i + 1, latencyMs: latency(1000 / inferPerS, 2), cores: { self: 0.2, server: inferPerS / 10000, serverMain: null, other: 0 } }));
    const r = results([
      ...rounds("tensorfn", "simple", [2200, 6100, 5900]),
      ...rounds("handwritten", "simple", [6500, 6300, 3000]),
      ...rounds("bare", "simple", [9000, 8000, 10000]),
    ]);
    const p = comparePoints(r).find((q) => q.model === "simple" && q.concurrency === 1 && q.encoding === "binary")!;
    expect([p.tensorfn!.inferPerS, p.handwritten!.inferPerS, p.ratio]).toEqual([5900, 6300, 5900 / 6300]);
    const [latencyCheck] = byTarget(r, "2");
    expect(latencyCheck!.measured).toContain(`(${(1e6 / 5900).toFixed(0)} µs ÷ ${(1e6 / 9000).toFixed(0)} µs)`);
  });

  it("judges target 1 against node:http, not Hono: 0.95× Hono still meets it when node:http is slower", () => {
    const r = results([measured("tensorfn", "simple", 8, 950, { encoding: "json" }), measured("naive", "simple", 8, 1000, { encoding: "json" }), measured("handwritten", "simple", 8, 940, { encoding: "json" })]);
    const p = comparePoints(r).find((q) => q.model === "simple" && q.concurrency === 8 && q.encoding === "json")!;
    expect(p.ratio).toBeCloseTo(950 / 940);
    expect(p.ratioHono).toBeCloseTo(0.95);
    expect(p.met).toBe(true);
  });

  it("has no verdict for target 1 when a point got no answers", () => {
    const r = results();
    r.served = r.served.filter((s) => !(s.target === "handwritten" && s.model === "mlp" && s.concurrency === 32 && s.encoding === "binary"));
    expect(byTarget(r, "1")[0]!.met).toBeNull();
  });

  it("computes target 2 as p50 ÷ bare p50 and server CPU per request", () => {
    const [latencyCheck, cpuCheck] = byTarget(results(), "2");
    expect(latencyCheck!.measured).toBe("1.67× (200 µs ÷ 120 µs)");
    expect(cpuCheck!.measured).toMatch(/^91 µs \(0\.10 cores at 1100 req\/s; client 182 µs\); a bare node:http server spent 214 µs per request in the same run$/);
    const slow = byTarget(results([measured("tensorfn", "simple", 1, 1100, { latencyMs: latency(0.3, 1), cores: { self: 0.2, server: 0.2, serverMain: 0.1, other: 0 } })]), "2");
    expect(slow.map((c) => c.met)).toEqual([false, false]);
  });

  it("sets target 2's server CPU beside a bare node:http server's, and calls it out of reach only when both are over the goal", () => {
    const [, cheapBare] = byTarget(results([measured("bare", "simple", 1, 7000, { latencyMs: latency(0.12, 0.3), cores: { self: 0.3, server: 0.1, serverMain: 0.1, other: 0 } })]), "2");
    expect(cheapBare!.measured).toContain("; a bare node:http server spent 14 µs per request in the same run");
    expect(cheapBare!.measured).not.toContain("out of reach");
    // The default bare step costs 1.5 cores at 7000 req/s: 214 µs, over the goal.
    const slowServed = measured("tensorfn", "simple", 1, 1100, { latencyMs: latency(0.2, 0.5), cores: { self: 0.2, server: 0.2, serverMain: 0.1, other: 0 } });
    const [, both] = byTarget(results([slowServed]), "2");
    expect(both!.measured).toContain("a bare node:http server spent 214 µs per request in the same run, itself over the goal: out of reach");
    expect(both!.met).toBe(false);
    expect(byTarget(results(), "2")[1]!.measured).not.toContain("out of reach");
  });

  it("takes target 3 from the best batched resnet function against the raw best batch", () => {
    expect(byTarget(results(), "3")[0]).toMatchObject({ met: true, measured: expect.stringContaining("0.92 (`resnet_batched` 92.0 ÷ raw batch 16 100.0 infer/s") });
    expect(byTarget(results([measured("tensorfn", "resnet_batched", 64, 85)]), "3")[0]!.met).toBe(false);
  });

  it("takes target 4 from the best batched mlp function (static delays and the bundled one) over mlp_single", () => {
    const [check] = byTarget(results(), "4");
    expect(check!.measured).toMatch(/^6\.50× \(delay 500 µs: 6500 ÷ 1000 infer\/s/);
    expect(check!.met).toBe(true);
    expect(byTarget(results([measured("tensorfn", "mlp_single", 32, 1200)]), "4")[0]!.met).toBe(false);
  });

  it("gives target 4 this machine's ceiling from the run's client, raw onnxruntime and bare HTTP CPU, out of reach when under the goal", () => {
    const stats = { inferenceCount: 0, executionCount: 0, successCount: 0, failCount: 0, avgBatchSize: 14, queueUsPerRequest: null, requestUsPerRequest: null, computeUsPerExecution: null, computeInputUsPerExecution: null, computeInferUsPerExecution: null, computeOutputUsPerExecution: null };
    // Client 0.4 cores at 5000 req/s = 80 µs; raw batch 16 (nearest 14 rows): 2 cores at 20000 = 100 µs; bare: 0.7 at 20000 = 35 µs.
    const steps = (single: number) => [
      measured("tensorfn", "mlp_single", 32, single),
      ...[0, 250, 500, 1000, 2000, 5000].map((d) => measured("tensorfn", d ? `mlp_batched_${d}us` : "mlp_batched", 32, d === 500 ? 5000 : 4000, { cores: { self: 0.4, server: 1.3, serverMain: 0.9, other: 0 }, server: stats })),
      measured("tensorfn", "mlp", 32, 3000),
      measured("bare", "mlp_single", 32, 20000, { cores: { self: 0.9, server: 0.7, serverMain: 0.7, other: 0 } }),
    ];
    const raw = { ...results().raw, mlp: { model: "mlp", points: [point(8, 10000), { ...point(16, 20000), selfCores: 2 }, point(32, 40000)], best: point(32, 40000) } };
    // 2 cores ÷ 215 µs = 9302 req/s; 6× of 2000 is 12000.
    const [out] = byTarget(results(steps(2000), { raw }), "4");
    expect(out!.measured).toContain("a server costing no more than bare node:http would top out at 9302 req/s = 4.65× (CPU per request: client 80 + onnxruntime 100 at raw batch 16 + bare HTTP 35 µs): out of reach on this machine");
    expect(out!.met).toBe(false);
    // 6× of 1000 is 6000, under the ceiling: missed, but not for want of cores.
    const [within] = byTarget(results(steps(1000), { raw }), "4");
    expect(within!.measured).toContain("top out at 9302 req/s = 9.30×");
    expect(within!.measured).not.toContain("out of reach");
    expect(within!.met).toBe(false);
  });

  it("misses target 5 at a level where adaptive breaks the target or falls under 0.95 of the best static delay under it", () => {
    const overTarget = results([measured("tensorfn", "mlp_adaptive", 32, 6500, { latencyMs: latency(5, 21) })]);
    expect(byTarget(overTarget, "5 (c=32)")[0]!.met).toBe(false);
    const slow = results([measured("tensorfn", "mlp_adaptive", 64, 6000, { latencyMs: latency(5, 15) })]);
    const [check] = byTarget(slow, "5 (c=64)");
    // 500 µs (p99 12 ms) is the fastest static delay under the target; delay 0's p99 (25 ms) is over it.
    expect(check!.measured).toContain("0.92 of the best static delay under the target, 500 µs: 6500 infer/s");
    expect(check!.met).toBe(false);
  });

  it("compares adaptive with the best static delay overall, and says so, when no static delay met the target", () => {
    const r = results([measured("tensorfn", "mlp_batched_500us", 8, 6500, { latencyMs: latency(5, 22) })]);
    const [check] = byTarget(r, "5 (c=8)");
    expect(check!.measured).toContain("0.97 of no static delay met the target; the best overall, 500 µs: 6500 infer/s");
    expect(check!.met).toBe(true);
  });

  it("compares the sweep's median rounds, not its luckiest windows, when the sweep ran in rounds", () => {
    const rounds = (model: string, values: number[]) => values.map((v, i) => measured("tensorfn", model, 32, v, { round: i + 1, latencyMs: latency(5, 12) }));
    // Delay 500's best window (9000) was luck: its median round is 6000, adaptive's 5900.
    const r = results([...rounds("mlp_batched_500us", [9000, 6000, 5500]), ...rounds("mlp_adaptive", [5800, 6100, 5900])]);
    const [check] = byTarget(r, "5 (c=32)");
    expect(check!.measured).toContain("5900 infer/s = 0.98 of the best static delay under the target, 500 µs: 6000 infer/s");
    expect(check!.met).toBe(true);
    // Target 4 reads the same median round for the static delays.
    expect(byTarget(r, "4")[0]!.measured).toMatch(/^6\.00× \(delay 500 µs: 6000 ÷ 1000 infer\/s/);
  });

  it("checks target 5 at c=1 as adaptive p50 minus delay 0's", () => {
    expect(byTarget(results(), "5 (c=1)")[0]).toMatchObject({ met: true, measured: "+0.100 ms (1.400 vs 1.300 ms)" });
    expect(byTarget(results([measured("tensorfn", "mlp_adaptive", 1, 600, { latencyMs: latency(1.6, 3) })]), "5 (c=1)")[0]!.met).toBe(false);
  });

  it("checks target 6 per model and says when the cold starts were not measured", () => {
    const r = results([], { coldStarts: [{ model: "mlp", rawMs: 10, fromParkedMs: 24, reps: 5 }] });
    expect(byTarget(r, "6")).toMatchObject([{ met: false, measured: "2.40× (24.0 ÷ 10.0 ms)" }]);
    expect(byTarget(results([], { coldStarts: undefined }), "6")).toMatchObject([{ met: null, measured: "not measured" }]);
  });

  it("checks target 7 from the probed step: readiness p99 and the slowest scrape; failed probes miss it", () => {
    expect(byTarget(results(), "7").map((c) => c.met)).toEqual([true, true]);
    const slow = measured("tensorfn", "mlp", 32, 4000, { encoding: "json", probes: { ready: latency(3, 12), readyCount: 200, metrics: { ...latency(5, 20), max: 60 }, metricsCount: 15, errors: 0, firstError: null } });
    expect(byTarget(results([slow]), "7").map((c) => c.met)).toEqual([false, false]);
    const failing = measured("tensorfn", "mlp", 32, 4000, { encoding: "json", probes: { ready: latency(1, 2), readyCount: 200, metrics: latency(5, 20), metricsCount: 15, errors: 2, firstError: "/metrics: HTTP 503" } });
    expect(byTarget(results([failing]), "7").map((c) => c.met)).toEqual([false, false]);
  });
});

describe("cpuText()", () => {
  it("names each step with its client and server cores", () => {
    expect(cpuText(measured("naive", "mlp", 8, 1), measured("bare", "simple", 1, 1, { cores: { self: 1, server: 0.5, serverMain: null, other: null } }))).toBe(
      "hono mlp c=8: client 0.20 / server 1.50 (main 0.60); bare simple c=1: client 1.00 / server 0.50",
    );
  });
});

describe("targetsSection()", () => {
  it("says which commit and runtime it measured and renders one row per check and per target-1 point", () => {
    const lines = targetsSection(results([], { subject: { serverRoot: "/repo", commit: "abc1234", dirty: true, runtime: "Node v20.0.0" } }));
    expect(lines[2]).toContain("tensorfn at commit `abc1234` plus uncommitted changes (from `/repo`), served by Node v20.0.0");
    expect(lines[2]).toContain("13 met, 0 missed, 0 without numbers");
    expect(lines.filter((l) => /^\| (1|2|3|4|5 \(c=\d+\)|6|7) \|/.test(l))).toHaveLength(13);
    expect(lines.filter((l) => /^\| (simple|mlp) \| \d+ \| (JSON|binary) \|/.test(l))).toHaveLength(12);
    expect(lines).toContain("| mlp | 32 | binary | 1000 | 900 | 1100 | 1.10 | 1.22 | 1.00 / 2.00 | 0.20 / 1.50 | 0.20 / 1.50 | 0.20 / 1.50 | met |");
  });

  it("says whether target 1's rounds rotated the servers, from the order the run measured them in", () => {
    const round = (repeat: number, names: string[]) => names.map((name) => measured(name, "simple", 1, 1000, { repeat, encoding: "json" }));
    const text = (order: Measured[]) => targetsSection(results(order)).find((l) => l.startsWith("The three run back to back"))!;
    expect(text([...round(1, ["handwritten", "naive", "tensorfn"]), ...round(2, ["naive", "tensorfn", "handwritten"])])).toContain("each round starting one server further along");
    expect(text([...round(1, ["handwritten", "naive", "tensorfn"]), ...round(2, ["handwritten", "naive", "tensorfn"])])).toContain("in the same order every round");
  });
});

import { describe, expect, it } from "vitest";
import type { Encoding, Measured } from "../../../bench/suites/scenarios/measure-step.ts";
import { runtimeTargetsSection } from "../../../bench/suites/runtimes/runtime-targets-md.ts";
import { runtimeChecks } from "../../../bench/suites/runtimes/runtime-targets.ts";
import type { RuntimeStep, RuntimeTargetsRun } from "../../../bench/suites/runtimes/runtime-targets.ts";
import { planTargetSteps, targetSeconds } from "../../../bench/suites/runtimes/target-plan.ts";
import { latency, measured as measuredStep } from "./_measured.ts";
import type { TargetServer } from "../../../bench/suites/runtimes/target-plan.ts";

function measured(runtime: string | null, target: string, model: string, concurrency: number, inferPerS: number, extra: Partial<Measured> = {}): RuntimeStep {
  return { runtime, ...measuredStep(target, model, concurrency, inferPerS, extra) };
}

const RUNTIMES = ["node", "bun", "deno"];

/** A run where every runtime meets targets 1, 2 and 7, unless a test overrides a step (overrides come first: step() takes the first match). */
function run(overrides: RuntimeStep[] = []): RuntimeTargetsRun {
  const steps: RuntimeStep[] = [];
  for (const model of ["simple", "mlp"]) {
    for (const c of [1, 8, 32]) {
      for (const encoding of ["json", "binary"] as Encoding[]) {
        steps.push(measured(null, "handwritten", model, c, 1000, { encoding }));
        for (const r of RUNTIMES) {
          // simple c=1 binary: p50 0.2 ms, 0.1 cores at 1100 req/s = 91 µs per request.
          const simple1 = model === "simple" && c === 1 && encoding === "binary";
          steps.push(measured(r, "tensorfn", model, c, 1100, simple1 ? { latencyMs: latency(0.2, 0.5), cores: { self: 0.2, server: 0.1, serverMain: 0.08, other: 0 } } : { encoding }));
        }
      }
    }
  }
  steps.push(measured(null, "bare", "simple", 1, 7000, { latencyMs: latency(0.12, 0.3) }));
  for (const r of RUNTIMES) steps.push(measured(r, "tensorfn", "mlp", 32, 4000, { encoding: "json", probes: { ready: latency(1, 4), readyCount: 200, metrics: latency(5, 20), metricsCount: 15, errors: 0, firstError: null } }));
  return { runtimes: RUNTIMES, nproc: 2, timing: { warmupMs: 1000, durationMs: 3000 }, steps: [...overrides, ...steps], unavailable: {} };
}

const server = (role: TargetServer["role"], runtime: string | null): TargetServer => ({ role, runtime, url: `http://127.0.0.1/${runtime ?? role}`, pid: 1 });

describe("planTargetSteps()", () => {
  const tensorfn = RUNTIMES.map((r) => server("tensorfn", r));
  const plan = planTargetSteps({ handwritten: server("handwritten", null), bare: server("bare", null), tensorfn }, { warmupMs: 1000, durationMs: 3000 }, { warmupMs: 500, durationMs: 1500 });
  const who = (i: number) => plan[i]!.server.runtime ?? plan[i]!.server.role;

  it("measures each target-1 point in rounds: the hand-written server first, then every runtime, their order turned by one per round", () => {
    expect([0, 1, 2, 3].map(who)).toEqual(["handwritten", "node", "bun", "deno"]);
    expect([4, 5, 6, 7].map(who)).toEqual(["handwritten", "bun", "deno", "node"]);
    expect([8, 9, 10, 11].map(who)).toEqual(["handwritten", "deno", "node", "bun"]);
    expect(plan.slice(0, 12).every((s) => s.model === "simple" && s.concurrency === 1 && s.encoding === "json" && s.durationMs === 1500)).toBe(true);
    expect(plan.slice(0, 12).map((s) => s.repeat)).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
  });

  it("runs the bare round trip after `simple` at c=1 binary in each round and ends with one probed mlp c=32 JSON step per runtime", () => {
    expect([16, 21, 26].map(who)).toEqual(["bare", "bare", "bare"]);
    expect(plan.filter((s) => s.server.role === "bare")).toHaveLength(3);
    expect(plan.slice(-3).map((s) => [s.server.runtime, s.model, s.concurrency, s.encoding, s.probe, s.durationMs, s.repeat])).toEqual(RUNTIMES.map((r) => [r, "mlp", 32, "json", true, 3000, undefined]));
    // 12 points × 3 rounds × (1 baseline + 3 runtimes) + 3 bare, 2 s each; 3 probed steps, 4 s each.
    expect(plan).toHaveLength(150);
    expect(targetSeconds(plan)).toBe(147 * 2 + 3 * 4);
  });
});

describe("runtimeChecks()", () => {
  it("meets targets 1, 2 and 7 under every runtime on a run that beats every threshold", () => {
    const all = runtimeChecks(run());
    expect(all.map((r) => r.runtime)).toEqual(RUNTIMES);
    for (const r of all) {
      expect(r.checks.map((c) => c.id)).toEqual(["1", "2", "2", "7", "7"]);
      expect(r.checks.filter((c) => c.met !== true)).toEqual([]);
      expect(r.reasons).toEqual([]);
    }
  });

  it("judges each runtime on its own steps: Deno below node:http at one point misses target 1, Node and Bun do not", () => {
    const stats = { inferenceCount: 2400, executionCount: 2400, successCount: 2400, failCount: 0, avgBatchSize: 1, queueUsPerRequest: 21, requestUsPerRequest: 560, computeUsPerExecution: 516, computeInputUsPerExecution: 1, computeInferUsPerExecution: 512, computeOutputUsPerExecution: 3 };
    const slow = measured("deno", "tensorfn", "mlp", 1, 800, { encoding: "json", cores: { self: 0.2, server: 0.4, serverMain: 0.3, other: 0 }, latencyMs: latency(1.25, 2), server: stats });
    const [node, bun, deno] = runtimeChecks(run([slow]));
    expect(node!.checks[0]!.met).toBe(true);
    expect(bun!.checks[0]!.met).toBe(true);
    expect(deno!.checks[0]).toMatchObject({ met: false, measured: expect.stringContaining("11 of 12 points met; worst 0.80× at mlp c=1 json (800 ÷ 1000 req/s)") });
    // tensorfn 0.4 cores at 800 req/s = 500 µs (main 375 µs); node:http 1.5 cores at 1000 req/s = 1500 µs.
    expect(deno!.reasons).toEqual([
      "Target 1, worst at mlp c=1 json (0.80×): tensorfn answered in p50 1.25 ms against node:http's 1.00 ms (inside the server: 21 µs queued and 516 µs of compute per execution, batch 1.0), and its server spent 500 µs of CPU per request (375 µs on its main thread) against node:http's 1500 µs.",
    ]);
  });

  it("states where target 2's time and CPU went, and flags a window disturbed by other work", () => {
    const slow = measured("bun", "tensorfn", "simple", 1, 1000, { latencyMs: latency(0.3, 1), cores: { self: 0.2, server: 0.2, serverMain: 0.12, other: 0.5 } });
    const bun = runtimeChecks(run([slow]))[1]!;
    expect(bun.checks.slice(1, 3).map((c) => c.met)).toEqual([false, false]);
    expect(bun.checks[1]!.measured).toBe("2.50× (300 µs ÷ 120 µs)");
    expect(bun.reasons).toHaveLength(1);
    expect(bun.reasons[0]).toContain("a round trip took 180 µs longer than bare node:http's 120 µs (the goal allows 120 µs more)");
    expect(bun.reasons[0]).toContain("200 µs of CPU per request, 120 µs on its main thread (HTTP, codecs, scheduling) and 80 µs on its other threads");
    expect(bun.reasons[0]).toContain("Other work on the machine used 0.50 cores during tensorfn simple c=1");
  });

  it("misses target 7 for the runtime whose probes were slow, naming its main thread's load", () => {
    const slow = measured("node", "tensorfn", "mlp", 32, 4000, { encoding: "json", cores: { self: 0.3, server: 1.4, serverMain: 0.95, other: 0 }, probes: { ready: latency(3, 12), readyCount: 200, metrics: { ...latency(5, 20), max: 60 }, metricsCount: 15, errors: 0, firstError: null } });
    const [node, bun] = runtimeChecks(run([slow]));
    expect(node!.checks.slice(3).map((c) => c.met)).toEqual([false, false]);
    expect(bun!.checks.slice(3).map((c) => c.met)).toEqual([true, true]);
    expect(node!.reasons[0]).toBe("Target 7: while mlp answered 4000 req/s to 32 JSON clients, the server's main thread, which answers the probes too, was busy 0.95 of one core (1.40 cores in all); readiness took p50 3.00 / p99 12.00 ms, scrapes p50 5.0 / max 60.0 ms.");
  });

  it("has no verdicts for a runtime without steps", () => {
    const r = run();
    r.steps = r.steps.filter((s) => s.runtime !== "deno");
    expect(runtimeChecks(r)[2]!.checks.map((c) => c.met)).toEqual([null, null, null, null, null]);
  });
});

describe("runtimeTargetsSection()", () => {
  it("renders five verdict rows per runtime and one row per target-1 point with every runtime's ratio and cores", () => {
    const lines = runtimeTargetsSection(run([measured("bun", "tensorfn", "mlp", 32, 900, { encoding: "binary", cores: { self: 0.25, server: 1.2, serverMain: 0.5, other: 0 } })]));
    expect(lines[0]).toBe("### Hot-path targets per runtime (issue 11)");
    expect(lines[2]).toContain("1 s warm-up + 3 s per step");
    expect(lines[2]).toContain("Node 5 met, 0 missed; Bun 4 met, 1 missed; Deno 5 met, 0 missed.");
    expect(lines.filter((l) => /^\| (Node|Bun|Deno) \| (1|2|7) \|/.test(l))).toHaveLength(15);
    expect(lines.filter((l) => /^\| (simple|mlp) \| \d+ \| (JSON|binary) \|/.test(l))).toHaveLength(12);
    expect(lines).toContain("| model | conc. | tensors | node:http req/s | Node req/s (÷ node:http) | Bun req/s (÷ node:http) | Deno req/s (÷ node:http) | cores client / server: node:http | Node | Bun | Deno | met? Node / Bun / Deno |");
    expect(lines).toContain("| mlp | 32 | binary | 1000 | 1100 (1.10) | 900 (0.90) | 1100 (1.10) | 0.20 / 1.50 | 0.20 / 1.50 | 0.25 / 1.20 | 0.20 / 1.50 | met / **missed** / met |");
    expect(lines.find((l) => l.startsWith("- Bun. Target 1, worst at mlp c=32 binary (0.90×)"))).toBeDefined();
  });

  it("says which runtime did not start and leaves it out of the tables", () => {
    const r = run();
    r.steps = r.steps.filter((s) => s.runtime !== "deno");
    r.unavailable = { deno: "exited with 1 before printing a URL:" };
    const lines = runtimeTargetsSection(r);
    expect(lines).toContain("tensorfn under Deno did not start (exited with 1 before printing a URL:), so it has no numbers.");
    expect(lines.some((l) => l.startsWith("| Deno |"))).toBe(false);
    expect(lines).toContain("| simple | 1 | JSON | 1000 | 1100 (1.10) | 1100 (1.10) | 0.20 / 1.50 | 0.20 / 1.50 | 0.20 / 1.50 | met / met |");
  });
});

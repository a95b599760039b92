import type { Measured } from "./measure-step.ts";
import { fixed, ratio } from "./scenario-results.ts";
import type { ScenarioResults } from "./scenario-results.ts";
import { checkTargets, comparePoints, GOALS } from "./targets.ts";
import { COMPARE_ROUNDS, COMPARE_WINDOW, JIT_WARMUP_MS } from "./served.ts";

/** The "Targets" part of the scenarios section: issue 11's verdicts, then target 1 point by point. */
export function targetsSection(results: ScenarioResults): string[] {
  const { subject } = results;
  const what = subject
    ? `tensorfn at commit \`${subject.commit}\`${subject.dirty ? " plus uncommitted changes" : subject.dirty === null ? " (working tree state unknown)" : ""} (from \`${subject.serverRoot}\`), served by ${subject.runtime}`
    : "tensorfn (commit not recorded)";
  const verdict = (met: boolean | null) => (met === null ? "n/a" : met ? "met" : "**missed**");
  const checks = checkTargets(results);
  const missed = checks.filter((c) => c.met === false).length;
  // Runs before stop 32 kept one order in every round; the steps' order says which this run did.
  const firstOf = (repeat: number) => results.served.find((s) => s.repeat === repeat)?.target;
  const order = firstOf(2) !== undefined && firstOf(2) !== firstOf(1) ? ", each round starting one server further along" : ", in the same order every round";
  return [
    "### Targets (issue 11)",
    "",
    `Measured: ${what}; the client is this script under Node ${results.machine.node}. ${checks.filter((c) => c.met).length} met, ${missed} missed, ${checks.filter((c) => c.met === null).length} without numbers.`,
    "Every verdict is computed from this run's steps (bench/suites/scenarios/targets.ts). Target 8 (no regression) is the rest of",
    "this section against the previous run, and the Bun and Deno rows of `npm run bench:runtimes`.",
    "",
    "| # | target | goal | measured | cores (client / server) | met? |",
    "|---|---|---|---|---|---|",
    ...checks.map((c) => `| ${c.id} | ${c.target} | ${c.goal} | ${c.measured} | ${c.cpu} | ${verdict(c.met)} |`),
    "",
    "#### Target 1 point by point",
    "",
    "The hand-written server is `bench/suites/handwritten-server.ts` (plain `node:http`, one default-options onnxruntime-node",
    "session per model, `session.run` per request on the event loop, KServe v2 JSON and binary tensors decoded",
    "and encoded simply); Hono is `bench/suites/naive-server.ts`, the same on Hono and @hono/node-server. tensorfn serves",
    "copies of `functions/simple` and `functions/mlp` with their bundled `function.yaml`, read when the run starts.",
    `The three run back to back at each point${order}, ${COMPARE_ROUNDS} rounds of ${fixed(COMPARE_WINDOW.warmupMs / 1000, 1)} s warm-up + ${fixed(COMPARE_WINDOW.durationMs / 1000, 1)} s (\`--quick\` scales them), and each stands by its median round`,
    `(its own p50, p99 and cores; every round is in \`bench/out/scenarios.json\`); the verdict is against node:http (≥ ${fixed(GOALS.handwrittenRatio, 1)}×).`,
    `Before the first point every server had the same JIT warm-up, not reported: ${fixed(JIT_WARMUP_MS / 1000, 1)} s of each model × encoding at 8 clients`,
    "(a fresh server's first seconds measure V8 compiling it; see `warmServers` in bench/suites/scenarios/served.ts).",
    "",
    "| model | conc. | tensors | node:http req/s | Hono req/s | tensorfn req/s | ÷ node:http | ÷ Hono | tensorfn p50 / p99 ms | cores client / server: node:http | Hono | tensorfn | met? |",
    "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ...comparePoints(results).map((p) => {
      const cores = (s: Measured | undefined) => (s ? `${fixed(s.cores.self, 2)} / ${fixed(s.cores.server, 2)}` : "n/a");
      const rate = (s: Measured | undefined) => (s ? fixed(s.inferPerS, 0) + (s.errors > 0 ? ` (${s.errors} errors)` : "") : "no answers");
      const latency = p.tensorfn?.latencyMs ? `${fixed(p.tensorfn.latencyMs.p50, 2)} / ${fixed(p.tensorfn.latencyMs.p99, 2)}` : "n/a";
      return `| ${p.model} | ${p.concurrency} | ${p.encoding === "json" ? "JSON" : "binary"} | ${rate(p.handwritten)} | ${rate(p.hono)} | ${rate(p.tensorfn)} | ${p.ratio === undefined ? "n/a" : ratio(p.ratio)} | ${p.ratioHono === undefined ? "n/a" : ratio(p.ratioHono)} | ${latency} | ${cores(p.handwritten)} | ${cores(p.hono)} | ${cores(p.tensorfn)} | ${verdict(p.met)} |`;
    }),
    "",
  ];
}

/**
 * The "Hot-path targets per runtime" subsection of bench/results/runtimes.md,
 * rendered from one run's numbers only (as bench/suites/scenarios/targets-md.ts renders `npm run bench`'s).
 */
import type { Measured } from "../scenarios/measure-step.ts";
import { fixed, ratio } from "../scenarios/scenario-results.ts";
import { GOALS } from "../scenarios/targets.ts";
import { COMPARE_ROUNDS } from "../scenarios/served.ts";
import { runtimeChecks } from "./runtime-targets.ts";
import type { RuntimeTargetsRun } from "./runtime-targets.ts";
import { runtimeName } from "./runtimes-prose.ts";

const verdict = (met: boolean | null) => (met === null ? "n/a" : met ? "met" : "**missed**");

/** The subsection's lines: how it was measured, one verdict table, target 1 point by point, the reasons for the misses. */
export function runtimeTargetsSection(run: RuntimeTargetsRun): string[] {
  const all = runtimeChecks(run);
  const measured = all.filter((r) => !(r.runtime in run.unavailable));
  const count = (r: (typeof all)[number], met: boolean | null) => r.checks.filter((c) => c.met === met).length;
  const tally = measured.map((r) => `${runtimeName(r.runtime)} ${count(r, true)} met, ${count(r, false)} missed${count(r, null) > 0 ? `, ${count(r, null)} without numbers` : ""}`).join("; ");
  const window = `${run.timing.warmupMs / 1000} s warm-up + ${run.timing.durationMs / 1000} s`;
  const compare = run.compareTiming ? `${COMPARE_ROUNDS} rounds of ${run.compareTiming.warmupMs / 1000} s warm-up + ${run.compareTiming.durationMs / 1000} s at each target 1 point (each server by its median round), ${window} for the probed steps` : `One round of ${window} per step`;
  const unavailable = Object.entries(run.unavailable).map(([r, why]) => `tensorfn under ${runtimeName(r)} did not start (${why}), so it has no numbers.`);
  const cores = (s: Measured | undefined) => (s ? `${fixed(s.cores.self, 2)} / ${fixed(s.cores.server, 2)}` : "n/a");
  const rate = (s: Measured | undefined) => (s ? fixed(s.inferPerS, 0) + (s.errors > 0 ? ` (${s.errors} errors)` : "") : "no answers");
  const names = measured.map((r) => runtimeName(r.runtime));
  const pointRows = (measured[0]?.points ?? []).map((p, i) => {
    const byRuntime = measured.map((r) => r.points[i]!);
    const served = byRuntime.map((q) => `${rate(q.tensorfn)} (${q.ratio === undefined ? "n/a" : ratio(q.ratio)})`);
    return `| ${p.model} | ${p.concurrency} | ${p.encoding === "json" ? "JSON" : "binary"} | ${rate(p.handwritten)} | ${served.join(" | ")} | ${cores(p.handwritten)} | ${byRuntime.map((q) => cores(q.tensorfn)).join(" | ")} | ${byRuntime.map((q) => verdict(q.met)).join(" / ")} |`;
  });
  const reasons = measured.flatMap((r) => r.reasons.map((line) => `- ${runtimeName(r.runtime)}. ${line}`));
  return [
    "### Hot-path targets per runtime (issue 11)",
    "",
    `Issue 11's targets 1, 2 and 7 (target 8 asks for them under Bun and Deno too), for tensorfn served under ${names.join(", ")} in this run: one server per runtime, all up at once on one repository (copies of \`functions/simple\` and \`functions/mlp\` with their bundled \`function.yaml\`, \`--model-control-mode none\`), beside the baselines under Node: the hand-written \`node:http\` server (\`bench/handwritten-server.ts\`) and the bare round trip (\`bench/suites/scenarios/bare-http-server.ts\`). In each round of a point the hand-written server runs first, then the runtimes back to back, their order turned by one from round to round; the bare round trip runs after \`simple\` at c=1 binary. Every server first had the same JIT warm-up, not reported (\`warmServers\` in bench/suites/scenarios/served.ts). ${compare}, driven by \`npm run bench\`'s load generator under Node on the same ${run.nproc} cores, and judged by its checks (\`bench/suites/scenarios/targets.ts\`); windows disturbed by other work are not retaken (the \`other\` cores of every step are in \`bench/out/runtimes.json\`). ${tally}.`,
    ...(unavailable.length > 0 ? ["", unavailable.join(" ")] : []),
    "",
    "| runtime | # | target | goal | measured | cores (client / server) | met? |",
    "|---|---|---|---|---|---|---|",
    ...measured.flatMap((r) => r.checks.map((c) => `| ${runtimeName(r.runtime)} | ${c.id} | ${c.target} | ${c.goal} | ${c.measured} | ${c.cpu} | ${verdict(c.met)} |`)),
    "",
    "#### Target 1 per runtime, point by point",
    "",
    `tensorfn req/s under each runtime, with its ratio to the node:http server measured just before it (goal ≥ ${fixed(GOALS.handwrittenRatio, 1)}×), and the cores the client and the server used during each window.`,
    "",
    `| model | conc. | tensors | node:http req/s | ${names.map((n) => `${n} req/s (÷ node:http)`).join(" | ")} | cores client / server: node:http | ${names.join(" | ")} | met? ${names.join(" / ")} |`,
    `|---|---:|---|---:|${names.map(() => "---:|").join("")}---:|${names.map(() => "---:|").join("")}---|`,
    ...pointRows,
    "",
    ...(reasons.length > 0 ? ["Why the misses missed, from this run's numbers:", "", ...reasons, ""] : []),
  ];
}

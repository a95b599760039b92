/**
 * `npm run bench:functions`: what a function-style call costs, in one run on this machine, against
 * the same work on the KServe route and the HTTP floor. One tensorfn process serves `functions/`
 * copies: `word_count` (a handler, no model) through `POST /v1/functions/word_count`;
 * `simple_identity` on the KServe route (JSON tensors, no compute: the serving path alone);
 * `simple` through its KServe route and, as `simple_pre`, through a handler whose preprocess and
 * postprocess turn JSON into its tensors and back. Beside them the bare node:http server. c=1 and
 * c=8, three interleaved rounds of 0.5 s warm-up and 2 s, each row its median round. Writes the
 * bench/results/functions.md.
 *
 *   npm run bench:functions [-- --quick]
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { benchRequest, measureStep } from "./scenarios/measure-step.ts";
import type { Measured } from "./scenarios/measure-step.ts";
import type { EncodedRequest } from "../../adapters/bench/request-body.ts";
import { spawnServer } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { writeResultsSection } from "./results-section.ts";
import { median, medianRound } from "./median-round.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FUNCTIONS = join(ROOT, "functions");
const ROUNDS = 3;
const LEVELS = [1, 8];
const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const scale = values.quick ? 0.25 : 1;
const log = (line: string) => void process.stderr.write(`${line}\n`);

const repo = mkdtempSync(join(tmpdir(), "tensorfn-bench-functions-"));
for (const name of ["word_count", "simple_identity", "simple"]) cpSync(join(FUNCTIONS, name), join(repo, name), { recursive: true });
cpSync(join(FUNCTIONS, "simple"), join(repo, "simple_pre"), { recursive: true });
writeFileSync(join(repo, "simple_pre", "function.yaml"), readFileSync(join(FUNCTIONS, "simple", "function.yaml"), "utf8") + "handler: handler.ts\n");
writeFileSync(
  join(repo, "simple_pre", "handler.ts"),
  `// {"a": [16 ints], "b": [16 ints]} → simple's INT32 tensors; its outputs → {"sum", "difference"}.
export function preprocess(request) {
  const { a, b } = request.json();
  return { INPUT0: { datatype: "INT32", shape: [1, 16], data: Int32Array.from(a) }, INPUT1: { datatype: "INT32", shape: [1, 16], data: Int32Array.from(b) } };
}
export const postprocess = (outputs) => ({ sum: Array.from(outputs.OUTPUT0.data), difference: Array.from(outputs.OUTPUT1.data) });
`,
);

// Ensembles of 1 and 4 identity steps: the difference is what 3 more steps cost.
const chain = (steps: number) => `platform: ensemble
max_batch_size: 8
input: [{ name: T0, data_type: TYPE_STRING, dims: [-1] }]
output: [{ name: T${steps}, data_type: TYPE_STRING, dims: [-1] }]
ensemble_scheduling:
  step:
${Array.from({ length: steps }, (_, i) => `    - { model_name: simple_identity, input_map: { INPUT0: T${i} }, output_map: { OUTPUT0: T${i + 1} } }`).join("\n")}
`;
for (const steps of [1, 4]) {
  mkdirSync(join(repo, `identity_x${steps}`, "1"), { recursive: true });
  writeFileSync(join(repo, `identity_x${steps}`, "function.yaml"), chain(steps));
}

const json = (value: unknown): EncodedRequest => ({ body: new TextEncoder().encode(JSON.stringify(value)), headers: { "content-type": "application/json" }, inputs: [] });
const numbers = Array.from({ length: 16 }, (_, i) => i);
const servers: SpawnedServer[] = [];
const rows: { label: string; concurrency: number; rounds: Measured[] }[] = [];
try {
  const tensorfn = await spawnServer("node", [join(ROOT, "adapters", "node", "bin.mjs"), "serve", "--repo", repo, "--model-control-mode", "none", "--port", "0"]);
  servers.push(tensorfn);
  const bare = await spawnServer("node", ["--import", "tsx", join(ROOT, "bench", "suites", "scenarios", "bare-http-server.ts"), "--port", "0"]);
  servers.push(bare);
  const subjects = [
    { label: "bare node:http (the floor)", server: bare, model: "simple", request: await benchRequest(tensorfn.url, "simple", { encoding: "json" }), stats: false },
    { label: "`simple_identity`, KServe JSON (serving, no compute)", server: tensorfn, model: "simple_identity", request: await benchRequest(tensorfn.url, "simple_identity", { encoding: "json", shapes: { INPUT0: [16] } }), stats: true },
    { label: "`word_count` handler, POST /v1/functions", server: tensorfn, model: "word_count", path: "/v1/functions/word_count", request: json({ text: "the quick brown fox jumps over the lazy dog" }), stats: true },
    { label: "`identity_x1`: an ensemble of 1 simple_identity step, KServe JSON", server: tensorfn, model: "identity_x1", request: json({ inputs: [{ name: "T0", datatype: "BYTES", shape: [1, 16], data: Array(16).fill("x") }] }), stats: true },
    { label: "`identity_x4`: an ensemble of 4 simple_identity steps, KServe JSON", server: tensorfn, model: "identity_x4", request: json({ inputs: [{ name: "T0", datatype: "BYTES", shape: [1, 16], data: Array(16).fill("x") }] }), stats: true },
    { label: "`simple`, KServe JSON", server: tensorfn, model: "simple", request: await benchRequest(tensorfn.url, "simple", { encoding: "json" }), stats: true },
    { label: "`simple_pre`: preprocess → simple → postprocess, POST /v1/functions", server: tensorfn, model: "simple_pre", path: "/v1/functions/simple_pre", request: json({ a: numbers, b: numbers }), stats: true },
  ];
  for (const concurrency of LEVELS) {
    const byLabel = new Map(subjects.map((s) => [s.label, [] as Measured[]]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of subjects) {
        const m = await measureStep(
          { target: s.label, url: s.server.url, model: s.model, path: s.path, pid: s.server.pid, stats: s.stats, concurrency, warmupMs: 500 * scale, durationMs: 2000 * scale, encoding: "json" },
          s.request,
        );
        if (m.errors > 0) throw new Error(`${s.label}: ${m.errors} errors (${m.firstError})`);
        byLabel.get(s.label)!.push(m);
        log(`functions c=${concurrency} round ${round}: ${s.label}: ${m.inferPerS.toFixed(0)} req/s, p50 ${m.latencyMs?.p50.toFixed(3)} ms`);
      }
    }
    for (const s of subjects) rows.push({ label: s.label, concurrency, rounds: byLabel.get(s.label)! });
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(repo, { recursive: true, force: true });
}

const lines = [
  "## Function-style calls: handlers against the KServe route and the HTTP floor",
  "",
  "Generated by `npm run bench:functions` (bench/suites/function-call.ts); rerun to refresh. One tensorfn process",
  "(`serve --model-control-mode none`) and the bare node:http server; JSON bodies; " + `${ROUNDS} interleaved rounds of 0.5 s`,
  "warm-up and a 2 s window per level, each row the median round (req/s and p50 of that round's own). Client and",
  "servers share the 2 cores; the `server cores` column is the server process (all threads).",
  "",
  `- Date: ${new Date().toISOString()}`,
  "",
  "| c | path | req/s (median round) | rounds, req/s | p50 ms | server cores | server CPU µs/req |",
  "|---:|---|---:|---|---:|---:|---:|",
];
for (const r of rows) {
  const mid = medianRound(r.rounds);
  const cores = mid.cores.server;
  lines.push(
    `| ${r.concurrency} | ${r.label} | ${mid.inferPerS.toFixed(0)} | ${r.rounds.map((m) => m.inferPerS.toFixed(0)).join(" / ")} | ${mid.latencyMs?.p50.toFixed(3)} | ${cores === null ? "n/a" : cores.toFixed(2)} | ${cores === null || mid.inferPerS <= 0 ? "n/a" : ((cores / mid.inferPerS) * 1e6).toFixed(0)} |`,
  );
}
const perStep = (c: number) => ((p50("`identity_x4`", c) - p50("`identity_x1`", c)) / 3) * 1000;
const p50 = (label: string, c: number) => median(rows.find((r) => r.label.startsWith(label) && r.concurrency === c)!.rounds.map((m) => m.latencyMs?.p50 ?? NaN));
lines.push(
  "",
  `- At c=1, a handler's function-style call (\`word_count\`) takes ${(p50("`word_count`", 1) / p50("`simple_identity`", 1)).toFixed(2)}× the p50 of the KServe serving path alone (\`simple_identity\`), and the handler around \`simple\` (preprocess, the model, postprocess) ${(p50("`simple_pre`", 1) / p50("`simple`, KServe", 1)).toFixed(2)}× \`simple\` on the KServe route (${((p50("`simple_pre`", 1) - p50("`simple`, KServe", 1)) * 1000).toFixed(0)} µs more).`,
  `- An ensemble step costs ${perStep(1).toFixed(0)} µs of p50 at c=1 (identity_x4 − identity_x1, ÷ 3; issue 12's target: ≤ 50 µs: ${perStep(1) <= 50 ? "met" : "missed"}) and ${perStep(8).toFixed(0)} µs at c=8.`,
  "",
);
if (values.quick) log(lines.join("\n"));
else writeResultsSection("functions", lines.join("\n"));
log(values.quick ? "bench:functions --quick: printed, bench/results/ left alone" : "bench:functions: wrote bench/results/functions.md");

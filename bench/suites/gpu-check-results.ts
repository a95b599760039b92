/**
 * Records a `bench/suites/gpu-check.sh` result in bench/results/: `npx tsx bench/suites/gpu-check-results.ts
 * gpu-check.json "how it was run"`. A hardware adapter's result goes to the `gpu-check-gpu` section,
 * a software adapter's (llvmpipe) to `gpu-check-software`, so one never overwrites the other.
 */
import { readFileSync } from "node:fs";
import { writeResultsSection } from "./results-section.ts";

interface Rate {
  inferPerS: number;
  msPerRun: number;
}
interface Report {
  date: string;
  deno: string;
  cores: number;
  backend: string;
  adapter: { description: string; vendor: string; architecture: string; software: boolean };
  raw: Record<string, { batch: number; webgpu: Rate; wasm: Rate; relative: number }[]>;
  served: Record<string, { provider: string; avgBatch: number; steps: { concurrency: number; inferPerS: number; p50Ms: number; p99Ms: number; errors: number }[] }>;
  /** Since issue 40: the host's CUDA libraries, and NVML read through the served runtime's /metrics. */
  cuda?: { libraries: string[]; toolkits: string[] };
  nvml?: { lines: string[]; problem?: string };
  ok: boolean;
}

const [file, how = "bash bench/suites/gpu-check.sh run"] = process.argv.slice(2);
if (!file) throw new Error("usage: tsx bench/suites/gpu-check-results.ts gpu-check.json [how it was run]");
const r = JSON.parse(readFileSync(file, "utf8")) as Report;
const f = (v: number, d = 1) => v.toFixed(d);
const kind = r.adapter.software ? "software" : "gpu";
const lines = [
  `## GPU check (${r.adapter.software ? "software adapter" : "hardware GPU"}: ${r.adapter.description || r.adapter.vendor})`,
  "",
  `Reproduce: \`${how}\` (${r.date}; Deno ${r.deno}, ${r.cores} cores, WebGPU backend ${r.backend}; result ${r.ok ? "ok" : "FAILED"}).`,
  "",
  "Raw model on onnxruntime-web, one session (WASM with one thread, as the server runs it):",
  "",
  "| model | batch | WebGPU infer/s (ms/run) | WASM infer/s (ms/run) | WebGPU ÷ WASM | max \\|Δ\\| ÷ max \\|y\\| |",
  "|---|---|---|---|---|---|",
  ...Object.entries(r.raw).flatMap(([model, rows]) =>
    rows.map((x) => `| ${model} | ${x.batch} | ${f(x.webgpu.inferPerS)} (${f(x.webgpu.msPerRun, 2)}) | ${f(x.wasm.inferPerS)} (${f(x.wasm.msPerRun, 2)}) | ${f(x.webgpu.inferPerS / x.wasm.inferPerS, 2)} | ${x.relative.toExponential(1)} |`),
  ),
  "",
  "Served by tensorfn on WebGPU over HTTP (raw binary requests of batch 1, dynamic batching up to 32), ratio to the raw WebGPU session at batch 1:",
  "",
  "| model | concurrency | infer/s | p50 ms | p99 ms | errors | ÷ raw WebGPU batch 1 |",
  "|---|---|---|---|---|---|---|",
  ...Object.entries(r.served).flatMap(([model, s]) =>
    s.steps.map((x) => `| ${model} | ${x.concurrency} | ${f(x.inferPerS)} | ${f(x.p50Ms, 2)} | ${f(x.p99Ms, 2)} | ${x.errors} | ${f(x.inferPerS / r.raw[model]![0]!.webgpu.inferPerS, 2)} |`),
  ),
  "",
  ...(r.cuda
    ? [
        `CUDA for onnxruntime-node's provider: libraries on the loader's path: ${r.cuda.libraries.length ? r.cuda.libraries.map((l) => `\`${l}\``).join(", ") : "none"}; toolkits: ${r.cuda.toolkits.join(", ") || "none"}. (resnet on CUDA needs onnxruntime-node's own CUDA provider libraries too, which a run cannot carry.)`,
        "",
      ]
    : []),
  ...(r.nvml
    ? r.nvml.lines.length
      ? ["NVML through the served runtime's `/metrics`:", "", "```", ...r.nvml.lines, "```", ""]
      : [`NVML: ${r.nvml.problem}.`, ""]
    : []),
];
writeResultsSection(`gpu-check-${kind}`, lines.join("\n"));
console.log(`wrote bench/results/gpu-check-${kind}.md`);

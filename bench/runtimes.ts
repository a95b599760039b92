/**
 * `npm run bench:runtimes`: the same served benchmark under Node, Bun and Deno (mlp and resnet at
 * concurrency 1 and 32, binary tensors), as ratios to Node measured in one run; and the raw model
 * on onnxruntime-web (WASM, and WebGPU on whatever adapter Deno finds — llvmpipe here) against
 * onnxruntime-node's CPU provider. Writes its section of bench/RESULTS.md.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runBench } from "./bench-command.ts";
import { writeResultsSection } from "./results-section.ts";
import { spawnServer } from "../test/support/spawn-server.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const log = (line: string) => void process.stderr.write(`${line}\n`);
const repo = mkdtempSync(join(tmpdir(), "tensorfn-runtimes-"));
for (const m of ["mlp", "resnet"]) cpSync(join(ROOT, "functions", m), join(repo, m), { recursive: true });
const serveArgs = ["serve", "--repo", repo, "--port", "0", "--model-control-mode", "none"];
const RUNTIMES: Record<string, [string, string[]]> = {
  node: ["node", [join(ROOT, "adapters/node/bin.mjs"), ...serveArgs]],
  bun: [join(ROOT, "node_modules/.bin/bun"), [join(ROOT, "adapters/bun/main.ts"), ...serveArgs]],
  deno: [join(ROOT, "node_modules/.bin/deno"), ["run", "-A", "--unstable-no-legacy-abort", join(ROOT, "adapters/deno/main.ts"), ...serveArgs]],
};
const STEPS: [string, number, string][] = [
  ["mlp", 1, "3s"],
  ["mlp", 32, "3s"],
  ["resnet", 1, "3s"],
  ["resnet", 32, "5s"],
];

// Two rounds, the runtimes in turn each round, best of two per step: on a small VM one run can
// land on a noisy moment (mlp at concurrency 1 moved ±15 % between runs), and taking turns keeps
// that noise from favouring whichever runtime went first.
const ROUNDS = 2;
const served: Record<string, Record<string, { inferPerS: number; p50Ms: number }>> = {};
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, [command, args]] of Object.entries(RUNTIMES)) {
    log(`runtimes: served under ${name} (round ${round} of ${ROUNDS})`);
    const server = await spawnServer(command, args, { timeoutMs: 90_000, cwd: ROOT });
    served[name] ??= {};
    try {
      for (const [model, concurrency, duration] of STEPS) {
        let out = "";
        await runBench([server.url, "--model", model, "--concurrency", String(concurrency), "--binary", "--warmup", "1s", "--duration", duration, "--json"], {
          stdout: async (t) => void (out += t),
          stderr: () => {},
        });
        const step = JSON.parse(out).steps[0];
        const key = `${model}@${concurrency}`;
        const best = served[name][key];
        if (!best || step.inferPerS > best.inferPerS) served[name][key] = { inferPerS: step.inferPerS, p50Ms: step.latencyMs?.p50 ?? NaN };
      }
    } finally {
      await server.stop();
    }
  }
}

log("runtimes: raw providers");
/** Runs a bench/runtimes script under `runtime` (a command line) and parses the JSON of its last output line. */
function scriptResult<T>(runtime: string[], script: string, args: string[]): T {
  const out = execFileSync(runtime[0]!, [...runtime.slice(1), join(ROOT, "bench/runtimes", script), ...args], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out.trim().split("\n").at(-1)!) as T;
}
const raw = (runtime: string[], pkg: string, provider: string, model: string, dims: string, batch: number) =>
  scriptResult<{ inferPerS: number; msPerRun: number }>(runtime, "raw-providers.ts", [pkg, provider, join(ROOT, "functions", model, "1/model.onnx"), dims, String(batch), "3000"]);
const nodeTsx = [join(ROOT, "node_modules/.bin/tsx")];
const deno = [join(ROOT, "node_modules/.bin/deno"), "run", "-A"];
const providers: Record<string, Record<string, { inferPerS: number; msPerRun: number }>> = {};
for (const [model, dims] of [["mlp", "512"], ["resnet", "3,224,224"]] as const) {
  providers[model] = {
    "onnxruntime-node cpu": raw(nodeTsx, "node", "cpu", model, dims, 1),
    "onnxruntime-web wasm (1 thread)": raw(nodeTsx, "web", "wasm", model, dims, 1),
    "onnxruntime-web webgpu (Deno, llvmpipe)": raw(deno, "web", "webgpu", model, dims, 1),
  };
}

log("runtimes: hops");
const hopsOf = (runtime: string[]) =>
  scriptResult<{ runtime: string; roundTripUs: number; mlpMainUs: number; mlpWorkerUs: number; timeout500usUs: number; timeout2msUs: number }>(runtime, "hops.ts", [join(ROOT, "functions/mlp/1/model.onnx")]);
const hops = [hopsOf(nodeTsx), hopsOf([join(ROOT, "node_modules/.bin/bun")]), hopsOf(deno)];

const results = { date: new Date().toISOString(), served, providers, hops };
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "runtimes.json"), JSON.stringify(results, null, 2));
const f = (v: number, d = 1) => v.toFixed(d);
/** Which (runtime, step) pairs are more than 10 % slower than Node. */
function verdict(): string {
  const misses = (["bun", "deno"] as const).flatMap((r) =>
    STEPS.map(([m, c]) => `${m}@${c}`).filter((key) => served[r]![key]!.inferPerS < 0.9 * served.node![key]!.inferPerS).map((key) => `${r} ${key} (${f(served[r]![key]!.inferPerS / served.node![key]!.inferPerS, 2)})`),
  );
  return misses.length === 0 ? "Met in every row of this run." : `Missed in this run: ${misses.join(", ")}.`;
}
const lines = [
  "## Runtimes and providers",
  "",
  `Reproduce: \`npm run bench:runtimes\` (${results.date}). One tensorfn server per runtime (\`--model-control-mode none\`), each measured in turn by the same load generator (binary tensors, 1 s warm-up + 3 s, resnet at 32: 5 s), two rounds taking turns, best of the two per step.`,
  "",
  "| model @ concurrency | Node infer/s | Bun infer/s (÷ Node) | Deno infer/s (÷ Node) |",
  "|---|---|---|---|",
  ...STEPS.map(([m, c]) => {
    const key = `${m}@${c}`;
    const n = served.node![key]!.inferPerS;
    return `| ${key} | ${f(n)} | ${f(served.bun![key]!.inferPerS)} (${f(served.bun![key]!.inferPerS / n, 2)}) | ${f(served.deno![key]!.inferPerS)} (${f(served.deno![key]!.inferPerS / n, 2)}) |`;
  }),
  "",
  "Raw model, batch 1, one session, 3 s (ratios to onnxruntime-node's CPU provider):",
  "",
  "| model | provider | infer/s | ms/run | ÷ onnxruntime-node cpu |",
  "|---|---|---|---|---|",
  ...Object.entries(providers).flatMap(([model, byProvider]) =>
    Object.entries(byProvider).map(([p, r]) => `| ${model} | ${p} | ${f(r.inferPerS)} | ${f(r.msPerRun, 2)} | ${f(r.inferPerS / byProvider["onnxruntime-node cpu"]!.inferPerS, 2)} |`),
  ),
  "",
  `Target: Bun and Deno within 10 % of Node, read as "no more than 10 % slower" (they may be faster). ${verdict()}`,
  "",
  "The pieces of a request at concurrency 1, per runtime (`bench/runtimes/hops.ts`, p50 or mean over thousands of calls): a worker round trip with a 2 kB buffer, onnxruntime-node's mlp run in the main thread and in a worker (tensorfn's session options), and how long `setTimeout(0.5 ms)` and `setTimeout(2 ms)` really take:",
  "",
  "| runtime | worker round trip µs | mlp run µs (main / worker) | setTimeout(0.5 ms) µs | setTimeout(2 ms) µs |",
  "|---|---|---|---|---|",
  ...hops.map((h) => `| ${h.runtime} | ${f(h.roundTripUs)} | ${f(h.mlpMainUs)} / ${f(h.mlpWorkerUs)} | ${f(h.timeout500usUs, 0)} | ${f(h.timeout2msUs, 0)} |`),
  "",
  "Why they differ: Bun.serve and Deno.serve parse HTTP in native code, while Node goes through node:http and @hono/node-server's Request/Response conversion, so where the HTTP layer dominates (mlp at concurrency 32, about 0.3 ms of model time per batch) Bun and Deno serve more. Where the model dominates (resnet) the three are within noise of each other: the same onnxruntime-node sessions run in worker threads under all three. At concurrency 1 a request's time is one HTTP round trip, two thread hops (server → worker → server) and one model run, all under a millisecond for mlp, and single runs on this 2-core VM moved by ±15 % from one run to the next; hence the two rounds. The gap that stays is Deno at mlp@1, and the table above locates it: not the model run (the same under all three) nor the worker hop (at most about 0.1 ms apart), but Deno's timers, which fire about 1 ms later than asked. The `mlp` function batches with `max_queue_delay_microseconds: 500`, so at concurrency 1 every request waits out that delay on a timer before it runs alone: about 1.1 ms under Node and Bun (their timers round up to the millisecond), about 2.1 ms under Deno. Functions without a queue delay do not pay it, nor does load that fills batches before the delay ends (mlp@32 above).",
  "",
  "WebGPU here runs on Mesa's software rasteriser (llvmpipe), so its numbers say that the path works, not how fast a GPU is; `bench/gpu-check.sh` measures it on a real GPU (see the GPU check section).",
  "",
];
writeResultsSection("runtimes", lines.join("\n"));
log("runtimes: wrote bench/RESULTS.md");
process.exit(0);

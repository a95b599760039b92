/**
 * The GPU check's program, run by `bench/suites/gpu-check.sh` under Deno on a host without Node or
 * node_modules (the script ships it bundled into one file, beside onnxruntime-web's WebAssembly).
 * It reports the WebGPU adapter Deno finds, builds the example models from their TypeScript
 * builders, measures them raw on onnxruntime-web's WebGPU and WASM providers (checking that both
 * agree), then serves them with tensorfn on WebGPU over real HTTP at concurrency 1 and 32.
 *
 * `deno run -A gpu-check.js [--models resnet,mlp] [--seconds 3] [--out result.json]`; exits 0 when
 * WebGPU served every model and agreed with WASM, 1 when not, 3 when no adapter was found.
 */
import * as ort from "onnxruntime-web/webgpu";
import { buildMlp } from "../../../models/mlp.ts";
import { buildResnet } from "../../../models/resnet.ts";
import { createRuntime } from "../../../runtime/mod.ts";
import { createIdentityBackend, createOnnxRuntimeBackend, createOnnxRuntimeWebBackend } from "../../../runtime/backends/mod.ts";
import { createDenoPlatform } from "../../../adapters/deno/platform.ts";

const MODELS: Record<string, { build: () => Uint8Array; dims: number[]; batch: number }> = {
  resnet: { build: buildResnet, dims: [3, 224, 224], batch: 8 },
  mlp: { build: buildMlp, dims: [512], batch: 32 },
};

interface Args {
  models: string[];
  seconds: number;
  out?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { models: ["resnet", "mlp"], seconds: 3 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--models" && value) args.models = value.split(",");
    else if (flag === "--seconds" && value) args.seconds = Number(value);
    else if (flag === "--out" && value) args.out = value;
    else throw new Error(`unknown argument '${flag}' (expected --models a,b --seconds N --out file)`);
    i++;
  }
  for (const m of args.models) if (!MODELS[m]) throw new Error(`--models: unknown model '${m}' (known: ${Object.keys(MODELS).join(", ")})`);
  return args;
}

const say = (line: string) => console.log(line);
const round = (v: number, digits = 2) => Number(v.toFixed(digits));

interface GpuAdapterLike {
  info?: { vendor?: string; architecture?: string; device?: string; description?: string; isFallbackAdapter?: boolean };
  isFallbackAdapter?: boolean;
  limits?: { maxBufferSize?: number; maxStorageBufferBindingSize?: number };
}

/** What WebGPU adapter Deno finds, if any (it is Vulkan underneath on Linux). */
async function adapterInfo() {
  const gpu = (navigator as { gpu?: { requestAdapter(o?: unknown): Promise<GpuAdapterLike | null> } }).gpu;
  if (!gpu) return { found: false, reason: "navigator.gpu is missing" };
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" }).catch((e: Error) => {
    say(`requestAdapter failed: ${e.message}`);
    return null;
  });
  if (!adapter) return { found: false, reason: "navigator.gpu.requestAdapter() returned null (no Vulkan driver or loader?)" };
  const info = adapter.info ?? {};
  return {
    found: true,
    vendor: info.vendor ?? "",
    architecture: info.architecture ?? "",
    device: info.device ?? "",
    description: info.description ?? "",
    software: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter) || /llvmpipe|swiftshader|lavapipe/i.test(`${info.description} ${info.device}`),
    maxBufferSizeMiB: adapter.limits?.maxBufferSize ? Math.round(adapter.limits.maxBufferSize / 2 ** 20) : undefined,
  };
}

/** Deterministic input values, so WebGPU and WASM see the same numbers. */
function inputData(dims: number[], batch: number): Float32Array<ArrayBuffer> {
  const data = new Float32Array([batch, ...dims].reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = ((i * 7919) % 1000) / 1000 - 0.5;
  return data;
}

/** Runs one session for `seconds` after warming up; returns throughput and the first output. */
async function rawRun(bytes: Uint8Array, provider: "webgpu" | "wasm", dims: number[], batch: number, seconds: number) {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: [provider] });
  try {
    const feeds = { [session.inputNames[0]!]: new ort.Tensor("float32", inputData(dims, batch), [batch, ...dims]) };
    const first = (await session.run(feeds))[session.outputNames[0]!]!.data as Float32Array;
    for (let i = 0; i < 2; i++) await session.run(feeds);
    let runs = 0;
    const started = performance.now();
    while (performance.now() - started < seconds * 1000 || runs < 2) {
      await session.run(feeds);
      runs++;
    }
    const elapsed = (performance.now() - started) / 1000;
    return { provider, batch, runs, inferPerS: round((runs * batch) / elapsed, 1), msPerRun: round((elapsed * 1000) / runs), first: Float32Array.from(first) };
  } finally {
    await session.release();
  }
}

/** Largest absolute difference between two outputs, and the same relative to the largest magnitude. */
function agreement(a: Float32Array, b: Float32Array) {
  let maxAbs = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(a[i]! - b[i]!));
    scale = Math.max(scale, Math.abs(a[i]!));
  }
  return { maxAbsDiff: maxAbs, relative: scale > 0 ? maxAbs / scale : maxAbs };
}

/** A closed-loop load of `concurrency` clients sending raw binary requests for `seconds`. */
async function load(url: string, body: Uint8Array<ArrayBuffer>, concurrency: number, seconds: number) {
  const request = () =>
    fetch(url, { method: "POST", body, headers: { "inference-header-content-length": "0", "content-type": "application/octet-stream" } }).then(async (res) => {
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    });
  const until = (ms: number) => performance.now() + ms;
  // Warm-up: every client once, then a second of load.
  await Promise.all(Array.from({ length: concurrency }, request));
  let end = until(1000);
  await Promise.all(Array.from({ length: concurrency }, async () => { while (performance.now() < end) await request(); }));
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  end = until(seconds * 1000);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        try {
          await request();
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN);
  return { concurrency, requests: latencies.length, errors, inferPerS: round(latencies.length / elapsed, 1), p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

/** Serves the models with tensorfn on WebGPU (no workers: the WebGPU build runs in this thread) and loads them over HTTP. */
async function served(models: Record<string, Uint8Array>, seconds: number) {
  const repository = await Deno.makeTempDir({ prefix: "tensorfn-gpu-check-" });
  for (const [name, bytes] of Object.entries(models)) {
    await Deno.mkdir(`${repository}/${name}/1`, { recursive: true });
    await Deno.writeFile(`${repository}/${name}/1/model.onnx`, bytes);
    const maxBatch = Math.max(32, MODELS[name]!.batch);
    await Deno.writeTextFile(`${repository}/${name}/function.yaml`, `max_batch_size: ${maxBatch}\ndynamic_batching: { max_queue_delay_microseconds: 2000 }\naccelerator: webgpu\n`);
  }
  const { startWorker: _inThisThread, ...platform } = createDenoPlatform();
  const web = createOnnxRuntimeWebBackend();
  const runtime = await createRuntime({
    platform,
    repository,
    controlMode: "none",
    backends: { onnxruntime: createOnnxRuntimeBackend({ web }), identity: createIdentityBackend() },
  });
  const server = await new Promise<{ url: string; shutdown: () => Promise<void> }>((resolve) => {
    const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => resolve({ url: `http://127.0.0.1:${port}`, shutdown: () => s.shutdown() }) }, runtime.fetch);
  });
  try {
    const results: Record<string, unknown> = {};
    // NVML through the native addon, as a scrape of this server reads it.
    const scrape = await (await fetch(`${server.url}/metrics`)).text();
    const gpuLines = scrape.split("\n").filter((line) => /^(nv_gpu_|nv_energy_|tensorfn_gpu_)/.test(line));
    const telemetry = platform.readGpus?.();
    say(gpuLines.length > 0 ? `nvml through /metrics:\n  ${gpuLines.join("\n  ")}` : `nvml: ${telemetry?.problem ?? "no readGpus on this platform"}`);
    results.nvml = { lines: gpuLines, problem: telemetry?.problem };
    for (const name of Object.keys(models)) {
      const config = await (await fetch(`${server.url}/v2/models/${name}/config`)).json();
      const provider = config.parameters?.execution_provider?.string_value;
      const fallback = config.parameters?.execution_provider_fallback?.string_value;
      say(`served ${name}: execution_provider ${provider}${fallback ? ` (fell back: ${fallback})` : ""}`);
      const body = new Uint8Array(inputData(MODELS[name]!.dims, 1).buffer);
      const steps = [];
      for (const concurrency of [1, 32]) {
        const step = await load(`${server.url}/v2/models/${name}/infer`, body, concurrency, seconds);
        say(`served ${name} @${concurrency}: ${step.inferPerS} infer/s, p50 ${step.p50Ms} ms, p99 ${step.p99Ms} ms, errors ${step.errors}`);
        steps.push(step);
      }
      const stats = (await (await fetch(`${server.url}/v2/models/${name}/stats`)).json()).model_stats[0];
      results[name] = { provider, fallback, steps, avgBatch: round(stats.inference_count / Math.max(1, stats.execution_count)) };
    }
    return results;
  } finally {
    await server.shutdown();
    await runtime.stop();
    await Deno.remove(repository, { recursive: true });
  }
}

const args = parseArgs(Deno.args);
// One thread per session, as the server runs it (the WASM build's threads would need worker files this bundle does not ship).
ort.env.wasm.numThreads = 1;
ort.env.logLevel = "error";
say(`deno ${Deno.version.deno} (v8 ${Deno.version.v8}), ${navigator.hardwareConcurrency} cores, onnxruntime-web ${ort.env.versions.web}`);
const adapter = await adapterInfo();
say(`webgpu adapter: ${JSON.stringify(adapter)}`);

// DENO_WEBGPU_BACKEND picks wgpu's backends (vulkan, gl…); unset means any. The script asks for Vulkan first.
const backend = Deno.env.get("DENO_WEBGPU_BACKEND") ?? "any";
const report: Record<string, unknown> = {
  date: new Date().toISOString(),
  deno: Deno.version.deno,
  cores: navigator.hardwareConcurrency,
  backend,
  adapter,
  // What gpu-check.sh found for onnxruntime-node's CUDA provider (run on CUDA needs its provider libraries too, not carried).
  cuda: { libraries: (Deno.env.get("GPU_CHECK_CUDA_LIBS") ?? "").trim().split(/\s+/).filter(Boolean), toolkits: (Deno.env.get("GPU_CHECK_CUDA_DIRS") ?? "").trim().split(/\s+/).filter(Boolean) },
  raw: {},
  served: {},
};
if (!adapter.found) {
  say(`gpu-check: no WebGPU adapter on backend '${backend}'`);
  Deno.exit(3);
}
const built: Record<string, Uint8Array> = {};
for (const name of args.models) {
  const t = performance.now();
  built[name] = MODELS[name]!.build();
  say(`built ${name}: ${(built[name].byteLength / 2 ** 20).toFixed(1)} MiB in ${Math.round(performance.now() - t)} ms`);
}

{
  for (const name of args.models) {
    const { dims, batch } = MODELS[name]!;
    const rows = [];
    for (const b of [1, batch]) {
      const gpu = await rawRun(built[name]!, "webgpu", dims, b, args.seconds);
      const cpu = await rawRun(built[name]!, "wasm", dims, b, args.seconds);
      const agree = agreement(cpu.first, gpu.first);
      say(`raw ${name} batch ${b}: webgpu ${gpu.inferPerS} infer/s (${gpu.msPerRun} ms/run), wasm ${cpu.inferPerS} infer/s (${cpu.msPerRun} ms/run), webgpu ÷ wasm ${round(gpu.inferPerS / cpu.inferPerS)}, max |Δ| ${agree.maxAbsDiff.toExponential(2)} (${agree.relative.toExponential(2)} of max |y|)`);
      rows.push({ batch: b, webgpu: { inferPerS: gpu.inferPerS, msPerRun: gpu.msPerRun }, wasm: { inferPerS: cpu.inferPerS, msPerRun: cpu.msPerRun }, ...agree });
    }
    (report.raw as Record<string, unknown>)[name] = rows;
  }
  const { nvml, ...servedModels } = await served(built, args.seconds);
  report.served = servedModels;
  report.nvml = nvml;
}

const agreeing = Object.values(report.raw as Record<string, { relative: number }[]>).flat().every((r) => r.relative < 1e-3);
const onGpu = Object.values(report.served as Record<string, { provider: string }>).every((s) => s.provider === "webgpu");
report.ok = agreeing && onGpu;
say(`GPU-CHECK ${JSON.stringify(report)}`);
if (args.out) await Deno.writeTextFile(args.out, JSON.stringify(report, null, 2));
say(report.ok ? `gpu-check: ok on ${backend} (${adapter.software ? "software adapter: the path works; the speed is not a GPU's" : "hardware adapter"})` : "gpu-check: FAILED");
Deno.exit(report.ok ? 0 : 1);

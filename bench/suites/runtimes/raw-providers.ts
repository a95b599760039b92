// Raw single-session throughput of one model on one onnxruntime package and provider, printed as
// JSON. Runs under Node (onnxruntime-node cpu, onnxruntime-web wasm) and Deno (onnxruntime-web
// webgpu): `<runtime> bench/suites/runtimes/raw-providers.ts <package> <provider> <model.onnx> <dims> <batch> <ms>`.
const [pkg, provider, path, dimsText, batchText, msText] = (globalThis as { Deno?: { args: string[] } }).Deno?.args ?? process.argv.slice(2);
const ort = pkg === "node" ? await import("onnxruntime-node") : provider === "webgpu" ? await import("onnxruntime-web/webgpu") : await import("onnxruntime-web");
const { readFile } = await import("node:fs/promises");
const { availableParallelism } = await import("node:os");
// deno-lint-ignore no-explicit-any
const env = (ort as any).env;
if (pkg !== "node") env.wasm.numThreads = 1;
const options = pkg === "node" ? { executionProviders: [provider!], intraOpNumThreads: availableParallelism(), extra: { session: { intra_op: { allow_spinning: "0" } } } } : { executionProviders: [provider!] };
const session = await ort.InferenceSession.create(new Uint8Array(await readFile(path!)), options as never);
const batch = Number(batchText);
const dims = [batch, ...dimsText!.split(",").map(Number)];
const input = new ort.Tensor("float32", new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.1), dims);
const feeds = { [session.inputNames[0]!]: input };
for (let i = 0; i < 3; i++) await session.run(feeds);
let runs = 0;
const started = performance.now();
while (performance.now() - started < Number(msText) || runs < 3) {
  await session.run(feeds);
  runs++;
}
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ pkg, provider, batch, runs, inferPerS: (runs * batch) / seconds, msPerRun: (seconds * 1000) / runs }));

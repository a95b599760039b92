// Issue 11's target 6 (a wake from PARKED): what creating a session costs after a park
// (malloc_trim gave the memory back) from ONNX bytes, from ORT-format bytes, from ORT-format bytes
// read in place (`session.use_ort_model_bytes_directly`: what a tensorfn wake does since stop 25),
// and from ORT-format bytes whose weights are used in place too
// (`session.use_ort_model_bytes_for_initializers`: no copy of the weights; with and without
// prepacking). The ORT-format file is
// what onnxruntime itself writes when a session is created with `optimizedModelFilePath` and
// `session.save_model_format: ORT` (optimised for this machine, so made here, not shipped).
// Prints create, first run, minor page faults and the median of the later runs (15; 5 for a batch); needs the native addon.
// Usage: tsx bench/studies/ort-format-wake.ts [mlp|resnet] [rounds=3] [batch=1]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { loadNative } from "../../native/index.ts";

const native = loadNative();
if (!native) throw new Error("needs the native addon (native/): it trims the memory a park gives back");
const model = process.argv[2] ?? "resnet";
const rounds = Number(process.argv[3] ?? 3);
const batch = Number(process.argv[4] ?? 1);
ort.env.logLevel = "error";
const session = { intra_op: { allow_spinning: "0" } };
const options: ort.InferenceSession.SessionOptions = { executionProviders: ["cpu"], graphOptimizationLevel: "all", extra: { session } };
const dir = mkdtempSync(join(tmpdir(), "ort-format-"));
const ortPath = join(dir, `${model}.ort`);
const onnx = new Uint8Array(readFileSync(join("functions", model, "1", "model.onnx")));
await (await ort.InferenceSession.create(onnx, { ...options, optimizedModelFilePath: ortPath, extra: { session: { ...session, save_model_format: "ORT" } } })).release();
const ortBytes = new Uint8Array(readFileSync(ortPath));
rmSync(dir, { recursive: true, force: true });
const directly = { ...options, extra: { session: { ...session, use_ort_model_bytes_directly: "1" } } };
const inPlace = { ...options, extra: { session: { ...session, use_ort_model_bytes_directly: "1", use_ort_model_bytes_for_initializers: "1" } } };
const unpacked = { ...options, extra: { session: { ...session, use_ort_model_bytes_directly: "1", use_ort_model_bytes_for_initializers: "1", disable_prepacking: "1" } } };

const shape = model === "resnet" ? [batch, 3, 224, 224] : [batch, 512];
const feeds = () => ({ input: new ort.Tensor("float32", new Float32Array(shape.reduce((a, b) => a * b, 1)), shape) });
const faults = () => Number(readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")[7]);

async function wake(label: string, bytes: Uint8Array, opts: ort.InferenceSession.SessionOptions) {
  native!.trimMemory(); // as after a park
  const f0 = faults();
  const t0 = performance.now();
  const s = await ort.InferenceSession.create(bytes, opts);
  const t1 = performance.now();
  await s.run(feeds());
  const t2 = performance.now();
  const f1 = faults();
  const later: number[] = [];
  for (let i = 0; i < (batch > 1 ? 5 : 15); i++) {
    const start = performance.now();
    await s.run(feeds());
    later.push(performance.now() - start);
  }
  later.sort((a, b) => a - b);
  const median = later[Math.floor(later.length / 2)]!;
  console.log(`${label.padEnd(26)} create ${(t1 - t0).toFixed(1).padStart(6)} ms  first run ${(t2 - t1).toFixed(1).padStart(5)} ms  faults ${String(f1 - f0).padStart(6)}  later runs ${median.toFixed(2)} ms`);
  await s.release();
}

console.log(`${model} at batch ${batch}: ONNX ${onnx.byteLength} bytes, ORT format ${ortBytes.byteLength} bytes`);
for (let r = 0; r < rounds; r++) {
  await wake("ONNX bytes", onnx, options);
  await wake("ORT-format bytes", ortBytes, options);
  await wake("ORT format, read in place", ortBytes, directly);
  await wake("ORT, weights in place", ortBytes, inPlace);
  await wake("  ... not prepacked", ortBytes, unpacked);
}

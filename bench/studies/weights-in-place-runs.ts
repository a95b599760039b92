// Whether a model runs as fast with its weights used where they lie in its kept ORT-format bytes
// (`parameters.weights_in_place`, onnxruntime's `session.use_ort_model_bytes_for_initializers`) as
// with them copied out (what a wake does by default): one session copied and three in place, the
// kept bytes in shared memory read through the native addon's plain view as a wake reads them, at
// three positions of the bytes (0, 16, 64) in case alignment mattered; all alive in this thread, their
// runs interleaved (the order turned each round), median and fastest of each after one untimed run.
// Usage: tsx bench/studies/weights-in-place-runs.ts [mlp|resnet] [batch=1] [rounds=30]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { loadNative } from "../../native/index.ts";

const native = loadNative();
if (!native) throw new Error("needs the native addon (native/): a wake reads the kept bytes through its plain view");
const model = process.argv[2] ?? "resnet";
const batch = Number(process.argv[3] ?? 1);
const rounds = Number(process.argv[4] ?? 30);
ort.env.logLevel = "error";
const session = { intra_op: { allow_spinning: "0" } };
const options: ort.InferenceSession.SessionOptions = { executionProviders: ["cpu"], graphOptimizationLevel: "all", intraOpNumThreads: 2, extra: { session } };
const onnx = new Uint8Array(readFileSync(join("functions", model, "1", "model.onnx")));
const dir = mkdtempSync(join(tmpdir(), "weights-in-place-"));
const path = join(dir, "model.ort");
await (await ort.InferenceSession.create(onnx, { ...options, optimizedModelFilePath: path, extra: { session: { ...session, save_model_format: "ORT" } } })).release();
const form = new Uint8Array(readFileSync(path));
rmSync(dir, { recursive: true, force: true });

/** The form in shared memory at `offset`, as a plain view (what a wake hands onnxruntime). */
function kept(offset: number): Uint8Array {
  const shared = new Uint8Array(new SharedArrayBuffer(form.byteLength + 4096)).subarray(offset, offset + form.byteLength);
  shared.set(form);
  return new Uint8Array(native!.plainView(shared)!);
}
const directly = { use_ort_model_bytes_directly: "1" };
const sessions: [string, ort.InferenceSession][] = [["copied", await ort.InferenceSession.create(kept(0), { ...options, extra: { session: { ...session, ...directly } } })]];
for (const offset of [0, 16, 64]) {
  const inPlace = { ...options, extra: { session: { ...session, ...directly, use_ort_model_bytes_for_initializers: "1" } } };
  sessions.push([`in place @${offset}`, await ort.InferenceSession.create(kept(offset), inPlace)]);
}
const shape = model === "resnet" ? [batch, 3, 224, 224] : [batch, 512];
const feeds = () => ({ input: new ort.Tensor("float32", new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(0.1), shape) });
for (const [, s] of sessions) await s.run(feeds());
const times = sessions.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < sessions.length; k++) {
    const i = (k + r) % sessions.length;
    const f = feeds();
    const t0 = performance.now();
    await sessions[i]![1].run(f);
    times[i]!.push(performance.now() - t0);
  }
}
const median = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)]!;
console.log(`${model} at batch ${batch}, ${rounds} runs each (median / fastest ms):`);
for (const [i, [label]] of sessions.entries()) console.log(`  ${label.padEnd(12)} ${median(times[i]!).toFixed(2)} / ${Math.min(...times[i]!).toFixed(2)}`);
for (const [, s] of sessions) await s.release();

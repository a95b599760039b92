// A wake's session with and without onnxruntime's prepacking (issue 11, target 6): what a wake from
// PARKED creates from the kept ORT-format bytes (in shared memory, read through the native addon's
// plain view), each after a malloc_trim as a park leaves the process: weights copied out (the
// default), in place (`parameters.weights_in_place`), and in place with `session.disable_prepacking`.
// Prints create time, create + first run and page faults (median of 5, the variants taking turns), then
// each session's runs at a few batch sizes (median), then whether one row's answer has the same bits in
// every session and at every batch size as the copied session's at batch 1 (else the largest relative
// difference). The third variant is what `parameters.wake_unpacked` answers a wake from first
// (docs/notes/2026-12-lifecycle-studies.md, "A wake without prepacking").
// Usage: tsx bench/studies/wake-prepack.ts [mlp|resnet]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { loadNative } from "../../native/index.ts";

const native = loadNative();
if (!native) throw new Error("needs the native addon (native/): a wake reads the kept bytes through its plain view");
const model = process.argv[2] ?? "mlp";
ort.env.logLevel = "error";
const session = { intra_op: { allow_spinning: "1", spin_duration_us: "100" } };
const options: ort.InferenceSession.SessionOptions = { executionProviders: ["cpu"], graphOptimizationLevel: "all", extra: { session } };

// The ORT-format form a park keeps.
const dir = mkdtempSync(join(tmpdir(), "wake-prepack-"));
const path = join(dir, "model.ort");
const onnx = new Uint8Array(readFileSync(join("functions", model, "1", "model.onnx")));
await (await ort.InferenceSession.create(onnx, { ...options, optimizedModelFilePath: path, extra: { session: { ...session, save_model_format: "ORT" } } })).release();
const form = new Uint8Array(readFileSync(path));
rmSync(dir, { recursive: true, force: true });

/** The form in shared memory, as a plain view (what a wake hands onnxruntime). */
function kept(): Uint8Array {
  const shared = new Uint8Array(new SharedArrayBuffer(form.byteLength));
  shared.set(form);
  return new Uint8Array(native!.plainView(shared)!);
}
const minorFaults = () => Number(readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")[7]);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

const directly = { use_ort_model_bytes_directly: "1" };
const inPlace = { ...directly, use_ort_model_bytes_for_initializers: "1" };
const variants: Record<string, Record<string, string>> = {
  copied: directly,
  "in place": inPlace,
  "in place, no prepacking": { ...inPlace, disable_prepacking: "1" },
};
const dims = model === "mlp" ? [512] : [3, 224, 224];
const feeds = (batch: number, s: ort.InferenceSession) => ({
  [s.inputNames[0]!]: new ort.Tensor("float32", new Float32Array(batch * dims.reduce((x, y) => x * y)).fill(0.1), [batch, ...dims]),
});

const sessions = new Map<string, ort.InferenceSession>();
const liveBytes: Uint8Array[] = []; // weights in place must outlive their session
const wakes = new Map<string, { create: number[]; first: number[]; faults: number[] }>();
for (let round = 0; round < 5; round++) {
  for (const [name, extra] of Object.entries(variants)) {
    await sessions.get(name)?.release();
    const bytes = kept();
    liveBytes.push(bytes);
    native.trimMemory();
    const faults = minorFaults();
    const start = performance.now();
    const s = await ort.InferenceSession.create(bytes, { ...options, extra: { session: { ...session, ...extra } } });
    const created = performance.now();
    await s.run(feeds(1, s));
    const w = wakes.get(name) ?? { create: [], first: [], faults: [] };
    w.create.push(created - start);
    w.first.push(performance.now() - start);
    w.faults.push(minorFaults() - faults);
    wakes.set(name, w);
    sessions.set(name, s);
  }
}
for (const [name, w] of wakes) console.log(`${name}: create ${median(w.create).toFixed(1)} ms, create + first run ${median(w.first).toFixed(1)} ms, ${median(w.faults)} page faults`);

for (const batch of model === "mlp" ? [1, 8, 64] : [1, 8]) {
  const times = new Map<string, number[]>();
  for (let round = 0; round < (model === "mlp" ? 200 : 10); round++) {
    for (const [name, s] of sessions) {
      const input = feeds(batch, s);
      const start = performance.now();
      await s.run(input);
      times.set(name, [...(times.get(name) ?? []), performance.now() - start]);
    }
  }
  console.log(`batch ${batch}: ${[...times].map(([name, t]) => `${name} ${median(t).toFixed(3)} ms`).join(", ")}`);
}

// One row (a cosine) repeated `batch` times: its answer, row 0.
const row = Float32Array.from({ length: dims.reduce((x, y) => x * y) }, (_, i) => Math.cos(i));
async function answer(s: ort.InferenceSession, batch: number): Promise<Float32Array> {
  const data = new Float32Array(batch * row.length);
  for (let k = 0; k < batch; k++) data.set(row, k * row.length);
  const out = Object.values(await s.run({ [s.inputNames[0]!]: new ort.Tensor("float32", data, [batch, ...dims]) }))[0]!;
  return (out.data as Float32Array).slice(0, (out.data as Float32Array).length / batch);
}
const reference = await answer(sessions.get("copied")!, 1);
for (const [name, s] of sessions) {
  const verdicts: string[] = [];
  for (const batch of model === "mlp" ? [1, 2, 3, 8, 32] : [1, 2]) {
    const got = await answer(s, batch);
    const worst = Math.max(...Array.from(got, (v, i) => Math.abs(v - reference[i]!) / Math.max(Math.abs(reference[i]!), 1e-30)));
    verdicts.push(`batch ${batch} ${worst === 0 ? "same bits" : `differs by up to ${worst.toExponential(1)}`}`);
  }
  console.log(`${name} against copied at batch 1: ${verdicts.join(", ")}`);
}

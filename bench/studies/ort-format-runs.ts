// Whether a session made from onnxruntime's ORT-format form, read in place (what a wake from PARKED
// creates since issue 11's stop 25), runs resnet as fast as one made from the ONNX file: both sessions
// alive side by side, their runs interleaved, the median of each (after one untimed run).
// Usage: tsx bench/studies/ort-format-runs.ts [batch=32] [runs=8]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
const batch = Number(process.argv[2] ?? 32);
const rounds = Number(process.argv[3] ?? 8);
ort.env.logLevel = "error";
const session = { intra_op: { allow_spinning: "0" } };
const options: ort.InferenceSession.SessionOptions = { executionProviders: ["cpu"], graphOptimizationLevel: "all", intraOpNumThreads: 2, extra: { session } };
const onnx = new Uint8Array(readFileSync("functions/resnet/1/model.onnx"));
const dir = mkdtempSync(join(tmpdir(), "ort-format-runs-"));
const path = join(dir, "model.ort");
await (await ort.InferenceSession.create(onnx, { ...options, optimizedModelFilePath: path, extra: { session: { ...session, save_model_format: "ORT" } } })).release();
const form = new Uint8Array(readFileSync(path));
rmSync(dir, { recursive: true, force: true });
const a = await ort.InferenceSession.create(onnx, options);
const b = await ort.InferenceSession.create(form, { ...options, extra: { session: { ...session, use_ort_model_bytes_directly: "1" } } });
const feeds = () => ({ input: new ort.Tensor("float32", new Float32Array(batch * 3 * 224 * 224).fill(0.1), [batch, 3, 224, 224]) });
await a.run(feeds()); await b.run(feeds());
const ta: number[] = [], tb: number[] = [];
for (let r = 0; r < rounds; r++) for (const [s, t] of r % 2 ? [[b, tb], [a, ta]] as const : [[a, ta], [b, tb]] as const) { const f = feeds(); const t0 = performance.now(); await s.run(f); t.push(performance.now() - t0); }
const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)]!.toFixed(1);
console.log(`batch ${batch}: ONNX median ${med(ta)} ms, ORT read in place median ${med(tb)} ms (${rounds} each, interleaved)`);

// Session create in a worker from bytes kept in host memory (the wake from PARKED): the bytes
// structured-cloned (a plain Uint8Array, as parked bytes are today) against shared with the worker
// (a Uint8Array over a SharedArrayBuffer, which the worker copies once for ORT). Alternating, 12
// rounds; prints the median load time and the time the main thread is blocked in postMessage.
// `npx tsx bench/suites/runtimes/worker-load.ts`
import { readFileSync } from "node:fs";
import { createNodePlatform } from "../../../adapters/node/platform.ts";
import { WorkerConnection } from "../../../runtime/backends/_worker-connection.ts";
const platform = createNodePlatform();
const module = new URL("../../../runtime/backends/onnxruntime-worker.ts", import.meta.url);
const plain = new Uint8Array(readFileSync("functions/resnet/1/model.onnx"));
const sab = new Uint8Array(new SharedArrayBuffer(plain.byteLength)); sab.set(plain);
const c = new WorkerConnection(platform.startWorker!(module));
const settings = { provider: "cpu", intraOpThreads: 2 };
await c.load(plain, settings);
const t: Record<string, number[]> = { plain: [], shared: [] };
for (let r = 0; r < 12; r++) for (const [k, b] of r % 2 ? [["plain", plain], ["shared", sab]] as const : [["shared", sab], ["plain", plain]] as const) {
  await c.release(); const t0 = performance.now(); const p = c.load(b, settings); const sync = performance.now() - t0; await p; t[k]!.push(performance.now() - t0); (t[k + " main"] ??= []).push(sync);
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!; console.log(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, `median ${med(v).toFixed(1)} ms, min ${Math.min(...v).toFixed(1)}, max ${Math.max(...v).toFixed(1)}`])));
await c.close();

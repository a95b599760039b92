// One ORT execution through tensorfn's WorkerConnection, the hop each worker-placed batch pays:
// postMessage (structured clone + transfer) against the shared-memory channel, with and without a
// worker-side spin, interleaved in rounds in one process so machine noise hits all alike. Prints
// per variant the median over rounds of the p50 µs per run and of the process CPU µs per run (all
// threads), and the spread (min–max of the round p50s).
// `npx tsx bench/suites/runtimes/worker-channel.ts [rounds] [runs]` (Node), `npx bun …`, `npx deno run -A …`.
import { readFileSync } from "node:fs";
import process from "node:process";
import { createNodePlatform } from "../../../adapters/node/platform.ts";
import { WorkerConnection } from "../../../runtime/backends/_worker-connection.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";

const args = (globalThis as { Deno?: { args: string[] } }).Deno?.args ?? process.argv.slice(2);
const rounds = Number(args[0] ?? 5);
const runs = Number(args[1] ?? 1000);
const platform = (globalThis as { Deno?: unknown }).Deno
  ? (await import("../../../adapters/deno/platform.ts")).createDenoPlatform()
  : createNodePlatform();
const module = new URL("../../../runtime/backends/onnxruntime-worker.ts", import.meta.url);
const settings = { provider: "cpu", intraOpThreads: platform.cpuCount(), graphLevel: 0 };

const models: Record<string, { bytes: Uint8Array; feeds: () => Record<string, Tensor> }> = {
  simple: {
    bytes: new Uint8Array(readFileSync("functions/simple/1/model.onnx")),
    feeds: () => ({
      INPUT0: { datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(1) },
      INPUT1: { datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(2) },
    }),
  },
  mlp: {
    bytes: new Uint8Array(readFileSync("functions/mlp/1/model.onnx")),
    feeds: () => ({ input: { datatype: "FP32", shape: [1, 512], data: new Float32Array(512).fill(0.1) } }),
  },
};
const variants = [
  { name: "postMessage", options: { sharedChannel: false } },
  { name: "shared, no spin", options: { sharedChannel: true, spinMicros: 0 } },
  { name: "shared, spin 50 µs", options: { sharedChannel: true, spinMicros: 50 } },
];

const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const results: Record<string, { p50: number[]; cpu: number[] }> = {};
for (const [model, { bytes, feeds }] of Object.entries(models)) {
  const connections = await Promise.all(
    variants.map(async (v) => {
      const c = new WorkerConnection(platform.startWorker!(module), v.options);
      await c.load(bytes, settings);
      return c;
    }),
  );
  for (let round = 0; round < rounds; round++) {
    for (const [i, v] of variants.entries()) {
      const c = connections[(i + round) % variants.length]!;
      const name = `${model} · ${variants[(i + round) % variants.length]!.name}`;
      for (let w = 0; w < runs / 10; w++) await c.run(feeds()); // fresh feeds, as a batch buffer would be
      const times = new Float64Array(runs);
      const cpu0 = cpuMicros();
      for (let r = 0; r < runs; r++) {
        const f = feeds();
        const t0 = performance.now();
        await c.run(f);
        times[r] = (performance.now() - t0) * 1000;
      }
      const cpu = (cpuMicros() - cpu0) / runs;
      times.sort();
      (results[name] ??= { p50: [], cpu: [] }).p50.push(times[runs >> 1]!);
      results[name]!.cpu.push(cpu);
      void v;
    }
  }
  await Promise.all(connections.map((c) => c.close()));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const runtime = (globalThis as { Deno?: unknown }).Deno ? "deno" : (globalThis as { Bun?: unknown }).Bun ? "bun" : "node";
console.log(`runtime ${runtime}, ${rounds} rounds × ${runs} runs, interleaved`);
for (const [name, r] of Object.entries(results)) {
  console.log(
    `${name.padEnd(30)} p50 ${median(r.p50).toFixed(1).padStart(7)} µs (rounds ${Math.min(...r.p50).toFixed(1)}–${Math.max(...r.p50).toFixed(1)})  cpu ${median(r.cpu).toFixed(1).padStart(7)} µs/run`,
  );
}
if ((globalThis as { Deno?: unknown }).Deno) (globalThis as unknown as { Deno: { exit(c: number): void } }).Deno.exit(0);

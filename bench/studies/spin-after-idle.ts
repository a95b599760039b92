// What one `mlp` run at batch 1 costs after the calling thread slept, by intra-op spin policy: the
// gap between requests at one client is when a pool thread that stopped spinning falls asleep, and
// waking it is what the hand-written server's default (spin without bound) never pays. In-process,
// the thread sleeps `gap` µs (Atomics.wait) before each run; prints p50 per run and the process's
// cores. Usage: npx tsx bench/studies/spin-after-idle.ts [gaps=300,1500] [runs=1500]
import * as ort from "onnxruntime-node";
import { intraOpSpinning, SPIN_DURATION_US } from "../../runtime/backends/_ort-session.ts";

const gaps = (process.argv[2] ?? "300,1500").split(",").map(Number);
const runs = Number(process.argv[3] ?? 1500);
const spin = (us: number): ort.InferenceSession.SessionOptions => ({ intraOpNumThreads: 2, extra: { session: { intra_op: { allow_spinning: "1", spin_duration_us: String(us) } } } });
const policies: Record<string, ort.InferenceSession.SessionOptions> = {
  "onnxruntime default": {},
  "never spin": { intraOpNumThreads: 2, extra: { session: { intra_op: { allow_spinning: "0" } } } },
  [`spin ${SPIN_DURATION_US} µs (tensorfn)`]: { intraOpNumThreads: 2, extra: { session: { intra_op: intraOpSpinning({ provider: "cpu" }) } } },
  "spin 300 µs": spin(300),
  "spin 1000 µs": spin(1000),
};
const input = new ort.Tensor("float32", new Float32Array(512).fill(0.5), [1, 512]);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
for (const gap of gaps) {
  for (const [name, options] of Object.entries(policies)) {
    const session = await ort.InferenceSession.create("functions/mlp/1/model.onnx", options);
    for (let i = 0; i < 200; i++) await session.run({ input });
    const times: number[] = [];
    const cpu = process.cpuUsage();
    const wall = performance.now();
    for (let i = 0; i < runs; i++) {
      Atomics.wait(sleeper, 0, 0, gap / 1000);
      const start = performance.now();
      await session.run({ input });
      times.push(performance.now() - start);
    }
    const used = process.cpuUsage(cpu);
    times.sort((a, b) => a - b);
    const cores = (used.user + used.system) / 1000 / (performance.now() - wall);
    console.log(`gap ${gap} µs, ${name}: run p50 ${(times[runs >> 1] * 1000).toFixed(0)} µs, ${cores.toFixed(2)} cores`);
    await session.release();
  }
}

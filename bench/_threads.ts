import { readFileSync, readdirSync } from "node:fs";
import { writeBenchRepository, batchingYaml, RESNET_TENSORS } from "./scenarios/bench-repository.ts";
import { startServerProcess } from "./scenarios/server-process.ts";
import { benchRequest, measureStep } from "./scenarios/measure-step.ts";
function threads(pid: number) {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const comm = s.slice(s.indexOf("(") + 1, s.lastIndexOf(")"));
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      out.set(`${tid} ${comm}`, (Number(f[11]) + Number(f[12])) / 100);
    } catch {}
  }
  return out;
}
const repo = writeBenchRepository("functions", [
  { name: "resnet_b", from: "resnet", yaml: batchingYaml({ delayUs: 2000 }, RESNET_TENSORS) },
  { name: "mlp_d0", from: "mlp", yaml: batchingYaml({ delayUs: 0 }) },
  { name: "simple", from: "simple" },
]);
const server = await startServerProcess("node", [(process.env.SERVER_ROOT ?? ".") + "/adapters/node/bin.mjs", "serve", "--repo", repo, "--port", "0"]);
for (const spec of process.argv.slice(2)) {
  const [model, c] = spec.split("@");
  const req = await benchRequest(server.url, model!);
  const before = threads(server.pid);
  const m = await measureStep({ target: "t", url: server.url, model: model!, pid: server.pid, concurrency: Number(c), warmupMs: 1500, durationMs: 4000 }, req);
  const after = threads(server.pid);
  console.error(spec, m.inferPerS.toFixed(0), "p50", m.latencyMs?.p50.toFixed(2), "batch", m.server?.avgBatchSize?.toFixed(1), "compute", m.server?.computeInferUsPerExecution?.toFixed(0), m.cores);
  for (const [k, v] of after) { const d = v - (before.get(k) ?? 0); if (d > 0.05) console.error("   ", k, d.toFixed(2), "s"); }
}
await server.stop();

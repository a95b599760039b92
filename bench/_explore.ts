import { writeBenchRepository, batchingYaml, RESNET_TENSORS } from "./scenarios/bench-repository.ts";
import { startServerProcess } from "./scenarios/server-process.ts";
import { benchRequest, measureStep } from "./scenarios/measure-step.ts";
const repo = writeBenchRepository("functions", [
  { name: "mlp_single", from: "mlp", yaml: batchingYaml(undefined) },
  { name: "mlp_d0", from: "mlp", yaml: batchingYaml({ delayUs: 0 }) },
  { name: "mlp_d250", from: "mlp", yaml: batchingYaml({ delayUs: 250 }) },
  { name: "mlp_d1000", from: "mlp", yaml: batchingYaml({ delayUs: 1000 }) },
  { name: "simple", from: "simple" },
  { name: "resnet_single", from: "resnet", yaml: batchingYaml(undefined, RESNET_TENSORS) },
  { name: "resnet_b", from: "resnet", yaml: batchingYaml({ delayUs: 2000 }, RESNET_TENSORS) },
  { name: "resnet_p8", from: "resnet", yaml: batchingYaml({ delayUs: 2000, preferred: [8] }, RESNET_TENSORS) },
  { name: "resnet_p4", from: "resnet", yaml: batchingYaml({ delayUs: 2000, preferred: [4] }, RESNET_TENSORS) },
  { name: "simple_identity", from: "simple_identity" },
]);
const t0 = performance.now();
const server = await startServerProcess("node", [(process.env.SERVER_ROOT ?? ".") + "/adapters/node/bin.mjs", "serve", "--repo", repo, "--port", "0"]);
console.error("started in", performance.now() - t0, server.url);
const models = process.argv.slice(2);
for (const spec of models) {
  const [model, cs] = spec.split("@");
  const req = await benchRequest(server.url, model!, model === "simple_identity" ? { INPUT0: [16] } : undefined);
  for (const c of cs!.split(",").map(Number)) {
    const m = await measureStep({ target: "tensorfn", url: server.url, model: model!, pid: server.pid, concurrency: c, warmupMs: Number(process.env.WARM ?? 1000), durationMs: Number(process.env.DUR ?? 3000) }, req);
    console.error(model, c, m.inferPerS.toFixed(0), "p50", m.latencyMs?.p50.toFixed(3), "p99", m.latencyMs?.p99.toFixed(2), "batch", m.server?.avgBatchSize?.toFixed(1), "queue", m.server?.queueUsPerRequest?.toFixed(0), "compute/exec", m.server?.computeUsPerExecution?.toFixed(0), "req us", m.server?.requestUsPerRequest?.toFixed(0), "in/inf/out", m.server?.computeInputUsPerExecution?.toFixed(0), m.server?.computeInferUsPerExecution?.toFixed(0), m.server?.computeOutputUsPerExecution?.toFixed(0), "cores c/s/o", m.cores.self.toFixed(2), m.cores.server?.toFixed(2), m.cores.other?.toFixed(2), "err", m.errors, m.firstError);
  }
}
await server.stop();

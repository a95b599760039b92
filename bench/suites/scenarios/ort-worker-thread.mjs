// Worker thread for bench/suites/scenarios/worker-raw.ts: one ORT session with tensorfn's options for one
// instance, running each posted input (moved, not copied) and moving the output back. Plain
// JavaScript so it loads without a TypeScript loader in the worker.
import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";

const { modelPath, input, threads } = workerData;
const session = await ort.InferenceSession.create(modelPath, {
  executionProviders: ["cpu"],
  graphOptimizationLevel: "all",
  intraOpNumThreads: threads,
  extra: { session: { intra_op: { allow_spinning: "0" } } },
});
parentPort.on("message", async ({ data, shape }) => {
  const outputs = await session.run({ [input]: new ort.Tensor("float32", data, shape) });
  const first = Object.values(outputs)[0];
  parentPort.postMessage(first.data, [first.data.buffer]);
});
parentPort.postMessage("ready");

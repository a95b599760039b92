import type { Backend, ExecutionThread } from "../../../runtime/backends/backend.ts";
import { parseFunctionConfig } from "../../../runtime/config/mod.ts";

/**
 * A backend whose sessions say where they run and, in a "worker", time themselves: batch 1 costs
 * `batch1Us`, any larger batch `maxBatchUs`. It records every load's thread and how often it timed.
 */
export function timedBackend(us: { batch1Us: number; maxBatchUs?: number; failsOn?: ExecutionThread }, kind: { workerThreads?: boolean } = {}) {
  const seen = { threads: [] as ExecutionThread[], timings: 0, timedOn: [] as ExecutionThread[], models: [] as Uint8Array[], released: 0 };
  const backend: Backend = {
    name: "timed",
    // As onnxruntime-node's with workers: its event-loop sessions time themselves too.
    ...(kind.workerThreads && { workerThreads: true }),
    async load(model, options) {
      const thread = options.executionThread ?? "worker";
      seen.threads.push(thread);
      seen.models.push(model);
      return {
        signature: { inputs: [{ name: "x", datatype: "FP32", shape: [-1, 4] }], outputs: [{ name: "y", datatype: "FP32", shape: [-1, 4] }] },
        provider: "cpu",
        executionThread: thread,
        run: async (feeds) => ({ y: feeds.x! }),
        ...((thread === "worker" || kind.workerThreads) && {
          time: async (feeds) => {
            seen.timings++;
            seen.timedOn.push(thread);
            if (us.failsOn === thread) throw new Error("the probe's zeros are not this model's input");
            return feeds.x!.shape[0] === 1 ? us.batch1Us : (us.maxBatchUs ?? us.batch1Us);
          },
        }),
        release: async () => {
          seen.released++;
        },
      };
    },
  };
  return { backend, seen };
}

/** A function.yaml's declared config, on the CPU unless it says otherwise. */
export function declared(yaml = "max_batch_size: 8\n") {
  const config = parseFunctionConfig(yaml, { file: "f/function.yaml", name: "f" }).config!;
  return { ...config, accelerator: config.accelerator ?? "cpu" };
}

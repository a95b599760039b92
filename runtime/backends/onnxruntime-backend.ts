import { describedSession } from "./backend.ts";
import type { Backend, LoadOptions, Session } from "./backend.ts";
import type { createOnnxRuntimeWebBackend } from "./onnxruntime-web-backend.ts";

/**
 * The `onnxruntime` backend functions name in function.yaml: routes each load by accelerator.
 * `wasm` and `webgpu` go to onnxruntime-web; `cpu`, `cuda` and `tensorrt` to onnxruntime-node.
 * `auto` picks CUDA/TensorRT if installed, else WebGPU if a hardware adapter exists, else the
 * native CPU provider, else WebAssembly (when onnxruntime-node cannot load at all).
 */
export function createOnnxRuntimeBackend(backends: { node?: Backend; web: ReturnType<typeof createOnnxRuntimeWebBackend> }): Backend {
  const { node, web } = backends;
  return {
    name: "onnxruntime",
    workerThreads: node?.workerThreads,
    checkInput: (name, tensor) => (node ?? web).checkInput?.(name, tensor),
    close: async () => {
      await node?.close?.();
      await web.close?.();
    },
    async load(model: Uint8Array, options: LoadOptions): Promise<Session> {
      const { accelerator } = options;
      if (accelerator === "wasm" || accelerator === "webgpu") return await web.load(model, options);
      if (!node) {
        const session = await web.load(model, { ...options, accelerator: "wasm" });
        return describedSession(session, session.provider, `onnxruntime-node is not available in this runtime; serving on wasm`);
      }
      const session = await node.load(model, options);
      if (accelerator !== "auto" || session.provider !== "cpu" || !(await web.hardwareWebGpu())) return session;
      await session.release();
      const gpu = await web.load(model, { ...options, accelerator: "webgpu" });
      return describedSession(gpu, gpu.provider, session.fallbackReason);
    },
  };
}

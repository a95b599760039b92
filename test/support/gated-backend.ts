import { createIdentityBackend, createOnnxRuntimeBackend, createOnnxRuntimeWebBackend } from "../../runtime/backends/mod.ts";
import type { Backend } from "../../runtime/backends/mod.ts";
import { createOnnxRuntimeNodeBackend } from "../../runtime/backends/onnxruntime-node-backend.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";

/**
 * The real onnxruntime backends (the ones a server builds by default), with every `load` held at
 * a gate the test opens: an on-demand load that takes exactly as long as the test decides.
 */
export function gatedOnnxRuntime() {
  const { startWorker } = createNodePlatform();
  const real = createOnnxRuntimeBackend({ node: createOnnxRuntimeNodeBackend({ startWorker }), web: createOnnxRuntimeWebBackend({ startWorker }) });
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const seen = { loads: 0 };
  const onnxruntime: Backend = {
    name: real.name,
    checkInput: real.checkInput ? (name, tensor) => real.checkInput!(name, tensor) : undefined,
    close: async () => await real.close?.(),
    async load(model, options) {
      seen.loads++;
      await gate;
      return await real.load(model, options);
    },
  };
  return { backends: { onnxruntime, identity: createIdentityBackend() }, open: () => open(), seen };
}

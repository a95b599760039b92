import { RuntimeError } from "../core/mod.ts";
import type { Backend, LoadOptions, Session } from "./backend.ts";
import { checkOrtInput, errorMessage, OrtSession } from "./_ort-session.ts";
import type { OrtModule } from "./_ort-session.ts";

type OrtWeb = OrtModule & { env: { logLevel?: string; wasm: { numThreads?: number } } };

interface GpuNavigator {
  gpu?: { requestAdapter(): Promise<{ info?: { isFallbackAdapter?: boolean }; isFallbackAdapter?: boolean } | null> };
}

/**
 * The onnxruntime-web backend: WebAssembly everywhere, WebGPU where `navigator.gpu` yields an
 * adapter (Deno ships WebGPU). Sessions run in this thread. Loaded lazily: its WebAssembly binary
 * is only fetched by functions that use it.
 */
export function createOnnxRuntimeWebBackend(): Backend & { hardwareWebGpu(): Promise<boolean> } {
  const modules = new Map<string, Promise<OrtWeb>>();
  // The package's default build has no WebGPU provider in every runtime (Deno resolves its Node
  // build); the `webgpu` build has both WebGPU and WASM.
  const ort = (provider: string) => {
    const specifier = provider === "webgpu" ? "onnxruntime-web/webgpu" : "onnxruntime-web";
    let module = modules.get(specifier);
    if (!module) {
      module = (provider === "webgpu" ? import("onnxruntime-web/webgpu") : import("onnxruntime-web")).then((m) => {
        const web = m as unknown as OrtWeb;
        web.env.logLevel = "fatal";
        // One thread: the WASM build's own threads would need cross-origin isolation in browsers
        // and compete with the server's; the CPU path proper is onnxruntime-node.
        web.env.wasm.numThreads = 1;
        return web;
      });
      modules.set(specifier, module);
    }
    return module;
  };

  /** Why WebGPU cannot be used here, or undefined when an adapter exists. */
  async function webgpuUnavailable(): Promise<string | undefined> {
    const gpu = (globalThis.navigator as GpuNavigator | undefined)?.gpu;
    if (!gpu) return "this runtime has no WebGPU (navigator.gpu)";
    const adapter = await gpu.requestAdapter().catch(() => null);
    return adapter ? undefined : "navigator.gpu found no adapter";
  }

  return {
    name: "onnxruntime-web",
    checkInput: checkOrtInput,
    /** True when a WebGPU adapter exists and is a real GPU, not a software fallback. */
    async hardwareWebGpu(): Promise<boolean> {
      const gpu = (globalThis.navigator as GpuNavigator | undefined)?.gpu;
      const adapter = gpu && (await gpu.requestAdapter().catch(() => null));
      return Boolean(adapter && !(adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter));
    },
    async load(model: Uint8Array, options: LoadOptions): Promise<Session> {
      const reasons: string[] = [];
      let provider = "wasm";
      if (options.accelerator === "webgpu") {
        const why = await webgpuUnavailable();
        if (why) reasons.push(`webgpu unavailable (${why})`);
        else provider = "webgpu";
      }
      let session: OrtSession;
      try {
        session = await OrtSession.create(await ort(provider), model, { provider, graphLevel: options.graphLevel });
      } catch (error) {
        if (provider === "wasm") throw new RuntimeError("INVALID_ARG", `failed to load model: ${errorMessage(error)}`, { cause: error });
        reasons.push(`webgpu failed (${errorMessage(error)})`);
        provider = "wasm";
        session = await OrtSession.create(await ort(provider), model, { provider, graphLevel: options.graphLevel });
      }
      const fallbackReason = reasons.length ? reasons.join("; ") : undefined;
      if (fallbackReason) options.log?.warn(`accelerator '${options.accelerator}' fell back to ${provider}: ${fallbackReason}`);
      return {
        signature: session.signature,
        provider,
        fallbackReason,
        run: (feeds) => session.run(feeds),
        release: () => session.release(),
      };
    },
  };
}

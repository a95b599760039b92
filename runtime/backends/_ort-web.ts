import type { OrtModule } from "./_ort-session.ts";

type OrtWeb = OrtModule & { env: { logLevel?: string; wasm: { numThreads?: number } } };

const modules = new Map<string, Promise<OrtModule>>();

/**
 * onnxruntime-web for a provider, loaded once per thread. The package's default build has no
 * WebGPU provider in every runtime (Deno resolves its Node build); the `webgpu` build has WebGPU
 * and WASM both.
 */
export function loadOrtWeb(provider: string): Promise<OrtModule> {
  const webgpu = provider === "webgpu";
  let module = modules.get(webgpu ? "webgpu" : "wasm");
  if (!module) {
    module = (webgpu ? import("onnxruntime-web/webgpu") : import("onnxruntime-web")).catch((error: unknown) => {
      // An optional dependency: an install with --omit=optional has none. Say how to get it (not
      // the resolver's message: it names where the server is installed).
      throw new Error(`onnxruntime-web could not be loaded (${(error as { code?: string })?.code ?? "error"}): an install with --omit=optional leaves it out; npm install onnxruntime-web`);
    }).then((m) => {
      const web = m as unknown as OrtWeb;
      web.env.logLevel = "fatal";
      // One thread per session: the WASM build's own threads would need cross-origin isolation in
      // browsers and compete with the server's; the CPU path proper is onnxruntime-node.
      web.env.wasm.numThreads = 1;
      return web;
    });
    modules.set(webgpu ? "webgpu" : "wasm", module);
  }
  return module;
}

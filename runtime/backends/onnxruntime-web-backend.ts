import { RuntimeError } from "../core/mod.ts";
import { describedSession } from "./backend.ts";
import type { Backend, LoadOptions, Session } from "./backend.ts";
import type { WorkerHandle } from "../core/mod.ts";
import { checkOrtInput, errorMessage, OrtSession } from "./_ort-session.ts";
import { loadOrtWeb } from "./_ort-web.ts";
import { WorkerPool } from "./_worker-pool.ts";

interface GpuNavigator {
  gpu?: { requestAdapter(): Promise<{ info?: { isFallbackAdapter?: boolean }; isFallbackAdapter?: boolean } | null> };
}

/**
 * The onnxruntime-web backend: WebAssembly everywhere, WebGPU where `navigator.gpu` yields an
 * adapter (Deno ships WebGPU). WASM sessions run in worker threads when the platform has them;
 * WebGPU ones in this thread. Loaded lazily: its WebAssembly binary is only fetched by functions that use it.
 */
export function createOnnxRuntimeWebBackend(options: { startWorker?: (module: URL) => WorkerHandle } = {}): Backend & {
  hardwareWebGpu(): Promise<boolean>;
} {
  // With workers, each session runs in its own thread as onnxruntime-node's do; none is started
  // ahead, since most deployments never use this backend.
  const pool = options.startWorker && new WorkerPool(options.startWorker, { maxIdle: 1, module: new URL("./onnxruntime-worker.ts", import.meta.url), prestart: false });

  /** Opens a session on `provider`, in a pooled worker when there are workers. */
  async function open(model: Uint8Array, provider: string, { graphLevel, externalData }: Pick<LoadOptions, "graphLevel" | "externalData">): Promise<Omit<Session, "provider" | "fallbackReason">> {
    // WebGPU stays in this thread: onnxruntime-web's WebGPU build cannot load inside a Deno worker
    // (it builds URLs on `location.origin`, which is "null" there for file: modules).
    if (!pool || provider === "webgpu") {
      const session = await OrtSession.create(await loadOrtWeb(provider), model, { provider, graphLevel, externalData });
      return { signature: session.signature, run: (feeds, options) => session.run(feeds, options?.outputs), release: () => session.release() };
    }
    const worker = pool.take();
    try {
      const signature = await worker.load(model, { provider, graphLevel, externalData }, "web");
      return {
        signature,
        get alive() {
          return worker.alive;
        },
        run: (feeds, options) => worker.run(feeds, options?.outputs),
        release: () => pool.give(worker),
      };
    } catch (error) {
      await pool.give(worker);
      throw error;
    }
  }

  /** Why WebGPU cannot be used here, or undefined when an adapter exists. */
  // The adapter does not change while the process lives: ask once, not on every load.
  let adapter: ReturnType<NonNullable<GpuNavigator["gpu"]>["requestAdapter"]> | undefined;
  const findAdapter = () => (adapter ??= (globalThis.navigator as GpuNavigator | undefined)?.gpu?.requestAdapter().catch(() => null) ?? Promise.resolve(null));

  async function webgpuUnavailable(): Promise<string | undefined> {
    if (!(globalThis.navigator as GpuNavigator | undefined)?.gpu) return "this runtime has no WebGPU (navigator.gpu)";
    return (await findAdapter()) ? undefined : "navigator.gpu found no adapter";
  }

  return {
    name: "onnxruntime-web",
    checkInput: checkOrtInput,
    /** True when a WebGPU adapter exists and is a real GPU, not a software fallback. */
    async hardwareWebGpu(): Promise<boolean> {
      const found = await findAdapter();
      return Boolean(found && !(found.info?.isFallbackAdapter ?? found.isFallbackAdapter));
    },
    close: async () => await pool?.drain(),
    async load(model: Uint8Array, options: LoadOptions): Promise<Session> {
      const reasons: string[] = [];
      let provider = "wasm";
      if (options.accelerator === "webgpu") {
        const why = await webgpuUnavailable();
        if (why) reasons.push(`webgpu unavailable (${why})`);
        else provider = "webgpu";
      }
      let session: Omit<Session, "provider" | "fallbackReason">;
      try {
        session = await open(model, provider, options);
      } catch (error) {
        if (provider === "wasm") throw new RuntimeError("INVALID_ARG", `failed to load model${options.modelFile ? ` ${options.modelFile}` : ""}: ${errorMessage(error)}`, { cause: error });
        reasons.push(`webgpu failed (${errorMessage(error)})`);
        provider = "wasm";
        session = await open(model, provider, options);
      }
      const fallbackReason = reasons.length ? reasons.join("; ") : undefined;
      if (fallbackReason) options.log?.warn(`accelerator '${options.accelerator}' fell back to ${provider}: ${fallbackReason}`);
      return describedSession(session, provider, fallbackReason);
    },
  };
}

import * as ort from "onnxruntime-node";
import { invalidArg, RuntimeError } from "../core/mod.ts";
import type { DataType, ModelSignature, Tensor, TensorData, TensorSignature } from "../core/mod.ts";
import { fromOrtType, toOrtType } from "../tensor/mod.ts";
import type { Backend, LoadOptions, Session } from "./backend.ts";

// ORT reports every failure we care about as an exception, which we log with the function's name;
// its own stderr lines (e.g. a missing CUDA library during the `auto` probe) only duplicate them.
ort.env.logLevel = "fatal";

const graphLevels: Record<number, "all" | "basic" | "extended" | "disabled"> = {
  0: "all",
  [-1]: "basic",
  1: "extended",
  2: "disabled",
};

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The onnxruntime-node backend: CPU always, CUDA/TensorRT when their provider libraries are
 * installed. A provider that fails to initialise is remembered, so `auto` probes it once per process.
 */
export function createOnnxRuntimeNodeBackend(): Backend {
  const unavailable = new Map<string, string>();
  // First attempt per accelerated provider; concurrent loads wait for it instead of probing too.
  const probes = new Map<string, Promise<unknown>>();

  async function createSession(model: Uint8Array, options: LoadOptions, provider: string) {
    const device = provider !== "cpu" && options.deviceId !== undefined ? { deviceId: options.deviceId } : {};
    const sessionOptions: ort.InferenceSession.SessionOptions = {
      executionProviders: [{ name: provider, ...device } as ort.InferenceSession.ExecutionProviderConfig],
      graphOptimizationLevel: graphLevels[options.graphLevel ?? 0] ?? "all",
    };
    // ORT rejects keys that are present but undefined.
    if (options.intraOpThreads !== undefined) sessionOptions.intraOpNumThreads = options.intraOpThreads;
    if (options.interOpThreads !== undefined) sessionOptions.interOpNumThreads = options.interOpThreads;
    return await ort.InferenceSession.create(model, sessionOptions);
  }

  return {
    name: "onnxruntime-node",
    checkInput,
    async load(model: Uint8Array, options: LoadOptions): Promise<Session> {
      const reasons: string[] = [];
      for (const provider of candidateProviders(options.accelerator)) {
        const probe = probes.get(provider);
        if (probe) await probe;
        const known = unavailable.get(provider);
        if (known) {
          reasons.push(known);
          continue;
        }
        const attempt = createSession(model, options, provider);
        if (!probe && provider !== "cpu") probes.set(provider, attempt.catch(() => undefined));
        try {
          const session = await attempt;
          const fallbackReason = reasons.length ? reasons.join("; ") : undefined;
          // `auto` on a host without CUDA is the expected case, not a misconfiguration: said once,
          // when the probe fails, rather than for every function.
          if (fallbackReason && options.accelerator !== "auto") {
            options.log?.warn(`accelerator '${options.accelerator}' fell back to ${provider}: ${fallbackReason}`);
          }
          return wrapSession(session, provider, fallbackReason);
        } catch (error) {
          if (provider === "cpu") throw new RuntimeError("INVALID_ARG", `failed to load model: ${message(error)}`, { cause: error });
          const reason = `${provider} execution provider unavailable (${message(error)})`;
          unavailable.set(provider, reason);
          reasons.push(reason);
          if (options.accelerator === "auto") options.log?.info(`accelerator 'auto': ${reason}; using the next provider`);
        }
      }
      throw new Error("unreachable: cpu is always a candidate");
    },
  };
}

function candidateProviders(accelerator: LoadOptions["accelerator"]): string[] {
  switch (accelerator) {
    case "cuda":
    case "auto":
      return ["cuda", "cpu"];
    case "tensorrt":
      return ["tensorrt", "cuda", "cpu"];
    default:
      // webgpu and wasm belong to onnxruntime-web; this backend serves them on the CPU.
      return ["cpu"];
  }
}

function wrapSession(session: ort.InferenceSession, provider: string, fallbackReason?: string): Session {
  const signature: ModelSignature = {
    inputs: session.inputMetadata.map(toSignature),
    outputs: session.outputMetadata.map(toSignature),
  };
  const outputTypes = new Map(signature.outputs.map((o) => [o.name, o.datatype]));
  return {
    signature,
    provider,
    fallbackReason,
    async run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
      const ortFeeds: Record<string, ort.Tensor> = {};
      for (const [name, tensor] of Object.entries(feeds)) ortFeeds[name] = toOrtTensor(tensor);
      let results: ort.InferenceSession.ReturnType;
      try {
        results = await session.run(ortFeeds);
      } catch (error) {
        // Inputs were checked against the config already, so what ORT still refuses is the
        // request's content (e.g. a string that Cast cannot parse as a number).
        throw invalidArg(`onnxruntime could not run the request: ${message(error)}`);
      }
      const outputs: Record<string, Tensor> = {};
      for (const [name, value] of Object.entries(results)) {
        outputs[name] = fromOrtTensor(value as ort.Tensor, outputTypes.get(name));
      }
      return outputs;
    },
    release: () => session.release(),
  };
}

function toSignature(meta: ort.InferenceSession.ValueMetadata): TensorSignature {
  if (!meta.isTensor) throw invalidArg(`model value '${meta.name}' is not a tensor; only tensor inputs and outputs are supported`);
  const datatype = fromOrtType(meta.type);
  if (!datatype) throw invalidArg(`model value '${meta.name}' has ONNX type '${meta.type}', which tensorfn cannot serve`);
  const shape = meta.shape.map((d) => (typeof d === "number" && d >= 0 ? d : -1));
  return { name: meta.name, datatype, shape };
}

/** onnxruntime-node passes strings as JS strings: NUL ends them and invalid UTF-8 is replaced. */
function checkInput(name: string, tensor: Tensor): void {
  if (tensor.datatype !== "BYTES") return;
  const elements = tensor.data as Uint8Array[];
  for (let i = 0; i < elements.length; i++) {
    const bytes = elements[i]!;
    if (bytes.includes(0)) {
      throw invalidArg(`input '${name}' element ${i} contains a NUL byte, which onnxruntime string tensors cannot carry`);
    }
    try {
      strictUtf8.decode(bytes);
    } catch {
      throw invalidArg(`input '${name}' element ${i} is not valid UTF-8, which onnxruntime string tensors require`);
    }
  }
}

function toOrtTensor(tensor: Tensor): ort.Tensor {
  const type = toOrtType(tensor.datatype);
  if (!type) throw invalidArg(`datatype ${tensor.datatype} is not supported by onnxruntime`);
  const dims = tensor.shape as number[];
  if (tensor.datatype === "BYTES") {
    const strings = (tensor.data as Uint8Array[]).map((b) => strictUtf8.decode(b));
    return new ort.Tensor("string", strings, dims);
  }
  return new ort.Tensor(type as "float32", tensor.data as Float32Array, dims);
}

function fromOrtTensor(value: ort.Tensor, declared: DataType | undefined): Tensor {
  const datatype = declared ?? fromOrtType(value.type) ?? "FP32";
  const shape = [...value.dims];
  if (value.type === "string") {
    return { datatype: "BYTES", shape, data: (value.data as string[]).map((s) => utf8.encode(s)) };
  }
  return { datatype, shape, data: value.data as TensorData };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import type * as ort from "onnxruntime-common";
import { invalidArg } from "../core/mod.ts";
import type { DataType, ModelSignature, Tensor, TensorData, TensorSignature } from "../core/mod.ts";
import { fromOrtType, toOrtType } from "../tensor/mod.ts";

/**
 * What this file needs of an onnxruntime package: onnxruntime-node and onnxruntime-web export the
 * same API (from onnxruntime-common), so one session wrapper serves both.
 */
export interface OrtModule {
  InferenceSession: { create(model: Uint8Array, options: ort.InferenceSession.SessionOptions): Promise<ort.InferenceSession> };
  Tensor: typeof ort.Tensor;
}

/** Session settings that cross into a worker as plain data. */
export interface OrtSessionSettings {
  provider: string;
  deviceId?: number;
  /** onnxruntime's options for `provider` (its own keys), given beside `deviceId`. */
  providerOptions?: Record<string, string>;
  intraOpThreads?: number;
  interOpThreads?: number;
  /** Triton's ORT graph level: 0 = all, -1 = basic, 1 = extended, 2 = none. */
  graphLevel?: number;
  /**
   * ORT's `session.intra_op.allow_spinning`: true lets idle intra-op threads spin as onnxruntime
   * does by default, false never; unset, on the CPU they spin for SPIN_DURATION_US and then sleep.
   */
  allowSpinning?: boolean;
  /** See `LoadOptions.saveOptimizedTo`: a path where ORT writes the ORT-format form of an ONNX model. */
  saveOptimizedTo?: string;
  /** See `LoadOptions.weightsInPlace`: an ORT-format model's weights used where they lie in its bytes. */
  weightsInPlace?: boolean;
  /**
   * false: onnxruntime does not prepack weights (`session.disable_prepacking`). The session is made
   * at once and without new memory, and runs as fast at batch 1, slower on batches (mlp 2.3× at 8):
   * what answers first at a wake while the prepacked session is built (onnxruntime-node-backend.ts).
   */
  prepack?: boolean;
  /** See `LoadOptions.externalData`: in shared memory, they cross into a worker without a copy. */
  externalData?: readonly { path: string; data: Uint8Array }[];
}

/**
 * The external-data table given with a model that names none. With any table, onnxruntime looks a
 * location up there and nowhere else ("not found from the table user provided"); with none, it reads
 * the location from disk relative to the working directory (a model loaded from bytes has no folder):
 * a model naming "package.json" served the server's own. No location is an empty path with a NUL.
 */
const NO_FILES = [{ path: "\u0000", data: new Uint8Array(1) }];

const ORT_FORMAT_MARK = [0x4f, 0x52, 0x54, 0x4d]; // "ORTM", the flatbuffer file identifier at offset 4

/** Whether `bytes` hold an ORT-format model (what `saveOptimizedTo` wrote), not an ONNX one. */
export function isOrtFormat(bytes: Uint8Array): boolean {
  return bytes.byteLength > 8 && ORT_FORMAT_MARK.every((b, i) => bytes[4 + i] === b);
}

/** An adapter's zero-copy plain view of shared memory (`Platform.plainView`). */
export type PlainView = (bytes: Uint8Array) => ArrayBuffer | undefined;

/** `bytes` (in shared memory) as a Uint8Array over a plain ArrayBuffer: a view if `plainView` makes one, else a copy. */
function plainBytes(bytes: Uint8Array, plainView: PlainView | undefined): Uint8Array {
  let view: ArrayBuffer | undefined;
  try {
    view = plainView?.(bytes);
  } catch {
    view = undefined;
  }
  return view && view.byteLength === bytes.byteLength ? new Uint8Array(view) : bytes.slice();
}

/**
 * How long (µs) an idle intra-op thread of a CPU session spins for more work before it sleeps,
 * unless the function's `allow_spinning` says otherwise. Never spinning made every parallel section
 * of a run wait for a sleeping thread to wake (slow on this VM in its slow spells); spinning without
 * bound burnt the cores that batching and HTTP needed. `mlp` (interleaved, served, req/s, a slow
 * spell): c=1 1212-1482 never, 1618-2190 at 100 µs; c=32 5494-5606 never, 6773-7326 at 100 µs,
 * 7425 / 6790 unbounded against 10405 / 9560 for the default then; in a server of ten sessions c=1
 * +12 %, c=32 unchanged (docs/notes/2026-12-scheduling-studies.md, "Intra-op threads that spin a little").
 */
export const SPIN_DURATION_US = 100;

/**
 * ORT's intra-op spinning entries for these settings. Spinning without bound burns the cores that
 * other instances and the event loop need; never spinning makes every parallel section wait for a
 * thread to wake: on the CPU, unless the function says, a short spin.
 */
export function intraOpSpinning(settings: Pick<OrtSessionSettings, "provider" | "allowSpinning">): Record<string, string> {
  if (settings.allowSpinning === undefined && settings.provider === "cpu") return { allow_spinning: "1", spin_duration_us: String(SPIN_DURATION_US) };
  return { allow_spinning: settings.allowSpinning ? "1" : "0" };
}

const graphLevels: Record<number, "all" | "basic" | "extended" | "disabled"> = { 0: "all", [-1]: "basic", 1: "extended", 2: "disabled" };
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** One ORT session plus the conversions between our tensors and ORT's. Used in-process and in workers. */
export class OrtSession {
  readonly signature: ModelSignature;
  readonly #session: ort.InferenceSession;
  readonly #outputTypes: Map<string, DataType>;
  readonly #ort: OrtModule;
  /** The ORT-format bytes the session reads in place (`use_ort_model_bytes_directly`): they must outlive it. */
  #model?: Uint8Array;

  private constructor(session: ort.InferenceSession, module: OrtModule, model?: Uint8Array) {
    this.#session = session;
    this.#ort = module;
    this.#model = model;
    this.signature = { inputs: session.inputMetadata.map(toSignature), outputs: session.outputMetadata.map(toSignature) };
    this.#outputTypes = new Map(this.signature.outputs.map((o) => [o.name, o.datatype]));
  }

  /**
   * `plainView` (the adapter's, where it has one) gives a plain ArrayBuffer over shared memory
   * without a copy; without it, or when it gives none, bytes in shared memory are copied.
   */
  static async create(module: OrtModule, model: Uint8Array, settings: OrtSessionSettings, plainView?: PlainView): Promise<OrtSession> {
    const device = settings.provider !== "cpu" && settings.deviceId !== undefined ? { deviceId: settings.deviceId } : {};
    const session: Record<string, unknown> = { intra_op: intraOpSpinning(settings) };
    if (settings.prepack === false) session.disable_prepacking = "1";
    const options: ort.InferenceSession.SessionOptions = {
      executionProviders: [{ ...settings.providerOptions, name: settings.provider, ...device } as ort.InferenceSession.ExecutionProviderConfig],
      graphOptimizationLevel: graphLevels[settings.graphLevel ?? 0] ?? "all",
      extra: { session },
    };
    // ORT rejects keys that are present but undefined.
    if (settings.intraOpThreads !== undefined) options.intraOpNumThreads = settings.intraOpThreads;
    if (settings.interOpThreads !== undefined) options.interOpNumThreads = settings.interOpThreads;
    // onnxruntime-node's create refuses bytes in shared memory (a kept model's), in a worker too:
    // a plain view of the same memory where the adapter can make one, else one copy (off the event
    // loop in a worker). ORT parses ONNX bytes into its own structures and keeps no pointer to them.
    const own = model.buffer instanceof SharedArrayBuffer ? plainBytes(model, plainView) : model;
    if (isOrtFormat(own)) {
      // ORT would copy these bytes first; read in place, they must outlive the session (kept below).
      // Its weights are copied out of them unless the function asks for them in place
      // (`parameters.weights_in_place`): mlp ran alike, resnet's convolutions 6 % slower at batch 1
      // (bench/studies/weights-in-place-runs.ts).
      session.use_ort_model_bytes_directly = "1";
      if (settings.weightsInPlace) session.use_ort_model_bytes_for_initializers = "1";
      return new OrtSession(await module.InferenceSession.create(own, options), module, own);
    }
    options.externalData = settings.externalData?.length ? settings.externalData.map(({ path, data }) => ({ path, data })) : NO_FILES;
    if (settings.saveOptimizedTo !== undefined) {
      // A session made for its form: when ORT cannot write it, the create fails (and no form is kept).
      options.optimizedModelFilePath = settings.saveOptimizedTo;
      session.save_model_format = "ORT";
    }
    return new OrtSession(await module.InferenceSession.create(own, options), module);
  }

  /**
   * Runs the feeds, fetching `outputs` (all when undefined): an output not fetched is never copied
   * out of ORT. ORT's refusal of the content comes back as INVALID_ARG.
   */
  async run(feeds: Record<string, Tensor>, fetch?: readonly string[]): Promise<Record<string, Tensor>> {
    const ortFeeds: Record<string, ort.Tensor> = {};
    for (const [name, tensor] of Object.entries(feeds)) ortFeeds[name] = toOrtTensor(this.#ort.Tensor, tensor);
    let results: ort.InferenceSession.ReturnType;
    try {
      results = await (fetch ? this.#session.run(ortFeeds, fetch) : this.#session.run(ortFeeds));
    } catch (error) {
      // Inputs were checked against the config already, so what ORT still refuses is the
      // request's content (e.g. a string that Cast cannot parse as a number).
      throw invalidArg(`onnxruntime could not run the request: ${errorMessage(error)}`);
    }
    const outputs: Record<string, Tensor> = {};
    for (const [name, value] of Object.entries(results)) outputs[name] = fromOrtTensor(value as ort.Tensor, this.#outputTypes.get(name));
    return outputs;
  }

  async release(): Promise<void> {
    await this.#session.release();
    this.#model = undefined;
  }
}

function toSignature(meta: ort.InferenceSession.ValueMetadata): TensorSignature {
  if (!meta.isTensor) throw invalidArg(`model value '${meta.name}' is not a tensor; only tensor inputs and outputs are supported`);
  const datatype = fromOrtType(meta.type);
  if (!datatype) throw invalidArg(`model value '${meta.name}' has ONNX type '${meta.type}', which tensorfn cannot serve`);
  return { name: meta.name, datatype, shape: meta.shape.map((d) => (typeof d === "number" && d >= 0 ? d : -1)) };
}

/** onnxruntime-node passes strings as JS strings: NUL ends them and invalid UTF-8 is replaced. */
export function checkOrtInput(name: string, tensor: Tensor): void {
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

function toOrtTensor(OrtTensor: typeof ort.Tensor, tensor: Tensor): ort.Tensor {
  const type = toOrtType(tensor.datatype);
  if (!type) throw invalidArg(`datatype ${tensor.datatype} is not supported by onnxruntime`);
  const dims = tensor.shape as number[];
  if (tensor.datatype === "BYTES") return new OrtTensor("string", (tensor.data as Uint8Array[]).map((b) => strictUtf8.decode(b)), dims);
  return new OrtTensor(type as "float32", tensor.data as Float32Array, dims);
}

function fromOrtTensor(value: ort.Tensor, declared: DataType | undefined): Tensor {
  const shape = [...value.dims];
  if (value.type === "string") return { datatype: "BYTES", shape, data: (value.data as string[]).map((s) => utf8.encode(s)) };
  return { datatype: declared ?? fromOrtType(value.type) ?? "FP32", shape, data: value.data as TensorData };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import { invalidArg, RuntimeError } from "../core/mod.ts";
import type { ModelManager } from "../lifecycle/mod.ts";
import { repositoryName } from "./repository-load.ts";

// ModelMesh's model-runtime SPI (mmesh.ModelRuntime), as any protocol carries it: a pulled model is
// registered as a function named by its model id from the folder ModelMesh's puller left (read in
// place), loaded, sized by the memory tensorfn accounts for it, and forgotten on unload.

/** What serving ModelMesh's SPI needs beyond the functions (`--modelmesh-root`). */
export interface ModelMeshOptions {
  /** The folder ModelMesh's puller places models under (its ROOT_MODEL_DIR, `/models`): no model path outside it is read. */
  root: string;
  /** How long a load may take (`--load-timeout-secs`), reported to ModelMesh. */
  loadTimeoutMs: number;
}

/** The model formats tensorfn serves, as a ModelMesh InferenceService names them (its ServingRuntime's supportedModelFormats). */
export const MODELMESH_FORMATS = ["onnx", "triton"];

/** A conservative size for a model not yet sized: ModelMesh plans with it until it knows better. */
const DEFAULT_MODEL_SIZE = 64 * 1024 * 1024;

/** Loads ModelMesh may run at once: tensorfn's loads share the CPU (their heavy work runs one at a time). */
const MAX_LOADING_CONCURRENCY = 2;

/** runtimeStatus: what ModelMesh plans with, once whatever it loaded before a restart of its own is gone. */
export async function runtimeStatus(models: ModelManager, options: ModelMeshOptions) {
  for (const name of models.external()) await models.forget(name);
  return {
    capacityBytes: models.budgets.host ?? 0,
    maxLoadingConcurrency: MAX_LOADING_CONCURRENCY,
    loadTimeoutMs: options.loadTimeoutMs,
    defaultModelBytes: DEFAULT_MODEL_SIZE,
  };
}

/** loadModel: resolves with the bytes the loaded model holds. Cheap refusals (id, format, path) come before any read. */
export async function loadPulledModel(models: ModelManager, options: ModelMeshOptions, model: { id: string; path: string; key: string }): Promise<number> {
  const name = repositoryName(model.id);
  checkFormat(model.key);
  await models.loadPulled(name, model.path, options.root);
  return modelSize(models, name);
}

/** predictModelSize: from the model's size on disk, without loading it. */
export async function predictPulledModel(models: ModelManager, options: ModelMeshOptions, model: { id: string; path: string; key: string }): Promise<number> {
  const name = repositoryName(model.id);
  checkFormat(model.key);
  return await models.predictPulled(name, model.path, options.root);
}

/** unloadModel: done at once for a model not loaded, as ModelMesh asks. */
export async function unloadPulledModel(models: ModelManager, id: string): Promise<void> {
  await models.forget(repositoryName(id));
}

/** modelSize: the bytes a model holds now in host and device memory. */
export function modelSize(models: ModelManager, id: string): number {
  const held = models.footprint(repositoryName(id));
  if (!held) throw new RuntimeError("NOT_FOUND", `model '${id}' is not loaded`);
  return held.host + held.device;
}

/** The model format in ModelMesh's modelKey JSON, refused when tensorfn cannot serve it. */
function checkFormat(modelKey: string): void {
  if (modelKey === "") return;
  let key: unknown;
  try {
    key = JSON.parse(modelKey);
  } catch {
    throw invalidArg(`modelKey is not JSON: ${JSON.stringify(modelKey.slice(0, 80))}`);
  }
  const type = (key as { model_type?: unknown } | null)?.model_type;
  const format = typeof type === "string" ? type : (type as { name?: unknown } | undefined)?.name;
  if (typeof format === "string" && !MODELMESH_FORMATS.includes(format.toLowerCase())) {
    throw invalidArg(`model format '${format}' is not one tensorfn serves (${MODELMESH_FORMATS.join(", ")})`);
  }
}
